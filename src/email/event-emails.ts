import { createHash } from "node:crypto";
import type { Executor } from "../db/client.js";
import type { EventSubscriber, SubscribedEvent } from "../events/subscribers.js";
import type { DonationRow } from "../modules/donations/donations.repo.js";
import { findDonation } from "../modules/donations/donations.repo.js";
import { listMemberEmails } from "../modules/members/members.repo.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import { findPaymentMethod } from "../modules/payment-methods/payment-methods.repo.js";
import { findPaymentRowsByIds, type PaymentRow } from "../modules/payments/payments.repo.js";
import { findSupporter } from "../modules/supporters/supporters.repo.js";
import { findApplicationOf, findWebhookEndpoint } from "../modules/webhooks/webhooks.repo.js";
import type { DonorChange } from "./messages/donor_change.js";
import { type EmailKind, enqueueEmail, enqueueEmails } from "./outbox.repo.js";

/**
 * The messages that follow from a change, as a subscriber of its event (src/events/subscribers.ts):
 * each is enqueued in the event's own transaction (sent once it commits, never if it rolls back)
 * under a dedupe key naming what it is about where the event can happen again, so an outcome settled
 * or replayed twice sends once. Receipts and account messages are transactional: marketing consent
 * does not stop them, but a supporter without an email address (or erased) gets nothing. Messages of
 * the clock (card expiry, digests, statements) and the donor's sign-in link are not changes: their
 * passes enqueue them.
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
  if (messages.length === 0) return;
  const to = await donorAddress(tx, donation);
  if (!to) return;
  for (const message of messages) {
    await enqueueEmail(tx, {
      organizationId: donation.organizationId,
      kind: message.kind,
      to,
      supporterId: donation.supporterId,
      donationId: donation.id,
      data: message.data ?? {},
      dedupeKey: message.dedupeKey,
    });
  }
}

/** The payment an event is about and its donation, as the transaction leaves them. */
async function paymentAndDonation(tx: Executor, event: SubscribedEvent) {
  if (event.resourceId === null) return undefined;
  const [payment] = await findPaymentRowsByIds(tx, event.organizationId, [event.resourceId]);
  if (!payment) return undefined;
  const donation = await findDonation(tx, event.organizationId, payment.donationId);
  return donation ? { payment, donation } : undefined;
}

/** The organization's notice of a new gift, when it asked for one per gift and has an address. */
async function enqueueGiftNotification(tx: Executor, donation: DonationRow) {
  const organization = await findOrganizationById(tx, donation.organizationId);
  if (!organization?.email || organization.giftNotifications !== "each") return;
  await enqueueEmail(tx, {
    organizationId: donation.organizationId,
    kind: "gift_notification",
    to: organization.email,
    supporterId: donation.supporterId,
    donationId: donation.id,
    dedupeKey: `gift_notification:donation:${donation.id}`,
  });
}

/**
 * `payment.paid`: a receipt for every payment received (not a test-mode one: test data never passes
 * for a real receipt); for a first payment also the thank-you of a new recurring gift and the
 * organization's notice, and the notice of a tribute gift to whom the donor named. Only for a payment settled by the platform: an offline gift a member
 * records as received (cash, a cheque, an old gift) is theirs to acknowledge.
 */
async function onPaymentPaid(tx: Executor, payment: PaymentRow, donation: DonationRow) {
  if (payment.state !== "PAID") return;
  const first = payment.billingCycle === null;
  const welcome = first && isRecurring(donation) && donation.state === "active";
  await enqueueToDonor(
    tx,
    donation,
    ...(payment.test
      ? []
      : [{ kind: "receipt", dedupeKey: `receipt:payment:${payment.id}`, data: { payment_id: payment.id } } as const]),
    ...(welcome
      ? [{ kind: "recurring_welcome", dedupeKey: `recurring_welcome:donation:${donation.id}` } as const]
      : []),
  );
  if (first) await enqueueGiftNotification(tx, donation);
  if (first && !payment.test) await enqueueTributeNotice(tx, donation);
}

