import type { Executor } from "../db/client.js";
import { notFound } from "../errors/app-error.js";
import type { EventScope } from "../events/record-event.js";
import { inEventsTransaction, recordEvent } from "../events/record-event.js";
import { queueRenewal } from "../jobs/jobs.repo.js";
import { type DonationRow, lockDonation, revokeDonation, updateDonation } from "../modules/donations/donations.repo.js";
import { findPaymentMethod } from "../modules/payment-methods/payment-methods.repo.js";
import {
  addRefundedAmount,
  countPaidPayments,
  lockPayment,
  type PaymentRow,
  paymentToWire,
  updatePayment,
} from "../modules/payments/payments.repo.js";
import { lockRefund, type RefundRow, updateRefund } from "../modules/payments/refunds.repo.js";
import { type SupporterRow, setCertificationUrl, supporterWireRow } from "../modules/supporters/supporters.repo.js";
import type { RefundResult } from "./processors/processor.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES, retryDate } from "./schedule.js";
import { assertTransition, donationEventData, transitionDonation, transitionPayment } from "./transitions.js";

/** The signed document links settling writes (`DocumentLinks` in src/modules/documents/ is one). */
export interface SettlementLinks {
  receiptUrl(organizationId: number, donationId: number): string;
  statementUrl(organizationId: number, supporterId: number): string;
}

/** What the processor says became of a charge: now, later (a bank debit, a webhook) or to the reconciler. */
export type PaymentOutcome =
  | { state: "PAID"; intentId: string | null }
  | { state: "PENDING"; intentId: string | null }
  | { state: "FAILED"; intentId: string | null; code: string; message: string };

/** How settling changed the gift: a first payment, a renewal paid or failed, or nothing (already settled). */
export type Settled = "paid" | "renewed" | "failed" | "revoked" | "pending" | "unchanged";

/** The payment and its donation as settling left them, and the supporter when it changed them (a first payment's statement link). */
export interface PaymentSettlement {
  payment: PaymentRow;
  donation: DonationRow;
  supporter?: SupporterRow;
  settled: Settled;
}

/**
 * A donation's first payment arrived (card at checkout, or a transfer marked paid): done or active,
 * its receipt link, its next charge date and queued first renewal, and the supporter's statement link.
 */
async function settleFirstPayment(
  tx: Executor,
  scope: EventScope,
  links: SettlementLinks,
  donation: DonationRow,
  now: Date,
) {
  const recurring = donation.frequency === 1 || donation.frequency === 12;
  const next = recurring ? "active" : "done";
  const nextChargeDate = recurring ? cycleDueDate(now, donation.frequency as number, 1) : null;
  const row = await transitionDonation(tx, scope, donation, next, () =>
    updateDonation(tx, donation.organizationId, donation.id, {
      state: next,
      completedDate: now,
      receiptUrl: links.receiptUrl(donation.organizationId, donation.id),
      nextChargeDate,
    }),
  );
  if (nextChargeDate) {
    await queueRenewal(tx, {
      organizationId: donation.organizationId,
      donationId: donation.id,
      cycle: 1,
      runDate: nextChargeDate,
    });
  }
  const supporter = await setCertificationUrl(
    tx,
    donation.organizationId,
    donation.supporterId,
    links.statementUrl(donation.organizationId, donation.supporterId),
  );
  if (supporter) {
    const after = supporterWireRow.fromRow(supporter);
    await recordEvent(tx, scope, "supporter.updated", supporter.id, after, {
      before: { ...after, certification_url: null },
    });
  }
  return { donation: row, supporter };
}

/** A renewal was paid: active again, failures forgotten, the next cycle queued. */
async function settleRenewalPaid(tx: Executor, scope: EventScope, donation: DonationRow, cycle: number, now: Date) {
  const start = donation.completedDate;
  const frequency = donation.frequency ?? 0;
  if (!start || (frequency !== 1 && frequency !== 12)) return donation;
  // After an outage, one charge covers the overdue cycles: the schedule resumes at the first
  // cycle still ahead instead of charging the donor once per missed period.
  let nextCycle = cycle + 1;
  const skipped: number[] = [];
  while (cycleDueDate(start, frequency, nextCycle) <= now) skipped.push(nextCycle++);
  const nextDue = cycleDueDate(start, frequency, nextCycle);
  const write = () =>
    updateDonation(tx, donation.organizationId, donation.id, {
      state: "active",
      failureCount: 0,
      nextChargeDate: nextDue,
      ...(skipped.length > 0 ? { skippedCycles: [...donation.skippedCycles, ...skipped] } : {}),
    });
  let row: DonationRow;
  if (donation.state === "past_due") {
    row = await transitionDonation(tx, scope, donation, "active", write);
  } else {
    // Still active: its next charge date moved on.
    row = (await write()) ?? donation;
    await recordEvent(tx, scope, "donation.updated", row.id, donationEventData(row), {
      before: donationEventData(donation),
    });
  }
  await queueRenewal(tx, {
    organizationId: donation.organizationId,
    donationId: donation.id,
    cycle: nextCycle,
    runDate: nextDue,
  });
  return row;
}

