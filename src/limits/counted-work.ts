import { createHash } from "node:crypto";
import { AppError } from "../errors/app-error.js";
import { type LimitRule, type LimitStore, rateLimitHeaders } from "./rate-limiter.js";

/** A value that is not kept in clear (an email, a credential) as a counter key, the same in every process. */
export const hashedKey = (value: string) => createHash("sha256").update(value).digest("base64url").slice(0, 32);

/** One counter a piece of work is counted on: a rule and the key it counts for. */
export interface Counter {
  rule: LimitRule;
  key: string;
}

/**
 * Counts one hit on each counter, atomically in the shared store, before the work they guard (a link
 * mailed, a credential checked), so parallel requests cannot all pass a check made before any of them
 * is recorded. Past any limit: 429 `too_many_attempts` saying `refusal`, with Retry-After and the
 * refusing rule's RateLimit fields.
 * Such work is never done uncounted: an unreachable store is a 503 `sign_in_unavailable`, Retry-After 5.
 */
export async function countWork(store: LimitStore, counters: readonly Counter[], refusal: string): Promise<void> {
  const outcomes = await Promise.all(counters.map(({ rule, key }) => store.consume(rule, key))).catch(
    (error: unknown) => {
      throw new AppError("sign_in_unavailable", "Sign-in is unavailable for a moment. Try again shortly.", {
        cause: error,
        headers: { "retry-after": "5" },
      });
    },
  );
  const refused = outcomes.find((outcome) => !outcome.allowed);
  if (refused) {
    throw new AppError("too_many_attempts", refusal, {
      headers: { "retry-after": String(refused.resetSeconds), ...rateLimitHeaders(refused) },
    });
  }
}