/**
 * The notice of a gift in honour or in memory of someone, to whom the donor asked to be told (never
 * for test data: it goes to a third party), at most once a day per recipient. The donor's language is
 * read from the supporter.
 */
async function enqueueTributeNotice(tx: Executor, donation: DonationRow) {
  const to = donation.tributeRecipientEmail?.trim();
  if (!to || !donation.tributeName) return;
  await enqueueEmail(tx, {
    organizationId: donation.organizationId,
    kind: "tribute_notice",
    to,
    supporterId: donation.supporterId,
    donationId: donation.id,
    // One notice per recipient, organization and day: a stranger's €1 gifts cannot turn the
    // organization's sender into a way to write to someone over and over (the address hashed).
    dedupeKey: `tribute_notice:${createHash("sha256").update(to.toLowerCase()).digest("hex").slice(0, 24)}:${new Date().toISOString().slice(0, 10)}`,
  });
}

/** `payment.failed`: a renewal that failed and will be retried (the last failure stops the gift instead). */
async function onPaymentFailed(tx: Executor, payment: PaymentRow, donation: DonationRow) {
  if (payment.billingCycle === null || donation.state !== "past_due") return;
  await enqueueToDonor(tx, donation, {
    kind: "renewal_failed",
    dedupeKey: `renewal_failed:payment:${payment.id}`,
    data: { payment_id: payment.id, retry_date: donation.nextChargeDate?.toISOString() ?? null },
  });
}

/** `payment.created`: where to send the money, for a donor who chose a bank transfer at checkout. */
async function onPaymentCreated(tx: Executor, event: SubscribedEvent) {
  const found = await paymentAndDonation(tx, event);
  if (found?.payment.state !== "PENDING" || found.payment.billingCycle !== null) return;
  // The manual processor is the bank transfer a donor makes themselves.
  const method = await findPaymentMethod(tx, event.organizationId, found.payment.paymentMethodId);
  if (method?.processor !== "manual") return;
  await enqueueToDonor(tx, found.donation, {
    kind: "bank_transfer",
    dedupeKey: `bank_transfer:donation:${found.donation.id}`,
    data: { payment_id: found.payment.id },
  });
}

/** Which confirmation a change of a recurring gift's fields calls for, the first that applies. */
const DONOR_CHANGE_FIELDS: [field: string, change: DonorChange][] = [
  ["amount", "amount"],
  ["frequency", "frequency"],
  ["paused_until", "pause"],
  ["payment_method", "payment_method"],
  // A new method whose label is the old one's (the same card, a new expiry): before/after are their ids.
  ["payment_method_id", "payment_method"],
];

/**
 * `donation.updated`: a recurring gift stopped (by the donor, an admin or after its last failed
 * renewal: once per donation), or changed by a person (the donor or the organization: its amount,
 * frequency, pause or payment method, which only the recurring-gift changes touch), which the donor
 * is asked to confirm they know of. The platform's own updates (a renewal's next date, a state)
 * change none of those fields and send nothing.
 */
async function onDonationUpdated(tx: Executor, event: SubscribedEvent) {
  const { changes } = await event.read();
  if (!changes || event.resourceId === null) return;
  if (changes.activation?.after === "card_requested") {
    // An imported recurring gift an admin turned on without a card Donata can charge: the donor sets one up.
    const donation = await findDonation(tx, event.organizationId, event.resourceId);
    if (!donation) return;
    await enqueueToDonor(tx, donation, {
      kind: "gift_activation",
      dedupeKey: `gift_activation:donation:${donation.id}`,
    });
    return;
  }
  const stopped = changes.state?.after === "revoked";
  const change = DONOR_CHANGE_FIELDS.find(([field]) => changes[field]);
  if (!stopped && !change) return;
  const donation = await findDonation(tx, event.organizationId, event.resourceId);
  if (!donation || !isRecurring(donation)) return;
  if (stopped) {
    const by: CancelledBy =
      donation.cancelledBy === "donor" || donation.cancelledBy === "failed_payments" ? donation.cancelledBy : "admin";
    await enqueueToDonor(tx, donation, {
      kind: "recurring_cancelled",
      dedupeKey: `recurring_cancelled:donation:${donation.id}`,
      data: { by, ...(donation.cancelReason ? { reason: donation.cancelReason } : {}) },
    });
    return;
  }
  if (!change) return;
  const [field, kind] = change;
  await enqueueToDonor(tx, donation, {
    kind: "donor_change",
    data: { change: kind, before: changes[field]?.before ?? null, after: changes[field]?.after ?? null },
  });
}