/** A renewal failed: past_due with a retry queued, or revoked at the last failure. */
async function settleRenewalFailed(tx: Executor, scope: EventScope, donation: DonationRow, cycle: number, now: Date) {
  const failures = donation.failureCount + 1;
  if (failures >= MAX_RENEWAL_FAILURES) {
    const row = await transitionDonation(tx, scope, donation, "revoked", () =>
      updateDonation(tx, donation.organizationId, donation.id, {
        state: "revoked",
        failureCount: failures,
        nextChargeDate: null,
        cancelledBy: "failed_payments",
      }),
    );
    return { donation: row, settled: "revoked" as const };
  }
  const retry = retryDate(now, failures);
  const row = await transitionDonation(tx, scope, donation, "past_due", () =>
    updateDonation(tx, donation.organizationId, donation.id, {
      state: "past_due",
      failureCount: failures,
      nextChargeDate: retry,
    }),
  );
  await queueRenewal(tx, { organizationId: donation.organizationId, donationId: donation.id, cycle, runDate: retry });
  return { donation: row, settled: "failed" as const };
}

/**
 * The one settlement step: applies the processor's outcome to a PENDING payment and its donation
 * (state, receipt link, next charge date, queued renewal, statement link), in the caller's
 * transaction, which must be a `withEvents` one: what the donor is told (receipt, failed renewal,
 * …) follows from the events, by their subscribers, once the work is done. Checkout completion,
 * renewals, mark-paid, the reconciler and processor webhooks all settle here. A payment already
 * settled is left as it is, so an outcome delivered twice settles (and emails) once. Each change is
 * recorded as its event (`payment.paid`/`.failed`, `donation.updated`) for the scope's actor: the
 * donor at checkout, a member marking a transfer paid, the platform for renewals, webhooks and the
 * reconciler.
 */
export async function settlePayment(
  tx: Executor,
  links: SettlementLinks,
  scope: EventScope,
  paymentId: number,
  outcome: PaymentOutcome,
  now: Date,
): Promise<PaymentSettlement> {
  // Its events' subscribers must see the settlement whole (a first payment's gift already active).
  if (!inEventsTransaction(tx)) throw new Error("settlePayment runs in a withEvents transaction");
  return applyPaymentOutcome(tx, links, scope, paymentId, outcome, now);
}

async function applyPaymentOutcome(
  tx: Executor,
  links: SettlementLinks,
  scope: EventScope,
  paymentId: number,
  outcome: PaymentOutcome,
  now: Date,
): Promise<PaymentSettlement> {
  const { organizationId } = scope;
  const payment = await lockPayment(tx, organizationId, paymentId);
  if (!payment) throw notFound("Payment");
  let donation = await lockDonation(tx, organizationId, payment.donationId);
  if (!donation) throw notFound("Donation");
  if (payment.state !== "PENDING") return { payment, donation, settled: "unchanged" };
  const intentId = outcome.intentId ?? payment.processorIntentId;
  if (outcome.state === "PENDING") {
    if (intentId === payment.processorIntentId) return { payment, donation, settled: "pending" };
    const row = await updatePayment(tx, organizationId, payment.id, { processorIntentId: intentId });
    return { payment: row ?? payment, donation, settled: "pending" };
  }
  const renewal = payment.billingCycle !== null && (donation.state === "active" || donation.state === "past_due");
  if (outcome.state === "PAID") {
    const paid = await transitionPayment(tx, scope, payment, "PAID", () =>
      updatePayment(tx, organizationId, payment.id, {
        state: "PAID",
        paymentDate: now,
        processorIntentId: intentId,
      }),
    );
    if (donation.state === "pending") {
      const first = await settleFirstPayment(tx, scope, links, donation, now);
      return { payment: paid, donation: first.donation, supporter: first.supporter, settled: "paid" };
    }
    if (renewal) {
      donation = await settleRenewalPaid(tx, scope, donation, payment.billingCycle as number, now);
      return { payment: paid, donation, settled: "renewed" };
    }
    // The donation moved on meanwhile (cancelled while its renewal was charged): the money is recorded.
    return { payment: paid, donation, settled: "paid" };
  }
  const failed = await transitionPayment(tx, scope, payment, "FAILED", () =>
    updatePayment(tx, organizationId, payment.id, {
      state: "FAILED",
      processorIntentId: intentId,
      failureCode: outcome.code,
      failureMessage: outcome.message,
    }),
  );
  if (!renewal) return { payment: failed, donation, settled: "failed" };
  const result = await settleRenewalFailed(tx, scope, donation, payment.billingCycle as number, now);
  return { payment: failed, ...result };
}

