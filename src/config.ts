import { isIP } from "node:net";
import path from "node:path";
import type { GraphQLLimits } from "./graphql/limits.js";
import type { LimitRule } from "./limits/rate-limiter.js";
import { parseEncryptionKey } from "./secrets/secret-box.js";

/** Every rate limit of the server (see docs/security.md); each is "points per window" for one key. */
export interface RateLimitRules {
  /** Requests per access token (REST /api/v1/ and GraphQL with a bearer token); leased, like session and ip. */
  readonly token: LimitRule;
  /** Requests per admin session (admin panel, GraphQL with the cookie, CSV export). */
  readonly session: LimitRule;
  /** Requests per client address to unauthenticated endpoints (OAuth, public checkout, donate page, documents). */
  readonly ip: LimitRule;
  /** Sign-in attempts per account (its id once known, else the normalised email); a success clears them. */
  readonly signInAccount: LimitRule;
  /** Failed sign-in attempts per client address, whatever the account. */
  readonly signInAddress: LimitRule;
  /** "Forgot your password?" requests per normalised email, known or not (each may mail a link). */
  readonly passwordResetEmail: LimitRule;
  /** "Forgot your password?" requests per client address, whatever the email. */
  readonly passwordResetAddress: LimitRule;
  /** Requests refused 401 (a made-up token or session) per client address; past it, such refusals become 429. */
  readonly invalidCredentials: LimitRule;
}

export interface Config {
  /** NODE_ENV=production: no demo data, https public URLs (unless allowHttp), `donata setup` for the first organization. */
  readonly production: boolean;
  /** ALLOW_HTTP=true: production accepts http:// BASE_URL / AUTH_URL (a private network or a test only). */
  readonly allowHttp: boolean;
  readonly port: number;
  readonly host: string;
  /** postgres://… for PostgreSQL; undefined for the embedded PGlite under dataDir. */
  readonly databaseUrl: string | undefined;
  /** Directory of the embedded database; "memory://" keeps it in memory. */
  readonly dataDir: string;
  readonly authUrl: string;
  readonly baseUrl: string;
  readonly logLevel: string;
  /** LOG_FORMAT: "pretty" (one short line per request, for a terminal) or "json" (JSON lines); default by stdout being a TTY. */
  readonly logFormat: "pretty" | "json";
  /**
   * METRICS_TOKEN: a bearer token (32+ characters) that opens /metrics to non-loopback scrapers;
   * undefined: /metrics answers loopback clients only.
   */
  readonly metricsToken: string | undefined;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly databasePoolSize: number;
  /** Authorization codes live at most this long (RFC 6749 §4.1.2 recommends 10 minutes). */
  readonly authorizationCodeTtlSeconds: number;
  readonly sessionTtlSeconds: number;
  /** An OPEN checkout older than this is closed by the worker without a payment. */
  readonly checkoutTtlSeconds: number;
  /** Events older than this many days leave the events feed and the audit log (EVENT_RETENTION_DAYS). */
  readonly eventRetentionDays: number;
  /** A charge or refund left PENDING longer than this is reconciled by the worker (PAYMENT_PENDING_TIMEOUT). */
  readonly paymentPendingTimeoutSeconds: number;
  /** Seconds between two runs of the background worker (renewals, checkout expiry). */
  readonly workerIntervalSeconds: number;
  /** smtp://user:pass@host:587 or smtps://… to send email; undefined keeps messages as "captured" (admin panel → Outbox). */
  readonly smtpUrl: string | undefined;
  /** The From address of every message; its display name is the organization's. */
  readonly mailFrom: string;
  /** Seconds between two passes of the email delivery loop over the outbox. */
  readonly mailIntervalSeconds: number;
  /** Seconds between two passes of the webhook delivery loop (WEBHOOK_INTERVAL). */
  readonly webhookIntervalSeconds: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets webhook endpoints be http:// and resolve to loopback,
   * private or link-local addresses (a receiver on the same machine or network); off, they are refused.
   */
  readonly webhookAllowPrivateNetworks: boolean;
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
  readonly rateLimits: RateLimitRules;
  /**
   * Proxies whose X-Forwarded-For is believed (Fastify's trustProxy: addresses and CIDRs, comma
   * separated); undefined: the client address is the socket's, and X-Forwarded-For is ignored.
   */
  readonly trustProxy: string | undefined;
  /** Card-testing defences of the public checkout (docs/security.md). */
  readonly cardTesting: CardTestingConfig;
  /**
   * DONATA_ENCRYPTION_KEY: the key that encrypts processor secrets at rest (64 hex digits or base64
   * of 32 bytes); undefined: a key file generated in dataDir (docs/payments.md).
   */
  readonly encryptionKey: string | undefined;
  /** STRIPE_API_URL: where the Stripe client sends requests instead of api.stripe.com (a local stand-in). */
  readonly stripeApiUrl: string | undefined;
  /** Daily backups of the embedded database (docs/backups.md). */
  readonly backups: BackupConfig;
}

