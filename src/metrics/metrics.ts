import { readFileSync } from "node:fs";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import {
  type ProcessorStateCount,
  selectDueWork,
  selectRecentCheckoutAttempts,
  selectRecentEmails,
  selectRecentPayments,
  selectUnsettledEmails,
} from "./metrics.repo.js";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** Requests matched by no route share one label, so a scan of made-up URLs adds no series. */
export const UNMATCHED_ROUTE = "unmatched";
/** Counts "recent" records (payments, attempts, emails) created within this window. */
export const RECENT_WINDOW_SECONDS = 86_400;
/** A collector that has not answered by then is skipped for this scrape. */
const COLLECTOR_TIMEOUT_MS = 5_000;

/** The queues the worker serves beside the jobs table's kinds; each is always exported, 0 when idle. */
const FIXED_QUEUES = [
  "renewal",
  "checkout_expiry",
  "reconcile_checkout_attempt",
  "reconcile_payment",
  "reconcile_refund",
  "email",
];
const UNSETTLED_EMAIL_STATES = ["queued", "sending"];
const EMAIL_STATES = ["queued", "sending", "sent", "captured", "failed", "cancelled"];

export interface Metrics {
  readonly registry: Registry;
  /**
   * Counts a response: its route pattern, method and status, its duration, and for a 429 the limit
   * that refused it (`limit`, else the rule its RateLimit-Policy field names).
   */
  observe(request: FastifyRequest, reply: FastifyReply, limit?: string): void;
  /** The Prometheus text exposition; a failing collector is logged and left out, never fails the scrape. */
  scrape(log: FastifyBaseLogger): Promise<string>;
}

/** The rule a RateLimit-Policy field names (`"client_ip";q=600;w=60` → client_ip). */
export function policyName(policy: unknown): string | undefined {
  return typeof policy === "string" ? /^"([A-Za-z0-9_-]{1,64})"/.exec(policy)?.[1] : undefined;
}

