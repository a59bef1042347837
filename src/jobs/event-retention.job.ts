import type { Db } from "../db/client.js";
import { listOrganizationsWithEvents, pruneOrganizationEvents } from "../events/events.repo.js";

/**
 * The worker's retention pass: each organization's events older than the retention are deleted,
 * one organization per transaction, and their last number kept so an older cursor answers 410.
 */
export async function runEventRetention(db: Db, now: Date, retentionDays: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let pruned = 0;
  for (const organizationId of await listOrganizationsWithEvents(db, cutoff)) {
    pruned += await db.transaction((tx) => pruneOrganizationEvents(tx, organizationId, cutoff));
  }
  return pruned;
}
