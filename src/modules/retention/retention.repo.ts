import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { COUNTS_AS_RAISED, RAISED } from "../payments/payments.repo.js";

export const SEGMENTS = ["lybunt", "sybunt", "first_time"] as const;
export type Segment = (typeof SEGMENTS)[number];

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = await db.execute(query);
  return (result as unknown as { rows: T[] }).rows;
}

/**
 * Each supporter's gifts up to the end of `year` (calendar years of the organization's time zone):
 * a gift is a payment that counts as raised (payments.repo COUNTS_AS_RAISED: PAID, not a test) and
 * still holds money (RAISED > 0: a payment refunded or lost in a dispute in full gave nothing).
 * Totals are of the payments in the organization's currency, in hundredths.
 */
function givers(org: number, tz: string, year: number, currency: string) {
  return sql`
    gifts as (
      select d.supporter_id, p.payment_date, p.currency, ${RAISED} as amount,
        extract(year from p.payment_date at time zone ${tz})::int as year
      from payments p
      join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
      where p.organization_id = ${org} and ${COUNTS_AS_RAISED} and p.payment_date is not null
        and ${RAISED} > 0
        and p.payment_date < make_timestamp(${year + 1}, 1, 1, 0, 0, 0) at time zone ${tz}
    ),
    givers as (
      select supporter_id,
        min(year) as first_year,
        bool_or(year = ${year}) as gave_this_year,
        bool_or(year = ${year - 1}) as gave_last_year,
        bool_or(year < ${year - 1}) as gave_before,
        min(payment_date) as first_gift_date,
        max(payment_date) as last_gift_date,
        round(coalesce(sum(amount) filter (where year = ${year - 1} and currency = ${currency}), 0) * 100)::bigint as last_year_cents,
        round(coalesce(sum(amount) filter (where currency = ${currency}), 0) * 100)::bigint as lifetime_cents
      from gifts
      group by supporter_id
    )`;
}

/** Lapsed last year (LYBUNT), lapsed some years ago (SYBUNT), new this year. */
function segmentFilter(segment: Segment, year: number): SQL {
  if (segment === "lybunt") return sql`g.gave_last_year and not g.gave_this_year`;
  if (segment === "sybunt") return sql`g.gave_before and not g.gave_last_year and not g.gave_this_year`;
  return sql`g.first_year = ${year}`;
}

/** How many supporters each segment holds, and the two counts of the retention rate. */
export async function selectRetentionCounts(db: Executor, org: number, tz: string, year: number, currency: string) {
  const [row] = await rows<Record<Segment | "retained" | "last_year_donors", string>>(
    db,
    sql`
      with ${givers(org, tz, year, currency)}
      select
        count(*) filter (where ${segmentFilter("lybunt", year)}) as lybunt,
        count(*) filter (where ${segmentFilter("sybunt", year)}) as sybunt,
        count(*) filter (where ${segmentFilter("first_time", year)}) as first_time,
        count(*) filter (where g.gave_last_year and g.gave_this_year) as retained,
        count(*) filter (where g.gave_last_year) as last_year_donors
      from givers g`,
  );
  return row;
}

export interface RetentionRow {
  supporter_id: string;
  name: string | null;
  email: string | null;
  first_gift_date: string | Date;
  last_gift_date: string | Date;
  last_year_cents: string;
  lifetime_cents: string;
}

/** A page of one segment's supporters, the latest giver first (ties: the newest supporter first). */
export function selectRetentionSegment(
  db: Executor,
  org: number,
  tz: string,
  year: number,
  currency: string,
  segment: Segment,
  page: { limit: number; offset: number },
) {
  return rows<RetentionRow>(
    db,
    sql`
      with ${givers(org, tz, year, currency)}
      select g.supporter_id,
        coalesce(nullif(trim(concat_ws(' ', s.first_name, s.last_name)), ''), s.business_name) as name,
        s.email, g.first_gift_date, g.last_gift_date, g.last_year_cents, g.lifetime_cents
      from givers g
      join supporters s on s.organization_id = ${org} and s.id = g.supporter_id
      where ${segmentFilter(segment, year)}
      order by g.last_gift_date desc, g.supporter_id desc
      limit ${page.limit} offset ${page.offset}`,
  );
}