/** One registry per application (tests build many): never prom-client's global one. */
export function createMetrics(config: Config, database: Database): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const labels = ["method", "route", "status"] as const;
  const requests = new Counter({
    name: "donata_http_requests_total",
    help: "HTTP responses sent, by method, route pattern (unmatched: no route) and status",
    labelNames: labels,
    registers: [registry],
  });
  const durations = new Histogram({
    name: "donata_http_request_duration_seconds",
    help: "Time from the request's arrival to its response, by method, route pattern and status",
    labelNames: labels,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refusals = new Counter({
    name: "donata_rate_limit_refusals_total",
    help: "Requests refused 429 by a rate limit, by the limit's name (its RateLimit-Policy)",
    labelNames: ["limit"] as const,
    registers: [registry],
  });
  for (const rule of Object.values(config.rateLimits)) refusals.inc({ limit: rule.name }, 0);

  new Gauge({
    name: "donata_build_info",
    help: "Always 1: the version, the database kind and the Node.js version of this process",
    labelNames: ["version", "database", "node"] as const,
    registers: [registry],
  }).set({ version, database: database.kind, node: process.versions.node }, 1);

  const collectorUp = new Gauge({
    name: "donata_metrics_collector_up",
    help: "1 when the collector answered at the last scrape, 0 when it failed (its metrics are left out)",
    labelNames: ["collector"] as const,
    registers: [registry],
  });

  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });
  // PGlite is one embedded connection, without a pool: these exist on PostgreSQL only.
  const pool = database.poolUsage
    ? {
        connections: gauge("donata_database_pool_connections", "PostgreSQL pool connections by state (idle, in_use)", [
          "state",
        ]),
        waiting: gauge("donata_database_pool_waiting", "Queries waiting for a PostgreSQL pool connection", []),
        max: gauge("donata_database_pool_max", "Size of the PostgreSQL pool (DATABASE_POOL_SIZE)", []),
      }
    : undefined;
  const dueJobs = gauge("donata_queue_due", "Work the worker would pick up now, by queue", ["queue"]);
  const oldestDue = gauge(
    "donata_queue_oldest_due_age_seconds",
    "How long the oldest due item of the queue has waited since it became due (0: none due)",
    ["queue"],
  );
  const unsettledEmails = gauge(
    "donata_email_outbox_messages",
    "Emails in the outbox not yet settled, by state (queued, sending), due or not",
    ["state"],
  );
  const recentEmails = gauge(
    "donata_email_outbox_recent_messages",
    "Emails created in the last 24 hours, by current state",
    ["state"],
  );
  const recentPayments = gauge(
    "donata_payments_recent",
    "Payments created in the last 24 hours, by processor and current state (PENDING, PAID, REFUNDED, FAILED)",
    ["processor", "state"],
  );
  const recentAttempts = gauge(
    "donata_checkout_attempts_recent",
    "Checkout completion attempts created in the last 24 hours, by processor and state (SUCCEEDED, DECLINED, …)",
    ["processor", "state"],
  );

  const setByProcessor = (target: Gauge<"processor" | "state">, rows: ProcessorStateCount[]) => {
    target.reset();
    for (const row of rows) target.set({ processor: row.processor, state: row.state }, row.count);
  };
  const since = () => new Date(Date.now() - RECENT_WINDOW_SECONDS * 1000);
  const collectors: Record<string, { gauges: Gauge<string>[]; refresh(): Promise<void> }> = {
    queues: {
      gauges: [dueJobs, oldestDue],
      async refresh() {
        const now = new Date();
        const work = await selectDueWork(database.db, {
          now,
          checkoutTtlSeconds: config.checkoutTtlSeconds,
          pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
        });
        // A job kind that left the queue must not linger with its last value.
        dueJobs.reset();
        oldestDue.reset();
        for (const queue of FIXED_QUEUES) {
          dueJobs.set({ queue }, 0);
          oldestDue.set({ queue }, 0);
        }
        for (const { queue, due, oldestDueEpoch } of work) {
          dueJobs.set({ queue }, due);
          const age = oldestDueEpoch === null ? 0 : Math.max(now.getTime() / 1000 - oldestDueEpoch, 0);
          oldestDue.set({ queue }, Math.round(age * 1000) / 1000);
        }
      },
    },
    email_outbox: {
      gauges: [unsettledEmails, recentEmails],
      async refresh() {
        const unsettled = await selectUnsettledEmails(database.db);
        const recent = await selectRecentEmails(database.db, since());
        for (const state of UNSETTLED_EMAIL_STATES) unsettledEmails.set({ state }, 0);
        for (const { state, count } of unsettled) unsettledEmails.set({ state }, count);
        for (const state of EMAIL_STATES) recentEmails.set({ state }, 0);
        for (const { state, count } of recent) recentEmails.set({ state }, count);
      },
    },
    payments: {
      gauges: [recentPayments, recentAttempts],
      async refresh() {
        const payments = await selectRecentPayments(database.db, since());
        const attempts = await selectRecentCheckoutAttempts(database.db, since());
        setByProcessor(recentPayments, payments);
        setByProcessor(recentAttempts, attempts);
      },
    },
  };

  if (pool && database.poolUsage) {
    const usage = database.poolUsage;
    collectors.database_pool = {
      gauges: [pool.connections, pool.waiting, pool.max],
      async refresh() {
        const { total, idle, waiting, max } = usage();
        pool.connections.set({ state: "idle" }, idle);
        pool.connections.set({ state: "in_use" }, total - idle);
        pool.waiting.set(waiting);
        pool.max.set(max);
      },
    };
  }

  const refreshAll = async (log: FastifyBaseLogger) => {
    // One at a time: a scrape holds at most one pool connection, however many collectors there are.
    for (const [name, collector] of Object.entries(collectors)) {
      try {
        await withTimeout(collector.refresh(), COLLECTOR_TIMEOUT_MS, `metrics collector ${name} timed out`);
        collectorUp.set({ collector: name }, 1);
      } catch (error) {
        // Stale numbers would mislead more than missing ones: the collector's series are dropped.
        for (const target of collector.gauges) target.reset();
        collectorUp.set({ collector: name }, 0);
        log.warn({ err: error, collector: name }, "metrics collector failed; its metrics are left out");
      }
    }
    return registry.metrics();
  };
  // Scrapes arriving together share one pass over the database.
  let scraping: Promise<string> | undefined;

  return {
    registry,
    observe(request, reply, limit) {
      const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
      const values = { method: request.method, route, status: String(reply.statusCode) };
      requests.inc(values);
      durations.observe(values, reply.elapsedTime / 1000);
      if (reply.statusCode === 429) {
        refusals.inc({ limit: limit ?? policyName(reply.getHeader("ratelimit-policy")) ?? "unknown" });
      }
    },
    scrape(log) {
      scraping ??= refreshAll(log).finally(() => {
        scraping = undefined;
      });
      return scraping;
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
