import { and, asc, eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { selectTenantRow } from "../../db/list-query.js";
import { segments } from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";

export type SegmentRow = typeof segments.$inferSelect;

export async function insertSegment(
  tx: Executor,
  values: {
    organizationId: number;
    collection: string;
    name: string;
    filters: Record<string, string>;
    createdBy: number | null;
  },
): Promise<SegmentRow> {
  const [row] = await tx.insert(segments).values(values).returning();
  if (!row) throw new Error("segment insert returned nothing");
  return row;
}

/** A collection's segments by name (any case), then by id. */
export function listSegmentRows(tx: Executor, organizationId: number, collection: string) {
  return tx
    .select()
    .from(segments)
    .where(and(eq(segments.organizationId, organizationId), eq(segments.collection, collection)))
    .orderBy(sql`lower(${segments.name})`, asc(segments.id));
}

export const findSegmentRow = (tx: Executor, organizationId: number, id: number) =>
  selectTenantRow(tx, segments, organizationId, id);

export const lockSegment = tenantRowLocker(segments);

export const updateSegmentRow = tenantRowUpdater(segments);

/** Whether the segment was there to delete (a concurrent delete may have taken it first). */
export async function deleteSegmentRow(tx: Executor, organizationId: number, id: number): Promise<boolean> {
  const removed = await tx
    .delete(segments)
    .where(and(eq(segments.organizationId, organizationId), eq(segments.id, id)))
    .returning({ id: segments.id });
  return removed.length > 0;
}
