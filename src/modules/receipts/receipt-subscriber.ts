import type { EventSubscriber } from "../../events/subscribers.js";
import { findPaymentRowsByIds } from "../payments/payments.repo.js";
import { issuePaymentReceipt, voidRefundedReceipt } from "./receipts.service.js";

/**
 * Receipts follow payments' events in the transaction that records them: `payment.paid` issues the
 * payment's receipt, `payment.refunded` voids it (and issues one for what a partial refund leaves),
 * and so does `payment.disputed` once the dispute is lost.
 * Issuing is itself an event (`receipt.issued`, `receipt.voided`), written with the change.
 */
export const receiptSubscriber: EventSubscriber = {
  name: "receipts",
  types: ["payment.paid", "payment.refunded", "payment.disputed"],
  async handle(tx, event) {
    if (event.resourceId === null) return;
    const [payment] = await findPaymentRowsByIds(tx, event.organizationId, [event.resourceId]);
    if (!payment) return;
    const scope = { organizationId: event.organizationId, origin: event.origin };
    if (event.type === "payment.paid") await issuePaymentReceipt(tx, scope, payment);
    else await voidRefundedReceipt(tx, scope, payment, event.type === "payment.disputed" ? "disputed" : "refunded");
  },
};
