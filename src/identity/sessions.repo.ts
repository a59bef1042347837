import { and, eq, gt, lt, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { sessions, users } from "../db/schema.js";

export async function insertSession(tx: Executor, values: typeof sessions.$inferInsert) {
  await tx.insert(sessions).values(values);
}

export async function deleteExpiredSessions(tx: Executor) {
  await tx.delete(sessions).where(lt(sessions.expiresDate, sql`now()`));
}

/** The live session of a token hash, with its user. */
export async function findLiveSession(tx: Executor, tokenHash: string) {
  const [row] = await tx
    .select({
      sessionId: sessions.id,
      userId: users.id,
      email: users.email,
      csrfToken: sessions.csrfToken,
      locale: users.locale,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresDate, sql`now()`)))
    .limit(1);
  return row;
}

export async function deleteSession(tx: Executor, tokenHash: string) {
  await tx.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}

/** Signs a user out everywhere (their password was just replaced). */
export async function deleteSessionsOfUser(tx: Executor, userId: number) {
  await tx.delete(sessions).where(eq(sessions.userId, userId));
}