/** How settling a refund changed things: money back (the payment now REFUNDED or still partly paid), refused, still under way, or nothing. */
export type RefundSettled = "refunded" | "partly_refunded" | "failed" | "pending" | "unchanged";

/**
 * The one refund settlement step, in the caller's transaction: the processor's answer applied to a
 * PENDING refund. SUCCEEDED adds its amount to the payment's refunded amount; the payment becomes
 * REFUNDED when that reaches its amount, and a one-off gift with no paid payment left is revoked.
 * FAILED leaves the payment as it was; PENDING waits for the processor's event or the reconciler.
 * A refund already settled is left as it is, so an answer delivered twice settles once. Money back
 * is recorded as `payment.refunded` (in full or in part), a revoked gift as `donation.updated`.
 */
export async function settleRefund(
  tx: Executor,
  scope: EventScope,
  refundId: number,
  result: RefundResult,
  now: Date,
): Promise<{ refund: RefundRow; payment: PaymentRow; settled: RefundSettled }> {
  const { organizationId } = scope;
  const refund = await lockRefund(tx, organizationId, refundId);
  if (!refund) throw notFound("Refund");
  const payment = await lockPayment(tx, organizationId, refund.paymentId);
  if (!payment) throw notFound("Payment");
  if (refund.state !== "PENDING") return { refund, payment, settled: "unchanged" };
  const processorRefundId = result.refundId || refund.processorRefundId;
  if (result.state === "PENDING") {
    if (processorRefundId === refund.processorRefundId) return { refund, payment, settled: "pending" };
    const row = await updateRefund(tx, organizationId, refund.id, { processorRefundId });
    return { refund: row ?? refund, payment, settled: "pending" };
  }
  if (result.state === "FAILED") {
    const row = await updateRefund(tx, organizationId, refund.id, {
      state: "FAILED",
      processorRefundId,
      failureMessage: result.message ?? "The processor refused the refund",
      settleDate: now,
    });
    return { refund: row ?? refund, payment, settled: "failed" };
  }
  const settledRefund = await updateRefund(tx, organizationId, refund.id, {
    state: "SUCCEEDED",
    processorRefundId,
    settleDate: now,
  });
  if (payment.state !== "PAID") return { refund: settledRefund ?? refund, payment, settled: "unchanged" };
  const donation = await lockDonation(tx, organizationId, payment.donationId);
  if (!donation) throw notFound("Donation");
  const updated = await addRefundedAmount(tx, organizationId, payment.id, Math.round(refund.amount * 100));
  if (!updated) throw notFound("Payment");
  // A refund in part leaves the payment PAID; in full it becomes REFUNDED (the machine's transition).
  if (updated.state === "REFUNDED") assertTransition("payment", payment.id, payment.state, "REFUNDED");
  const method = await findPaymentMethod(tx, organizationId, payment.paymentMethodId);
  await recordEvent(tx, scope, "payment.refunded", updated.id, paymentToWire(updated, method), {
    before: paymentToWire(payment, method),
  });
  if (updated.state !== "REFUNDED")
    return { refund: settledRefund ?? refund, payment: updated, settled: "partly_refunded" };
  if (donation.state === "done" && (await countPaidPayments(tx, organizationId, donation.id)) === 0) {
    await transitionDonation(tx, scope, donation, "revoked", () => revokeDonation(tx, organizationId, donation.id));
  }
  return { refund: settledRefund ?? refund, payment: updated, settled: "refunded" };
}
