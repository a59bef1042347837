import type { Db, Executor } from "../db/client.js";
import { listOrganizationsDueDigest, listRenewalsWithExpiringCard } from "../modules/donations/donation-emails.repo.js";
import type { DonationRow } from "../modules/donations/donations.repo.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import type { PaymentRow } from "../modules/payments/payments.repo.js";
import { findSupporter } from "../modules/supporters/supporters.repo.js";
import { type EmailKind, enqueueEmail } from "./outbox.repo.js";

/**
 * The messages events send, each enqueued in the event's own transaction (sent once it commits,
 * never if it rolls back) under a dedupe key naming the event, so an event settled or replayed twice
 * sends once. Receipts and account messages are transactional: marketing consent does not stop
 * them, but a supporter without an email address (or erased) gets nothing.
 */

/** Who stopped a recurring gift (donations.cancelled_by). */
export type CancelledBy = "donor" | "admin" | "failed_payments";

const isRecurring = (donation: DonationRow) => donation.frequency === 1 || donation.frequency === 12;

/** The donor's address for the donation's messages, or undefined when there is none to write to. */
async function donorAddress(tx: Executor, donation: DonationRow): Promise<string | undefined> {
  const supporter = await findSupporter(tx, donation.organizationId, donation.supporterId);
  if (!supporter || supporter.eraseDate || !supporter.email?.trim()) return undefined;
  return supporter.email.trim();
}

type DonorMessage = { kind: EmailKind; dedupeKey?: string; data?: Record<string, unknown> };

/** Enqueues the donation's messages to its donor, the address read once for all of them. */
async function enqueueToDonor(tx: Executor, donation: DonationRow, ...messages: DonorMessage[]) {
  const to = await donorAddress(tx, donation);
  if (!to) return null;
  let id: number | null = null;
  for (const message of messages) {
    id = await enqueueEmail(tx, {
      organizationId: donation.organizationId,
      kind: message.kind,
      to,
      supporterId: donation.supporterId,
      donationId: donation.id,
      data: message.data ?? {},
      dedupeKey: message.dedupeKey,
    });
  }
  return id;
}

/** One message about a donation to its donor (a change the donor or an admin made: not deduplicated). */
export function enqueueDonorMessage(
  tx: Executor,
  donation: DonationRow,
  kind: EmailKind,
  data: Record<string, unknown>,
) {
  return enqueueToDonor(tx, donation, { kind, data });
}

/** The organization's notice of a new gift, when it asked for one per gift and has an address. */
async function enqueueGiftNotification(tx: Executor, donation: DonationRow) {
  const organization = await findOrganizationById(tx, donation.organizationId);
  if (!organization?.email || organization.giftNotifications !== "each") return null;
  return enqueueEmail(tx, {
    organizationId: donation.organizationId,
    kind: "gift_notification",
    to: organization.email,
    supporterId: donation.supporterId,
    donationId: donation.id,
    dedupeKey: `gift_notification:donation:${donation.id}`,
  });
}

/**
 * What settling a payment tells the donor (called by settlePayment in its transaction): a receipt
 * for every payment received (not a test-mode one); for a first payment also the thank-you of a new recurring gift and
 * the organization's notice; a failed renewal, or the gift stopped after the last one failed.
 */
export async function enqueueSettlementEmails(
  tx: Executor,
  result: { payment: PaymentRow; donation: DonationRow; settled: string },
) {
  const { payment, donation, settled } = result;
  if ((settled === "paid" || settled === "renewed") && payment.state === "PAID") {
    const receipt = {
      kind: "receipt",
      dedupeKey: `receipt:payment:${payment.id}`,
      data: { payment_id: payment.id },
    } as const;
    const first = settled === "paid" && payment.billingCycle === null;
    const welcome = first && isRecurring(donation) && donation.state === "active";
    // A test-mode payment is test data: no receipt email that could pass for a real one.
    await enqueueToDonor(
      tx,
      donation,
      ...(payment.test ? [] : [receipt]),
      ...(welcome
        ? [{ kind: "recurring_welcome", dedupeKey: `recurring_welcome:donation:${donation.id}` } as const]
        : []),
    );
    if (first) await enqueueGiftNotification(tx, donation);
    return;
  }
  if (settled === "failed" && payment.billingCycle !== null && donation.state === "past_due") {
    await enqueueToDonor(tx, donation, {
      kind: "renewal_failed",
      dedupeKey: `renewal_failed:payment:${payment.id}`,
      data: { payment_id: payment.id, retry_date: donation.nextChargeDate?.toISOString() ?? null },
    });
    return;
  }
  if (settled === "revoked") {
    await enqueueRecurringCancelled(tx, donation, "failed_payments", null, { payment_id: payment.id });
  }
}

/**
 * The donor's notice that a recurring gift stopped, by the donor, an admin or after the last failed
 * renewal; once per donation (a gift is revoked once).
 */
export function enqueueRecurringCancelled(
  tx: Executor,
  donation: DonationRow,
  by: CancelledBy,
  reason: string | null = null,
  extra: Record<string, unknown> = {},
) {
  return enqueueToDonor(tx, donation, {
    kind: "recurring_cancelled",
    dedupeKey: `recurring_cancelled:donation:${donation.id}`,
    data: { ...extra, by, ...(reason ? { reason } : {}) },
  });
}

/** Where to send the money, for a donor who chose a bank transfer at checkout. */
export function enqueueBankTransferInstructions(tx: Executor, donation: DonationRow, paymentId: number) {
  return enqueueToDonor(tx, donation, {
    kind: "bank_transfer",
    dedupeKey: `bank_transfer:donation:${donation.id}`,
    data: { payment_id: paymentId },
  });
}

const DAY_MS = 86_400_000;

/**
 * The worker's card-expiry pass: every active recurring gift charged within `horizonDays` on a card
 * that expires before that charge is warned once per card (a new card warns anew). Returns how many
 * warnings were enqueued.
 */
export async function enqueueCardExpiryWarnings(db: Db, now: Date, horizonDays = 30, limit = 1000) {
  const due = await listRenewalsWithExpiringCard(db, now, new Date(now.getTime() + horizonDays * DAY_MS), limit);
  let enqueued = 0;
  for (const row of due) {
    const id = await enqueueEmail(db, {
      organizationId: row.organizationId,
      kind: "card_expiring",
      to: row.email as string,
      supporterId: row.supporterId,
      donationId: row.donationId,
      data: {
        payment_method_id: row.paymentMethodId,
        next_charge_date: row.nextChargeDate?.toISOString() ?? null,
      },
      dedupeKey: `card_expiring:${row.donationId}:${row.paymentMethodId}`,
    });
    if (id !== null) enqueued += 1;
  }
  return enqueued;
}

/**
 * The worker's digest pass: each organization on daily notices gets yesterday's gifts (its time
 * zone) once, the first run after its midnight; a day without gifts sends nothing.
 */
export async function enqueueGiftDigests(db: Db, now: Date) {
  let enqueued = 0;
  for (const row of await listOrganizationsDueDigest(db, now)) {
    const id = await enqueueEmail(db, {
      organizationId: row.organizationId,
      kind: "gift_digest",
      to: row.email,
      data: { date: row.day },
      dedupeKey: `gift_digest:${row.day}`,
    });
    if (id !== null) enqueued += 1;
  }
  return enqueued;
}
