import { Redis } from "ioredis";
import { RateLimiterDrizzle, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "../db/client.js";
import { rateLimits } from "../db/schema.js";

/** A named limit: at most `points` per `durationSeconds` for one key (an IP, a token, an account). */
export interface LimitRule {
  readonly name: string;
  readonly points: number;
  readonly durationSeconds: number;
  /** Once over the limit, the key stays refused this long (0: until the window ends). */
  readonly blockSeconds?: number;
}

export interface LimitOutcome {
  readonly rule: LimitRule;
  readonly allowed: boolean;
  readonly remaining: number;
  /** Seconds until the window resets (or the block ends). */
  readonly resetSeconds: number;
}

/**
 * Counters shared by every process on one database (PostgreSQL or PGlite, one atomic upsert
 * per hit) or on one Redis when REDIS_URL is set. Built on rate-limiter-flexible.
 */
export interface LimitStore {
  readonly kind: "database" | "redis";
  /** Counts `points` against `key` atomically and says whether it was within the limit. */
  consume(rule: LimitRule, key: string, points?: number): Promise<LimitOutcome>;
  /** The current state without counting. */
  peek(rule: LimitRule, key: string): Promise<LimitOutcome>;
  /** Gives back points counted earlier (a successful sign-in was not a failure of its address). */
  reward(rule: LimitRule, key: string, points?: number): Promise<void>;
  /** Forgets the key (a successful sign-in clears the account's failures). */
  reset(rule: LimitRule, key: string): Promise<void>;
  close(): Promise<void>;
}

type Limiter = RateLimiterDrizzle | RateLimiterRedis;

function outcomeOf(rule: LimitRule, res: RateLimiterRes | null, allowed: boolean): LimitOutcome {
  const consumed = res?.consumedPoints ?? 0;
  const msBeforeNext = res && res.msBeforeNext > 0 ? res.msBeforeNext : rule.durationSeconds * 1000;
  return {
    rule,
    allowed,
    remaining: Math.max(rule.points - consumed, 0),
    resetSeconds: Math.max(1, Math.ceil((res ? msBeforeNext : 0) / 1000)),
  };
}

export interface LimitStoreOptions {
  db: Db;
  redisUrl?: string | undefined;
  /** Prefix of every key; processes that must share counters use the same one (tests isolate with it). */
  namespace?: string;
}

export function openLimitStore(options: LimitStoreOptions): LimitStore {
  const redis = options.redisUrl
    ? // A Redis that is down must cost a request at most a second, not ioredis's retries (~10 s).
      new Redis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 })
    : undefined;
  redis?.on("error", () => {
    // Reported by the failing command; ioredis reconnects by itself.
  });
  const limiters = new Map<string, Limiter>();

  function limiterFor(rule: LimitRule): Limiter {
    const id = `${rule.name}:${rule.points}:${rule.durationSeconds}:${rule.blockSeconds ?? 0}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      const common = {
        keyPrefix: `${options.namespace ?? ""}rl:${rule.name}`,
        points: rule.points,
        duration: rule.durationSeconds,
        blockDuration: rule.blockSeconds ?? 0,
      };
      limiter = redis
        ? new RateLimiterRedis({ ...common, storeClient: redis })
        : new RateLimiterDrizzle({ ...common, storeClient: options.db, schema: rateLimits });
      limiters.set(id, limiter);
    }
    return limiter;
  }

  return {
    kind: redis ? "redis" : "database",
    async consume(rule, key, points = 1) {
      try {
        return outcomeOf(rule, await limiterFor(rule).consume(key, points), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return outcomeOf(rule, rejection, false);
        throw rejection;
      }
    },
    async peek(rule, key) {
      const res = await limiterFor(rule).get(key);
      return outcomeOf(rule, res, (res?.consumedPoints ?? 0) < rule.points);
    },
    async reward(rule, key, points = 1) {
      await limiterFor(rule).reward(key, points);
    },
    async reset(rule, key) {
      await limiterFor(rule).delete(key);
    },
    async close() {
      await redis?.quit().catch(() => redis.disconnect());
    },
  };
}

/** The most constraining outcome: the refused one, else the one with the fewest requests left. */
export function tightest(outcomes: readonly LimitOutcome[]): LimitOutcome | undefined {
  return [...outcomes].sort((a, b) => Number(a.allowed) - Number(b.allowed) || a.remaining - b.remaining)[0];
}

/**
 * IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured
 * field form: `"name";q=100;w=60` and `"name";r=42;t=17`).
 */
export function rateLimitHeaders(outcome: LimitOutcome): Record<string, string> {
  const { rule } = outcome;
  return {
    "ratelimit-policy": `"${rule.name}";q=${rule.points};w=${rule.durationSeconds}`,
    ratelimit: `"${rule.name}";r=${outcome.remaining};t=${outcome.resetSeconds}`,
  };
}
