import { and, eq, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { payments } from "../../db/schema.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { toCents } from "../../payments/money.js";
import { connectProcessor, findProcessor } from "../../payments/processors/index.js";
import { settlePayment, settleRefund } from "../../payments/settlement.service.js";
import { assertTransition } from "../../payments/transitions.js";
import type { GivingContext } from "../giving/giving.context.js";
import { findMethod, lockPayment, type PaymentRow } from "../giving/giving.repo.js";
import { paymentToWire } from "./payments.service.js";

export type GivingDb = Pick<GivingContext, "db" | "links">;

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
    const method = await findMethod(tx, scope.organizationId, payment.paymentMethodId);
    const processorName = method?.processor ?? "manual";
    if (!findProcessor(processorName)?.capabilities.refunds) {
      throw new AppError(
        "refund_unsupported",
        `The processor "${method?.processor}" of payment ${payment.id} cannot refund`,
      );
    }
    const [row] = await tx
      .update(payments)
      .set({ refundRequestDate: sql`coalesce(${payments.refundRequestDate}, now())` })
      .where(and(eq(payments.organizationId, scope.organizationId), eq(payments.id, payment.id)))
      .returning();
    if (!row) throw notFound("Payment");
    return { payment: row, method, processorName };
  });
  await askRefund(context.db, requested.processorName, requested.payment);
  const refunded = await context.db.transaction((tx) => settleRefund(tx, scope.organizationId, id));
  return paymentToWire(refunded, requested.method);
}

/** The processor call of a refund; the key makes a repeated call (a retry, the reconciler) refund once. */
export async function askRefund(db: Db, processorName: string, payment: PaymentRow) {
  const processor = connectProcessor(db, processorName);
  if (!processor) throw new Error(`no processor "${processorName}" for payment ${payment.id}`);
  await processor.refund({
    intentId: payment.processorIntentId ?? "",
    amountCents: toCents(payment.amount),
    currency: payment.currency,
    idempotencyKey: `refund:${payment.id}`,
  });
}

/** A manual payment (bank transfer, cash) arrived: PENDING → PAID, settled as any payment is. */
export async function markPaymentPaid(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  return context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "PAID");
    const method = await findMethod(tx, scope.organizationId, payment.paymentMethodId);
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
