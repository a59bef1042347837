import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { idempotencyKeys } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";

export interface Outcome<T = unknown> {
  status: number;
  body: T;
}

/** Stripe's rule: 1 to 255 printable characters, e.g. a UUID made by the client per attempt. */
export function parseIdempotencyKey(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^[\x21-\x7e]{1,255}$/.test(raw)) {
    throw new AppError("invalid_request", "Idempotency-Key must be 1 to 255 printable ASCII characters", {
      errors: [{ parameter: "Idempotency-Key", message: "1 to 255 printable ASCII characters" }],
    });
  }
  return raw;
}

/** The one row of an idempotency key: keys are scoped to an organization and an operation. */
const keyIs = (organizationId: number, scope: string, key: string) =>
  and(
    eq(idempotencyKeys.organizationId, organizationId),
    eq(idempotencyKeys.scope, scope),
    eq(idempotencyKeys.key, key),
  );

export function fingerprint(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

/** Whether a finished outcome is stored for the key (its retry will be a replay, not new work). */
export async function hasStoredOutcome(db: Executor, organizationId: number, scope: string, key: string | undefined) {
  if (key === undefined) return false;
  const [row] = await db
    .select({ status: idempotencyKeys.status })
    .from(idempotencyKeys)
    .where(keyIs(organizationId, scope, key));
  return row !== undefined && row.status !== 0;
}

export const idempotencyKeyReused = () =>
  new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key was already used with a different request; use a new key for a new request",
  );

export async function findStoredOutcome(db: Executor, organizationId: number, scope: string, key: string) {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(keyIs(organizationId, scope, key));
  return row;
}

/** Keeps a finished outcome for the key (work done in several transactions stores it in its last one). */
export async function storeOutcome(
  tx: Executor,
  organizationId: number,
  scope: string,
  key: string,
  requestHash: string,
  outcome: Outcome,
) {
  await tx
    .insert(idempotencyKeys)
    .values({ organizationId, scope, key, requestHash, status: outcome.status, body: outcome.body as object })
    .onConflictDoNothing();
}

/**
 * Runs `work` once per key, inside the caller's transaction: the key row is inserted first, so a
 * concurrent retry waits on it and then replays the stored outcome. Thrown errors roll back the key
 * with everything else, so a request that failed can be retried with the same key.
 */
export async function idempotent<T>(
  tx: Executor,
  organizationId: number,
  scope: string,
  key: string | undefined,
  request: unknown,
  work: () => Promise<Outcome<T>>,
): Promise<Outcome<T> & { replayed: boolean }> {
  if (key === undefined) return { ...(await work()), replayed: false };
  const requestHash = fingerprint(request);
  const claimed = await tx
    .insert(idempotencyKeys)
    .values({ organizationId, scope, key, requestHash, status: 0, body: {} })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (claimed.length === 0) {
    const [stored] = await tx
      .select()
      .from(idempotencyKeys)
      .where(keyIs(organizationId, scope, key));
    if (!stored) throw new Error("idempotency key vanished after a conflict");
    if (stored.requestHash !== requestHash) throw idempotencyKeyReused();
    return { status: stored.status, body: stored.body as T, replayed: true };
  }
  const outcome = await work();
  await tx
    .update(idempotencyKeys)
    .set({ status: outcome.status, body: outcome.body as object })
    .where(keyIs(organizationId, scope, key));
  return { ...outcome, replayed: false };
}
