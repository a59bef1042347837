import type { Db } from "../db/client.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import {
  type ReconcileResult,
  reconcileCheckoutAttempts,
  reconcileOne,
} from "../modules/giving/checkout-flow.service.js";
import { askRefund } from "../modules/payments/payment-actions.service.js";
import { listStalePendingCharges, listStaleRefundRequests } from "../modules/payments/payments.repo.js";
import { toCents } from "../payments/money.js";
import { connectProcessor } from "../payments/processors/index.js";
import { settlePayment, settleRefund } from "../payments/settlement.service.js";

/**
 * A charge or refund left unsettled longer than the timeout (a crash between steps, a processor
 * timeout): the processor is asked what became of its key and the answer is settled through the
 * same step as ever. A renewal the processor never received is charged with the same key; a refund
 * is asked again with its key (neither happens twice). One record that cannot be settled is counted
 * as an error and tried again next run; it never stops the others.
 */
export async function reconcilePending(
  db: Db,
  options: { now: Date; timeoutSeconds: number; links: DocumentLinks; limit?: number },
): Promise<ReconcileResult> {
  const { now, links } = options;
  // Staleness is measured on the real clock: a run with a moved clock (billing run --now) must not
  // take a charge still in flight for an abandoned one.
  const cutoff = new Date(Math.min(now.getTime(), Date.now()) - options.timeoutSeconds * 1000);
  const limit = options.limit ?? 1000;
  const result = await reconcileCheckoutAttempts({ db, links }, { now, cutoff, limit });
  const charges = await listStalePendingCharges(db, cutoff, limit);
  for (const { payment, processor: name, reference } of charges) {
    await reconcileOne(result, async () => {
      const processor = name ? connectProcessor(db, name) : undefined;
      const key = payment.idempotencyKey as string;
      let found = processor ? await processor.retrieve(key) : null;
      // A renewal the processor never received is charged now, with the same key: the worker's own work.
      if (!found && processor && reference && payment.billingCycle !== null) {
        found = await processor.charge({
          amountCents: toCents(payment.amount),
          currency: payment.currency,
          reference,
          kind: "renewal",
          idempotencyKey: key,
        });
      }
      if (found?.state === "PENDING") return false;
      const outcome = found ?? {
        state: "FAILED" as const,
        intentId: null,
        code: "not_charged",
        message: "The processor never received the charge",
      };
      await db.transaction((tx) => settlePayment(tx, links, payment.organizationId, payment.id, outcome, now));
      return true;
    });
  }
  const refunds = await listStaleRefundRequests(db, cutoff, limit);
  for (const { payment, processor } of refunds) {
    await reconcileOne(result, async () => {
      if (payment.state === "PAID") await askRefund(db, processor ?? "manual", payment);
      await db.transaction((tx) => settleRefund(tx, payment.organizationId, payment.id));
      return true;
    });
  }
  return result;
}
