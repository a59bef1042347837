import { AppError } from "../../errors/app-error.js";
import { systemOrigin } from "../../events/origin.js";
import { type EventScope, recordEvent, withEvents } from "../../events/record-event.js";
import { fromMinorUnits } from "../../payments/money.js";
import type { ProcessorRegistry } from "../../payments/processors/index.js";
import type { ChargeResult, RefundReport } from "../../payments/processors/processor.js";
import { type PaymentOutcome, settlePayment, settleRefund } from "../../payments/settlement.service.js";
import { paymentEventData } from "../../payments/transitions.js";
import { findAttemptByIdempotencyKey } from "../giving/checkout-flow.repo.js";
import { type SettleContext, settleCheckoutAttempt } from "../giving/checkout-flow.service.js";
import { findPaymentBy, lockPayment, updatePaymentDispute } from "./payments.repo.js";
import { findRefundBy, insertRefund } from "./refunds.repo.js";

/** What a processor reports on its own is recorded as the platform's doing (no member, no request). */
const processorScope = (organizationId: number): EventScope => ({ organizationId, origin: systemOrigin("processor") });

/**
 * Outcomes a processor reports on its own (a bank debit that settles days later, a refund made in
 * its dashboard: Stripe's webhook events): found by the charge's key or the processor's charge id and
 * settled through the same step as a charge we made and asked about. Reporting one twice settles
 * it once. Returns what it settled, or null for a charge the platform does not know.
 */
export async function settleChargeOutcome(
  context: Pick<SettleContext, "db" | "links"> & { processors?: ProcessorRegistry },
  idempotencyKey: string,
  outcome: PaymentOutcome,
  now = new Date(),
  /** The organization whose processor reported it (a webhook): another's charge is not found. */
  organizationId?: number,
): Promise<"payment" | "checkout_attempt" | "unchanged" | null> {
  const payment = await findPaymentBy(context.db, "idempotencyKey", idempotencyKey, organizationId);
  if (payment) {
    const changed = await withEvents(context.db, async (tx) => {
      const before = await lockPayment(tx, payment.organizationId, payment.id);
      const { settled, payment: after } = await settlePayment(
        tx,
        context.links,
        processorScope(payment.organizationId),
        payment.id,
        outcome,
        now,
      );
      // A late report (settled already, or still pending under the same charge) changes nothing.
      return (
        settled !== "unchanged" && !(settled === "pending" && before?.processorIntentId === after.processorIntentId)
      );
    });
    return changed ? "payment" : "unchanged";
  }
  const attempt = await findAttemptByIdempotencyKey(context.db, idempotencyKey, organizationId);
  if (!attempt || (organizationId !== undefined && attempt.organizationId !== organizationId)) return null;
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
  const settled = await settleCheckoutAttempt(context, attempt.organizationId, attempt.id, charge, now);
  return settled.replayed ? "unchanged" : "checkout_attempt";
}

/**
 * A refund the processor reports (one we asked for, or one made in its dashboard), by its charge id:
 * found by the processor's refund id or our key, recorded with origin "processor" when Donata did
 * not ask for it, and settled. Reporting it twice settles it once. Null for a charge the
 * organization does not have.
 */
export async function settleProcessorRefund(
  context: Pick<SettleContext, "db">,
  organizationId: number,
  report: RefundReport,
  now = new Date(),
) {
  if (!report.intentId) return null;
  const payment = await findPaymentBy(context.db, "processorIntentId", report.intentId, organizationId);
  if (!payment) return null;
  const find = async () =>
    (report.refundId
      ? await findRefundBy(context.db, organizationId, "processorRefundId", report.refundId)
      : undefined) ??
    (report.idempotencyKey
      ? await findRefundBy(context.db, organizationId, "idempotencyKey", report.idempotencyKey)
      : undefined);
  let refund = await find();
  if (refund && refund.paymentId !== payment.id) return null;
  if (!refund) {
    if (!report.refundId || report.amountMinor <= 0) return null;
    refund = await context.db.transaction(async (tx) => {
      const row = await lockPayment(tx, organizationId, payment.id);
      if (!row) return undefined;
      if (report.currency !== row.currency) {
        throw new AppError("invalid_request", `The refund is in ${report.currency}, the payment in ${row.currency}`);
      }
      return insertRefund(tx, {
        organizationId,
        paymentId: payment.id,
        amount: fromMinorUnits(report.amountMinor, report.currency),
        currency: row.currency,
        origin: "processor",
        idempotencyKey: `processor:${report.refundId}`,
        processorRefundId: report.refundId,
      });
    });
    // Recorded meanwhile by the same report delivered twice at once.
    refund ??= await find();
    if (!refund) return null;
  }
  const before = refund;
  const result = await withEvents(context.db, (tx) =>
    settleRefund(tx, processorScope(organizationId), before.id, report, now),
  );
  // Told again what it knows (settled already, or pending under the same refund id): nothing changed.
  const changed = before.state !== result.refund.state || before.processorRefundId !== result.refund.processorRefundId;
  return { ...result, changed };
}

/** A dispute's statuses once it is over (Stripe's): a late "updated" event never reopens it. */
const CLOSED_DISPUTE_STATUSES = new Set(["won", "lost", "warning_closed", "prevented"]);

/**
 * A chargeback the processor reports on a charge (opened, updated, closed), recorded on its payment.
 * Returns the payment, or null for a charge the organization does not have, "unchanged" for a late
 * report of a dispute already closed.
 */
export async function recordDispute(
  context: Pick<SettleContext, "db">,
  organizationId: number,
  intentId: string,
  dispute: { id: string; status: string; reason: string; amountMinor: number; currency: string; date: Date },
) {
  const found = await findPaymentBy(context.db, "processorIntentId", intentId, organizationId);
  if (!found) return null;
  return withEvents(context.db, async (tx) => {
    const payment = await lockPayment(tx, organizationId, found.id);
    if (!payment) return null;
    const reopened = !CLOSED_DISPUTE_STATUSES.has(dispute.status);
    if (payment.disputeId === dispute.id && CLOSED_DISPUTE_STATUSES.has(payment.disputeStatus ?? "") && reopened) {
      return "unchanged" as const;
    }
    const { amountMinor, currency, ...rest } = dispute;
    const amount = fromMinorUnits(amountMinor, currency);
    if (
      payment.disputeId === dispute.id &&
      payment.disputeStatus === dispute.status &&
      payment.disputeReason === dispute.reason &&
      payment.disputeAmount === amount
    ) {
      return "unchanged" as const;
    }
    const updated = await updatePaymentDispute(tx, organizationId, payment.id, { ...rest, amount });
    if (!updated) return null;
    await recordEvent(tx, processorScope(organizationId), "payment.disputed", updated.id, () =>
      paymentEventData(tx, updated),
    );
    return updated;
  });
}