export interface BackupConfig {
  /** BACKUP_DIR: where the server's periodic backups go; default DATA_DIR/backups. */
  readonly dir: string;
  /** BACKUP_KEEP: how many periodic backups are kept (the oldest are deleted); 0 turns them off. */
  readonly keep: number;
  /** BACKUP_INTERVAL: hours between two periodic backups. */
  readonly intervalHours: number;
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

function smtpUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SMTP_URL;
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("SMTP_URL must be a URL such as smtp://user:pass@host:587 or smtps://user:pass@host:465");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
    throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${url.protocol}//"`);
  }
  return raw;
}

/** MAIL_FROM, or no-reply at the public host (a bare address: the organization's name is added per message). */
function mailFrom(env: NodeJS.ProcessEnv, baseUrl: string): string {
  const raw = env.MAIL_FROM || `no-reply@${new URL(baseUrl).hostname}`;
  if (!/^[^\s@<>"]+@[^\s@<>"]+$/.test(raw)) {
    throw new ConfigError(`MAIL_FROM must be a bare email address such as donations@example.org, got "${raw}"`);
  }
  return raw;
}

/** NODE_ENV=production (read alone where the rest of the configuration does not matter yet). */
export function isProduction(env: NodeJS.ProcessEnv): boolean {
  return env.NODE_ENV === "production";
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
  const production = isProduction(env);
  const allowHttp = flag(env, "ALLOW_HTTP");
  const publicUrl = (name: "AUTH_URL" | "BASE_URL") => {
    const url = origin(env, name, defaultOrigin);
    if (production && !allowHttp && url.startsWith("http:")) {
      throw new ConfigError(
        `${name} must be an https:// URL in production (NODE_ENV=production), got "${url}"; set ALLOW_HTTP=true only on a private network or for a test`,
      );
    }
    return url;
  };
  return Object.freeze({
    production,
    allowHttp,
    port,
    host: env.HOST || "127.0.0.1",
    databaseUrl,
    dataDir: env.DATA_DIR === "memory://" ? "memory://" : path.resolve(env.DATA_DIR || "./data"),
    authUrl: publicUrl("AUTH_URL"),
    baseUrl: publicUrl("BASE_URL"),
    logLevel,
    logFormat: logFormat(env),
    metricsToken: metricsToken(env),
    accessTokenTtlSeconds: integer(env, "ACCESS_TOKEN_TTL", 3600, 60, 86400),
    refreshTokenTtlSeconds: integer(env, "REFRESH_TOKEN_TTL", 30 * 86400, 3600, 365 * 86400),
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", 10, 1, 200),
    authorizationCodeTtlSeconds: integer(env, "AUTHORIZATION_CODE_TTL", 600, 1, 600),
    sessionTtlSeconds: integer(env, "SESSION_TTL", 7 * 86400, 300, 90 * 86400),
    checkoutTtlSeconds: integer(env, "CHECKOUT_TTL", 86400, 60, 30 * 86400),
    eventRetentionDays: integer(env, "EVENT_RETENTION_DAYS", 400, 30, 3650),
    // Far longer than any processor call takes, so the reconciler never races a charge in flight.
    paymentPendingTimeoutSeconds: integer(env, "PAYMENT_PENDING_TIMEOUT", 600, 1, 7 * 86400),
    workerIntervalSeconds: integer(env, "WORKER_INTERVAL", 30, 1, 3600),
    smtpUrl: smtpUrl(env),
    mailFrom: mailFrom(env, origin(env, "BASE_URL", defaultOrigin)),
    mailIntervalSeconds: integer(env, "MAIL_INTERVAL", 5, 1, 3600),
    webhookIntervalSeconds: integer(env, "WEBHOOK_INTERVAL", 2, 1, 3600),
    webhookAllowPrivateNetworks: flag(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS"),
    redisUrl: redisUrl(env),
    ...timeouts(env),
    // Longer than the 60 s idle timeout of common load balancers, so they never reuse a closed connection.
    keepAliveTimeoutSeconds: integer(env, "KEEP_ALIVE_TIMEOUT", 72, 1, 3600),
    // Off on the embedded database: PGlite runs every query on the event loop, so one long query
    // (or the demo seed at start-up) would read as overload and shed the requests after it.
    maxEventLoopDelayMs: integer(env, "MAX_EVENT_LOOP_DELAY", databaseUrl ? 1000 : 0, 0, 60_000),
    eventLoopSampleIntervalMs: integer(env, "EVENT_LOOP_SAMPLE_INTERVAL", 1000, 10, 60_000),
    graphqlLimits: Object.freeze({
      maxDepth: integer(env, "GRAPHQL_MAX_DEPTH", 8, 2, 64),
      maxCost: integer(env, "GRAPHQL_MAX_COST", 50_000, 100, 10_000_000),
      maxAliases: integer(env, "GRAPHQL_MAX_ALIASES", 30, 0, 10_000),
      maxRootFields: integer(env, "GRAPHQL_MAX_ROOT_FIELDS", 20, 1, 10_000),
      maxStatements: integer(env, "GRAPHQL_MAX_STATEMENTS", 100, 10, 100_000),
    }),
    rateLimits: Object.freeze({
      token: leased(env, limitRule(env, "RATE_LIMIT_TOKEN", "api_token", "6000/1m")),
      session: leased(env, limitRule(env, "RATE_LIMIT_SESSION", "session", "1200/1m")),
      ip: leased(env, limitRule(env, "RATE_LIMIT_IP", "client_ip", "600/1m")),
      signInAccount: limitRule(env, "RATE_LIMIT_SIGN_IN_ACCOUNT", "sign_in_account", "5/15m"),
      signInAddress: limitRule(env, "RATE_LIMIT_SIGN_IN_ADDRESS", "sign_in_address", "30/15m"),
      passwordResetEmail: limitRule(env, "RATE_LIMIT_PASSWORD_RESET_EMAIL", "password_reset_email", "5/1h"),
      passwordResetAddress: limitRule(env, "RATE_LIMIT_PASSWORD_RESET_ADDRESS", "password_reset_address", "20/1h"),
      invalidCredentials: limitRule(env, "RATE_LIMIT_INVALID_CREDENTIALS", "invalid_credentials", "300/1m"),
    }),
    trustProxy: trustProxy(env),
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
    encryptionKey: encryptionKey(env),
    stripeApiUrl: env.STRIPE_API_URL ? origin(env, "STRIPE_API_URL", "") : undefined,
    backups: backups(env),
    ...overrides,
  });
}

function logFormat(env: NodeJS.ProcessEnv): "pretty" | "json" {
  const raw = env.LOG_FORMAT || undefined;
  // Human lines only for a person at a terminal; pipes, files, CI and tests get JSON lines.
  if (raw === undefined) return process.stdout.isTTY ? "pretty" : "json";
  if (raw !== "pretty" && raw !== "json") throw new ConfigError(`LOG_FORMAT must be pretty or json, got "${raw}"`);
  return raw;
}

const MIN_METRICS_TOKEN_LENGTH = 32;

function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.METRICS_TOKEN || undefined;
  if (raw === undefined) return undefined;
  if (raw.length < MIN_METRICS_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError(
      `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} printable characters without spaces (e.g. openssl rand -hex 32)`,
    );
  }
  return raw;
}