/**
 * `supporter.updated` by the donor (the portal's contact form): the confirmation, once per request
 * however many records of the donor's identity it saved. The platform's own edits made while the
 * donor gives (the certification link) are not the donor's change.
 */
async function onSupporterUpdated(tx: Executor, event: SubscribedEvent) {
  if (event.origin.actor.type !== "donor" || event.resourceId === null) return;
  const { changes } = await event.read();
  if (changes && Object.keys(changes).every((field) => field === "certification_url")) return;
  const supporter = await findSupporter(tx, event.organizationId, event.resourceId);
  if (!supporter || supporter.eraseDate || !supporter.email?.trim()) return;
  await enqueueEmail(tx, {
    organizationId: event.organizationId,
    kind: "donor_change",
    to: supporter.email.trim(),
    supporterId: supporter.id,
    data: { change: "contact_details" },
    dedupeKey: event.origin.requestId ? `donor_change:contact_details:${event.origin.requestId}` : undefined,
  });
}

/**
 * `webhook_endpoint.updated` disabling an endpoint after its failures (the worker's doing): the
 * organization's owners and admins are told that an application of theirs stopped receiving events.
 */
async function onWebhookEndpointUpdated(tx: Executor, event: SubscribedEvent) {
  if (event.origin.actor.type !== "system" || event.resourceId === null) return;
  const { changes } = await event.read();
  if (changes?.status?.after !== "disabled") return;
  const endpoint = await findWebhookEndpoint(tx, event.organizationId, event.resourceId);
  if (!endpoint) return;
  const application = await findApplicationOf(tx, endpoint.applicationId);
  const since = endpoint.failingSince?.getTime() ?? 0;
  await enqueueEmails(
    tx,
    (await listMemberEmails(tx, event.organizationId, ["owner", "admin"])).map((to) => ({
      organizationId: event.organizationId,
      kind: "webhook_disabled" as const,
      to,
      data: { application_name: application?.name ?? "", endpoint_url: endpoint.url, reason: endpoint.disabledReason },
      dedupeKey: `webhook_disabled:${endpoint.id}:${since}:${to}`,
    })),
  );
}

export const emailSubscriber: EventSubscriber = {
  name: "email",
  types: [
    "payment.created",
    "payment.paid",
    "payment.failed",
    "donation.updated",
    "supporter.updated",
    "webhook_endpoint.updated",
  ],
  async handle(tx, event) {
    switch (event.type) {
      case "payment.created":
        return onPaymentCreated(tx, event);
      case "payment.paid":
      case "payment.failed": {
        // Settled here (PENDING before); a gift recorded as received already (offline) sends nothing.
        if (event.before?.state !== "PENDING") return;
        const found = await paymentAndDonation(tx, event);
        if (!found) return;
        if (event.type === "payment.paid") return onPaymentPaid(tx, found.payment, found.donation);
        return onPaymentFailed(tx, found.payment, found.donation);
      }
      case "donation.updated":
        return onDonationUpdated(tx, event);
      case "supporter.updated":
        return onSupporterUpdated(tx, event);
      case "webhook_endpoint.updated":
        return onWebhookEndpointUpdated(tx, event);
      default:
        return;
    }
  },
};
