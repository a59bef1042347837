import { lt } from "drizzle-orm";
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
  /**
   * Points a process takes from the shared store in one atomic consume and then serves from
   * memory: the high-volume per-request limits. Unset (credential throttles): every hit is one
   * consume in the store. Never with blockSeconds.
   */
  readonly lease?: number;
}

export interface LimitOutcome {
  readonly rule: LimitRule;
  readonly allowed: boolean;
  readonly remaining: number;
  /** Seconds until the window resets (or the block ends). */
  readonly resetSeconds: number;
}

/**
 * Counters shared by every process on one database (PostgreSQL or PGlite, one atomic upsert per
 * consume) or on one Redis when REDIS_URL is set. Built on rate-limiter-flexible.
 *
 * A rule with a `lease` is paid ahead: a process consumes `lease` points in one upsert and serves
 * that many hits from memory, so N requests cost about N / lease writes. Every hit served was
 * counted in the store before it was served, so all processes together never pass `points` in a
 * window; what one process leased and has not used yet is missing to the others, so a key may be
 * refused early by at most (processes − 1) × lease hits in a window (docs/security.md).
 */
export interface LimitStore {
  readonly kind: "database" | "redis";
  /** Counts `points` against `key` atomically and says whether it was within the limit. */
  consume(rule: LimitRule, key: string, points?: number): Promise<LimitOutcome>;
  /** The current state without counting (this process's unused lease included). */
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

/** This process's share of one key's window. */
interface Lease {
  /** Points counted in the store that this process has not served yet. */
  left: number;
  /** What the store had left for every process after this process's last consume. */
  storeRemaining: number;
  /** When the store's window ends (ms), from the time the consume was sent: never after the store's end. */
  until: number;
}

export interface LimitStoreOptions {
  db: Db;
  redisUrl?: string | undefined;
  /** Prefix of every key; processes that must share counters use the same one (tests isolate with it). */
  namespace?: string;
  /** Keys whose lease this process keeps at most (default 10,000); past it the oldest lease is dropped. */
  maxLeases?: number;
  /** How often the database store sweeps its expired counters (default 5 minutes). */
  sweepIntervalMs?: number;
}

const REDIS_DEADLINE_MS = 1000;

/**
 * `call`, failed when it has not settled `ms` after it was sent. A timer can fire late, when this
 * process's event loop was busy (hundreds of requests at once on a loaded machine), and then fires
 * before the loop reads the sockets: the store's answer may be waiting there already. So the
 * deadline is checked again after the loop's next poll phase (setImmediate) before the store is
 * blamed; a call failed by its own process's lag would serve a request uncounted.
 */
export function withinDeadline<T>(call: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new Error(`the rate limit store did not answer within ${ms} ms`));
      });
    }, ms);
    call.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** How often the database store deletes its counters that expired over an hour ago. */
const SWEEP_INTERVAL_MS = 5 * 60_000;
const SWEEP_AGE_MS = 60 * 60_000;

