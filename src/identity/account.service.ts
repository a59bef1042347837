import Bowser from "bowser";
import type { Db, Executor } from "../db/client.js";
import { AppError, notFound } from "../errors/app-error.js";
import type { EventOrigin } from "../events/origin.js";
import { recordEvent, withEvents } from "../events/record-event.js";
import { fieldProblem } from "../i18n/field-problems.js";
import { findUserCredentials, listOrganizationIdsOfUser } from "./account.repo.js";
import { setUserPasswordHash } from "./one-time-links.repo.js";
import { passwordProblem } from "./one-time-links.service.js";
import { deleteSessionOfUser, deleteSessionsOfUser, listLiveSessionsOfUser, updateSession } from "./sessions.repo.js";
import type { SessionStage } from "./sessions.service.js";
import { type CredentialThrottle, countCredentialAttempt } from "./sign-in.service.js";
import { hashPassword, invalidField, MIN_PASSWORD_LENGTH, verifyPassword } from "./users.service.js";

/**
 * The signed-in user's own account (the panel's "Your account" page): where they are signed in,
 * ending those sessions, changing their password. Each change is recorded as a members-only event
 * in every organization the user belongs to, so its owners see it in the audit log.
 */

/** Who asks: the user and the session of this request (the one that stays signed in). */
export interface AccountSession {
  userId: number;
  sessionId: number;
  email: string;
}

/** A session's browser and operating system, read from its User-Agent; null what it does not say. */
export interface SessionDevice {
  /** The browser and its major version: "Chrome 126", "Firefox 127". */
  browser: string | null;
  /** The operating system's name: "macOS", "Windows", "iOS", "Android", "Linux". */
  os: string | null;
  /** desktop, mobile, tablet or tv. */
  device_type: string | null;
}

export interface AccountSessionWire extends SessionDevice {
  id: number;
  /** The session of the request that asks ("This device"). */
  current: boolean;
  /**
   * active; second_factor or enrol: the password was given and the second step is still to come.
   * Listed too: someone who knows the password and not the second factor shows up here.
   */
  stage: SessionStage;
  ip_address: string | null;
  /** The User-Agent as the browser sent it (cut at 500 characters), for who wants more than `browser` and `os`. */
  user_agent: string | null;
  /** The last request of the session (written at most once a minute). */
  last_seen_date: string;
  /** When the session was signed in. */
  create_date: string;
}

const text = (value: string | undefined) => (value && value.trim() !== "" ? value.trim() : null);

export function describeDevice(userAgent: string | null): SessionDevice {
  if (!userAgent?.trim()) return { browser: null, os: null, device_type: null };
  const parsed = Bowser.parse(userAgent);
  const name = text(parsed.browser.name);
  const major = text(parsed.browser.version)?.split(".")[0];
  return {
    browser: name && major ? `${name} ${major}` : name,
    // The OS name only: a browser's User-Agent freezes the version (macOS 10.15.7, Windows NT 10.0 for 11).
    os: text(parsed.os.name),
    device_type: text(parsed.platform.type),
  };
}

/** The user's live sessions, the most recently used first, with the current one marked. */
export async function listAccountSessions(db: Db, who: AccountSession): Promise<AccountSessionWire[]> {
  const rows = await listLiveSessionsOfUser(db, who.userId);
  return rows.map((row) => ({
    id: row.id,
    current: row.id === who.sessionId,
    stage: row.stage as SessionStage,
    ...describeDevice(row.userAgent),
    ip_address: row.ipAddress,
    user_agent: row.userAgent,
    last_seen_date: row.lastSeenDate.toISOString(),
    create_date: row.createDate.toISOString(),
  }));
}

/** An ended session as an event names it: never its token, only where it was used from. */
const endedSession = (row: { id: number; userAgent: string | null; ipAddress: string | null }) => {
  const device = describeDevice(row.userAgent);
  return { id: row.id, browser: device.browser, os: device.os, ip_address: row.ipAddress };
};

