import path from "node:path";

export interface Config {
  readonly port: number;
  readonly host: string;
  /** postgres://… for PostgreSQL; undefined for the embedded PGlite under dataDir. */
  readonly databaseUrl: string | undefined;
  /** Directory of the embedded database; "memory://" keeps it in memory. */
  readonly dataDir: string;
  readonly authUrl: string;
  readonly baseUrl: string;
  readonly logLevel: string;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly databasePoolSize: number;
  /** Authorization codes live at most this long (RFC 6749 §4.1.2 recommends 10 minutes). */
  readonly authorizationCodeTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  /** An OPEN checkout older than this is closed by the worker without a payment. */
  readonly checkoutTtlSeconds: number;
  /** Seconds between two runs of the background worker (renewals, checkout expiry). */
  readonly workerIntervalSeconds: number;
  /** redis://… to keep rate-limit counters in Redis; undefined keeps them in the database. */
  readonly redisUrl: string | undefined;
  /** Card-testing defences of the public checkout (docs/security.md). */
  readonly cardTesting: CardTestingConfig;
}

export interface CardTestingConfig {
  /** Completion attempts one checkout accepts in its lifetime (per hour window). */
  readonly attemptsPerCheckout: number;
  /** Declined cards per client IP per hour. */
  readonly declinesPerIp: number;
  /** Declines of one card (by keyed fingerprint) per hour. */
  readonly declinesPerCard: number;
  /** Checkouts one client IP may start per hour. */
  readonly checkoutsPerIp: number;
  /** A declined attempt never answers faster than this (milliseconds). */
  readonly declineFloorMs: number;
  /** So many IPs or cards blocked in one organization within the spike window turn the challenge on. */
  readonly spikeBlocked: number;
  /** So many declines in one organization within the spike window also turn it on. */
  readonly spikeDeclines: number;
  readonly spikeWindowSeconds: number;
  /** How long an automatic challenge stays on after the last spike. */
  readonly cooldownSeconds: number;
  /** ALTCHA proof of work: PBKDF2 iterations per try, and the highest counter the solver may need. */
  readonly challengeCost: number;
  readonly challengeMaxNumber: number;
  /** A challenge must be solved and used within this many seconds. */
  readonly challengeTtlSeconds: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function origin(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

/** The only reader of process.env: everything else receives a Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = integer(env, "PORT", 3000, 0, 65535);
  const defaultOrigin = `http://localhost:${port || 3000}`;
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined) parseDatabaseUrl(databaseUrl);
  return Object.freeze({
    port,
    host: env.HOST || "127.0.0.1",
    databaseUrl,
    dataDir: env.DATA_DIR === "memory://" ? "memory://" : path.resolve(env.DATA_DIR || "./data"),
    authUrl: origin(env, "AUTH_URL", defaultOrigin),
    baseUrl: origin(env, "BASE_URL", defaultOrigin),
    logLevel,
    accessTokenTtlSeconds: integer(env, "ACCESS_TOKEN_TTL", 3600, 60, 86400),
    refreshTokenTtlSeconds: integer(env, "REFRESH_TOKEN_TTL", 30 * 86400, 3600, 365 * 86400),
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", 10, 1, 200),
    authorizationCodeTtlSeconds: integer(env, "AUTHORIZATION_CODE_TTL", 600, 1, 600),
    sessionTtlSeconds: integer(env, "SESSION_TTL", 7 * 86400, 300, 90 * 86400),
    checkoutTtlSeconds: integer(env, "CHECKOUT_TTL", 86400, 60, 30 * 86400),
    workerIntervalSeconds: integer(env, "WORKER_INTERVAL", 30, 1, 3600),
    redisUrl: redisUrl(env),
    cardTesting: Object.freeze({
      attemptsPerCheckout: integer(env, "CHECKOUT_ATTEMPTS_PER_CHECKOUT", 10, 1, 1000),
      declinesPerIp: integer(env, "CARD_DECLINES_PER_IP", 10, 1, 100000),
      declinesPerCard: integer(env, "CARD_DECLINES_PER_CARD", 5, 1, 100000),
      checkoutsPerIp: integer(env, "CHECKOUTS_PER_IP", 100, 1, 1000000),
      declineFloorMs: integer(env, "CARD_DECLINE_FLOOR_MS", 1000, 0, 30000),
      spikeBlocked: integer(env, "CARD_TESTING_SPIKE_BLOCKED", 3, 1, 100000),
      spikeDeclines: integer(env, "CARD_TESTING_SPIKE_DECLINES", 30, 1, 1000000),
      spikeWindowSeconds: integer(env, "CARD_TESTING_SPIKE_WINDOW", 600, 1, 86400),
      cooldownSeconds: integer(env, "CARD_TESTING_COOLDOWN", 3600, 1, 30 * 86400),
      challengeCost: integer(env, "ALTCHA_COST", 1000, 1, 1000000),
      challengeMaxNumber: integer(env, "ALTCHA_MAX_NUMBER", 2000, 2, 10000000),
      challengeTtlSeconds: integer(env, "ALTCHA_TTL", 600, 30, 86400),
    }),
    ...overrides,
  });
}

function redisUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.REDIS_URL || undefined;
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {}
  if (!url || (url.protocol !== "redis:" && url.protocol !== "rediss:")) {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${raw}"`);
  }
  return raw;
}

export function parseDatabaseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`DATABASE_URL is not a valid URL (expected postgres://user@host:port/database)`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got "${url.protocol}//"`);
  }
  if (!url.hostname) throw new ConfigError("DATABASE_URL has no host");
  return url;
}
