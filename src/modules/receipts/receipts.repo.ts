import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { selectTenantRow } from "../../db/list-query.js";
import { receiptCounters, receipts } from "../../db/schema.js";

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
  return row;
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
