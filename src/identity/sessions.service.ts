import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { generateSecret, hashSecret } from "./secrets.js";
import { deleteExpiredSessions, deleteSession, findLiveSession, insertSession } from "./sessions.repo.js";

export interface SessionUser {
  sessionId: number;
  userId: number;
  email: string;
  csrfToken: string;
  /** The language the user chose (the panel's switcher), if any. */
  locale: string | null;
}

/** Server-side session: the cookie carries a random token, the database only its hash. */
export async function createSession(db: Db, config: Config, userId: number) {
  const token = generateSecret("dnt_ss");
  const csrfToken = randomBytes(24).toString("base64url");
  await insertSession(db, {
    tokenHash: hashSecret(token),
    userId,
    csrfToken,
    expiresDate: new Date(Date.now() + config.sessionTtlSeconds * 1000),
  });
  // Expired sessions are swept opportunistically; no job is needed for them.
  await deleteExpiredSessions(db);
  return token;
}

export async function loadSession(db: Db, token: string | undefined): Promise<SessionUser | undefined> {
  if (!token || token.length > 200) return undefined;
  return findLiveSession(db, hashSecret(token));
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
