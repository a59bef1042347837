import { eq } from "drizzle-orm";
import { checkoutAttempts, payments } from "../db/schema.js";
import { type SettleContext, settleCheckoutAttempt } from "../modules/giving/checkout-flow.service.js";
import { type PaymentOutcome, settlePayment, settleRefund } from "./settlement.service.js";

/**
 * Outcomes a processor reports on its own (a bank debit that settles days later, a refund made in
 * its dashboard; Stripe webhooks next): found by the charge's key or the processor's charge id and
 * settled through the same step as a charge we made and asked about. Reporting one twice settles
 * it once. Returns what it settled, or null for a charge the platform does not know.
 */
export async function settleChargeOutcome(
  context: Pick<SettleContext, "db" | "links">,
  idempotencyKey: string,
  outcome: PaymentOutcome,
  now = new Date(),
): Promise<"payment" | "checkout_attempt" | null> {
  const [payment] = await context.db
    .select({ organizationId: payments.organizationId, id: payments.id })
    .from(payments)
    .where(eq(payments.idempotencyKey, idempotencyKey));
  if (payment) {
    await context.db.transaction((tx) =>
      settlePayment(tx, context.links, payment.organizationId, payment.id, outcome, now),
    );
    return "payment";
  }
  const [attempt] = await context.db
    .select({ organizationId: checkoutAttempts.organizationId, id: checkoutAttempts.id })
    .from(checkoutAttempts)
    .where(eq(checkoutAttempts.idempotencyKey, idempotencyKey));
  if (!attempt) return null;
  const intentId = outcome.intentId ?? "";
  const charge =
    outcome.state === "FAILED"
      ? { state: "FAILED" as const, intentId, code: outcome.code, message: outcome.message }
      : { state: outcome.state, intentId };
  await settleCheckoutAttempt(context, attempt.organizationId, attempt.id, charge, now);
  return "checkout_attempt";
}

/** A refund the processor made (from its dashboard, or one we asked for), by its charge id. */
export async function settleRefundByIntent(context: Pick<SettleContext, "db">, intentId: string) {
  const [payment] = await context.db
    .select({ organizationId: payments.organizationId, id: payments.id })
    .from(payments)
    .where(eq(payments.processorIntentId, intentId));
  if (!payment) return null;
  return context.db.transaction((tx) => settleRefund(tx, payment.organizationId, payment.id));
}
