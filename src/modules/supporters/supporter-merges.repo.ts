import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  checkouts,
  consentRecords,
  donations,
  outboxMessages,
  paymentMethods,
  receipts,
  supporterMerges,
  supporterNotes,
  supporters,
} from "../../db/schema.js";

/** The tables whose rows belong to a supporter: a merge moves them all to the one kept. */
const OWNED = [paymentMethods, donations, checkouts, outboxMessages, consentRecords, supporterNotes, receipts] as const;

/** The years in which both supporters have a live yearly statement (a merge would make two for one donor). */
export async function sharedStatementYears(tx: Executor, organizationId: number, keptId: number, mergedId: number) {
  const rows = await tx
    .select({ year: receipts.year })
    .from(receipts)
    .where(
      and(
        eq(receipts.organizationId, organizationId),
        inArray(receipts.supporterId, [keptId, mergedId]),
        eq(receipts.kind, "statement"),
        isNull(receipts.voidDate),
      ),
    )
    .groupBy(receipts.year)
    .having(sql`count(distinct ${receipts.supporterId}) = 2`)
    .orderBy(receipts.year);
  return rows.map((row) => row.year);
}

/**
 * Moves everything of `mergedId` to `keptId`, deletes the merged row and leaves a pointer to the kept
 * one (pointers to the merged one move on). The caller holds both rows locked.
 */
export async function moveAndDeleteSupporter(tx: Executor, organizationId: number, keptId: number, mergedId: number) {
  for (const table of OWNED) {
    await tx
      .update(table)
      .set({ supporterId: keptId })
      .where(and(eq(table.organizationId, organizationId), eq(table.supporterId, mergedId)));
  }
  await tx
    .update(supporterMerges)
    .set({ keptId })
    .where(and(eq(supporterMerges.organizationId, organizationId), eq(supporterMerges.keptId, mergedId)));
  await tx.delete(supporters).where(and(eq(supporters.organizationId, organizationId), eq(supporters.id, mergedId)));
  await tx.insert(supporterMerges).values({ organizationId, mergedId, keptId });
  await countInserted(tx, organizationId, "supporters", -1);
}

/** Where a merged supporter went, if it was merged. */
export async function findSupporterMerge(tx: Executor, organizationId: number, mergedId: number) {
  const [row] = await tx
    .select()
    .from(supporterMerges)
    .where(and(eq(supporterMerges.organizationId, organizationId), eq(supporterMerges.mergedId, mergedId)));
  return row;
}
