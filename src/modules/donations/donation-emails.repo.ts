import { and, asc, eq, gte, isNull, lt, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { campaigns, donations, organizations, paymentMethods, supporters } from "../../db/schema.js";

/** The first instant of a local calendar day (YYYY-MM-DD) in a time zone, by the database's zone rules. */
const startOfLocalDay = (day: string, timeZone: string, plusDays = 0) =>
  sql`((${day}::date + ${plusDays}::int)::timestamp at time zone ${timeZone}::text)`;

/**
 * Active recurring gifts whose card expires before their next charge, due within `horizon`, and not
 * warned yet for this card (the dedupe key the warning is enqueued with): what the card-expiry scan
 * warns about. A card is valid through the last day of its expiry month (UTC).
 */
export async function listRenewalsWithExpiringCard(tx: Executor, now: Date, horizon: Date, limit: number) {
  const cardEnd = sql`(make_date(${paymentMethods.expiryYear}::int, ${paymentMethods.expiryMonth}::int, 1) + interval '1 month')::timestamp at time zone 'UTC'`;
  return tx
    .select({
      organizationId: donations.organizationId,
      donationId: donations.id,
      supporterId: donations.supporterId,
      email: supporters.email,
      paymentMethodId: paymentMethods.id,
      expiryMonth: paymentMethods.expiryMonth,
      expiryYear: paymentMethods.expiryYear,
      nextChargeDate: donations.nextChargeDate,
    })
    .from(donations)
    .innerJoin(
      paymentMethods,
      and(
        eq(paymentMethods.organizationId, donations.organizationId),
        eq(paymentMethods.id, donations.paymentMethodId),
      ),
    )
    .innerJoin(
      supporters,
      and(eq(supporters.organizationId, donations.organizationId), eq(supporters.id, donations.supporterId)),
    )
    .where(
      and(
        eq(donations.state, "active"),
        gte(donations.nextChargeDate, now),
        lt(donations.nextChargeDate, horizon),
        sql`${paymentMethods.expiryYear} is not null and ${paymentMethods.expiryMonth} between 1 and 12`,
        sql`${cardEnd} <= ${donations.nextChargeDate}`,
        sql`${supporters.email} is not null`,
        isNull(supporters.eraseDate),
        sql`not exists (select 1 from outbox_messages m where m.organization_id = ${donations.organizationId}
          and m.dedupe_key = 'card_expiring:' || ${donations.id} || ':' || ${paymentMethods.id})`,
      ),
    )
    .orderBy(asc(donations.organizationId), asc(donations.id))
    .limit(limit);
}

/**
 * Organizations that asked for a daily digest of gifts and have an address, with the day before
 * `now` in their time zone, when that day had gifts and its digest was not enqueued yet. The
 * organizations first, then one look at each one's own rows (one shard each on a cluster).
 */
export async function listOrganizationsDueDigest(tx: Executor, now: Date) {
  const yesterday = sql<string>`to_char((${now.toISOString()}::timestamptz at time zone ${organizations.timeZone})::date - 1, 'YYYY-MM-DD')`;
  const candidates = await tx
    .select({
      organizationId: organizations.id,
      email: organizations.email,
      day: yesterday,
      timeZone: organizations.timeZone,
    })
    .from(organizations)
    .where(and(eq(organizations.giftNotifications, "daily"), sql`${organizations.email} is not null`))
    .orderBy(asc(organizations.id));
  const due: { organizationId: number; email: string; day: string }[] = [];
  for (const { organizationId, email, day, timeZone } of candidates) {
    const result = (await tx.execute(sql`select
        not exists (select 1 from outbox_messages m where m.organization_id = ${organizationId}
          and m.dedupe_key = ${`gift_digest:${day}`}) as "notSent",
        exists (select 1 from donations d where d.organization_id = ${organizationId}
          and d.completed_date >= (${day}::date::timestamp at time zone ${timeZone})
          and d.completed_date < ((${day}::date + 1)::timestamp at time zone ${timeZone})) as "hadGifts"`)) as unknown as {
      rows: { notSent: boolean; hadGifts: boolean }[];
    };
    const [row] = result.rows;
    if (row?.notSent && row.hadGifts) due.push({ organizationId, email: email as string, day });
  }
  return due;
}

/** The gifts (donations whose first payment arrived) of one local day of the organization, oldest first. */
export function listGiftsOfDay(tx: Executor, organizationId: number, day: string, timeZone: string) {
  return tx
    .select({
      id: donations.id,
      code: donations.code,
      amount: donations.amount,
      coveredFee: donations.coveredFee,
      currency: donations.currency,
      frequency: donations.frequency,
      completedDate: donations.completedDate,
      campaignTitle: campaigns.title,
      supporter: {
        firstName: supporters.firstName,
        lastName: supporters.lastName,
        businessName: supporters.businessName,
        email: supporters.email,
        eraseDate: supporters.eraseDate,
      },
    })
    .from(donations)
    .innerJoin(
      campaigns,
      and(eq(campaigns.organizationId, donations.organizationId), eq(campaigns.id, donations.campaignId)),
    )
    .innerJoin(
      supporters,
      and(eq(supporters.organizationId, donations.organizationId), eq(supporters.id, donations.supporterId)),
    )
    .where(
      and(
        eq(donations.organizationId, organizationId),
        gte(donations.completedDate, startOfLocalDay(day, timeZone)),
        lt(donations.completedDate, startOfLocalDay(day, timeZone, 1)),
      ),
    )
    .orderBy(asc(donations.completedDate), asc(donations.id));
}

/** A donation with what its messages name: supporter, campaign title, payment method. */
export async function findDonationForEmail(tx: Executor, organizationId: number, donationId: number) {
  const [row] = await tx
    .select({ donation: donations, supporter: supporters, campaignTitle: campaigns.title, method: paymentMethods })
    .from(donations)
    .innerJoin(
      supporters,
      and(eq(supporters.organizationId, donations.organizationId), eq(supporters.id, donations.supporterId)),
    )
    .innerJoin(
      campaigns,
      and(eq(campaigns.organizationId, donations.organizationId), eq(campaigns.id, donations.campaignId)),
    )
    .leftJoin(
      paymentMethods,
      and(
        eq(paymentMethods.organizationId, donations.organizationId),
        eq(paymentMethods.id, donations.paymentMethodId),
      ),
    )
    .where(and(eq(donations.organizationId, organizationId), eq(donations.id, donationId)));
  return row;
}
