import { and, arrayContains, asc, eq, ilike, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  type DateBound,
  dateRangeConditions,
  escapeLike,
  instant,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
  type WireRow,
  wireRowOf,
} from "../../db/list-query.js";
import { nextId } from "../../db/next-id.js";
import { donations } from "../../db/schema.js";
import { selectTenantRowsByIds, tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";
import { answersOf, tributeOf } from "../campaigns/campaign-questions.js";
import type { DonationWire } from "./donations.schemas.js";
import { DONATION_ORDER_FIELDS } from "./donations.schemas.js";

export type DonationRow = typeof donations.$inferSelect;

const donationColumns = {
  id: donations.id,
  supporter_id: donations.supporterId,
  campaign_id: donations.campaignId,
  code: donations.code,
  state: donations.state,
  amount: donations.amount,
  covered_fee: donations.coveredFee,
  currency: donations.currency,
  receipt_url: donations.receiptUrl,
  frequency: donations.frequency,
  note: donations.note,
  completed_date: instant(donations.completedDate),
  create_date: instant(donations.createDate),
  update_date: instant(donations.updateDate),
  device: donations.device,
  tags: donations.tags,
  skipped_cycles: donations.skippedCycles,
  test: donations.test,
  external_id: donations.externalId,
  activation: donations.activation,
};

const tributeSql = sql`case when ${donations.tributeType} is null then null else json_build_object(
  'type', ${donations.tributeType}, 'name', ${donations.tributeName}, 'message', ${donations.tributeMessage},
  'recipient_name', ${donations.tributeRecipientName}, 'recipient_email', ${donations.tributeRecipientEmail}) end`;

/** The columns' part, read from a row; the tribute and answers are built from several columns or a default. */
const columnsWireRow = wireRowOf<Omit<DonationWire, "tribute" | "answers">>(donationColumns);
const embeddedWireRow = wireRowOf<DonationWire>({
  ...donationColumns,
  tribute: tributeSql,
  answers: sql`coalesce(${donations.answers}, '[]'::jsonb)`,
});

/** The one wire mapping of donations: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const donationWireRow: WireRow<DonationWire> = {
  sql: embeddedWireRow.sql,
  decode: embeddedWireRow.decode,
  fromRow: (row) => {
    const donation = row as DonationRow;
    return { ...columnsWireRow.fromRow(donation), tribute: tributeOf(donation), answers: answersOf(donation) };
  },
};

export interface DonationFilters {
  q?: string;
  state?: string;
  frequency?: number;
  campaignId?: number;
  supporterId?: number;
  tag?: string;
  externalId?: string;
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
    filters.externalId !== undefined ? eq(donations.externalId, filters.externalId) : undefined,
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

/** A supporter's donations, oldest first. */
export function listSupporterDonationRows(tx: Executor, scope: Scope, supporterId: number) {
  return tx
    .select()
    .from(donations)
    .where(and(eq(donations.organizationId, scope.organizationId), eq(donations.supporterId, supporterId)))
    .orderBy(asc(donations.createDate), asc(donations.id));
}

export function findDonationRowsByIds(tx: Executor, organizationId: number, ids: readonly number[]) {
  return selectTenantRowsByIds(tx, donations, organizationId, ids);
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
  await countInserted(tx, row.organizationId, "donations");
  return row;
}

/** Changes a donation's columns (state, schedule, links, gift details); its update date is now. */
export const updateDonation = tenantRowUpdater(donations);

export async function revokeDonation(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .update(donations)
    .set({ state: "revoked", updateDate: sql`now()` })
    .where(and(eq(donations.organizationId, organizationId), eq(donations.id, id)))
    .returning();
  return row;
}

/**
 * What a supporter's gifts hold about other people or in their own words (a tribute's names, message
 * and recipient, the answers to a campaign's questions), cleared when the supporter is erased.
 */
export async function clearGiftWordsOfSupporter(tx: Executor, organizationId: number, supporterId: number) {
  await tx
    .update(donations)
    .set({
      tributeType: null,
      tributeName: null,
      tributeMessage: null,
      tributeRecipientName: null,
      tributeRecipientEmail: null,
      tributeDonorName: null,
      answers: null,
    })
    .where(and(eq(donations.organizationId, organizationId), eq(donations.supporterId, supporterId)));
}
