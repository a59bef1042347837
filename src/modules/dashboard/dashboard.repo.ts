import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { COUNTS_AS_RAISED, RAISED } from "../payments/payments.repo.js";

async function rows<T>(db: Executor, query: ReturnType<typeof sql>): Promise<T[]> {
  const result = await db.execute(query);
  return (result as unknown as { rows: T[] }).rows;
}

/** Raised this month and this year (PAID payments), and the active recurring amounts; test data left out. */
export async function selectDashboardTotals(db: Executor, org: number, tz: string) {
  const [totals] = await rows<{ month: string; year: string; active_monthly: string; active_yearly: string }>(
    db,
    sql`
      select
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('month', now() at time zone ${tz}) at time zone ${tz}), 0) as month,
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}), 0) as year,
        (select coalesce(sum(amount), 0) from donations where organization_id = ${org} and state = 'active' and frequency = 12 and not test) as active_monthly,
        (select coalesce(sum(amount), 0) from donations where organization_id = ${org} and state = 'active' and frequency = 1 and not test) as active_yearly
      from payments p
      where p.organization_id = ${org} and ${COUNTS_AS_RAISED}
        and p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}`,
  );
  return totals;
}

/** One row per month of the last `months`, oldest first: raised, count, monthly and yearly gifts apart. */
export function selectMonthlySeries(db: Executor, org: number, tz: string, months: number) {
  return rows<{ period: string; amount: string; count: string; monthly: string; yearly: string }>(
    db,
    sql`
      with months as (
        select to_char(m, 'YYYY-MM') as period
        from generate_series(
          date_trunc('month', now() at time zone ${tz}) - make_interval(months => ${months - 1}),
          date_trunc('month', now() at time zone ${tz}),
          interval '1 month') as m
      ),
      paid as (
        select to_char(p.payment_date at time zone ${tz}, 'YYYY-MM') as period, ${RAISED} as amount, d.frequency
        from payments p
        join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
        where p.organization_id = ${org} and ${COUNTS_AS_RAISED}
          and p.payment_date >= (date_trunc('month', now() at time zone ${tz}) - make_interval(months => ${months - 1})) at time zone ${tz}
      )
      select months.period,
        coalesce(sum(paid.amount), 0) as amount,
        count(paid.amount) as count,
        coalesce(sum(paid.amount) filter (where paid.frequency = 12), 0) as monthly,
        coalesce(sum(paid.amount) filter (where paid.frequency = 1), 0) as yearly
      from months left join paid on paid.period = months.period
      group by months.period
      order by months.period`,
  );
}

/** The five campaigns that raised the most this year. */
export function selectTopCampaigns(db: Executor, org: number, tz: string) {
  return rows<{ campaign_id: string; raised: string; donations: string }>(
    db,
    sql`
      select d.campaign_id, sum(${RAISED}) as raised, count(distinct d.id) as donations
      from payments p
      join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
      where p.organization_id = ${org} and ${COUNTS_AS_RAISED}
        and p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}
      group by d.campaign_id
      order by raised desc, d.campaign_id
      limit 5`,
  );
}

/** Raised all time, this year and this month (the organization's time zone) by the organization. */
export async function selectOrganizationRaised(db: Executor, org: number, tz: string) {
  const [row] = await rows<{ all_time: string; year: string; month: string }>(
    db,
    sql`
      select coalesce(sum(${RAISED}), 0) as all_time,
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}), 0) as year,
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('month', now() at time zone ${tz}) at time zone ${tz}), 0) as month
      from payments p
      where p.organization_id = ${org} and ${COUNTS_AS_RAISED}`,
  );
  return row;
}

/** Raised all time, this year and this month by each of the given campaigns (absent: nothing raised yet). */
export function selectCampaignsRaised(db: Executor, org: number, tz: string, campaignIds: readonly number[]) {
  return rows<{ campaign_id: string; all_time: string; year: string; month: string; donors: string }>(
    db,
    sql`
      select d.campaign_id,
        coalesce(sum(${RAISED}), 0) as all_time,
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}), 0) as year,
        coalesce(sum(${RAISED}) filter (where p.payment_date >= date_trunc('month', now() at time zone ${tz}) at time zone ${tz}), 0) as month,
        count(distinct d.supporter_id) as donors
      from payments p
      join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
      where p.organization_id = ${org} and ${COUNTS_AS_RAISED}
        and d.campaign_id in (${sql.join(
          campaignIds.map((id) => sql`${id}`),
          sql`, `,
        )})
      group by d.campaign_id`,
  );
}
