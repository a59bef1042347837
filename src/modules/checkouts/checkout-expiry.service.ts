import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { checkouts, organizations } from "../../db/schema.js";

/** Closes OPEN checkouts older than the expiry, without a payment (decisions.md §8). */
export async function expireCheckouts(db: Executor, now: Date, ttlSeconds: number): Promise<number> {
  const cutoff = new Date(now.getTime() - ttlSeconds * 1000);
  // One statement for every organization, each row matched by its organization, so the planner
  // reaches checkouts_state_idx (organization_id, state, create_date) per organization.
  const result = await db.execute(sql`
    update ${checkouts} set state = 'CLOSED', update_date = now()
    from ${organizations}
    where ${checkouts.organizationId} = ${organizations.id}
      and ${checkouts.state} = 'OPEN' and ${checkouts.createDate} <= ${cutoff.toISOString()}::timestamptz`);
  return (
    (result as unknown as { rowCount?: number; affectedRows?: number }).rowCount ??
    (result as unknown as { affectedRows?: number }).affectedRows ??
    0
  );
}
