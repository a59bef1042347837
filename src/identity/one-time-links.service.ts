import type { Db, Executor } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import type { EventOrigin } from "../events/origin.js";
import { recordEvent, withEvents } from "../events/record-event.js";
import { listOrganizationIdsOfUser } from "./account.repo.js";
import {
  consumeSignInLink,
  expireUnusedSignInLinks,
  findSignInLink,
  insertSignInLink,
  type SignInLinkPurpose,
  setUserPasswordHash,
} from "./one-time-links.repo.js";
import { generateSecret, hashSecret } from "./secrets.js";
import { deleteSessionsOfUser } from "./sessions.repo.js";
import { findUserProfile } from "./users.repo.js";
import { findUserByEmail, hashPassword, MIN_PASSWORD_LENGTH } from "./users.service.js";

/** Where a one-time link leads: the page that asks for a password (under AUTH_URL). */
export const WELCOME_PATH = "/admin/welcome";

/** A setup link (`donata setup`) waits a day for the new owner; a reset link (`donata user link`) an hour. */
export const SIGN_IN_LINK_LIFETIME_SECONDS: Record<SignInLinkPurpose, number> = { setup: 24 * 3600, reset: 3600 };

const MAX_PASSWORD_LENGTH = 1000;
const LINK_PREFIX = "dnt_sl";

/**
 * What a stored email carries instead of a sign-in link's token: it opens nothing. The delivery puts
 * a token minted for that attempt in its place (src/email/render.ts DeliveryLink).
 */
export const SIGN_IN_TOKEN_PLACEHOLDER = `${LINK_PREFIX}_redacted`;

/** Every sign-in link token in a text (the placeholder included). */
export const SIGN_IN_TOKENS = /dnt_sl_[A-Za-z0-9_-]+/g;

/** The page a link opens; `next` (a same-origin path) is where it leads once the password is chosen. */
export function signInLinkUrl(authUrl: string, token: string, next?: string): string {
  const query = new URLSearchParams({ token, ...(next ? { next } : {}) });
  return `${authUrl}${WELCOME_PATH}?${query}`;
}

/**
 * Mints a one-time link for a user to choose a password; only its hash is stored, and the user's
 * earlier unused links stop working. Returns the token, which the caller shows once. It lasts the
 * purpose's lifetime unless the caller says otherwise (an emailed reset link: 30 minutes).
 */
export async function createSignInLink(
  tx: Executor,
  userId: number,
  purpose: SignInLinkPurpose,
  lifetimeSeconds = SIGN_IN_LINK_LIFETIME_SECONDS[purpose],
): Promise<string> {
  const token = generateSecret(LINK_PREFIX);
  await expireUnusedSignInLinks(tx, userId);
  await insertSignInLink(tx, { userId, tokenHash: hashSecret(token), purpose, lifetimeSeconds });
  return token;
}

/** `donata user link`: a fresh reset link for an existing user, the way back in after a lost password. */
export async function createResetLink(db: Db, email: string) {
  return db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (!user) throw new AppError("user_not_found", `No user has the email ${email}`);
    return { userId: user.id, email: user.email, token: await createSignInLink(tx, user.id, "reset") };
  });
}

function deadLink(known: boolean) {
  return known
    ? new AppError("sign_in_link_expired", "This link has expired or was already used.")
    : new AppError("sign_in_link_not_found", "This link is not valid.");
}

/** The live link of a token (for the page that asks the password); it is not used up by looking. */
export async function requireLiveSignInLink(db: Db, token: unknown) {
  if (typeof token !== "string" || token.length === 0 || token.length > 200) throw deadLink(false);
  const link = await findSignInLink(db, hashSecret(token));
  if (!link?.live) throw deadLink(link !== undefined);
  return { userId: link.userId, email: link.email, purpose: link.purpose as SignInLinkPurpose };
}

/** The password rules of every account (the same as `user create`'s). */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Choose at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Choose at most ${MAX_PASSWORD_LENGTH} characters.`;
  return undefined;
}

/**
 * Uses up the link and sets the user's password, in one transaction: the link is claimed by a single
 * UPDATE … WHERE used_date IS NULL AND expires_date > now(), so of two concurrent uses one wins.
 * Every session of the user ends. A reset link's use is a `user.password_changed` (method `reset`)
 * in each of the user's organizations; a setup link's gives the first password, which changes none.
 * Returns the user's id, for the caller to open a session.
 */
export async function redeemSignInLink(db: Db, token: string, password: string, origin?: EventOrigin): Promise<number> {
  const problem = passwordProblem(password);
  if (problem) throw new AppError("invalid_request", problem, { errors: [{ field: "password", message: problem }] });
  // Hashed before the transaction: argon2 takes a while, and the transaction should not wait for it.
  const passwordHash = await hashPassword(password);
  const tokenHash = hashSecret(token);
  const userId = await withEvents(db, async (tx) => {
    const claimed = await consumeSignInLink(tx, tokenHash);
    if (!claimed) return undefined;
    await setUserPasswordHash(tx, claimed.userId, passwordHash);
    const sessionsEnded = await deleteSessionsOfUser(tx, claimed.userId);
    if (claimed.purpose === "reset") await recordPasswordReset(tx, claimed.userId, sessionsEnded, origin);
    return claimed.userId;
  });
  if (userId === undefined) throw deadLink((await findSignInLink(db, tokenHash)) !== undefined);
  return userId;
}

async function recordPasswordReset(tx: Executor, userId: number, sessionsEnded: number, origin?: EventOrigin) {
  const user = await findUserProfile(tx, userId);
  const data = { user_id: userId, email: user?.email ?? null, method: "reset", sessions_ended: sessionsEnded };
  for (const organizationId of await listOrganizationIdsOfUser(tx, userId)) {
    await recordEvent(tx, { organizationId, origin }, "user.password_changed", userId, data);
  }
}
