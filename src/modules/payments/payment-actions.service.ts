import type { Scope } from "../../auth/scope.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { withEvents } from "../../events/record-event.js";
import { parseId } from "../../http/ids.js";
import { fitsCurrency, precisionRule, toCents } from "../../payments/money.js";
import { findProcessor, ProcessorTimeoutError } from "../../payments/processors/index.js";
import type { RefundResult } from "../../payments/processors/processor.js";
import { askRefund } from "../../payments/refund.service.js";
import { settlePayment, settleRefund } from "../../payments/settlement.service.js";
import { assertTransition } from "../../payments/transitions.js";
import type { GivingContext } from "../giving/giving.context.js";
import { findPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import { findPaymentRow, lockPayment } from "./payments.repo.js";
import { paymentToWire } from "./payments.service.js";
import { insertRefund, sumPendingRefundCents } from "./refunds.repo.js";

export type GivingDb = Pick<GivingContext, "db" | "links" | "processors">;

/** The amount asked for, in cents: what is left by default, never more. */
function refundCents(amount: number | undefined, remainingCents: number, currency: string): number {
  if (amount === undefined) return remainingCents;
  const cents = Math.round(amount * 100);
  if (!Number.isFinite(amount) || cents < 1 || Math.abs(cents - amount * 100) > 1e-6) {
    throw new AppError("invalid_amount", "The refund amount must be a positive amount with at most two decimals", {
      errors: [{ field: "amount", message: "must be a positive amount with at most two decimals" }],
    });
  }
  if (!fitsCurrency(amount, currency)) {
    const rule = precisionRule(currency);
    throw new AppError("invalid_amount", `The refund amount must ${rule}`, {
      errors: [{ field: "amount", message: `must ${rule}` }],
    });
  }
  if (cents > remainingCents) {
    throw new AppError(
      "refund_amount_too_large",
      `The refund amount ${amount} is more than what is left to refund (${remainingCents / 100})`,
      { errors: [{ field: "amount", message: `must be at most ${remainingCents / 100}` }] },
    );
  }
  return cents;
}

/**
 * The processor a payment was made with must still be connected to refund it (an organization that
 * disconnected Stripe cannot refund its Stripe payments until it reconnects): asked before anything
 * is recorded, outside the transaction (the registry reads the organization's account itself).
 */
async function requireConnectedProcessor(context: GivingDb, scope: Scope, id: number) {
  const payment = await findPaymentRow(context.db, scope, id);
  if (!payment) throw notFound("Payment");
  const method = await findPaymentMethod(context.db, scope.organizationId, payment.paymentMethodId);
  const processorName = method?.processor ?? "manual";
  if (findProcessor(processorName) && !(await context.processors.connect(scope.organizationId, processorName))) {
    throw new AppError(
      "processor_not_connected",
      `Payment ${payment.id} was made with ${findProcessor(processorName)?.title ?? processorName}, which this ` +
        "organization is no longer connected to; connect it again in Settings → Payments to refund it",
    );
  }
}

/**
 * Refunds a PAID payment, in full (by default: what is left) or in part, in steps: the refund is
 * recorded PENDING with its key and committed, the processor is asked outside any transaction
 * (asking again with the key never refunds twice), and its answer is settled. The payment becomes
 * REFUNDED only when confirmed refunds reach its amount (a one-off gift then is revoked); a refund
 * still under way (SEPA) or whose answer was lost is finished by its event or the reconciler.
 */
export async function refundPayment(context: GivingDb, scope: Scope, rawId: string, amount?: number) {
  const id = parseId(rawId, "Payment");
  await requireConnectedProcessor(context, scope, id);
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
    const remaining =
      toCents(payment.amount) -
      toCents(payment.amountRefunded) -
      (await sumPendingRefundCents(tx, scope.organizationId, payment.id));
    if (remaining <= 0) {
      throw new AppError("refund_in_progress", `What is left of payment ${payment.id} is already being refunded`);
    }
    const refund = await insertRefund(tx, {
      organizationId: scope.organizationId,
      paymentId: payment.id,
      amount: refundCents(amount, remaining, payment.currency) / 100,
      currency: payment.currency,
      origin: "api",
    });
    if (!refund) throw new Error("refund insert returned nothing");
    return { payment, refund, method, processorName };
  });
  let result: RefundResult;
  try {
    result = await askRefund(context.processors, requested.processorName, requested.payment, requested.refund);
  } catch (error) {
    // No answer: the refund stays PENDING with its key, and the reconciler asks again.
    if (error instanceof ProcessorTimeoutError) return paymentToWire(requested.payment, requested.method);
    if (error instanceof AppError) {
      await withEvents(context.db, (tx) =>
        settleRefund(
          tx,
          scope,
          requested.refund.id,
          { state: "FAILED", refundId: "", message: error.message },
          new Date(),
        ),
      );
    }
    throw error;
  }
  const settled = await withEvents(context.db, (tx) =>
    settleRefund(tx, scope, requested.refund.id, result, new Date()),
  );
  if (settled.settled === "failed") {
    throw new AppError("refund_failed", `The processor refused the refund of payment ${id}: ${result.message ?? ""}`);
  }
  return paymentToWire(settled.payment, requested.method);
}

/** A manual payment (bank transfer, cash) arrived: PENDING → PAID, settled as any payment is. */
export async function markPaymentPaid(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  return withEvents(context.db, async (tx) => {
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
      scope,
      payment.id,
      { state: "PAID", intentId: null },
      new Date(),
    );
    return paymentToWire(settled.payment, method);
  });
}