export function openLimitStore(options: LimitStoreOptions): LimitStore {
  // A Redis that is down must cost a request at most a second, not ioredis's retries (~10 s): one
  // retry, and every call's own deadline (storeCall), not ioredis's commandTimeout.
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 })
    : undefined;
  const storeCall = <T>(call: Promise<T>): Promise<T> => (redis ? withinDeadline(call, REDIS_DEADLINE_MS) : call);
  redis?.on("error", () => {
    // Reported by the failing command; ioredis reconnects by itself.
  });
  const limiters = new Map<string, Limiter>();
  // The database store's expired counters are swept by one timer of the store's own, stopped by
  // close(): each limiter's timer (the library's) would outlive the store and its database.
  const sweep = redis
    ? undefined
    : setInterval(() => {
        options.db
          .delete(rateLimits)
          .where(lt(rateLimits.expire, new Date(Date.now() - SWEEP_AGE_MS)))
          .catch(() => {
            // The next sweep tries again; a counter past its window counts for nothing meanwhile.
          });
      }, options.sweepIntervalMs ?? SWEEP_INTERVAL_MS).unref();
  const maxLeases = options.maxLeases ?? 10_000;
  // In insertion order, oldest lease first; an entry past its window is dropped when next read.
  const leases = new Map<string, Lease>();
  // One consume in flight per leased key: concurrent hits wait for it rather than each taking a lease.
  const inFlight = new Map<string, Promise<unknown>>();
  const waiting = new Map<string, number>();

  const ruleId = (rule: LimitRule) => `${rule.name}:${rule.points}:${rule.durationSeconds}:${rule.blockSeconds ?? 0}`;

  function limiterFor(rule: LimitRule): Limiter {
    const id = ruleId(rule);
    let limiter = limiters.get(id);
    if (!limiter) {
      if (rule.lease && rule.blockSeconds) throw new Error(`rule ${rule.name}: a leased rule cannot block`);
      const common = {
        keyPrefix: `${options.namespace ?? ""}rl:${rule.name}`,
        points: rule.points,
        duration: rule.durationSeconds,
        blockDuration: rule.blockSeconds ?? 0,
      };
      limiter = redis
        ? new RateLimiterRedis({ ...common, storeClient: redis })
        : new RateLimiterDrizzle({
            ...common,
            storeClient: options.db,
            schema: rateLimits,
            clearExpiredByTimeout: false,
          });
      limiters.set(id, limiter);
    }
    return limiter;
  }

  /** One atomic consume in the store; a refusal is an answer too (the store counted it all the same). */
  async function consumeInStore(rule: LimitRule, key: string, points: number) {
    try {
      return { res: await storeCall(limiterFor(rule).consume(key, points)), allowed: true };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return { res: rejection, allowed: false };
      throw rejection;
    }
  }

  const leaseId = (rule: LimitRule, key: string) => `${ruleId(rule)}\n${key}`;

  function currentLease(id: string, now: number): Lease | undefined {
    const lease = leases.get(id);
    if (lease && lease.until <= now) {
      leases.delete(id);
      return undefined;
    }
    return lease;
  }

  function keepLease(id: string, lease: Lease) {
    leases.delete(id);
    // The oldest lease is the likeliest to be over; dropping one early only wastes its unused points.
    if (leases.size >= maxLeases) leases.delete(leases.keys().next().value as string);
    leases.set(id, lease);
  }

  const leaseOutcome = (rule: LimitRule, lease: Lease, allowed: boolean, now: number): LimitOutcome => ({
    rule,
    allowed,
    remaining: lease.storeRemaining + lease.left,
    resetSeconds: Math.max(1, Math.ceil((lease.until - now) / 1000)),
  });

  async function takeLease(rule: LimitRule, size: number, key: string, id: string, known: Lease | undefined) {
    // Far from the limit, a whole lease; near it, only what this process's waiting hits need, so
    // that little stays leased and unused when the window fills up.
    const points = !known || known.storeRemaining >= 2 * size ? size : Math.min(size, 1 + (waiting.get(id) ?? 0));
    const sent = Date.now();
    const consumed = consumeInStore(rule, key, points);
    inFlight.set(id, consumed);
    let res: RateLimiterRes;
    try {
      ({ res } = await consumed);
    } finally {
      inFlight.delete(id);
    }
    // The store added all `points` at once: those that still fit under the limit are this process's.
    const before = res.consumedPoints - points;
    const lease: Lease = {
      left: Math.min(points, Math.max(rule.points - before, 0)),
      storeRemaining: Math.max(rule.points - res.consumedPoints, 0),
      until: sent + Math.max(res.msBeforeNext, 0),
    };
    keepLease(id, lease);
    const now = Date.now();
    if (lease.left === 0) return leaseOutcome(rule, lease, false, now);
    lease.left -= 1;
    return leaseOutcome(rule, lease, true, now);
  }

  async function consumeLeased(rule: LimitRule, size: number, key: string): Promise<LimitOutcome> {
    const id = leaseId(rule, key);
    for (;;) {
      const now = Date.now();
      const lease = currentLease(id, now);
      if (lease && lease.left > 0) {
        lease.left -= 1;
        return leaseOutcome(rule, lease, true, now);
      }
      // The store is full until the window ends: refused without asking it again.
      if (lease && lease.storeRemaining === 0) return leaseOutcome(rule, lease, false, now);
      const pending = inFlight.get(id);
      if (!pending) return takeLease(rule, size, key, id, lease);
      waiting.set(id, (waiting.get(id) ?? 0) + 1);
      try {
        await pending;
      } finally {
        const left = (waiting.get(id) ?? 1) - 1;
        if (left > 0) waiting.set(id, left);
        else waiting.delete(id);
      }
    }
  }

  return {
    kind: redis ? "redis" : "database",
    async consume(rule, key, points = 1) {
      // A lease of one point would be a consume per hit anyway.
      if (rule.lease && rule.lease > 1 && points === 1) return consumeLeased(rule, rule.lease, key);
      const { res, allowed } = await consumeInStore(rule, key, points);
      return outcomeOf(rule, res, allowed);
    },
    async peek(rule, key) {
      const res = await storeCall(limiterFor(rule).get(key));
      const outcome = outcomeOf(rule, res, (res?.consumedPoints ?? 0) < rule.points);
      const unused = currentLease(leaseId(rule, key), Date.now())?.left ?? 0;
      return unused > 0 ? { ...outcome, allowed: true, remaining: outcome.remaining + unused } : outcome;
    },
    // Both drop this process's lease: the next hit asks the store what it now holds.
    async reward(rule, key, points = 1) {
      leases.delete(leaseId(rule, key));
      await storeCall(limiterFor(rule).reward(key, points));
    },
    async reset(rule, key) {
      leases.delete(leaseId(rule, key));
      await storeCall(limiterFor(rule).delete(key));
    },
    async close() {
      clearInterval(sweep);
      leases.clear();
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
