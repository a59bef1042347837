import { timingSafeEqual } from "node:crypto";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { hashSecret } from "./secrets.js";
import { newSessionSecrets, TOUCH_INTERVAL_SECONDS } from "./session-secrets.js";
import { deleteExpiredSessions, deleteSession, findLiveSession, insertSession, touchSession } from "./sessions.repo.js";

/**
 * Where a session stands: "active" is signed in; "second_factor": the password was right and a second
 * factor is still to come; "enrol": the user's organization requires a second factor they have yet to
 * set up. Only an active session opens the panel, the GraphQL interface or an authorization.
 */
export type SessionStage = "active" | "second_factor" | "enrol";

export interface SessionUser {
  sessionId: number;
  userId: number;
  email: string;
  csrfToken: string;
  /** The language the user chose (the panel's switcher), if any. */
  locale: string | null;
  stage: SessionStage;
  /** The session was confirmed with a second factor (or signed in with a passkey). */
  secondFactor: boolean;
  /** The last time the user proved it was them in this session (step-up asks again after 10 minutes). */
  verifiedDate: Date;
}

/** Where a session is opened from: shown on the sessions page. */
export interface SessionContext {
  userAgent?: string;
  ipAddress?: string;
  stage?: SessionStage;
  secondFactor?: boolean;
}

/** Server-side session: the cookie carries a random token, the database only its hash. */
export async function createSession(db: Db, config: Config, userId: number, context: SessionContext = {}) {
  const { token, tokenHash, csrfToken } = newSessionSecrets("dnt_ss");
  await insertSession(db, {
    tokenHash,
    userId,
    csrfToken,
    expiresDate: new Date(Date.now() + config.sessionTtlSeconds * 1000),
    stage: context.stage ?? "active",
    secondFactor: context.secondFactor ?? false,
    userAgent: context.userAgent?.slice(0, 500) ?? null,
    ipAddress: context.ipAddress ?? null,
  });
  // Expired sessions are swept opportunistically; no job is needed for them.
  await deleteExpiredSessions(db);
  return token;
}

/** The live session of a cookie's token, whatever its stage (the sign-in steps read it). */
export async function loadSessionAnyStage(
  db: Db,
  token: string | undefined,
  ipAddress?: string,
): Promise<SessionUser | undefined> {
  if (!token || token.length > 200) return undefined;
  const row = await findLiveSession(db, hashSecret(token));
  if (!row) return undefined;
  const { seenSecondsAgo, ...session } = row;
  if (seenSecondsAgo > TOUCH_INTERVAL_SECONDS) await touchSession(db, row.sessionId, ipAddress);
  return { ...session, stage: session.stage as SessionStage };
}

/** The signed-in user of a cookie's token: an active session only. */
export async function loadSession(
  db: Db,
  token: string | undefined,
  ipAddress?: string,
): Promise<SessionUser | undefined> {
  const session = await loadSessionAnyStage(db, token, ipAddress);
  return session?.stage === "active" ? session : undefined;
}

export async function destroySession(db: Db, token: string | undefined) {
  if (!token) return;
  await deleteSession(db, hashSecret(token));
}

export function tokensEqual(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
