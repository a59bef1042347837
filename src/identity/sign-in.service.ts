import type { RateLimitRules } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { clientAddressKey } from "../limits/client-address.js";
import { type LimitStore, rateLimitHeaders } from "../limits/rate-limiter.js";
import { findUserByEmail, hashPassword, normalizeEmail, verifyPassword } from "./users.service.js";

// Verified against when the email is unknown, so both cases cost the same argon2 work.
let dummyHash: Promise<string> | undefined;

export const INVALID_CREDENTIALS = "The email or password is incorrect.";
export const TOO_MANY_ATTEMPTS = "Too many failed sign-in attempts. Try again later.";

/** The counters of credential attempts and the rules they follow. */
export interface CredentialThrottle {
  store: LimitStore;
  rules: Pick<RateLimitRules, "signInAccount" | "signInAddress">;
}

export interface CredentialAttempt {
  /** The credential was right: the account's failures are forgotten, and this attempt was no failure. */
  succeeded(): Promise<void>;
}

/**
 * Counts one attempt at a credential (password, and later a reset code or a second factor)
 * before it is checked, atomically per account and per client address, so parallel guesses
 * cannot all pass a check made before any of them is recorded. Over either limit: 429 with
 * Retry-After, whether or not the credential would have been right.
 */
export async function countCredentialAttempt(
  throttle: CredentialThrottle,
  // No account when the credential names none this server knows (an unknown passkey): the address alone.
  subject: { account: { userId: number } | { email: string } | undefined; address: string },
): Promise<CredentialAttempt> {
  const { store, rules } = throttle;
  const accountKey =
    subject.account === undefined
      ? undefined
      : "userId" in subject.account
        ? `user:${subject.account.userId}`
        : `email:${normalizeEmail(subject.account.email)}`;
  const addressKey = clientAddressKey(subject.address);
  const [address, account] = await Promise.all([
    store.consume(rules.signInAddress, addressKey),
    ...(accountKey === undefined ? [] : [store.consume(rules.signInAccount, accountKey)]),
  ]).catch((error: unknown) => {
    // Unlike ordinary requests, a credential is never checked uncounted.
    throw new AppError("sign_in_unavailable", "Sign-in is unavailable for a moment. Try again shortly.", {
      cause: error,
      headers: { "retry-after": "5" },
    });
  });
  const refused = [account, address].find((outcome) => outcome !== undefined && !outcome.allowed);
  if (refused) {
    throw new AppError("too_many_attempts", TOO_MANY_ATTEMPTS, {
      headers: { "retry-after": String(refused.resetSeconds), ...rateLimitHeaders(refused) },
    });
  }
  return {
    async succeeded() {
      await Promise.all([
        ...(accountKey === undefined ? [] : [store.reset(rules.signInAccount, accountKey)]),
        store.reward(rules.signInAddress, addressKey),
      ]);
    },
  };
}

/**
 * Checks an email and password for every sign-in surface (admin panel, OAuth login form).
 * Unknown email, wrong password and an account without a password yet read the same and cost the same; the attempt is counted
 * against the account (its id once known) and the client address before the hash is checked.
 */
export async function signIn(
  db: Db,
  throttle: CredentialThrottle,
  input: { email: string; password: string; address: string },
) {
  const user = await findUserByEmail(db, input.email);
  const attempt = await countCredentialAttempt(throttle, {
    account: user ? { userId: user.id } : { email: input.email },
    address: input.address,
  });
  dummyHash ??= hashPassword("a password nobody has");
  // An account still waiting for its first password (a setup link) costs the same and never matches.
  const hash = user?.passwordHash ?? null;
  const valid = await verifyPassword(hash ?? (await dummyHash), input.password);
  if (!user || hash === null || !valid) throw new AppError("invalid_credentials", INVALID_CREDENTIALS);
  await attempt.succeeded();
  return user;
}
