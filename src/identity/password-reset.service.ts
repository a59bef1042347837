import type { RateLimitRules } from "../config.js";
import type { Db, Executor } from "../db/client.js";
import { enqueueEmail } from "../email/outbox.repo.js";
import { clientAddressKey } from "../limits/client-address.js";
import { countWork, hashedKey } from "../limits/counted-work.js";
import type { LimitStore } from "../limits/rate-limiter.js";
import { listOrganizationIdsOfUser } from "./account.repo.js";
import { createSignInLink } from "./one-time-links.service.js";
import { findUserLocale, findUserProfile } from "./users.repo.js";
import { findUserByEmail, normalizeEmail } from "./users.service.js";

/**
 * "Forgot your password?": a member asks for a link by email, without shell access (`donata user
 * link` stays for the operator). The link is an ordinary one-time reset link (one-time-links.*): it
 * opens the page that asks for a new password, works once, and replaces the user's earlier ones.
 */

/** The page that asks for the email (under AUTH_URL), linked from both sign-in pages. */
export const FORGOT_PASSWORD_PATH = "/admin/forgot-password";

/** The page's address; `next` (a same-origin path: the OAuth authorization being signed in to) is kept. */
export const forgotPasswordPath = (next?: string) =>
  next ? `${FORGOT_PASSWORD_PATH}?${new URLSearchParams({ next })}` : FORGOT_PASSWORD_PATH;

/** An emailed reset link works for 30 minutes from its delivery (`donata user link` prints one for an hour). */
export const PASSWORD_RESET_LINK_LIFETIME_SECONDS = 30 * 60;

export const TOO_MANY_RESET_REQUESTS = "Too many links to choose a new password were asked for. Try again later.";

/** The counters of "Forgot your password?" requests and the rules they follow. */
export interface PasswordResetThrottle {
  store: LimitStore;
  rules: Pick<RateLimitRules, "passwordResetEmail" | "passwordResetAddress">;
}

/**
 * Before the form answers: counts the request, known email or not, per normalised email and per
 * client address, atomically in the shared store. Past either limit: 429 with Retry-After; an
 * unreachable store: 503 (no link is mailed uncounted).
 */
export async function countPasswordResetRequest(
  throttle: PasswordResetThrottle,
  request: { email: string; address: string },
): Promise<void> {
  await countWork(
    throttle.store,
    [
      { rule: throttle.rules.passwordResetEmail, key: hashedKey(normalizeEmail(request.email)) },
      { rule: throttle.rules.passwordResetAddress, key: clientAddressKey(request.address) },
    ],
    TOO_MANY_RESET_REQUESTS,
  );
}

/**
 * Once the form has answered (so its timing tells nobody whether the address is known): when an
 * account uses the address and belongs to an organization, queues the `password_reset` email in the
 * outbox of its first organization (the lowest id: the outbox is per organization). The message
 * holds no token: its link is minted when it is delivered (mintPasswordResetToken). `next` is a
 * same-origin path the link leads to once the password is chosen (an OAuth authorization).
 */
export async function queuePasswordReset(db: Db, request: { email: string; next?: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, request.email);
    // The same queries for an unknown address, as far as they go.
    const [organizationId] = await listOrganizationIdsOfUser(tx, user?.id ?? 0);
    if (!user || organizationId === undefined) return;
    await enqueueEmail(tx, {
      organizationId,
      kind: "password_reset",
      to: user.email,
      data: { user_id: user.id, ...(request.next ? { next: request.next } : {}) },
    });
  });
}

/** The account a reset email is for, while it still uses the address the email goes to; else undefined. */
export async function findResetRecipient(tx: Executor, userId: unknown, address: string) {
  if (typeof userId !== "number") return undefined;
  const user = await findUserProfile(tx, userId);
  if (!user || normalizeEmail(user.email) !== normalizeEmail(address)) return undefined;
  return { id: user.id, email: user.email, locale: (await findUserLocale(tx, userId)) ?? null };
}

/**
 * The token of one delivery of a reset email (only its hash is stored; the user's earlier links stop
 * working). Null when the account is gone or uses another address now: the message is cancelled.
 */
export async function mintPasswordResetToken(tx: Executor, userId: unknown, address: string): Promise<string | null> {
  const user = await findResetRecipient(tx, userId, address);
  return user ? createSignInLink(tx, user.id, "reset", PASSWORD_RESET_LINK_LIFETIME_SECONDS) : null;
}
