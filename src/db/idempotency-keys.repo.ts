import { and, eq } from "drizzle-orm";
import type { Executor } from "./client.js";
import { idempotencyKeys } from "./schema.js";

/** The one row of an idempotency key: keys are scoped to an organization and an operation. */
const keyIs = (organizationId: number, scope: string, key: string) =>
  and(
    eq(idempotencyKeys.organizationId, organizationId),
    eq(idempotencyKeys.scope, scope),
    eq(idempotencyKeys.key, key),
  );

/** Only the stored status (0 while the work is under way). */
export async function findKeyStatus(db: Executor, organizationId: number, scope: string, key: string) {
  const [row] = await db
    .select({ status: idempotencyKeys.status })
    .from(idempotencyKeys)
    .where(keyIs(organizationId, scope, key));
  return row;
}

export async function findKeyRow(db: Executor, organizationId: number, scope: string, key: string) {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(keyIs(organizationId, scope, key));
  return row;
}

/** Inserts the key's row unless it exists; returns whether this call inserted it. */
export async function insertKeyRow(
  tx: Executor,
  values: { organizationId: number; scope: string; key: string; requestHash: string; status: number; body: object },
): Promise<boolean> {
  const inserted = await tx
    .insert(idempotencyKeys)
    .values(values)
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  return inserted.length > 0;
}

/** Stores a finished outcome unless the key has one (no RETURNING: nothing is read back). */
export async function storeKeyOutcome(
  tx: Executor,
  values: { organizationId: number; scope: string; key: string; requestHash: string; status: number; body: object },
) {
  await tx.insert(idempotencyKeys).values(values).onConflictDoNothing();
}

export async function updateKeyOutcome(
  tx: Executor,
  organizationId: number,
  scope: string,
  key: string,
  outcome: { status: number; body: object },
) {
  await tx
    .update(idempotencyKeys)
    .set(outcome)
    .where(keyIs(organizationId, scope, key));
}
