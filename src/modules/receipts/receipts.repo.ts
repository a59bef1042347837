import { and, asc, desc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  type DateBound,
  dateRangeConditions,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
} from "../../db/list-query.js";
import { receiptCounters, receipts } from "../../db/schema.js";
import { RECEIPT_ORDER_FIELDS } from "./receipts.schemas.js";

export type ReceiptRow = typeof receipts.$inferSelect;
export type NewReceipt = Omit<typeof receipts.$inferInsert, "id" | "number" | "createDate">;

/**
 * The next receipt number of the organization's year. The counter's row stays locked until the
 * transaction ends, so two issuing at once take numbers one after the other, and a transaction that
 * rolls back gives its number back: no gap, no duplicate.
 */
export async function nextReceiptNumber(
  tx: Executor,
  organizationId: number,
  kind: "payment" | "statement",
  year: number,
): Promise<number> {
  const [row] = await tx
    .insert(receiptCounters)
    .values({ organizationId, kind, year, lastNumber: 1 })
    .onConflictDoUpdate({
      target: [receiptCounters.organizationId, receiptCounters.kind, receiptCounters.year],
      set: { lastNumber: sql`${receiptCounters.lastNumber} + 1` },
    })
    .returning({ number: receiptCounters.lastNumber });
  if (!row) throw new Error("receipt counter upsert returned nothing");
  return row.number;
}

export async function insertReceipt(tx: Executor, values: NewReceipt & { number: number }): Promise<ReceiptRow> {
  const [row] = await tx.insert(receipts).values(values).returning();
  if (!row) throw new Error("receipt insert returned nothing");
  await countInserted(tx, row.organizationId, "receipts");
  return row;
}

export interface ReceiptFilters {
  kind?: string;
  year?: number;
  supporterId?: number;
  donationId?: number;
  paymentId?: number;
  void?: boolean;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(receipts, RECEIPT_ORDER_FIELDS);

/** A page of the organization's receipts (the REST list) and its exact total under the same filters. */
export function listReceiptPage(tx: Executor, scope: Scope, filters: ReceiptFilters, order: Order, page: Page) {
  return listTenantPage(tx, receipts, "receipts", {
    organizationId: scope.organizationId,
    conditions: [
      filters.kind !== undefined ? eq(receipts.kind, filters.kind) : undefined,
      filters.year !== undefined ? eq(receipts.year, filters.year) : undefined,
      filters.supporterId !== undefined ? eq(receipts.supporterId, filters.supporterId) : undefined,
      filters.donationId !== undefined ? eq(receipts.donationId, filters.donationId) : undefined,
      filters.paymentId !== undefined ? eq(receipts.paymentId, filters.paymentId) : undefined,
      filters.void === undefined ? undefined : filters.void ? isNotNull(receipts.voidDate) : isNull(receipts.voidDate),
      ...dateRangeConditions(receipts.createDate, filters.createDateFrom, filters.createDateTo, scope.timeZone),
    ],
    order: orderTerms(orderColumns, receipts.id, order),
    page,
  });
}

export const findReceipt = (tx: Executor, organizationId: number, id: number) =>
  selectTenantRow(tx, receipts, organizationId, id);

/** The payment's receipt that is not void, if it has one. */
export async function findLivePaymentReceipt(tx: Executor, organizationId: number, paymentId: number) {
  const [row] = await tx
    .select()
    .from(receipts)
    .where(
      and(
        eq(receipts.organizationId, organizationId),
        eq(receipts.paymentId, paymentId),
        eq(receipts.kind, "payment"),
        isNull(receipts.voidDate),
      ),
    );
  return row;
}

/** The donor's statement of a year that is not void, if one was issued. */
export async function findLiveStatement(tx: Executor, organizationId: number, supporterId: number, year: number) {
  const [row] = await tx
    .select()
    .from(receipts)
    .where(
      and(
        eq(receipts.organizationId, organizationId),
        eq(receipts.supporterId, supporterId),
        eq(receipts.year, year),
        eq(receipts.kind, "statement"),
        isNull(receipts.voidDate),
      ),
    );
  return row;
}

export async function voidReceiptRow(tx: Executor, organizationId: number, id: number, reason: string) {
  const [row] = await tx
    .update(receipts)
    .set({ voidDate: sql`now()`, voidReason: reason })
    .where(and(eq(receipts.organizationId, organizationId), eq(receipts.id, id), isNull(receipts.voidDate)))
    .returning();
  return row;
}

/** The organization's receipts of a kind and year, by number (a year's statements for the ZIP). */
export function listReceiptsOfYear(tx: Executor, organizationId: number, kind: "payment" | "statement", year: number) {
  return tx
    .select()
    .from(receipts)
    .where(and(eq(receipts.organizationId, organizationId), eq(receipts.kind, kind), eq(receipts.year, year)))
    .orderBy(asc(receipts.number));
}

/** The receipt issued in place of a voided one (what a partial refund left). */
export async function findReplacement(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select()
    .from(receipts)
    .where(and(eq(receipts.organizationId, organizationId), eq(receipts.replacesId, id)));
  return row;
}

/** The organization's receipts matching the filters, newest first. */
export function findReceipts(
  tx: Executor,
  organizationId: number,
  filters: { supporterId?: number | null; year?: number | null; kind?: string | null; limit: number },
) {
  return tx
    .select()
    .from(receipts)
    .where(
      and(
        eq(receipts.organizationId, organizationId),
        filters.supporterId == null ? undefined : eq(receipts.supporterId, filters.supporterId),
        filters.year == null ? undefined : eq(receipts.year, filters.year),
        filters.kind == null ? undefined : eq(receipts.kind, filters.kind),
      ),
    )
    .orderBy(desc(receipts.createDate), desc(receipts.id))
    .limit(filters.limit);
}
