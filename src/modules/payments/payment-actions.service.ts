import type { Scope } from "../../auth/scope.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { findProcessor } from "../../payments/processors/index.js";
import { askRefund } from "../../payments/refund.service.js";
import { settlePayment, settleRefund } from "../../payments/settlement.service.js";
import { assertTransition } from "../../payments/transitions.js";
import type { GivingContext } from "../giving/giving.context.js";
import { findPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import { lockPayment, markRefundRequested } from "./payments.repo.js";
import { paymentToWire } from "./payments.service.js";

export type GivingDb = Pick<GivingContext, "db" | "links" | "processors">;

/**
 * PAID → REFUNDED through the payment's processor, in steps: the request is recorded and committed,
 * the processor is asked (outside any transaction, with a key derived from the payment, so asking
 * again never refunds twice), and the refund is settled. A crash in between leaves the request for
 * the reconciler. A one-off gift fully refunded is revoked.
 */
export async function refundPayment(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  const requested = await context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "REFUNDED");
    const method = await findPaymentMethod(tx, scope.organizationId, payment.paymentMethodId);
    const processorName = method?.processor ?? "manual";
    if (!findProcessor(processorName)?.capabilities.refunds) {
      throw new AppError(
        "refund_unsupported",
        `The processor "${method?.processor}" of payment ${payment.id} cannot refund`,
      );
    }
    const row = await markRefundRequested(tx, scope.organizationId, payment.id);
    if (!row) throw notFound("Payment");
    return { payment: row, method, processorName };
  });
  await askRefund(context.processors, requested.processorName, requested.payment);
  const refunded = await context.db.transaction((tx) => settleRefund(tx, scope.organizationId, id));
  return paymentToWire(refunded, requested.method);
}

/** A manual payment (bank transfer, cash) arrived: PENDING → PAID, settled as any payment is. */
export async function markPaymentPaid(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  return context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "PAID");
    const method = await findPaymentMethod(tx, scope.organizationId, payment.paymentMethodId);
    if (method && method.processor !== "manual") {
      throw new AppError(
        "not_manual_payment",
        `Payment ${payment.id} is processed by "${method.processor}"; only manual payments are marked paid by hand`,
      );
    }
    const settled = await settlePayment(
      tx,
      context.links,
      scope.organizationId,
      payment.id,
      { state: "PAID", intentId: null },
      new Date(),
    );
    return paymentToWire(settled.payment, method);
  });
}
