import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { minorUnitExponent } from "../../payments/money.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { type RetentionRow, type Segment, selectRetentionCounts, selectRetentionSegment } from "./retention.repo.js";

export const MIN_YEAR = 1900;
export const MAX_YEAR = 9999;
export const MAX_PAGE = 1000;

/** One supporter of a segment: totals in the organization's currency, in its ISO 4217 minor units. */
export interface RetentionSupporter {
  id: number;
  name: string | null;
  email: string | null;
  first_gift_date: string;
  last_gift_date: string;
  last_year_total: number;
  lifetime_total: number;
}

export interface RetentionReport {
  year: number;
  currency: string;
  minor_unit_exponent: number;
  time_zone: string;
  counts: Record<Segment, number>;
  rate: { rate: number | null; retained: number; last_year_donors: number };
}

/** The calendar year it is now in the time zone. */
export function currentYear(timeZone: string, now = new Date()): number {
  return Number(new Intl.DateTimeFormat("en", { timeZone, year: "numeric" }).format(now));
}

/** The year asked, or this year of the organization's time zone; a clean 400 outside 1900 to 9999. */
export function retentionYear(scope: Scope, year: number | null | undefined): number {
  if (year === null || year === undefined) return currentYear(scope.timeZone);
  if (!Number.isInteger(year) || year < MIN_YEAR || year > MAX_YEAR) {
    throw new AppError("invalid_request", `Invalid argument "year": must be ${MIN_YEAR} to ${MAX_YEAR}`, {
      errors: [{ parameter: "year", message: `must be ${MIN_YEAR} to ${MAX_YEAR}` }],
    });
  }
  return year;
}

/** A page's limit and offset: limit 1 to 1000, offset from 0. */
export function retentionPage(limit: number | null | undefined, offset: number | null | undefined) {
  const page = { limit: limit ?? 100, offset: offset ?? 0 };
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE) {
    throw new AppError("invalid_request", `Invalid argument "limit": must be 1 to ${MAX_PAGE}`, {
      errors: [{ parameter: "limit", message: `must be 1 to ${MAX_PAGE}` }],
    });
  }
  if (!Number.isInteger(page.offset) || page.offset < 0) {
    throw new AppError("invalid_request", 'Invalid argument "offset": must be 0 or more', {
      errors: [{ parameter: "offset", message: "must be 0 or more" }],
    });
  }
  return page;
}

async function currencyOf(db: Db, scope: Scope) {
  const currency = (await findOrganizationById(db, scope.organizationId))?.currency ?? "EUR";
  return { currency, exponent: minorUnitExponent(currency) };
}

/** Hundredths to the currency's minor units, exactly (amounts are stored with two decimals). */
function toMinor(cents: string, exponent: number): number {
  const value = BigInt(cents);
  return Number(exponent >= 2 ? value * 10n ** BigInt(exponent - 2) : value / 10n ** BigInt(2 - exponent));
}

const iso = (value: string | Date) => new Date(value).toISOString();

function supporterOf(row: RetentionRow, exponent: number): RetentionSupporter {
  return {
    id: Number(row.supporter_id),
    name: row.name,
    email: row.email,
    first_gift_date: iso(row.first_gift_date),
    last_gift_date: iso(row.last_gift_date),
    last_year_total: toMinor(row.last_year_cents, exponent),
    lifetime_total: toMinor(row.lifetime_cents, exponent),
  };
}

/**
 * Donor retention in a calendar year of the organization's time zone: who lapsed last year (LYBUNT),
 * who lapsed earlier (SYBUNT), who gave for the first time, and the share of last year's donors who
 * gave again. A gift is a payment counted as raised (docs/admin.md, Retention).
 */
export async function retentionReport(db: Db, scope: Scope, year: number): Promise<RetentionReport> {
  const { currency, exponent } = await currencyOf(db, scope);
  const row = await selectRetentionCounts(db, scope.organizationId, scope.timeZone, year, currency);
  const retained = Number(row?.retained ?? 0);
  const lastYearDonors = Number(row?.last_year_donors ?? 0);
  return {
    year,
    currency,
    minor_unit_exponent: exponent,
    time_zone: scope.timeZone,
    counts: {
      lybunt: Number(row?.lybunt ?? 0),
      sybunt: Number(row?.sybunt ?? 0),
      first_time: Number(row?.first_time ?? 0),
    },
    rate: { rate: lastYearDonors === 0 ? null : retained / lastYearDonors, retained, last_year_donors: lastYearDonors },
  };
}

/** A page of one segment's supporters, the latest giver first. */
export async function retentionSegment(
  db: Db,
  scope: Scope,
  year: number,
  segment: Segment,
  page: { limit: number; offset: number },
): Promise<RetentionSupporter[]> {
  const { currency, exponent } = await currencyOf(db, scope);
  const rows = await selectRetentionSegment(db, scope.organizationId, scope.timeZone, year, currency, segment, page);
  return rows.map((row) => supporterOf(row, exponent));
}

/** Every page of a segment, for a download that never holds the whole list in memory. */
export async function* retentionSegmentPages(db: Db, scope: Scope, year: number, segment: Segment) {
  for (let offset = 0; ; offset += MAX_PAGE) {
    const items = await retentionSegment(db, scope, year, segment, { limit: MAX_PAGE, offset });
    if (items.length > 0) yield items;
    if (items.length < MAX_PAGE) return;
  }
}
