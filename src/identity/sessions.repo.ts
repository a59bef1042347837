import { and, desc, eq, gt, lt, ne, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { sessions, users } from "../db/schema.js";

export async function insertSession(tx: Executor, values: typeof sessions.$inferInsert) {
  const [row] = await tx.insert(sessions).values(values).returning({ id: sessions.id });
  if (!row) throw new Error("session insert returned nothing");
  return row.id;
}

export async function deleteExpiredSessions(tx: Executor) {
  await tx.delete(sessions).where(lt(sessions.expiresDate, sql`now()`));
}

/** The live session of a token hash (any stage), with its user. */
export async function findLiveSession(tx: Executor, tokenHash: string) {
  const [row] = await tx
    .select({
      sessionId: sessions.id,
      userId: users.id,
      email: users.email,
      csrfToken: sessions.csrfToken,
      locale: users.locale,
      stage: sessions.stage,
      secondFactor: sessions.secondFactor,
      verifiedDate: sessions.verifiedDate,
      // Seconds since the last request of this session (last_seen_date is written at most once a minute).
      seenSecondsAgo: sql<number>`extract(epoch from now() - ${sessions.lastSeenDate})::float8`,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresDate, sql`now()`)))
    .limit(1);
  return row;
}

/** Marks the session used now (the sessions page's "last seen"), with the address it was used from. */
export async function touchSession(tx: Executor, sessionId: number, ipAddress: string | undefined) {
  await tx
    .update(sessions)
    .set({ lastSeenDate: sql`now()`, ...(ipAddress ? { ipAddress } : {}) })
    .where(eq(sessions.id, sessionId));
}

/** The session's new stage after a step of sign-in (a second factor given, an enrolment finished). */
export async function updateSession(
  tx: Executor,
  sessionId: number,
  values: Partial<Pick<typeof sessions.$inferInsert, "stage" | "secondFactor">> & { verifiedNow?: boolean },
) {
  const { verifiedNow, ...rest } = values;
  await tx
    .update(sessions)
    .set({ ...rest, ...(verifiedNow ? { verifiedDate: sql`now()` } : {}) })
    .where(eq(sessions.id, sessionId));
}

/** A user's live sessions, the most recently used first (the sessions page). */
export async function listLiveSessionsOfUser(tx: Executor, userId: number) {
  return tx
    .select({
      id: sessions.id,
      stage: sessions.stage,
      userAgent: sessions.userAgent,
      ipAddress: sessions.ipAddress,
      lastSeenDate: sessions.lastSeenDate,
      createDate: sessions.createDate,
    })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresDate, sql`now()`)))
    .orderBy(desc(sessions.lastSeenDate), desc(sessions.id));
}

export async function deleteSession(tx: Executor, tokenHash: string) {
  await tx.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}

/** Ends one of a user's sessions by id (only theirs); returns whether one was ended. */
export async function deleteSessionOfUser(tx: Executor, userId: number, sessionId: number) {
  const rows = await tx
    .delete(sessions)
    .where(and(eq(sessions.userId, userId), eq(sessions.id, sessionId)))
    .returning({ id: sessions.id });
  return rows.length > 0;
}

/** Signs a user out everywhere (their password was just replaced), or everywhere but one session. */
export async function deleteSessionsOfUser(tx: Executor, userId: number, exceptSessionId?: number) {
  const rows = await tx
    .delete(sessions)
    .where(
      exceptSessionId === undefined
        ? eq(sessions.userId, userId)
        : and(eq(sessions.userId, userId), ne(sessions.id, exceptSessionId)),
    )
    .returning({ id: sessions.id });
  return rows.length;
}
