import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { selectDashboardTotals, selectMonthlySeries, selectTopCampaigns } from "./dashboard.repo.js";

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

/**
 * The organization's figures for the admin dashboard, from PAID payments (refunded money is not
 * raised) and active recurring donations; months are calendar months of the organization's time zone.
 */
export async function dashboard(db: Db, scope: Scope, months: number) {
  const org = scope.organizationId;
  const tz = scope.timeZone;
  const currency = (await findOrganizationById(db, org))?.currency ?? "EUR";
  const totals = await selectDashboardTotals(db, org, tz);
  const series = await selectMonthlySeries(db, org, tz, months);
  const top = await selectTopCampaigns(db, org, tz);
  return {
    currency,
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
