import { and, arrayContains, eq, ilike, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import {
  dateRangeConditions,
  escapeLike,
  listTenantPage,
  orderColumnsOf,
  orderTerms,
  selectTenantRow,
} from "../../db/list-query.js";
import { nextId } from "../../db/next-id.js";
import { donations } from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";
import type { DateBound, Order, Page } from "../../http/pagination.js";
import { DONATION_ORDER_FIELDS } from "./donations.schemas.js";

export type DonationRow = typeof donations.$inferSelect;

export interface DonationFilters {
  q?: string;
  state?: string;
  frequency?: number;
  campaignId?: number;
  supporterId?: number;
  tag?: string;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
  completedDateFrom?: DateBound;
  completedDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(donations, DONATION_ORDER_FIELDS);

function conditionsFor(scope: Scope, filters: DonationFilters): (SQL | undefined)[] {
  const tz = scope.timeZone;
  return [
    filters.q ? ilike(donations.code, `%${escapeLike(filters.q)}%`) : undefined,
    filters.state !== undefined ? eq(donations.state, filters.state) : undefined,
    filters.frequency !== undefined ? eq(donations.frequency, filters.frequency) : undefined,
    filters.campaignId !== undefined ? eq(donations.campaignId, filters.campaignId) : undefined,
    filters.supporterId !== undefined ? eq(donations.supporterId, filters.supporterId) : undefined,
    filters.tag !== undefined ? arrayContains(donations.tags, [filters.tag]) : undefined,
    ...dateRangeConditions(donations.createDate, filters.createDateFrom, filters.createDateTo, tz),
    ...dateRangeConditions(donations.updateDate, filters.updateDateFrom, filters.updateDateTo, tz),
    ...dateRangeConditions(donations.completedDate, filters.completedDateFrom, filters.completedDateTo, tz),
  ];
}

export async function listDonationRows(tx: Executor, scope: Scope, filters: DonationFilters, order: Order, page: Page) {
  const query = {
    organizationId: scope.organizationId,
    conditions: conditionsFor(scope, filters),
    order: orderTerms(orderColumns, donations.id, order),
    page,
  };
  return listTenantPage(tx, donations, "donations", query);
}

export function findDonationRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, donations, scope.organizationId, id);
}

export const donationCode = (id: number) => `DON-${String(id).padStart(8, "0")}`;

export const nextDonationId = (tx: Executor) => nextId(tx, "donations");

export const lockDonation = tenantRowLocker(donations);

export const findDonation = (tx: Executor, organizationId: number, id: number) =>
  selectTenantRow(tx, donations, organizationId, id);

/** A new donation under an id taken with nextDonationId; its code is derived from that id. */
export async function insertDonation(
  tx: Executor,
  id: number,
  values: Omit<typeof donations.$inferInsert, "id" | "code">,
): Promise<DonationRow> {
  const [row] = await tx
    .insert(donations)
    .values({ ...values, id, code: donationCode(id) })
    .returning();
  if (!row) throw new Error("donation insert returned nothing");
  return row;
}

/** Changes a donation's columns (state, schedule, links, gift details); its update date is now. */
export const updateDonation = tenantRowUpdater(donations);

export async function revokeDonation(tx: Executor, organizationId: number, id: number) {
  await tx
    .update(donations)
    .set({ state: "revoked", updateDate: sql`now()` })
    .where(and(eq(donations.organizationId, organizationId), eq(donations.id, id)));
}
