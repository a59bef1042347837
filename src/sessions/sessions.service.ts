import { randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, gt, lt, sql } from "drizzle-orm";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { sessions, users } from "../db/schema.js";
import { generateSecret, hashSecret } from "../oauth/secrets.js";

export const SESSION_COOKIE = "donata_session";

export interface SessionUser {
  sessionId: number;
  userId: number;
  email: string;
  csrfToken: string;
}

export function cookieOptions(config: Config, maxAgeSeconds: number) {
  return {
    path: "/",
    httpOnly: true,
    sameSite: "lax" as const,
    secure: config.authUrl.startsWith("https:"),
    maxAge: maxAgeSeconds,
  };
}

/** Server-side session: the cookie carries a random token, the database only its hash. */
export async function createSession(db: Db, config: Config, userId: number) {
  const token = generateSecret("dnt_ss");
  const csrfToken = randomBytes(24).toString("base64url");
  await db.insert(sessions).values({
    tokenHash: hashSecret(token),
    userId,
    csrfToken,
    expiresDate: new Date(Date.now() + config.sessionTtlSeconds * 1000),
  });
  // Expired sessions are swept opportunistically; no job is needed for them.
  await db.delete(sessions).where(lt(sessions.expiresDate, sql`now()`));
  return token;
}

export async function loadSession(db: Db, token: string | undefined): Promise<SessionUser | undefined> {
  if (!token || token.length > 200) return undefined;
  const [row] = await db
    .select({ sessionId: sessions.id, userId: users.id, email: users.email, csrfToken: sessions.csrfToken })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashSecret(token)), gt(sessions.expiresDate, sql`now()`)))
    .limit(1);
  return row;
}

export async function destroySession(db: Db, token: string | undefined) {
  if (!token) return;
  await db.delete(sessions).where(eq(sessions.tokenHash, hashSecret(token)));
}

export function tokensEqual(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