function backups(env: NodeJS.ProcessEnv): BackupConfig {
  const dataDir = env.DATA_DIR === "memory://" ? "memory://" : path.resolve(env.DATA_DIR || "./data");
  const dir = env.BACKUP_DIR
    ? path.resolve(env.BACKUP_DIR)
    : dataDir === "memory://"
      ? ""
      : path.join(dataDir, "backups");
  return Object.freeze({
    dir,
    keep: integer(env, "BACKUP_KEEP", 7, 0, 10_000),
    intervalHours: integer(env, "BACKUP_INTERVAL", 24, 1, 24 * 366),
  });
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "" || raw === "false" || raw === "0") return false;
  if (raw === "true" || raw === "1") return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function encryptionKey(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.DONATA_ENCRYPTION_KEY || undefined;
  if (raw === undefined) return undefined;
  try {
    parseEncryptionKey(raw);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return raw;
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

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** "<points>/<window>", the window a number and a unit: "600/1m", "20/1s", "5/15m", "1000/1h". */
export function parseLimitRule(name: string, raw: string): LimitRule {
  const match = /^(\d{1,9})\/(\d{1,5})(s|m|h)$/.exec(raw.replace(/\s+/g, ""));
  const points = Number(match?.[1]);
  const durationSeconds = Number(match?.[2]) * UNIT_SECONDS[(match?.[3] ?? "s") as keyof typeof UNIT_SECONDS];
  if (!match || points < 1 || durationSeconds < 1 || durationSeconds > 86400) {
    throw new ConfigError(`must be "<requests>/<window>" such as "600/1m" (window in s, m or h, at most 24h)`);
  }
  return Object.freeze({ name, points, durationSeconds });
}

function limitRule(env: NodeJS.ProcessEnv, variable: string, name: string, fallback: string): LimitRule {
  const raw = env[variable] || fallback;
  try {
    return parseLimitRule(name, raw);
  } catch (error) {
    throw new ConfigError(`${variable} ${(error as Error).message}, got "${raw}"`);
  }
}

/**
 * A request limit paid ahead in leases of RATE_LIMIT_LEASE_PERCENT of its points (a store write per
 * lease, not per request); a lease under 2 points is no lease. Credential throttles are never leased.
 */
function leased(env: NodeJS.ProcessEnv, rule: LimitRule): LimitRule {
  const lease = Math.floor((rule.points * integer(env, "RATE_LIMIT_LEASE_PERCENT", 10, 0, 50)) / 100);
  return lease >= 2 ? Object.freeze({ ...rule, lease }) : rule;
}

// proxy-addr's names for the loopback, link-local and private ranges.
const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

function trustProxy(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return undefined;
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const maxPrefix = family === 6 ? 128 : 32;
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (!PROXY_RANGE_NAMES.has(entry) && (family === 0 || !validPrefix || extra !== undefined)) {
      throw new ConfigError(
        `TRUST_PROXY must list proxy addresses or CIDR ranges separated by commas (e.g. "10.0.0.1,192.168.0.0/16"), got "${raw}"`,
      );
    }
  }
  return entries.join(",");
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
