import type { Db } from "../db/client.js";
import { listOrganizationsDueDigest, listRenewalsWithExpiringCard } from "../modules/donations/donation-emails.repo.js";
import { enqueueEmail } from "./outbox.repo.js";

/**
 * The messages of the clock, enqueued by the worker's passes: a card about to expire before a
 * renewal, and an organization's daily digest of gifts. Messages that follow from a change are
 * subscribers of its event (event-emails.ts).
 */

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
