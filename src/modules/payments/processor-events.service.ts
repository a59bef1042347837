import type { ProcessorRegistry } from "../../payments/processors/index.js";
import type { ChargeResult } from "../../payments/processors/processor.js";
import { type PaymentOutcome, settlePayment, settleRefund } from "../../payments/settlement.service.js";
import { findAttemptByIdempotencyKey } from "../giving/checkout-flow.repo.js";
import { type SettleContext, settleCheckoutAttempt } from "../giving/checkout-flow.service.js";
import { findPaymentBy } from "./payments.repo.js";

/**
 * Outcomes a processor reports on its own (a bank debit that settles days later, a refund made in
 * its dashboard; Stripe webhooks next): found by the charge's key or the processor's charge id and
 * settled through the same step as a charge we made and asked about. Reporting one twice settles
 * it once. Returns what it settled, or null for a charge the platform does not know.
 */
export async function settleChargeOutcome(
  context: Pick<SettleContext, "db" | "links"> & { processors?: ProcessorRegistry },
  idempotencyKey: string,
  outcome: PaymentOutcome,
  now = new Date(),
): Promise<"payment" | "checkout_attempt" | null> {
  const payment = await findPaymentBy(context.db, "idempotencyKey", idempotencyKey);
  if (payment) {
    await context.db.transaction((tx) =>
      settlePayment(tx, context.links, payment.organizationId, payment.id, outcome, now),
    );
    return "payment";
  }
  const attempt = await findAttemptByIdempotencyKey(context.db, idempotencyKey);
  if (!attempt) return null;
  const intentId = outcome.intentId ?? "";
  let charge: ChargeResult =
    outcome.state === "FAILED"
      ? { state: "FAILED" as const, intentId, code: outcome.code, message: outcome.message }
      : { state: outcome.state, intentId };
  // A Stripe event names the payment method by id only: a checkout's first payment asks Stripe for
  // the intent (outside any transaction), so the method saved is the one charged (the cus_…/pm_…
  // renewals need), not the donor's confirmation token; and its state now, whatever the event order.
  if (attempt.processor === "stripe" && charge.state !== "FAILED" && intentId && context.processors) {
    const stripe = await context.processors.stripeAccount(attempt.organizationId);
    if (stripe) charge = await stripe.processor.retrieveIntent(intentId);
  }
  await settleCheckoutAttempt(context, attempt.organizationId, attempt.id, charge, now);
  return "checkout_attempt";
}

/** A refund the processor made (from its dashboard, or one we asked for), by its charge id. */
export async function settleRefundByIntent(context: Pick<SettleContext, "db">, intentId: string) {
  const payment = await findPaymentBy(context.db, "processorIntentId", intentId);
  if (!payment) return null;
  return context.db.transaction((tx) => settleRefund(tx, payment.organizationId, payment.id));
}
