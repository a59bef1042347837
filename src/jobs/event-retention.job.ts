import type { Db } from "../db/client.js";
import { lastEventBefore, listOrganizationsWithEvents, pruneEventsThrough } from "../events/events.repo.js";

/** Events deleted per transaction: a large organization's backlog never holds its counter for long. */
export const RETENTION_BATCH = 5000;

/**
 * The worker's retention pass: each organization's events older than the retention are deleted,
 * oldest first, a batch per transaction, and their last number kept so an older cursor answers 410.
 * What remains of an organization's events is always a whole tail of its numbers.
 */
export async function runEventRetention(
  db: Db,
  now: Date,
  retentionDays: number,
  batchSize = RETENTION_BATCH,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let pruned = 0;
  for (const organizationId of await listOrganizationsWithEvents(db, cutoff)) {
    const through = await lastEventBefore(db, organizationId, cutoff);
    if (through === 0) continue;
    for (;;) {
      const deleted = await db.transaction((tx) => pruneEventsThrough(tx, organizationId, through, batchSize));
      pruned += deleted;
      if (deleted < batchSize) break;
    }
  }
  return pruned;
}
