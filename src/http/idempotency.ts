import { createHash } from "node:crypto";
import type { Executor } from "../db/client.js";
import {
  findKeyRow,
  findKeyStatus,
  insertKeyRow,
  storeKeyOutcome,
  updateKeyOutcome,
} from "../db/idempotency-keys.repo.js";
import { AppError } from "../errors/app-error.js";

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

export function fingerprint(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("hex");
}

/** Whether a finished outcome is stored for the key (its retry will be a replay, not new work). */
export async function hasStoredOutcome(db: Executor, organizationId: number, scope: string, key: string | undefined) {
  if (key === undefined) return false;
  const row = await findKeyStatus(db, organizationId, scope, key);
  return row !== undefined && row.status !== 0;
}

export const idempotencyKeyReused = () =>
  new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key was already used with a different request; use a new key for a new request",
  );

export const findStoredOutcome = findKeyRow;

/** Keeps a finished outcome for the key (work done in several transactions stores it in its last one). */
export async function storeOutcome(
  tx: Executor,
  organizationId: number,
  scope: string,
  key: string,
  requestHash: string,
  outcome: Outcome,
) {
  await storeKeyOutcome(tx, {
    organizationId,
    scope,
    key,
    requestHash,
    status: outcome.status,
    body: outcome.body as object,
  });
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
  const claimed = await insertKeyRow(tx, { organizationId, scope, key, requestHash, status: 0, body: {} });
  if (!claimed) {
    const stored = await findKeyRow(tx, organizationId, scope, key);
    if (!stored) throw new Error("idempotency key vanished after a conflict");
    if (stored.requestHash !== requestHash) throw idempotencyKeyReused();
    return { status: stored.status, body: stored.body as T, replayed: true };
  }
  const outcome = await work();
  await updateKeyOutcome(tx, organizationId, scope, key, { status: outcome.status, body: outcome.body as object });
  return { ...outcome, replayed: false };
}