/** Records one event of the user's account in each organization they belong to. */
async function recordAccountEvent(
  tx: Executor,
  who: AccountSession,
  origin: EventOrigin | undefined,
  type: "user.password_changed" | "user.session_ended",
  data: Record<string, unknown>,
) {
  for (const organizationId of await listOrganizationIdsOfUser(tx, who.userId)) {
    await recordEvent(tx, { organizationId, origin }, type, who.userId, {
      user_id: who.userId,
      email: who.email,
      ...data,
    });
  }
}

/**
 * Ends one of the user's own sessions (the current one signs them out: the caller clears the cookie).
 * Another user's session, an expired or an unknown one: 404, and nothing changes.
 */
export async function endAccountSession(
  db: Db,
  who: AccountSession,
  sessionId: number,
  origin?: EventOrigin,
): Promise<{ signedOut: boolean }> {
  return withEvents(db, async (tx) => {
    const row = (await listLiveSessionsOfUser(tx, who.userId)).find((session) => session.id === sessionId);
    if (!row || !(await deleteSessionOfUser(tx, who.userId, sessionId))) throw notFound("Session");
    const current = sessionId === who.sessionId;
    await recordAccountEvent(tx, who, origin, "user.session_ended", {
      ended: current ? "current" : "one",
      count: 1,
      sessions: [endedSession(row)],
    });
    return { signedOut: current };
  });
}

/** Ends every session of the user but this one ("Sign out everywhere else"); returns how many ended. */
export async function endOtherAccountSessions(db: Db, who: AccountSession, origin?: EventOrigin): Promise<number> {
  return withEvents(db, async (tx) => {
    const others = (await listLiveSessionsOfUser(tx, who.userId)).filter((row) => row.id !== who.sessionId);
    const ended = await deleteSessionsOfUser(tx, who.userId, who.sessionId);
    if (ended > 0) {
      await recordAccountEvent(tx, who, origin, "user.session_ended", {
        ended: "others",
        count: ended,
        sessions: others.map(endedSession),
      });
    }
    return ended;
  });
}

/** A new password's problem as a field of the form (the rules are passwordProblem's). */
function newPasswordIssue(password: string) {
  const problem = passwordProblem(password);
  if (!problem) return undefined;
  return password.length < MIN_PASSWORD_LENGTH
    ? invalidField("new_password", fieldProblem("too_short", { min: MIN_PASSWORD_LENGTH }))
    : new AppError("invalid_request", `Invalid new_password: ${problem}`, {
        errors: [{ field: "new_password", message: problem }],
      });
}

/**
 * Changes the signed-in user's password. The new one must follow the password rules (checked first:
 * a refused new password costs no attempt); the current one is counted by the credential throttle
 * before it is checked, like a sign-in (429 past its limits, whether or not it is right). A wrong one
 * is a 400 on `current_password`. Every other session of the user ends; this one stays, confirmed now.
 */
export async function changePassword(
  db: Db,
  throttle: CredentialThrottle,
  who: AccountSession,
  input: { currentPassword: string; newPassword: string; address: string },
  origin?: EventOrigin,
): Promise<{ sessionsEnded: number }> {
  const issue = newPasswordIssue(input.newPassword);
  if (issue) throw issue;
  const user = await findUserCredentials(db, who.userId);
  if (!user) throw new AppError("not_signed_in", "Sign in to the admin panel first");
  const attempt = await countCredentialAttempt(throttle, { account: { userId: user.id }, address: input.address });
  // An account without a password yet never matches (verify against nothing fails without a hash).
  const valid = user.passwordHash !== null && (await verifyPassword(user.passwordHash, input.currentPassword));
  if (!valid) throw invalidField("current_password", fieldProblem("password_incorrect"));
  await attempt.succeeded();
  // Hashed before the transaction: argon2 takes a while, and the transaction should not wait for it.
  const passwordHash = await hashPassword(input.newPassword);
  return withEvents(db, async (tx) => {
    await setUserPasswordHash(tx, who.userId, passwordHash);
    const sessionsEnded = await deleteSessionsOfUser(tx, who.userId, who.sessionId);
    await updateSession(tx, who.sessionId, { verifiedNow: true });
    await recordAccountEvent(tx, who, origin, "user.password_changed", {
      method: "change",
      sessions_ended: sessionsEnded,
    });
    return { sessionsEnded };
  });
}
