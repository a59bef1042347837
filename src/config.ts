import path from "node:path";
import type { GraphQLLimits } from "./graphql/limits.js";

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
  /** A request whose headers have not all arrived after this many seconds is answered 408 and closed. */
  readonly headersTimeoutSeconds: number;
  /** A request (headers and body) not fully received after this many seconds is answered 408 and closed. */
  readonly requestTimeoutSeconds: number;
  /** An idle keep-alive connection is closed after this many seconds. */
  readonly keepAliveTimeoutSeconds: number;
  /** Load shedding: above this mean event-loop delay (ms) requests get 503 + Retry-After; 0 turns it off. */
  readonly maxEventLoopDelayMs: number;
  /** How often (ms) the event-loop delay is sampled for load shedding. */
  readonly eventLoopSampleIntervalMs: number;
  /** Per-operation limits of the GraphQL endpoint (depth, estimated cost, aliases, root fields, SQL statements). */
  readonly graphqlLimits: GraphQLLimits;
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
    ...timeouts(env),
    // Longer than the 60 s idle timeout of common load balancers, so they never reuse a closed connection.
    keepAliveTimeoutSeconds: integer(env, "KEEP_ALIVE_TIMEOUT", 72, 1, 3600),
    maxEventLoopDelayMs: integer(env, "MAX_EVENT_LOOP_DELAY", 1000, 0, 60_000),
    eventLoopSampleIntervalMs: integer(env, "EVENT_LOOP_SAMPLE_INTERVAL", 1000, 10, 60_000),
    graphqlLimits: Object.freeze({
      maxDepth: integer(env, "GRAPHQL_MAX_DEPTH", 8, 2, 64),
      maxCost: integer(env, "GRAPHQL_MAX_COST", 50_000, 100, 10_000_000),
      maxAliases: integer(env, "GRAPHQL_MAX_ALIASES", 30, 0, 10_000),
      maxRootFields: integer(env, "GRAPHQL_MAX_ROOT_FIELDS", 20, 1, 10_000),
      maxStatements: integer(env, "GRAPHQL_MAX_STATEMENTS", 100, 10, 100_000),
    }),
    ...overrides,
  });
}

function timeouts(env: NodeJS.ProcessEnv) {
  const headersTimeoutSeconds = integer(env, "HEADERS_TIMEOUT", 10, 1, 3600);
  const requestTimeoutSeconds = integer(env, "REQUEST_TIMEOUT", 30, 1, 3600);
  // Node refuses a headers timeout longer than the request timeout.
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError(
      `HEADERS_TIMEOUT (${headersTimeoutSeconds}) must not exceed REQUEST_TIMEOUT (${requestTimeoutSeconds})`,
    );
  }
  return { headersTimeoutSeconds, requestTimeoutSeconds };
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
