import { eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { sandboxCharges } from "../../db/schema.js";

export type SandboxChargeRow = typeof sandboxCharges.$inferSelect;

export async function findSandboxCharge(db: Executor, idempotencyKey: string) {
  return (await db.select().from(sandboxCharges).where(eq(sandboxCharges.idempotencyKey, idempotencyKey)))[0];
}

/** Records a charge under its key unless one exists; returns whether this call recorded it. */
export async function insertSandboxCharge(
  db: Executor,
  values: Omit<typeof sandboxCharges.$inferInsert, "createDate" | "refundDate">,
): Promise<boolean> {
  const inserted = await db
    .insert(sandboxCharges)
    .values(values)
    .onConflictDoNothing()
    .returning({ key: sandboxCharges.idempotencyKey });
  return inserted.length > 0;
}

/** Refunding twice (a retry after a crash) refunds once: the first refund date stays. */
export async function refundSandboxCharge(db: Executor, intentId: string) {
  await db
    .update(sandboxCharges)
    .set({ refundDate: sql`coalesce(${sandboxCharges.refundDate}, now())` })
    .where(eq(sandboxCharges.intentId, intentId));
}
