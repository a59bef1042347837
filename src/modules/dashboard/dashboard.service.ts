import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import {
  selectCampaignsRaised,
  selectDashboardTotals,
  selectMonthlySeries,
  selectOrganizationRaised,
  selectTopCampaigns,
} from "./dashboard.repo.js";

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
/** Raised (payments.repo RAISED), all time and in this year and month of the organization's time zone. */
export interface RaisedWire {
  all_time: number;
  this_year: number;
  this_month: number;
}

export interface CampaignRaisedWire extends RaisedWire {
  donors: number;
}

/** What each campaign raised, in the order asked (nothing yet: zeros). */
export async function campaignsRaised(db: Db, scope: Scope, campaignIds: readonly number[]) {
  const rows = campaignIds.length
    ? await selectCampaignsRaised(db, scope.organizationId, scope.timeZone, campaignIds)
    : [];
  const byId = new Map(rows.map((row) => [Number(row.campaign_id), row]));
  return campaignIds.map((id): CampaignRaisedWire => {
    const row = byId.get(id);
    return {
      all_time: Number(row?.all_time ?? 0),
      this_year: Number(row?.year ?? 0),
      this_month: Number(row?.month ?? 0),
      donors: Number(row?.donors ?? 0),
    };
  });
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
  const raised = await selectOrganizationRaised(db, org, tz);
  return {
    currency,
    time_zone: tz,
    raised_this_month: Number(totals?.month ?? 0),
    raised_this_year: Number(totals?.year ?? 0),
    raised: {
      all_time: Number(raised?.all_time ?? 0),
      this_year: Number(raised?.year ?? 0),
      this_month: Number(raised?.month ?? 0),
    } satisfies RaisedWire,
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
