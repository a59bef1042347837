import { sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";

export interface DashboardPoint {
  period: string;
  amount: number;
  count: number;
}
export interface RecurringPoint {
  period: string;
  monthly: number;
  yearly: number;
}
export interface CampaignTotal {
  campaign_id: number;
  raised: number;
  donations: number;
}

async function rows<T>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  const result = await db.execute(query);
  return (result as unknown as { rows: T[] }).rows;
}

/**
 * The organization's figures for the admin dashboard, from PAID payments (refunded money is not
 * raised) and active recurring donations; months are calendar months of the organization's time zone.
 */
export async function dashboard(db: Db, scope: Scope & { currency: string }, months: number) {
  const org = scope.organizationId;
  const tz = scope.timeZone;
  const [totals] = await rows<{ month: string; year: string; active_monthly: string; active_yearly: string }>(
    db,
    sql`
      select
        coalesce(sum(p.amount) filter (where p.payment_date >= date_trunc('month', now() at time zone ${tz}) at time zone ${tz}), 0) as month,
        coalesce(sum(p.amount) filter (where p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}), 0) as year,
        (select coalesce(sum(amount), 0) from donations where organization_id = ${org} and state = 'active' and frequency = 12) as active_monthly,
        (select coalesce(sum(amount), 0) from donations where organization_id = ${org} and state = 'active' and frequency = 1) as active_yearly
      from payments p
      where p.organization_id = ${org} and p.state = 'PAID'
        and p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}`,
  );
  const series = await rows<{ period: string; amount: string; count: string; monthly: string; yearly: string }>(
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
        select to_char(p.payment_date at time zone ${tz}, 'YYYY-MM') as period, p.amount, d.frequency
        from payments p
        join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
        where p.organization_id = ${org} and p.state = 'PAID'
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
  const top = await rows<{ campaign_id: string; raised: string; donations: string }>(
    db,
    sql`
      select d.campaign_id, sum(p.amount) as raised, count(distinct d.id) as donations
      from payments p
      join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
      where p.organization_id = ${org} and p.state = 'PAID'
        and p.payment_date >= date_trunc('year', now() at time zone ${tz}) at time zone ${tz}
      group by d.campaign_id
      order by raised desc, d.campaign_id
      limit 5`,
  );
  return {
    currency: scope.currency,
    time_zone: tz,
    raised_this_month: Number(totals?.month ?? 0),
    raised_this_year: Number(totals?.year ?? 0),
    active_monthly_amount: Number(totals?.active_monthly ?? 0),
    active_yearly_amount: Number(totals?.active_yearly ?? 0),
    donations_over_time: series.map((row) => ({
      period: row.period,
      amount: Number(row.amount),
      count: Number(row.count),
    })),
    recurring_revenue: series.map((row) => ({
      period: row.period,
      monthly: Number(row.monthly),
      yearly: Number(row.yearly),
    })),
    top_campaigns: top.map((row) => ({
      campaign_id: Number(row.campaign_id),
      raised: Number(row.raised),
      donations: Number(row.donations),
    })),
  };
}
export type DashboardWire = Awaited<ReturnType<typeof dashboard>>;
