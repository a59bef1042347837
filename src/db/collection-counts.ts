import { sql } from "drizzle-orm";
import type { Executor } from "./client.js";
import { collectionCounts } from "./schema.js";

/** The collections whose unfiltered lists read their total from `collection_counts`. */
export type CountedCollection =
  | "campaigns"
  | "supporters"
  | "donations"
  | "payments"
  | "checkouts"
  | "payment_methods"
  | "receipts";

/**
 * Adds `n` rows to an organization's total of a collection, in the transaction that inserted them,
 * so the total is exact and an unfiltered list never scans to count. Written by the code that
 * inserts (every insert of a counted table goes through its repository), not by a trigger: a
 * statement trigger with transition tables cannot run on a Citus shard (docs/scaling.md). Rows of
 * these tables are never deleted one by one (but a supporter merged into another, which counts -1);
they go with their organization, counters included.
 */
export async function countInserted(
  tx: Executor,
  organizationId: number,
  collection: CountedCollection,
  n = 1,
): Promise<void> {
  if (n === 0) return;
  await tx
    .insert(collectionCounts)
    .values({ organizationId, collection, count: n })
    .onConflictDoUpdate({
      target: [collectionCounts.organizationId, collectionCounts.collection],
      set: { count: sql`${collectionCounts.count} + ${n}` },
    });
}

/** The same for a bulk insert of many organizations' rows: one update per organization. */
export async function countInsertedRows(
  tx: Executor,
  collection: CountedCollection,
  rows: readonly { organizationId?: number | null }[],
): Promise<void> {
  const perOrganization = new Map<number, number>();
  for (const row of rows) {
    if (row.organizationId == null) continue;
    perOrganization.set(row.organizationId, (perOrganization.get(row.organizationId) ?? 0) + 1);
  }
  for (const [organizationId, n] of [...perOrganization].sort(([a], [b]) => a - b)) {
    await countInserted(tx, organizationId, collection, n);
  }
}
