/**
 * `npm run bench`: seeds a throw-away PostgreSQL database with 100,000 checkouts, starts the
 * real application and a bare Fastify baseline in child processes, loads both with autocannon
 * over loopback and writes docs/benchmarks.md. See the "Method" section it writes for details.
 * Then, on smaller data of their own: a Citus cluster next to plain PostgreSQL, and
 * `donata serve --processes 1` against `--processes 2` (each skipped, saying why, when the cluster
 * is not there or the time budget cannot hold it).
 *
 * Environment:
 *   BENCH_DATABASE_URL  server to create the throw-away database on
 *                       (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_DURATION      seconds measured per scenario (default 10)
 *   BENCH_WARMUP        seconds of discarded warm-up per scenario (default 2)
 *   BENCH_KEEP_DATABASE=1  keep the database afterwards (for EXPLAIN ANALYZE); it is printed
 *   BENCH_REDIS_URL     Redis for the rate-limit cost rows (default redis://127.0.0.1:6379; left out if none answers)
 *   BENCH_SECTIONS      which parts to run, comma-separated: main (the scenarios above and the
 *                       rate-limit rows), citus, processes, webhooks, import (default all five); without main the
 *                       others print their tables and docs/benchmarks.md is left as it is
 *   BENCH_CITUS_URL     a Citus coordinator server (default postgres://postgres@127.0.0.1:5433/postgres);
 *                       the "Citus cluster" section is skipped, saying why, when it or a worker does not answer
 *   BENCH_CITUS_WORKERS its workers, host:port comma-separated (default 127.0.0.1:5434,127.0.0.1:5435)
 *
 * The same file is the application's child process when started with BENCH_ROLE=app.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import pg from "pg";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { campaigns, checkouts, oauthAuthorizationCodes } from "../src/db/schema.js";
import { insertEvents } from "../src/events/events.repo.js";
import { newEventId, stopRecordingEventsForBenchmark } from "../src/events/record-event.js";
import { generateSecret, hashSecret } from "../src/identity/secrets.js";
import { startWebhookSender } from "../src/jobs/webhook.job.js";
import { type LimitStore, openLimitStore } from "../src/limits/rate-limiter.js";
import {
  createApplication,
  createInstallationToken,
  installApplication,
} from "../src/modules/applications/applications.service.js";
import { importSupporters } from "../src/modules/imports/supporter-import.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { deliverWebhooks } from "../src/modules/webhooks/webhook-delivery.service.js";
import { createWebhookEndpoint } from "../src/modules/webhooks/webhooks.service.js";
import { upsertProcessorAccount } from "../src/payments/processors/processor-accounts.repo.js";
import { createSecretBox } from "../src/secrets/secret-box.js";
import { type SeedCounts, seedOrganization } from "../src/seed/seed.service.js";
import { mintConfirmationToken, type StripeStandIn, startStripeStandIn } from "../test/helpers/stripe-stand-in.js";

const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const ORG = "bench";
const SEED = { campaigns: 50, supporters: 30_000, checkouts: 100_000, randomSeed: 1 };
const CONNECTIONS = 10;
const DEEP_OFFSET = 50_000;
const SINGLE_READ_IDS = 1000;
const HARD_DEADLINE_MS = 600_000;
/** Authorization codes made ahead for the code-exchange scenario (each is single-use). */
const PREPARED_CODES = 40_000;
/** Open checkouts made ahead for the completion scenario (each completes once). */
const PREPARED_CHECKOUTS = 30_000;
const GIVING_ORG = "bench-giving";
/** The organization whose donors pay with the Stripe adapter, against the local Stripe stand-in. */
const STRIPE_ORG = "bench-stripe";
/** Checkouts and confirmation tokens made ahead for the Stripe completion scenario (each is single-use). */
const PREPARED_STRIPE_CHECKOUTS = 8_000;
/** The key the application child seals and opens the bench organization's Stripe keys with. */
const BENCH_ENCRYPTION_KEY = "5a".repeat(32);
const REFRESH_CHAINS = 40;
const CHILD_READY_TIMEOUT_MS = 60_000;
const BACKGROUND_SECONDS = 3;
const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";
/**
 * The cost of rate limiting: the same application with each way of counting its requests, one
 * child process each. The token's limit is far above the load (leases of 3,000 at the default 10 %).
 */
const LIMIT_VARIANTS = [
  { id: "none", label: "no counter (baseline)", store: undefined, leasePercent: undefined },
  { id: "database-exact", label: "database, one write per request", store: "database", leasePercent: "0" },
  { id: "database", label: "database, leased (default)", store: "database", leasePercent: undefined },
  { id: "redis-exact", label: "Redis, one script per request", store: "redis", leasePercent: "0" },
  { id: "redis", label: "Redis, leased", store: "redis", leasePercent: undefined },
] as const;
type LimitVariant = (typeof LIMIT_VARIANTS)[number];
const LIMIT_VARIANT_RULE = "30000/1m";
/**
 * The variants are measured in turns (in order, then in reverse, …), so that a change in the
 * machine's other load during the runs falls on all of them alike.
 */
const LIMIT_ROUNDS = 3;
const LIMIT_ROUND_SECONDS = 2;
/** The default page, and a small one on which the counter is a larger share of the work. */
const LIMIT_PAGES = [
  { name: "default page", path: "/api/v1/checkouts/" },
  { name: "10-row page", path: "/api/v1/checkouts/?limit=10" },
] as const;
type LimitPage = (typeof LIMIT_PAGES)[number];
/**
 * The load comes from one token and one address: limits far above it, so the figures measure the
 * API (each request still counts against its limit, leased as by default), never 429s. Every
 * completion comes from one address with one card, ten at a time: the card-testing budgets
 * (checkouts per address, declines reserved per address and per card while a charge is in flight)
 * are raised with them. The application's settings, as its environment says them.
 */
const UNLIMITED = "999999999/1s";
const LOAD_LIMITS = {
  RATE_LIMIT_TOKEN: UNLIMITED,
  RATE_LIMIT_SESSION: UNLIMITED,
  RATE_LIMIT_IP: UNLIMITED,
  RATE_LIMIT_SIGN_IN_ACCOUNT: UNLIMITED,
  RATE_LIMIT_SIGN_IN_ADDRESS: UNLIMITED,
  CHECKOUTS_PER_IP: "1000000",
  CARD_DECLINES_PER_IP: "100000",
  CARD_DECLINES_PER_CARD: "100000",
};

/** The parts of the run (BENCH_SECTIONS). */
const SECTIONS = ["main", "citus", "processes", "webhooks", "import"] as const;
type Section = (typeof SECTIONS)[number];
/**
 * The scale-out sections (a Citus cluster next to plain PostgreSQL, 1 against 2 processes) run on
 * a twentieth of the main data, every database seeded alike, so that seeding the cluster through
 * its coordinator fits in the time budget. Their requests read an index or write a few rows, so the
 * data's size matters little to them.
 */
const SCALE_SEED = { campaigns: 50, supporters: 1_500, checkouts: 5_000, randomSeed: 1 };
/** Open checkouts made ahead in each scale-out database for its completion scenario (each completes once). */
const SCALE_PREPARED_CHECKOUTS = 4_000;
/**
 * Each side of a comparison warms up once, then runs SCALE_TURNS turns of SCALE_TURN_SECONDS at
 * 10 connections and as many at 1, alternating with the other side (in order, then in reverse), so
 * that the machine's other load falls on both alike.
 */
const SCALE_WARMUP_SECONDS = 1;
const SCALE_TURNS = 2;
const SCALE_TURN_SECONDS = 2;
/**
 * What a section needs besides its measurements (databases, seed, servers) on an idle machine, twice
 * over: it starts only with that much time left, and stops before a step that would overrun the run's deadline.
 */
const CITUS_SETUP_SECONDS = 40;
const PROCESSES_SETUP_SECONDS = 30;
/** What the report and the clean-up take after the last section. */
const REPORT_RESERVE_SECONDS = 15;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The `donata` command, as an operator starts it. */
const BIN = path.join(ROOT, "bin", "donata.js");
const DEFAULT_CITUS_URL = "postgres://postgres@127.0.0.1:5433/postgres";
const DEFAULT_CITUS_WORKERS = "127.0.0.1:5434,127.0.0.1:5435";
/** `donata serve --processes 2` lets its children finish their requests on SIGTERM: longer than a child's stop. */
const SERVE_STOP_TIMEOUT_MS = 15_000;

interface LimitRun {
  name: string;
  variant: LimitVariant;
  page: LimitPage;
  measured: Measurement;
  /** Counter writes the database took during the measured run. */
  writes: number;
}

/** Counts nothing and lets everything through: the application without its rate-limit counter. */
const uncounted: LimitStore = {
  kind: "database",
  consume: async (rule) => ({ rule, allowed: true, remaining: rule.points, resetSeconds: rule.durationSeconds }),
  peek: async (rule) => ({ rule, allowed: true, remaining: rule.points, resetSeconds: rule.durationSeconds }),
  reward: async () => {},
  reset: async () => {},
  close: async () => {},
};

// ---------------------------------------------------------------------------------------------
// Child role: the real application, in its own process and event loop.
// ---------------------------------------------------------------------------------------------

async function runAppChild() {
  const databaseUrl = process.env.BENCH_APP_DATABASE_URL;
  if (!databaseUrl || !process.send) throw new Error("BENCH_ROLE=app is started by bench/run.ts only");
  const variant = LIMIT_VARIANTS.find((each) => each.id === process.env.BENCH_LIMITS);
  const config = loadConfig(
    {
      LOG_LEVEL: process.env.BENCH_APP_LOG_LEVEL || "silent",
      ...LOAD_LIMITS,
      DONATA_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
      STRIPE_API_URL: process.env.BENCH_STRIPE_API_URL,
      ...(variant
        ? {
            RATE_LIMIT_TOKEN: LIMIT_VARIANT_RULE,
            RATE_LIMIT_LEASE_PERCENT: variant.leasePercent,
            REDIS_URL: variant.store === "redis" ? process.env.BENCH_REDIS_URL : undefined,
          }
        : {}),
    },
    { databaseUrl, host: "127.0.0.1", port: 0 },
  );
  // Writes to the counters' table, reported to the parent on request.
  let counterWrites = 0;
  const database = await openDatabase({
    databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    onQuery: (query) => {
      if (/^insert into "rate_limits"/i.test(query)) counterWrites++;
    },
  });
  process.on("message", (message: { type?: string }) => {
    if (message?.type === "counter-writes") process.send?.({ type: "counter-writes", count: counterWrites });
  });
  // Each variant counts under its own prefix, so none inherits another's window.
  const limits = variant
    ? variant.store
      ? openLimitStore({ db: database.db, redisUrl: config.redisUrl, namespace: `bench-${variant.id}:` })
      : uncounted
    : undefined;
  if (process.env.BENCH_EVENTS === "off") stopRecordingEventsForBenchmark();
  const app = await buildApp({ config, database, limits });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (!address || typeof address !== "object") throw new Error("app server has no address");
  process.send({ type: "ready", port: address.port, poolSize: config.databasePoolSize });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    app
      .close()
      .then(() => database.close())
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
}

/**
 * The webhook worker alone (BENCH_ROLE=sender): delivers every second, as `donata worker` does, to
 * the receiver child, until stopped.
 */
async function runSenderChild() {
  const databaseUrl = process.env.BENCH_APP_DATABASE_URL;
  if (!databaseUrl || !process.send) throw new Error("BENCH_ROLE=sender is started by bench/run.ts only");
  const database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 10 });
  const sender = startWebhookSender(database.db, {
    secrets: createSecretBox(Buffer.from(BENCH_ENCRYPTION_KEY, "hex")),
    destinations: { allowPrivateNetworks: true },
    intervalSeconds: 1,
    onError: (error) => console.error("bench webhook sender:", error),
  });
  process.send({ type: "ready", port: 0 });
  const stop = () => {
    sender
      .stop()
      .then(() => database.close())
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
}

/** A webhook receiver (BENCH_ROLE=receiver) that answers every delivery 204 and counts them on request. */
async function runReceiverChild() {
  if (!process.send) throw new Error("BENCH_ROLE=receiver is started by bench/run.ts only");
  let received = 0;
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on("end", () => {
      received += 1;
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("receiver has no address");
  process.on("message", (message: { type?: string }) => {
    if (message?.type === "received") process.send?.({ type: "received", count: received });
  });
  process.send({ type: "ready", port: address.port });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
}

/** The Stripe stand-in in its own process, so that it competes with the load generator no more than Stripe would. */
async function runStripeChild() {
  if (!process.send) throw new Error("BENCH_ROLE=stripe is started by bench/run.ts only");
  const standIn: StripeStandIn = await startStripeStandIn();
  process.send({ type: "ready", port: standIn.api.port });
  const stop = () => {
    standIn.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
}

// ---------------------------------------------------------------------------------------------
// Parent: setup, load generation, report.
// ---------------------------------------------------------------------------------------------

interface Scenario {
  name: string;
  url: string;
  server: ChildProcess;
  /** Rotates the path per request (single reads over many ids). */
  paths?: string[];
  /** A POST with a fixed body (GraphQL). */
  post?: { contentType: string; body: string };
  /** A POST whose form body is made per request; the connection's context carries state between its requests. */
  form?: {
    body(context: Record<string, unknown>): string;
    onResponse?(status: number, body: string, context: Record<string, unknown>): void;
  };
  /** A JSON POST whose path, body (and extra headers) are made per request (checkout completions). */
  json?: { next(): { path: string; body: string; headers?: Record<string, string> } };
  /** Sent instead of the bearer token (the token endpoint authenticates the client in the body). */
  noAuth?: boolean;
}

/** CPU seconds used so far, per role, and the machine's busy/total CPU seconds (Linux /proc). */
interface CpuSample {
  loadGenerator: number;
  server: number;
  postgres: number;
  machineBusy: number;
  machineTotal: number;
}

interface CpuUse {
  /** CPU milliseconds per response. */
  loadGenerator: number;
  server: number;
  postgres: number;
  /** Every other process on the machine (other jobs disturb the figures). */
  other: number;
  /** Share of all cores busy during the run, 0..1. */
  machineBusy: number;
}

interface Measurement {
  name: string;
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Map<number, number>;
  errors: number;
  timeouts: number;
  bytesPerResponse: number;
  cpu: CpuUse | undefined;
  /** Every response's latency, sorted (runs taken in turns are merged from them). */
  latencies: Float64Array;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

function envSeconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 60) throw new Error(`${name} must be 0 < s <= 60`);
  return value;
}

const HAS_PROC = process.platform === "linux" && existsSync("/proc/self/stat");
const CLOCK_TICKS = 100; // USER_HZ, 100 on every mainstream Linux

/** utime + stime of a process in seconds, 0 once it is gone. */
function processCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Every local PostgreSQL process (the server is on this machine when the URL is loopback). */
function postgresCpu(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += processCpu(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

function machineCpu(): { busy: number; total: number } {
  const [, ...ticks] = (readFileSync("/proc/stat", "utf8").split("\n")[0] as string).trim().split(/\s+/);
  const values = ticks.slice(0, 8).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

function cpuSample(serverPid: number | undefined): CpuSample | undefined {
  if (!HAS_PROC) return undefined;
  const usage = process.cpuUsage();
  const machine = machineCpu();
  return {
    loadGenerator: (usage.user + usage.system) / 1e6,
    server: processCpu(serverPid),
    postgres: postgresCpu(),
    machineBusy: machine.busy,
    machineTotal: machine.total,
  };
}

function cpuUse(before: CpuSample | undefined, after: CpuSample | undefined, responses: number): CpuUse | undefined {
  if (!before || !after || responses === 0) return undefined;
  const per = (seconds: number) => (seconds * 1000) / responses;
  const loadGenerator = after.loadGenerator - before.loadGenerator;
  const server = after.server - before.server;
  const postgres = after.postgres - before.postgres;
  const busy = after.machineBusy - before.machineBusy;
  return {
    loadGenerator: per(loadGenerator),
    server: per(server),
    postgres: per(Math.max(0, postgres)), // a backend that exits meanwhile takes its ticks along
    other: per(Math.max(0, busy - loadGenerator - server - Math.max(0, postgres))),
    machineBusy: busy / Math.max(1e-9, after.machineTotal - before.machineTotal),
  };
}

/** Cores kept busy by the rest of the machine while the benchmark itself idles. */
async function backgroundLoad(seconds: number): Promise<number | undefined> {
  if (!HAS_PROC) return undefined;
  const before = machineCpu();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = machineCpu();
  return ((after.busy - before.busy) / Math.max(1e-9, after.total - before.total)) * os.cpus().length;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

/** Runs of one scenario taken in turns with others, as one measurement (no CPU figures). */
function merged(runs: Measurement[]): Measurement {
  const latencies = Float64Array.from(runs.flatMap((run) => Array.from(run.latencies))).sort();
  const statuses = new Map<number, number>();
  for (const run of runs) for (const [status, n] of run.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  const sum = (pick: (run: Measurement) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const requests = sum((run) => run.requests);
  const seconds = sum((run) => run.seconds);
  return {
    name: runs[0]?.name ?? "",
    requests,
    seconds,
    rps: (statuses.get(200) ?? 0) / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    statuses,
    errors: sum((run) => run.errors),
    timeouts: sum((run) => run.timeouts),
    bytesPerResponse: requests ? sum((run) => run.bytesPerResponse * run.requests) / requests : 0,
    cpu: undefined,
    latencies,
  };
}

/** One autocannon run; latencies are taken per response (float ms), not from the integer histogram. */
function load(
  scenario: Scenario,
  headers: Record<string, string>,
  seconds: number,
  serverPid: number | undefined,
  connections = CONNECTIONS,
): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    let bytes = 0;
    let next = 0;
    const paths = scenario.paths;
    const options: autocannon.Options = {
      url: scenario.url,
      connections,
      duration: seconds,
      headers: scenario.noAuth ? {} : headers,
      timeout: 10,
    };
    if (scenario.post) {
      options.method = "POST";
      options.body = scenario.post.body;
      options.headers = { ...options.headers, "content-type": scenario.post.contentType };
    }
    const form = scenario.form;
    if (form) {
      options.initialContext = {};
      options.requests = [
        {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          setupRequest: (request, context) => ({ ...request, body: form.body(context as Record<string, unknown>) }),
          ...(form.onResponse
            ? {
                onResponse: (status: number, body: string, context: object) =>
                  form.onResponse?.(status, body, context as Record<string, unknown>),
              }
            : {}),
        },
      ];
    }
    const json = scenario.json;
    if (json) {
      options.requests = [
        {
          method: "POST",
          headers: { "content-type": "application/json", "user-agent": "Mozilla/5.0 (bench) Chrome/120.0" },
          setupRequest: (request) => {
            const made = json.next();
            return { ...request, ...made, headers: { ...request.headers, ...made.headers } };
          },
        },
      ];
    }
    if (paths && paths.length > 0) {
      options.requests = [
        {
          method: "GET",
          setupRequest: (request) => {
            const path = paths[next++ % paths.length] as string;
            return { ...request, path };
          },
        },
      ];
    }
    const cpuBefore = cpuSample(serverPid);
    const started = performance.now();
    const instance = autocannon(options, (error, result) => {
      if (error) return reject(error);
      const elapsed = (performance.now() - started) / 1000;
      const cpuAfter = cpuSample(serverPid);
      const sorted = Float64Array.from(latencies).sort();
      const responses = latencies.length;
      resolve({
        name: scenario.name,
        requests: responses,
        seconds: elapsed,
        rps: statuses.get(200) ? (statuses.get(200) as number) / elapsed : 0,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        bytesPerResponse: responses ? bytes / responses : 0,
        cpu: cpuUse(cpuBefore, cpuAfter, responses),
        latencies: sorted,
      });
    });
    instance.on("response", (_client, statusCode, resBytes, responseTime) => {
      latencies.push(responseTime);
      bytes += resBytes;
      statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
    });
  });
}

function waitForReady(child: ChildProcess, label: string): Promise<{ port: number; poolSize?: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label} did not start within ${CHILD_READY_TIMEOUT_MS} ms`)),
      CHILD_READY_TIMEOUT_MS,
    );
    child.once("message", (message: { type?: string; port?: number; poolSize?: number }) => {
      clearTimeout(timer);
      if (message?.type === "ready" && typeof message.port === "number") {
        resolve({ port: message.port, poolSize: message.poolSize });
      } else reject(new Error(`${label} sent an unexpected message: ${JSON.stringify(message)}`));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited before it was ready (code ${code}, signal ${signal})`));
    });
  });
}

function forkTs(file: string, env: NodeJS.ProcessEnv): ChildProcess {
  return fork(file, [], {
    env,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

async function stopChild(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

async function getJson(url: string, headers: Record<string, string>): Promise<{ text: string; json: unknown }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} returned ${response.status}: ${text.slice(0, 500)}`);
  return { text, json: JSON.parse(text) };
}

/** The database's counter writes the application child has made so far. */
function counterWrites(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the application did not report its counter writes")), 5000);
    const onMessage = (message: { type?: string; count?: number }) => {
      if (message?.type !== "counter-writes") return;
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(message.count ?? 0);
    };
    child.on("message", onMessage);
    child.send({ type: "counter-writes" });
  });
}

async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => {
    // The answer is the ping's.
  });
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Records, in `failures`, every phase of a scenario that had an answer other than HTTP 200, an error or a timeout. */
function statusCheck(failures: string[]) {
  return (name: string, phases: [string, Measurement][]) => {
    for (const [phase, m] of phases) {
      const bad = [...m.statuses].filter(([status]) => status !== 200);
      if (bad.length > 0 || m.errors > 0 || m.timeouts > 0) {
        failures.push(
          `${name} (${phase}): ${bad.map(([s, n]) => `${n} × HTTP ${s}`).join(", ") || "no non-200"}, ` +
            `${m.errors} errors, ${m.timeouts} timeouts`,
        );
      }
    }
  };
}

function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** The bench organization, an installed application holding every permission, and its access token. */
async function createBenchAccess(db: Database["db"]) {
  const organization = await createOrganization(db, { slug: ORG, name: "Benchmark" });
  const application = await createApplication(db, {
    name: "Benchmark",
    applicationUrl: "http://127.0.0.1/",
    callbackUrls: ["http://127.0.0.1/callback"],
  });
  await installApplication(db, application.client_id, ORG);
  const tokens = await createInstallationToken(
    db,
    { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 7200 },
    application.client_id,
    ORG,
  );
  return { organization, application, headers: { authorization: `Bearer ${tokens.access_token}` } };
}

/** Checkout ids of the seed for the single reads, spread over it. */
async function sampleCheckoutIds(database: Database, organizationId: number): Promise<string[]> {
  const pool = (database.db as unknown as { $client: pg.Pool }).$client;
  const sample = await pool.query<{ id: string }>(
    `select id from checkouts where organization_id = $1 order by md5(id::text) limit ${SINGLE_READ_IDS}`,
    [organizationId],
  );
  return sample.rows.map((row) => row.id);
}

/**
 * Open checkouts of another organization (so the list scenarios' count stays the seed's), each
 * with its client secret, for the completion scenario: one donation per request.
 */
async function prepareGivingCheckouts(db: Database["db"], count: number): Promise<{ id: number; secret: string }[]> {
  const giving = await createOrganization(db, { slug: GIVING_ORG, name: "Bench giving" });
  const [givingCampaign] = await db
    .insert(campaigns)
    .values({
      organizationId: giving.id,
      title: "Bench appeal",
      slug: "bench-appeal",
      minAmount: 1,
      maxAmount: 10_000,
      costExampleAmount: 10,
      costExampleLabel: "school kit",
    })
    .returning();
  if (!givingCampaign) throw new Error("bench campaign not inserted");
  const checkoutSecrets = Array.from({ length: count }, () => generateSecret("dnt_cks"));
  const prepared: { id: number; secret: string }[] = [];
  for (let start = 0; start < checkoutSecrets.length; start += 2000) {
    const secrets = checkoutSecrets.slice(start, start + 2000);
    const rows = await db
      .insert(checkouts)
      .values(
        secrets.map((secret) => ({
          organizationId: giving.id,
          campaignId: givingCampaign.id,
          state: "OPEN",
          clientSecretHash: hashSecret(secret),
        })),
      )
      .returning({ id: checkouts.id });
    for (const [index, row] of rows.entries()) prepared.push({ id: row.id, secret: secrets[index] as string });
  }
  return prepared;
}

/** A donor completing a one-off gift of 25 with the sandbox card, each prepared checkout once. */
function sandboxCompletion(
  name: string,
  origin: string,
  server: ChildProcess,
  prepared: { id: number; secret: string }[],
): Scenario {
  let next = 0;
  return {
    name,
    url: `${origin}/api/v1/public/organizations/${GIVING_ORG}/checkouts/0/complete`,
    noAuth: true,
    json: {
      next() {
        // Past the prepared checkouts the answers are 4xx and the run says so.
        const checkout = prepared[next++ % prepared.length] as { id: number; secret: string };
        return {
          path: `/api/v1/public/organizations/${GIVING_ORG}/checkouts/${checkout.id}/complete`,
          body: JSON.stringify({
            client_secret: checkout.secret,
            amount: 25,
            frequency: 0,
            processor: "sandbox",
            card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
            supporter: { first_name: "Bench", last_name: "Donor", email: `donor-${checkout.id}@bench.example` },
            consents: { privacy: true },
          }),
        };
      },
    },
    server,
  };
}

// ---------------------------------------------------------------------------------------------
// Scale-out: a Citus cluster next to plain PostgreSQL, and 1 against 2 processes.
// ---------------------------------------------------------------------------------------------

/** What a section created or started, undone last first: at the section's end, or when the run is aborted. */
type Undo = (() => Promise<void>)[];

async function undoAll(undo: Undo) {
  for (const step of undo.splice(0).reverse()) {
    await step().catch((error: unknown) => console.error("cleanup:", error));
  }
}

async function runSql(url: string, statements: string[]): Promise<pg.QueryResult[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const results = [];
    for (const statement of statements) results.push(await client.query(statement));
    return results;
  } finally {
    await client.end();
  }
}

/** `url` with another database (and host and port). */
function onDatabase(url: string, database: string, host?: string, port?: number): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  if (host) next.hostname = host;
  if (port) next.port = String(port);
  return next.toString();
}

const hostPort = (url: string) => new URL(url).host;

/** A database of PostgreSQL alone on the server of `serverUrl`, dropped by `undo`. */
async function createPlainDatabase(serverUrl: string, name: string, undo: Undo): Promise<string> {
  undo.push(async () => {
    await runSql(serverUrl, [`drop database if exists "${name}" with (force)`]);
    log(`dropped database ${name} on ${hostPort(serverUrl)}`);
  });
  await runSql(serverUrl, [`create database "${name}"`]);
  return onDatabase(serverUrl, name);
}

interface CitusCluster {
  /** The coordinator's and the workers' server URLs. */
  coordinator: string;
  workers: string[];
}

/** Why the server at `url` cannot be a Citus node, or undefined when it can. */
async function citusProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on("error", () => {
    // The answer is the query's.
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ libraries: string; available: boolean }>(
      "select current_setting('shared_preload_libraries') as libraries, " +
        "exists (select 1 from pg_available_extensions where name = 'citus') as available",
    );
    if (!rows[0]?.available) return "has no citus extension";
    if (!/\bcitus\b/.test(rows[0].libraries)) return "does not preload citus (shared_preload_libraries)";
    return undefined;
  } catch (error) {
    return `does not answer (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The cluster of BENCH_CITUS_URL and BENCH_CITUS_WORKERS, or why it cannot be used. */
async function findCitusCluster(): Promise<CitusCluster | { skipped: string }> {
  const coordinator = process.env.BENCH_CITUS_URL || DEFAULT_CITUS_URL;
  const workers = (process.env.BENCH_CITUS_WORKERS || DEFAULT_CITUS_WORKERS)
    .split(",")
    .map((each) => each.trim())
    .filter(Boolean)
    .map((each) => {
      const at = each.lastIndexOf(":");
      return onDatabase(coordinator, "postgres", each.slice(0, at), Number(each.slice(at + 1)));
    });
  if (workers.length === 0) return { skipped: "no workers are named (BENCH_CITUS_WORKERS)" };
  for (const [role, url] of [["coordinator", coordinator], ...workers.map((worker) => ["worker", worker])] as const) {
    const problem = await citusProblem(url);
    if (problem) return { skipped: `the ${role} at ${hostPort(url)} ${problem}` };
  }
  return { coordinator, workers };
}

/**
 * A database on every node of the cluster with the extension, the workers registered, as
 * docs/scaling.md says; its tables get the default shard count (32) when migrated. Dropped everywhere by `undo`.
 */
async function createClusterDatabase(cluster: CitusCluster, name: string, undo: Undo): Promise<string> {
  const nodes = [cluster.coordinator, ...cluster.workers];
  // Registered first: a failure half-way leaves nothing behind.
  undo.push(async () => {
    for (const node of nodes) await runSql(node, [`drop database if exists "${name}" with (force)`]);
    log(`dropped database ${name} on ${nodes.map(hostPort).join(", ")}`);
  });
  for (const worker of cluster.workers) {
    await runSql(worker, [`create database "${name}"`]);
    await runSql(onDatabase(worker, name), ["create extension citus"]);
  }
  await runSql(cluster.coordinator, [`create database "${name}"`]);
  const url = onDatabase(cluster.coordinator, name);
  const coordinator = new URL(cluster.coordinator);
  await runSql(url, [
    "create extension citus",
    `select citus_set_coordinator_host('${coordinator.hostname}', ${Number(coordinator.port || 5432)})`,
    ...cluster.workers.map((worker) => {
      const node = new URL(worker);
      return `select citus_add_node('${node.hostname}', ${Number(node.port || 5432)})`;
    }),
  ]);
  return url;
}

/** A scale-out database, migrated and seeded as the main one is, with SCALE_SEED. */
interface ScaleDatabase {
  url: string;
  headers: Record<string, string>;
  singleIds: string[];
  /** Open checkouts for the completion scenario (none when it is not measured there). */
  prepared: { id: number; secret: string }[];
  migrateSeconds: number;
  seedSeconds: number;
  seeded: SeedCounts;
}

async function prepareScaleDatabase(url: string, label: string, preparedCheckouts: number): Promise<ScaleDatabase> {
  const database = await openDatabase({ databaseUrl: url, dataDir: "memory://", poolSize: 2 });
  try {
    const migrateStarted = performance.now();
    await database.migrate();
    const migrateSeconds = (performance.now() - migrateStarted) / 1000;
    const { organization, headers } = await createBenchAccess(database.db);
    const seedStarted = performance.now();
    const seeded = await seedOrganization(database, { organization: ORG, ...SCALE_SEED });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const singleIds = await sampleCheckoutIds(database, organization.id);
    const prepared = preparedCheckouts > 0 ? await prepareGivingCheckouts(database.db, preparedCheckouts) : [];
    log(`${label}: migrated in ${fmt(migrateSeconds)} s, seeded in ${fmt(seedSeconds)} s`);
    return { url, headers, singleIds, prepared, migrateSeconds, seedSeconds, seeded };
  } finally {
    await database.close();
  }
}

/** The application in a child process on `databaseUrl`, as the main scenarios run it; stopped by `undo`. */
async function startAppChild(
  databaseUrl: string,
  label: string,
  undo: Undo,
): Promise<{ child: ChildProcess; origin: string }> {
  const child = forkTs(fileURLToPath(import.meta.url), {
    ...process.env,
    BENCH_ROLE: "app",
    BENCH_APP_DATABASE_URL: databaseUrl,
    // Its errors on the bench's output: a request the cluster cannot answer says why there.
    BENCH_APP_LOG_LEVEL: "error",
  });
  undo.push(() => stopChild(child));
  const { port } = await waitForReady(child, label);
  return { child, origin: `http://127.0.0.1:${port}` };
}

/** A GET that must answer 200 with a page whose count is `count`. */
async function probePage(url: string, headers: Record<string, string>, count: number) {
  const { json } = await getJson(url, headers);
  const page = json as { items: unknown[]; count: number };
  if (page.items.length !== 100 || page.count !== count) {
    throw new Error(`${url} has ${page.items.length} items and count ${page.count}; expected 100 and ${count}`);
  }
}

/** The first request of a scenario: undefined when it is answered 200, else the status and the start of the body. */
async function firstAnswer({ scenario, headers }: Side): Promise<string | undefined> {
  const made = scenario.json?.next();
  const response = made
    ? await fetch(new URL(made.path, scenario.url), {
        method: "POST",
        headers: { "content-type": "application/json", ...made.headers },
        body: made.body,
      })
    : await fetch(scenario.url, { headers: scenario.noAuth ? {} : headers });
  const text = await response.text();
  return response.status === 200 ? undefined : `HTTP ${response.status}: ${text.slice(0, 300)}`;
}

/** One side of a comparison: a scenario and the token its requests carry. */
interface Side {
  scenario: Scenario;
  headers: Record<string, string>;
}

interface Compared {
  /** At CONNECTIONS connections, per side. */
  throughput: Measurement[];
  /** At 1 connection, per side. */
  latency: Measurement[];
}

/** Seconds `compareSides` takes for `sides` sides. */
const comparisonSeconds = (sides: number) => sides * (SCALE_WARMUP_SECONDS + 2 * SCALE_TURNS * SCALE_TURN_SECONDS);

/**
 * The same scenario on each side: a warm-up each, then turns at CONNECTIONS connections and turns
 * at 1, the sides alternating (in order, then in reverse); each side's turns merged.
 */
async function compareSides(
  sides: Side[],
  check: ReturnType<typeof statusCheck>,
  deadline: number,
  options: { turns?: number; turnSeconds?: number } = {},
): Promise<Compared> {
  const turns = options.turns ?? SCALE_TURNS;
  const turnSeconds = options.turnSeconds ?? SCALE_TURN_SECONDS;
  for (const { scenario, headers } of sides) {
    needTime(deadline, SCALE_WARMUP_SECONDS + 1);
    check(scenario.name, [["warm-up", await load(scenario, headers, SCALE_WARMUP_SECONDS, scenario.server.pid)]]);
  }
  const inTurns = async (connections: number) => {
    const runs = sides.map(() => [] as Measurement[]);
    for (let turn = 0; turn < turns; turn++) {
      const order = [...sides.keys()];
      for (const index of turn % 2 === 0 ? order : order.reverse()) {
        const { scenario, headers } = sides[index] as Side;
        needTime(deadline, turnSeconds + 1);
        runs[index]?.push(await load(scenario, headers, turnSeconds, scenario.server.pid, connections));
      }
    }
    return runs.map((each) => merged(each));
  };
  const compared = { throughput: await inTurns(CONNECTIONS), latency: await inTurns(1) };
  sides.forEach(({ scenario }, index) => {
    check(scenario.name, [
      [`${CONNECTIONS} connections`, compared.throughput[index] as Measurement],
      ["1 connection", compared.latency[index] as Measurement],
    ]);
  });
  return compared;
}

const p95 = (m: Measurement) => percentile(m.latencies, 0.95);
const ratio = (a: number, b: number) => `× ${fmt(a / b, 2)}`;

function markdownTable(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}

/** Why `seconds` more would not end before the run's deadline (less the report's reserve), or undefined. */
function timeShortage(deadline: number, seconds: number): string | undefined {
  const left = (deadline - Date.now()) / 1000 - REPORT_RESERVE_SECONDS;
  return left < seconds
    ? `only ${fmt(left, 0)} s were left of the run's ${HARD_DEADLINE_MS / 1000} s budget, and the next step needs about ${fmt(seconds, 0)} s`
    : undefined;
}

/** A section that would overrun the run's deadline stops and says so; the run goes on to its report. */
class OutOfTime extends Error {}

function needTime(deadline: number, seconds: number) {
  const shortage = timeShortage(deadline, seconds);
  if (shortage) throw new OutOfTime(shortage);
}

/** A section's result when the time budget could not hold it, or rethrows. */
function outOfTime(error: unknown, section: Section): string {
  if (!(error instanceof OutOfTime)) throw error;
  log(`\n${section} section stopped: ${error.message}`);
  return `Not run to its end: ${error.message}. Run it alone with \`BENCH_SECTIONS=${section} npm run bench\`.`;
}

const ONE_MACHINE = `These are one-machine figures, for information, not targets: every process (the load generator, the
application, PostgreSQL or every node of the cluster) shares the same ${os.cpus().length} cores, and the nodes talk over loopback, with
no network latency between them. On separate machines each node has its own cores and every hop between
them costs a network round trip; neither shows here.`;

const CITUS_DESCRIPTION = `The default page, a single read by id and a donor's checkout completion with the sandbox card,
on two databases seeded alike with \`seedOrganization\` (${SCALE_SEED.campaigns} campaigns, ${SCALE_SEED.supporters.toLocaleString("en-US")} supporters,
${SCALE_SEED.checkouts.toLocaleString("en-US")} checkouts, random seed ${SCALE_SEED.randomSeed}: a twentieth of the main scenarios' data, so that the seed through
the coordinator stays short), each with ${SCALE_PREPARED_CHECKOUTS.toLocaleString("en-US")} open checkouts of another organization for the completions and
one application process, as in the main scenarios: **plain**, a database without the extension on the
coordinator's own server (the same PostgreSQL build and settings as the cluster's nodes, so that the ratio is
Citus's alone), and **cluster**, a database made on the coordinator and on every worker with the extension and
the workers registered, laid out by \`donata migrate\` as docs/scaling.md says. Both are dropped at the end.
The section runs when the cluster answers (\`BENCH_CITUS_URL\`, default \`${DEFAULT_CITUS_URL}\`, and
\`BENCH_CITUS_WORKERS\`, default \`${DEFAULT_CITUS_WORKERS}\`) and says why it was skipped otherwise. Each
scenario is first asked once on both databases; one that the cluster does not answer with HTTP 200 is reported,
not measured.`;

const PROCESSES_DESCRIPTION = `The default page (\`GET /api/v1/checkouts/\`) on \`node bin/donata.js serve --processes 1\` and on
\`--processes 2\` (docs/deployment.md), each started as an operator starts it (\`DATABASE_URL\`, \`PORT\`, the main
scenarios' raised limits, \`MAX_EVENT_LOOP_DELAY=0\` as the application child has it), both on one PostgreSQL database
(\`BENCH_DATABASE_URL\`'s server) seeded as the Citus section's are, waited for until it listens and \`/readyz\` answers,
and stopped with SIGTERM. \`--processes 1\` is one process that serves HTTP and runs the worker; \`--processes 2\`
is a primary that hands each new connection to one of 2 HTTP processes in turn, and a worker process. With 1
connection every request goes to the same HTTP process, so the latency rows show the cost of the arrangement,
not of more cores; the throughput row is where a second process could help, and here the 2 HTTP processes
compete for the same ${os.cpus().length} cores with PostgreSQL and the load generator.`;

const SCALE_METHOD = `Method: each side warms up for ${SCALE_WARMUP_SECONDS} s at ${CONNECTIONS} connections; then ${SCALE_TURNS} turns of
${SCALE_TURN_SECONDS} s at ${CONNECTIONS} connections (throughput) and ${SCALE_TURNS} of ${SCALE_TURN_SECONDS} s at 1 connection (latency, what one
user sees), the sides alternating (in order, then in reverse) so that the machine's other load falls on both
alike; each side's turns are merged. The load generator, the token and the limits are the main scenarios'.`;

/**
 * The default page, a single read and a sandbox checkout completion on a Citus cluster database
 * and on a plain database of the coordinator's own server, seeded alike.
 */
async function citusSection(deadline: number, undo: Undo, check: ReturnType<typeof statusCheck>): Promise<string> {
  const short = timeShortage(deadline, CITUS_SETUP_SECONDS + 3 * comparisonSeconds(2));
  if (short) return outOfTime(new OutOfTime(short), "citus");
  const cluster = await findCitusCluster();
  if ("skipped" in cluster) {
    log(`\nCitus cluster section skipped: ${cluster.skipped}`);
    return `Skipped: ${cluster.skipped}.`;
  }
  log(
    `\nCitus cluster: coordinator ${hostPort(cluster.coordinator)}, workers ${cluster.workers.map(hostPort).join(", ")}`,
  );
  const name = `donata_bench_${randomBytes(6).toString("hex")}`;
  try {
    const plainUrl = await createPlainDatabase(cluster.coordinator, `${name}_plain`, undo);
    const clusterUrl = await createClusterDatabase(cluster, `${name}_citus`, undo);
    // Side by side: the cluster's seed waits mostly on the coordinator's round trips to its workers.
    const [plain, distributed] = await Promise.all([
      prepareScaleDatabase(plainUrl, "plain database", SCALE_PREPARED_CHECKOUTS),
      prepareScaleDatabase(clusterUrl, "cluster database", SCALE_PREPARED_CHECKOUTS),
    ]);
    const [shards] = await runSql(distributed.url, ["show citus.shard_count"]);
    const shardCount = String(shards?.rows[0]?.["citus.shard_count"] ?? "?");
    const [plainApp, clusterApp] = await Promise.all([
      startAppChild(plain.url, "application server (plain)", undo),
      startAppChild(distributed.url, "application server (cluster)", undo),
    ]);
    await probePage(`${plainApp.origin}/api/v1/checkouts/`, plain.headers, SCALE_SEED.checkouts);
    // Citus's own counters (citus.enable_stat_counters): whether each request ran on one shard.
    const counters = async (action: "reset" | "read") => {
      try {
        if (action === "reset") await runSql(distributed.url, ["select citus_stat_counters_reset()"]);
        const [result] = await runSql(distributed.url, [
          "select query_execution_single_shard as single, query_execution_multi_shard as multi " +
            "from citus_stat_counters where name = current_database()",
        ]);
        const row = result?.rows[0] as { single: string; multi: string } | undefined;
        return row && { single: Number(row.single), multi: Number(row.multi) };
      } catch {
        return undefined;
      }
    };
    await counters("reset");
    const kinds = [
      {
        name: "GET /api/v1/checkouts/ (default page)",
        side: (app: typeof plainApp, database: ScaleDatabase, name: string): Side => ({
          scenario: { name, url: `${app.origin}/api/v1/checkouts/`, server: app.child },
          headers: database.headers,
        }),
      },
      {
        name: `GET /api/v1/checkouts/{id} (${plain.singleIds.length} ids in turn)`,
        side: (app: typeof plainApp, database: ScaleDatabase, name: string): Side => ({
          scenario: {
            name,
            url: `${app.origin}/api/v1/checkouts/${database.singleIds[0]}`,
            paths: database.singleIds.map((id) => `/api/v1/checkouts/${id}`),
            server: app.child,
          },
          headers: database.headers,
        }),
      },
      {
        name: "POST …/checkouts/{id}/complete (one-off gift, sandbox card)",
        side: (app: typeof plainApp, database: ScaleDatabase, name: string): Side => ({
          scenario: sandboxCompletion(name, app.origin, app.child, database.prepared),
          headers: database.headers,
        }),
      },
    ];
    /** Each scenario's figures, or what the cluster answered its first request when that was not 200. */
    const results: ({ name: string; compared: Compared } | { name: string; refused: string })[] = [];
    for (const kind of kinds) {
      log(`\n${kind.name}, plain and cluster in turns`);
      const plainSide = kind.side(plainApp, plain, `${kind.name} (plain)`);
      const clusterSide = kind.side(clusterApp, distributed, `${kind.name} (cluster)`);
      const [plainAnswer, clusterAnswer] = [await firstAnswer(plainSide), await firstAnswer(clusterSide)];
      if (plainAnswer) throw new Error(`${kind.name} on the plain database: ${plainAnswer}`);
      if (clusterAnswer) {
        log(`  not measured: the cluster answered ${clusterAnswer}`);
        results.push({ name: kind.name, refused: clusterAnswer });
        continue;
      }
      const compared = await compareSides([plainSide, clusterSide], check, deadline);
      const [tp, tc] = compared.throughput as [Measurement, Measurement];
      const [lp, lc] = compared.latency as [Measurement, Measurement];
      log(
        `  ${CONNECTIONS} connections: plain ${fmt(tp.rps, 0)} req/s, cluster ${fmt(tc.rps, 0)} req/s (${ratio(tc.rps, tp.rps)}); ` +
          `1 connection p50: plain ${fmt(lp.p50, 2)} ms, cluster ${fmt(lc.p50, 2)} ms (${ratio(lc.p50, lp.p50)})`,
      );
      results.push({ name: kind.name, compared });
    }
    const executions = await counters("read");
    const throughputTable = markdownTable(
      ["Scenario", "plain req/s", "cluster req/s", "cluster / plain"],
      results.map((result) => {
        if ("refused" in result) return [result.name, "–", "–", "not measured"];
        const [p, c] = result.compared.throughput as [Measurement, Measurement];
        return [result.name, fmt(p.rps, 0), fmt(c.rps, 0), ratio(c.rps, p.rps)];
      }),
    );
    const latencyTable = markdownTable(
      [
        "Scenario",
        "plain p50 (ms)",
        "cluster p50 (ms)",
        "cluster / plain",
        "plain p95 (ms)",
        "cluster p95 (ms)",
        "cluster / plain",
      ],
      results.map((result) => {
        if ("refused" in result) return [result.name, "–", "–", "not measured", "–", "–", "not measured"];
        const [p, c] = result.compared.latency as [Measurement, Measurement];
        return [
          result.name,
          fmt(p.p50, 2),
          fmt(c.p50, 2),
          ratio(c.p50, p.p50),
          fmt(p95(p), 2),
          fmt(p95(c), 2),
          ratio(p95(c), p95(p)),
        ];
      }),
    );
    const seeded = distributed.seeded;
    return `This run: coordinator ${hostPort(cluster.coordinator)}, workers ${cluster.workers.map(hostPort).join(", ")},
${shardCount} shards per distributed table; seeded side by side in ${fmt(distributed.seedSeconds)} s on the cluster and ${fmt(plain.seedSeconds)} s
on the plain database (${seeded.donations.toLocaleString("en-US")} donations, ${seeded.payments.toLocaleString("en-US")} payments each), after migrations
of ${fmt(distributed.migrateSeconds)} s and ${fmt(plain.migrateSeconds)} s.

Throughput, ${CONNECTIONS} connections:

${throughputTable}

Latency, 1 connection:

${latencyTable}

${[
  ...results.flatMap((result) =>
    "refused" in result
      ? [
          `**Not measured: ${result.name}**: the cluster answered its first request with ${result.refused.replace(/\s+/g, " ")}
(the plain database with HTTP 200); the application child's log on the bench's output says why.`,
        ]
      : [],
  ),
  executions
    ? `Citus's counters on the cluster database during these measurements: ${executions.single.toLocaleString("en-US")} single-shard and ${executions.multi.toLocaleString("en-US")} multi-shard executions.`
    : "Citus's execution counters were not available (`citus.enable_stat_counters`).",
].join("\n\n")}`;
  } catch (error) {
    return outOfTime(error, "citus");
  } finally {
    await undoAll(undo);
  }
}

/** `node bin/donata.js serve --processes N` on `databaseUrl`, once it listens and answers /readyz; stopped by `undo`. */
async function startServe(
  processes: number,
  databaseUrl: string,
  undo: Undo,
): Promise<{ child: ChildProcess; origin: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "donata-bench-"));
  undo.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  // Its own process group: should it not stop, its HTTP and worker children end with it.
  const child = spawn(process.execPath, [BIN, "serve", "--processes", String(processes)], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...LOAD_LIMITS,
      DATABASE_URL: databaseUrl,
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      DONATA_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY,
      LOG_LEVEL: "warn",
      // As the bench's application child has it: no load shedding, a loaded machine gets no 503s.
      MAX_EVENT_LOOP_DELAY: "0",
    },
  });
  undo.push(() => stopServe(child));
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const label = `donata serve --processes ${processes}`;
  const until = Date.now() + CHILD_READY_TIMEOUT_MS;
  // The start-up box is printed once every process is ready, with the port they share.
  let origin: string | undefined;
  while (!origin) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${label} exited before it was ready:\n${output}`);
    if (Date.now() > until) throw new Error(`${label} did not start within ${CHILD_READY_TIMEOUT_MS} ms:\n${output}`);
    origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    if (!origin) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const ready = await fetch(`${origin}/readyz`);
  await ready.arrayBuffer();
  if (ready.status !== 200) throw new Error(`${label}: /readyz answered ${ready.status}`);
  log(`${label} listening on ${origin} (pid ${child.pid})`);
  return { child, origin };
}

/** SIGTERM, as systemd stops it; its whole process group is killed when it has not exited in time. */
async function stopServe(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  }, SERVE_STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** The default page on `donata serve --processes 1` and `--processes 2`, both on one seeded PostgreSQL database. */
async function processesSection(
  adminUrl: string,
  deadline: number,
  undo: Undo,
  check: ReturnType<typeof statusCheck>,
): Promise<string> {
  const short = timeShortage(deadline, PROCESSES_SETUP_SECONDS + comparisonSeconds(2));
  if (short) return outOfTime(new OutOfTime(short), "processes");
  log("\n1 against 2 processes");
  try {
    const name = `donata_bench_${randomBytes(6).toString("hex")}_processes`;
    const database = await prepareScaleDatabase(
      await createPlainDatabase(adminUrl, name, undo),
      "processes database",
      0,
    );
    // One after the other: each migrates at start, and the figures need both fully started.
    const servers = [await startServe(1, database.url, undo), await startServe(2, database.url, undo)];
    for (const server of servers) {
      await probePage(`${server.origin}/api/v1/checkouts/`, database.headers, SCALE_SEED.checkouts);
    }
    const sides = servers.map(
      (server, index): Side => ({
        scenario: {
          name: `GET /api/v1/checkouts/ (default page), --processes ${index + 1}`,
          url: `${server.origin}/api/v1/checkouts/`,
          server: server.child,
        },
        headers: database.headers,
      }),
    );
    const compared = await compareSides(sides, check, deadline);
    const [t1, t2] = compared.throughput as [Measurement, Measurement];
    const [l1, l2] = compared.latency as [Measurement, Measurement];
    log(
      `  ${CONNECTIONS} connections: 1 process ${fmt(t1.rps, 0)} req/s, 2 processes ${fmt(t2.rps, 0)} req/s (${ratio(t2.rps, t1.rps)}); ` +
        `1 connection p50: ${fmt(l1.p50, 2)} ms and ${fmt(l2.p50, 2)} ms (${ratio(l2.p50, l1.p50)})`,
    );
    const table = markdownTable(
      ["Default page (`GET /api/v1/checkouts/`)", "--processes 1", "--processes 2", "2 / 1"],
      [
        [`req/s, ${CONNECTIONS} connections`, fmt(t1.rps, 0), fmt(t2.rps, 0), ratio(t2.rps, t1.rps)],
        ["p50 (ms), 1 connection", fmt(l1.p50, 2), fmt(l2.p50, 2), ratio(l2.p50, l1.p50)],
        ["p95 (ms), 1 connection", fmt(p95(l1), 2), fmt(p95(l2), 2), ratio(p95(l2), p95(l1))],
      ],
    );
    return `${table}`;
  } catch (error) {
    return outOfTime(error, "processes");
  } finally {
    await undoAll(undo);
  }
}

// ---------------------------------------------------------------------------------------------
// Events and webhooks: what recording events costs a checkout completion, and deliveries per second.
// ---------------------------------------------------------------------------------------------

const WEBHOOK_ENDPOINTS = 3;
const WEBHOOK_PREPARED_CHECKOUTS = 12_000;
const WEBHOOK_EVENTS = 3_000;
const WEBHOOKS_SETUP_SECONDS = 20;
/** The two completion sides alternate more and longer than the scale-out ones: their difference is the figure. */
const WEBHOOK_TURNS = 4;
const WEBHOOK_TURN_SECONDS = 3;
/** What the deliveries may take: 9,000 at the 500/s target is 18 s. */
const WEBHOOKS_DELIVERY_SECONDS = 20;

const WEBHOOKS_DESCRIPTION = `A donor's checkout completion with the sandbox card (one-off gift of 25, each prepared checkout
used once) on a database of its own, three ways: in an application process that records no events (the
baseline: \`stopRecordingEventsForBenchmark\`, the bench's instrument only; the email subscriber still
runs there, on the rows, as the emails were enqueued before there were events), as the product runs (each
completion records its 6 or 7 events in its transaction), and the same with ${WEBHOOK_ENDPOINTS} endpoints subscribed to every
event type and the webhook worker delivering them to a local receiver meanwhile (in processes of their own).
The first two are taken in turns (${WEBHOOK_TURNS} turns of ${WEBHOOK_TURN_SECONDS} s each at 10 connections, then at 1). Then deliveries per second: ${WEBHOOK_EVENTS.toLocaleString("en-US")} events recorded at once,
each to the ${WEBHOOK_ENDPOINTS} endpoints, delivered by \`deliverWebhooks\` (the worker's pass: claim, send side by side, record)
in the bench process over HTTP to the receiver child, which answers 204.`;

async function webhooksSection(
  adminUrl: string,
  deadline: number,
  undo: Undo,
  check: ReturnType<typeof statusCheck>,
): Promise<string> {
  try {
    needTime(
      deadline,
      WEBHOOKS_SETUP_SECONDS +
        2 * (SCALE_WARMUP_SECONDS + 2 * WEBHOOK_TURNS * WEBHOOK_TURN_SECONDS) +
        comparisonSeconds(1) +
        WEBHOOKS_DELIVERY_SECONDS,
    );
    const url = await createPlainDatabase(adminUrl, `donata_bench_${randomBytes(6).toString("hex")}_hooks`, undo);
    const database = await openDatabase({ databaseUrl: url, dataDir: "memory://", poolSize: 10 });
    undo.push(() => database.close());
    await database.migrate();
    const { headers } = await createBenchAccess(database.db);
    const prepared = await prepareGivingCheckouts(database.db, WEBHOOK_PREPARED_CHECKOUTS);
    const third = Math.floor(prepared.length / 3);
    const [withoutEvents, withEvents, withEndpoints] = [0, 1, 2].map((index) =>
      prepared.slice(index * third, (index + 1) * third),
    );
    const [giving] = await runSql(url, [`select id from organizations where slug = '${GIVING_ORG}'`]);
    const givingId = Number(giving?.rows[0]?.id);

    const receiver = forkTs(fileURLToPath(import.meta.url), { ...process.env, BENCH_ROLE: "receiver" });
    undo.push(() => stopChild(receiver));
    const { port: receiverPort } = await waitForReady(receiver, "webhook receiver");
    const application = await createApplication(database.db, {
      name: "Bench webhooks",
      applicationUrl: "https://bench.example/",
      callbackUrls: ["https://bench.example/callback"],
    });
    await installApplication(database.db, application.client_id, GIVING_ORG);
    const webhookDeps = {
      secrets: createSecretBox(Buffer.from(BENCH_ENCRYPTION_KEY, "hex")),
      destinations: { allowPrivateNetworks: true },
    };
    const owner = { organizationId: givingId, applicationId: application.id, permissions: application.permissions };
    for (let index = 0; index < WEBHOOK_ENDPOINTS; index++) {
      await createWebhookEndpoint(database.db, webhookDeps, owner, {
        url: `http://127.0.0.1:${receiverPort}/hooks/${index}`,
        event_types: ["*"],
      });
    }

    const plainChild = forkTs(fileURLToPath(import.meta.url), {
      ...process.env,
      BENCH_ROLE: "app",
      BENCH_APP_DATABASE_URL: url,
      BENCH_EVENTS: "off",
      BENCH_APP_LOG_LEVEL: "error",
    });
    undo.push(() => stopChild(plainChild));
    const plainApp = {
      child: plainChild,
      origin: `http://127.0.0.1:${(await waitForReady(plainChild, "application (no events)")).port}`,
    };
    const eventsApp = await startAppChild(url, "application (events)", undo);
    const completion = "POST …/checkouts/{id}/complete (one-off gift, sandbox card)";
    log(`\n${completion}: without events and with events, in turns`);
    const compared = await compareSides(
      [
        {
          scenario: sandboxCompletion(
            `${completion}, no events`,
            plainApp.origin,
            plainApp.child,
            withoutEvents as never,
          ),
          headers,
        },
        {
          scenario: sandboxCompletion(`${completion}, events`, eventsApp.origin, eventsApp.child, withEvents as never),
          headers,
        },
      ],
      check,
      deadline,
      { turns: WEBHOOK_TURNS, turnSeconds: WEBHOOK_TURN_SECONDS },
    );
    await stopChild(plainChild);

    // The worker delivering to the endpoints while donors complete checkouts.
    const sender = forkTs(fileURLToPath(import.meta.url), {
      ...process.env,
      BENCH_ROLE: "sender",
      BENCH_APP_DATABASE_URL: url,
    });
    undo.push(() => stopChild(sender));
    await waitForReady(sender, "webhook worker");
    log(`${completion}: with ${WEBHOOK_ENDPOINTS} endpoints and the webhook worker`);
    const busy = await compareSides(
      [
        {
          scenario: sandboxCompletion(
            `${completion}, events, ${WEBHOOK_ENDPOINTS} endpoints`,
            eventsApp.origin,
            eventsApp.child,
            withEndpoints as never,
          ),
          headers,
        },
      ],
      check,
      deadline,
    );
    await stopChild(sender);
    await stopChild(eventsApp.child);

    // Deliveries per second: what is left queued first, then a burst of events, each to every endpoint.
    for (let pass = 0; pass < 100; pass++) {
      const drained = await deliverWebhooks(database.db, webhookDeps, { organizationIds: [givingId], limit: 200 });
      if (drained.queued + drained.succeeded + drained.retried + drained.failed === 0) break;
    }
    needTime(deadline, WEBHOOKS_DELIVERY_SECONDS);
    const before = await receivedCount(receiver);
    for (let start = 0; start < WEBHOOK_EVENTS; start += 1000) {
      const count = Math.min(1000, WEBHOOK_EVENTS - start);
      await database.db.transaction((tx) =>
        insertEvents(
          tx,
          givingId,
          Array.from({ length: count }, (_, index) => ({
            organizationId: givingId,
            id: newEventId(),
            type: "supporter.updated",
            resourceType: "supporter",
            resourceId: 1_000_000 + start + index,
            actor: { type: "system", label: "platform" },
            data: { id: 1_000_000 + start + index, first_name: "Bench" },
          })),
        ),
      );
    }
    const expected = WEBHOOK_EVENTS * WEBHOOK_ENDPOINTS;
    const started = performance.now();
    const cpuBefore = cpuSample(undefined);
    let delivered = 0;
    while (delivered < expected && (deadline - Date.now()) / 1000 > REPORT_RESERVE_SECONDS) {
      const pass = await deliverWebhooks(database.db, webhookDeps, { organizationIds: [givingId], limit: 200 });
      delivered += pass.succeeded;
      if (pass.retried + pass.failed > 0) throw new Error(`webhook deliveries failed: ${JSON.stringify(pass)}`);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpuSample(undefined);
    const received = (await receivedCount(receiver)) - before;
    if (received < delivered)
      throw new Error(`the receiver got ${received} deliveries, ${delivered} were recorded as delivered`);
    const perSecond = delivered / seconds;

    const [plainThroughput, eventsThroughput] = compared.throughput as [Measurement, Measurement];
    const [plainLatency, eventsLatency] = compared.latency as [Measurement, Measurement];
    const [busyThroughput] = busy.throughput as [Measurement];
    const [busyLatency] = busy.latency as [Measurement];
    const share = eventsThroughput.rps / plainThroughput.rps;
    const table = markdownTable(
      [
        "Checkout completion",
        `req/s (${CONNECTIONS} connections)`,
        "vs no events",
        "p50 (ms, 1 connection)",
        "p99 (ms, 1 connection)",
      ],
      [
        [
          "no events (baseline)",
          fmt(plainThroughput.rps),
          "100.0 %",
          fmt(plainLatency.p50, 2),
          fmt(plainLatency.p99, 2),
        ],
        [
          "events recorded",
          fmt(eventsThroughput.rps),
          `${fmt(share * 100)} %`,
          fmt(eventsLatency.p50, 2),
          fmt(eventsLatency.p99, 2),
        ],
        [
          `events, ${WEBHOOK_ENDPOINTS} endpoints being delivered to`,
          fmt(busyThroughput.rps),
          `${fmt((busyThroughput.rps / plainThroughput.rps) * 100)} %`,
          fmt(busyLatency.p50, 2),
          fmt(busyLatency.p99, 2),
        ],
      ],
    );
    const cpu = cpuUse(cpuBefore, cpuAfter, delivered);
    const targets = [
      `- **${share >= 0.8 ? "met" : "not met"}**: recording events costs at most 20 % of completion throughput (measured ${fmt((1 - share) * 100)} %)`,
      `- **${perSecond >= 500 ? "met" : "not met"}**: at least 500 deliveries/s on PostgreSQL (measured ${fmt(perSecond, 0)}/s: ${delivered.toLocaleString("en-US")} deliveries in ${fmt(seconds, 2)} s${cpu ? `; machine busy ${fmt(cpu.machineBusy * 100, 0)} %` : ""})`,
    ];
    log(`\n${table}\n\n${targets.join("\n")}`);
    return `${table}\n\nTargets:\n\n${targets.join("\n")}`;
  } catch (error) {
    return outOfTime(error, "webhooks");
  } finally {
    await undoAll(undo);
  }
}

// ---------------------------------------------------------------------------------------------
// Import: a charity's supporters from the platform it leaves, 100,000 rows of a Givebutter export.
// ---------------------------------------------------------------------------------------------

const IMPORT_ROWS = 100_000;
const IMPORT_SETUP_SECONDS = 15;
/** The target: the whole file imported in under a minute, so each run may take up to that. */
const IMPORT_RUN_SECONDS = 60;

const IMPORT_DESCRIPTION = `${IMPORT_ROWS.toLocaleString("en-US")} rows of a Givebutter contacts export (\`--preset givebutter\`:
external id, names, email, phone, address, country name, email consent, two tags) imported by
\`importSupporters\` (what \`donata import\` runs) into an organization with no supporters, on a database of
its own: first the dry run (every row checked and matched in transactions rolled back), then the import
(batches of 500 rows, one transaction each, with each supporter's \`supporter.created\` event), then the same
file again (every row matched, nothing to write).`;

function givebutterRows(count: number): string {
  const lines = [
    "Givebutter Contact ID,First Name,Last Name,Primary Email,Primary Phone,Address Line 1,City,State,Postal Code,Country,Email Subscription Status,Tags",
  ];
  for (let index = 0; index < count; index++) {
    lines.push(
      `GB-${index},Name${index},Surname${index % 977},donor${index}@example.org,+39 333 ${String(index).padStart(7, "0")},Via Roma ${index % 300},Milano,MI,${20100 + (index % 90)},Italy,${index % 3 === 0 ? "unsubscribed" : "subscribed"},"donor, ${index % 2 === 0 ? "monthly" : "one-off"}"`,
    );
  }
  return `${lines.join("\n")}\n`;
}

async function importSection(adminUrl: string, deadline: number, undo: Undo): Promise<string> {
  try {
    needTime(deadline, IMPORT_SETUP_SECONDS + 3 * IMPORT_RUN_SECONDS);
    const url = await createPlainDatabase(adminUrl, `donata_bench_${randomBytes(6).toString("hex")}_import`, undo);
    const database = await openDatabase({ databaseUrl: url, dataDir: "memory://", poolSize: 10 });
    undo.push(() => database.close());
    await database.migrate();
    const organization = await createOrganization(database.db, { slug: "bench-import", name: "Bench import" });
    const content = givebutterRows(IMPORT_ROWS);
    const timedRun = async (dryRun: boolean) => {
      const started = performance.now();
      const result = await importSupporters(database.db, {
        organizationId: organization.id,
        fileName: "contacts.csv",
        content,
        preset: "givebutter",
        dryRun,
      });
      return { result, seconds: (performance.now() - started) / 1000 };
    };
    const dry = await timedRun(true);
    const first = await timedRun(false);
    const again = await timedRun(false);
    const row = (label: string, run: typeof dry, outcome: string) => [
      label,
      fmt(run.seconds, 1),
      fmt(IMPORT_ROWS / run.seconds, 0),
      outcome,
    ];
    const table = markdownTable(
      ["run", "seconds", "rows/s", "outcome"],
      [
        row("dry run", dry, `${dry.result.created.toLocaleString("en-US")} to create, nothing written`),
        row(
          "import",
          first,
          `${first.result.created.toLocaleString("en-US")} created, ${first.result.refused} refused`,
        ),
        row("same file again", again, `${again.result.unchanged.toLocaleString("en-US")} unchanged`),
      ],
    );
    const target = `- **${first.seconds < 60 && first.result.created === IMPORT_ROWS ? "met" : "not met"}**: ${IMPORT_ROWS.toLocaleString("en-US")} supporter rows imported in under 60 s on PostgreSQL (measured ${fmt(first.seconds, 1)} s)`;
    log(`\n${table}\n\n${target}`);
    return `${table}\n\nTarget:\n\n${target}`;
  } catch (error) {
    return outOfTime(error, "import");
  } finally {
    await undoAll(undo);
  }
}

function receivedCount(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const listener = (message: { type?: string; count?: number }) => {
      if (message?.type !== "received") return;
      child.off("message", listener);
      resolve(message.count ?? 0);
    };
    child.on("message", listener);
    child.send({ type: "received" });
  });
}

/** The scale-out sections BENCH_SECTIONS asks for, as markdown; their non-200 answers go to `failures`. */
async function runScaleOut(
  sections: Set<Section>,
  options: { adminUrl: string; deadline: number; undo: Undo; failures: string[] },
): Promise<string> {
  const check = statusCheck(options.failures);
  const timed = async (label: string, section: () => Promise<string>) => {
    const started = performance.now();
    const markdown = await section();
    log(`${label}: ${fmt((performance.now() - started) / 1000)} s`);
    return markdown;
  };
  const run = (
    section: Section,
    title: string,
    description: string,
    body: () => Promise<string>,
    appendix = `${SCALE_METHOD}\n\n${ONE_MACHINE}`,
  ) =>
    sections.has(section)
      ? timed(`${section} section`, body).then((result) => `## ${title}\n\n${description}\n\n${result}\n\n${appendix}`)
      : `## ${title}\n\n${description}\n\nNot run (\`BENCH_SECTIONS\`).`;
  const citus = await run("citus", "Citus cluster next to plain PostgreSQL", CITUS_DESCRIPTION, () =>
    citusSection(options.deadline, options.undo, check),
  );
  const processes = await run("processes", "1 against 2 processes", PROCESSES_DESCRIPTION, () =>
    processesSection(options.adminUrl, options.deadline, options.undo, check),
  );
  const webhooks = await run("webhooks", "Events and webhooks", WEBHOOKS_DESCRIPTION, () =>
    webhooksSection(options.adminUrl, options.deadline, options.undo, check),
  );
  const imports = await run(
    "import",
    "Importing supporters",
    IMPORT_DESCRIPTION,
    () => importSection(options.adminUrl, options.deadline, options.undo),
    `The bench process, PostgreSQL and the machine's other load share the same ${os.cpus().length} cores.`,
  );
  return `${citus}\n\n${processes}\n\n${webhooks}\n\n${imports}`;
}

/**
 * The document with each of `sections`' measured blocks (`## Title` up to the next `## `) put in
 * place of the block of the same title; a block that was not measured (not run, or stopped short of
 * its end) leaves the document's as it is.
 */
function replaceSections(doc: string, sections: string, note: string): string {
  const blocks = (text: string) => {
    const found = new Map<string, string>();
    for (const block of text.split(/\n(?=## )/)) {
      const title = /^## (.+)$/m.exec(block)?.[1];
      if (title && block.startsWith("## ")) found.set(title, block.trimEnd());
    }
    return found;
  };
  let result = doc;
  for (const [title, block] of blocks(sections)) {
    if (block.includes("Not run (`BENCH_SECTIONS`).") || block.includes("Not run to its end")) continue;
    const current = blocks(result).get(title);
    const measured = block.replace(/\n\n/, `\n\n${note}\n\n`);
    if (current) result = result.replace(current, () => measured);
    else {
      // A section the document does not have yet: placed before "## Machine", where a full run puts it.
      const machine = result.indexOf("\n## Machine");
      result =
        machine < 0
          ? `${result.trimEnd()}\n\n${measured}\n`
          : `${result.slice(0, machine)}\n${measured}\n${result.slice(machine)}`;
    }
  }
  return result;
}

function parseSections(): Set<Section> {
  const raw = process.env.BENCH_SECTIONS;
  if (!raw) return new Set(SECTIONS);
  const named = raw.split(",").map((each) => each.trim());
  const unknown = named.filter((each) => !(SECTIONS as readonly string[]).includes(each));
  if (unknown.length > 0) throw new Error(`BENCH_SECTIONS: unknown ${unknown.join(", ")}; use ${SECTIONS.join(", ")}`);
  return new Set(named as Section[]);
}

async function main() {
  const deadline = Date.now() + HARD_DEADLINE_MS;
  const duration = envSeconds("BENCH_DURATION", 10);
  const warmup = envSeconds("BENCH_WARMUP", 2);
  const latencyDuration = envSeconds("BENCH_LATENCY_DURATION", 5);
  const keepDatabase = process.env.BENCH_KEEP_DATABASE === "1";
  const sections = parseSections();
  const adminUrl = process.env.BENCH_DATABASE_URL || DEFAULT_ADMIN_URL;
  const databaseName = `donata_bench_${randomBytes(6).toString("hex")}`;
  const benchUrl = new URL(adminUrl);
  benchUrl.pathname = `/${databaseName}`;

  let created = false;
  let setupDatabase: Database | undefined;
  let appChild: ChildProcess | undefined;
  let baselineChild: ChildProcess | undefined;
  let stripeChild: ChildProcess | undefined;
  const limitChildren: ChildProcess[] = [];
  // What the scale-out sections started and created.
  const undo: Undo = [];
  let cleaned: Promise<void> | undefined;

  const cleanup = () => {
    cleaned ??= (async () => {
      await Promise.all([appChild, baselineChild, stripeChild, ...limitChildren].map(stopChild)).catch(() => {});
      await undoAll(undo);
      await setupDatabase?.close().catch(() => {});
      if (!created) return;
      if (keepDatabase) {
        log(`kept database ${databaseName}: ${benchUrl.toString()}`);
        return;
      }
      const admin = new pg.Client({ connectionString: adminUrl });
      try {
        await admin.connect();
        await admin.query(`drop database if exists "${databaseName}" with (force)`);
        log(`dropped database ${databaseName}`);
      } catch (error) {
        console.error(`could not drop database ${databaseName}:`, error);
      } finally {
        await admin.end().catch(() => {});
      }
    })();
    return cleaned;
  };
  const abort = (reason: string, code: number) => {
    console.error(reason);
    cleanup().finally(() => process.exit(code));
  };
  process.once("SIGINT", () => abort("interrupted", 130));
  process.once("SIGTERM", () => abort("terminated", 143));
  const watchdog = setTimeout(
    () => abort(`benchmark exceeded ${HARD_DEADLINE_MS / 1000} s: aborted`, 2),
    HARD_DEADLINE_MS,
  );

  try {
    if (!sections.has("main")) {
      // The scale-out sections alone: their tables on the terminal and, measured whole, in place of
      // their own sections of docs/benchmarks.md (the rest of it left as it is).
      const failures: string[] = [];
      const markdown = await runScaleOut(sections, { adminUrl, deadline, undo, failures });
      log(`\n${markdown}`);
      if (failures.length > 0) throw new Error(`non-200 responses or errors:\n  ${failures.join("\n  ")}`);
      const docPath = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url));
      if (existsSync(docPath)) {
        const note = `Measured ${new Date().toISOString().slice(0, 10)} in a run of \`BENCH_SECTIONS=${[...sections].join(",")}\`.`;
        writeFileSync(docPath, replaceSections(readFileSync(docPath, "utf8"), markdown, note));
        log(`\nupdated the measured sections of ${docPath}`);
      }
      return;
    }
    // 1. Database, organization, application, token, seed.
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    let postgresVersion: string;
    try {
      postgresVersion = (await admin.query<{ version: string }>("select version()")).rows[0]?.version ?? "unknown";
      await admin.query(`create database "${databaseName}"`);
      created = true;
    } finally {
      await admin.end();
    }
    log(`database ${databaseName} on ${benchUrl.host}`);

    setupDatabase = await openDatabase({ databaseUrl: benchUrl.toString(), dataDir: "memory://", poolSize: 2 });
    await setupDatabase.migrate();
    const { db } = setupDatabase;
    const { organization, application, headers } = await createBenchAccess(db);

    // Authorization codes as the authorize endpoint would issue them (hash stored, PKCE S256 bound),
    // and independent refresh-token chains, one per connection, for the token endpoint scenarios.
    const owner = await createUser(db, {
      email: "bench@donata.local",
      password: "benchmark password",
      organization: ORG,
      role: "owner",
    });
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const codes = Array.from({ length: PREPARED_CODES }, () => generateSecret("dnt_ac"));
    const codeExpiry = new Date(Date.now() + 10 * 60_000);
    for (let start = 0; start < codes.length; start += 2000) {
      await db.insert(oauthAuthorizationCodes).values(
        codes.slice(start, start + 2000).map((code) => ({
          organizationId: organization.id,
          applicationId: application.id,
          userId: owner.id,
          codeHash: hashSecret(code),
          redirectUri: "http://127.0.0.1/callback",
          codeChallenge: challenge,
          expiresDate: codeExpiry,
        })),
      );
    }
    const refreshChains: string[] = [];
    for (let i = 0; i < REFRESH_CHAINS; i++) {
      const pair = await createInstallationToken(
        db,
        { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 7200 },
        application.client_id,
        ORG,
      );
      refreshChains.push(pair.refresh_token);
    }
    const clientForm = { client_id: application.client_id, client_secret: application.client_secret };

    log(
      `seeding ${SEED.campaigns} campaigns, ${SEED.supporters} supporters, ${SEED.checkouts} checkouts (random seed ${SEED.randomSeed})…`,
    );
    const seedStarted = performance.now();
    const seeded = await seedOrganization(setupDatabase, { organization: ORG, ...SEED });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    log(
      `seeded in ${fmt(seedSeconds)} s: ${seeded.campaigns} campaigns, ${seeded.supporters} supporters, ` +
        `${seeded.payment_methods} payment methods, ${seeded.donations} donations, ${seeded.payments} payments, ` +
        `${seeded.checkouts} checkouts`,
    );
    if (seedSeconds > 45) log(`WARNING: the seed took ${fmt(seedSeconds)} s, not "well under a minute"`);

    // The most common last name, searched as a lower-case substring (the search is ILIKE '%q%').
    const pool = (setupDatabase.db as unknown as { $client: pg.Pool }).$client;
    const common = await pool.query<{ last_name: string; n: string }>(
      `select last_name, count(*) as n from supporters where organization_id = $1 and last_name is not null
       group by last_name order by count(*) desc, last_name limit 1`,
      [organization.id],
    );
    const lastName = common.rows[0]?.last_name;
    if (!lastName) throw new Error("the seed produced no supporter last names");
    const q = lastName.toLowerCase();
    const singleIds = await sampleCheckoutIds(setupDatabase, organization.id);
    const preparedCheckouts = await prepareGivingCheckouts(db, PREPARED_CHECKOUTS);

    // The same for an organization paying with the Stripe adapter: its keys sealed as Settings
    // saves them, its checkouts, and one confirmation token per checkout minted at the stand-in as
    // Stripe.js does in the donor's browser.
    stripeChild = forkTs(fileURLToPath(import.meta.url), { ...process.env, BENCH_ROLE: "stripe" });
    const stripeApi = {
      protocol: "http" as const,
      host: "127.0.0.1",
      port: (await waitForReady(stripeChild, "Stripe stand-in")).port,
    };
    const stripeOrg = await createOrganization(db, { slug: STRIPE_ORG, name: "Bench Stripe" });
    const box = createSecretBox(Buffer.from(BENCH_ENCRYPTION_KEY, "hex"));
    await upsertProcessorAccount(db, {
      organizationId: stripeOrg.id,
      processor: "stripe",
      mode: "test",
      publishableKey: "pk_test_bench",
      secretKeyCiphertext: box.seal("sk_test_bench"),
      secretKeyLast4: "ench",
      webhookSecretCiphertext: box.seal("whsec_bench"),
      webhookSecretLast4: "ench",
    });
    const [stripeCampaign] = await db
      .insert(campaigns)
      .values({
        organizationId: stripeOrg.id,
        title: "Bench Stripe appeal",
        slug: "bench-appeal",
        minAmount: 1,
        maxAmount: 10_000,
      })
      .returning();
    if (!stripeCampaign) throw new Error("bench Stripe campaign not inserted");
    const stripeSecrets = Array.from({ length: PREPARED_STRIPE_CHECKOUTS }, () => generateSecret("dnt_cks"));
    const stripeRows = await db
      .insert(checkouts)
      .values(
        stripeSecrets.map((secret) => ({
          organizationId: stripeOrg.id,
          campaignId: stripeCampaign.id,
          state: "OPEN",
          clientSecretHash: hashSecret(secret),
        })),
      )
      .returning({ id: checkouts.id });
    const stripeTokens: string[] = [];
    for (let start = 0; start < stripeRows.length; start += 50) {
      const batch = stripeRows.slice(start, start + 50);
      stripeTokens.push(
        ...(await Promise.all(batch.map(() => mintConfirmationToken(stripeApi, { paymentMethod: "pm_card_visa" })))),
      );
    }
    const preparedStripe = stripeRows.map((row, index) => ({
      id: row.id,
      secret: stripeSecrets[index] as string,
      token: stripeTokens[index] as string,
    }));
    await setupDatabase.close();
    setupDatabase = undefined;

    // 2. The real application in a child process.
    const benchFile = fileURLToPath(import.meta.url);
    appChild = forkTs(benchFile, {
      ...process.env,
      BENCH_ROLE: "app",
      BENCH_APP_DATABASE_URL: benchUrl.toString(),
      BENCH_STRIPE_API_URL: `http://127.0.0.1:${stripeApi.port}`,
    });
    const app = await waitForReady(appChild, "application server");
    const appOrigin = `http://127.0.0.1:${app.port}`;
    log(`application listening on ${appOrigin} (pid ${appChild.pid}, database pool ${app.poolSize})`);

    // The applications for the cost of rate limiting (step 5), started now, while the machine is idle:
    // one per way of counting, each idle until then (no worker runs in them).
    const redisUrl = process.env.BENCH_REDIS_URL || DEFAULT_REDIS_URL;
    const redisUp = await redisAnswers(redisUrl);
    if (!redisUp) log(`Redis does not answer at ${redisUrl} (BENCH_REDIS_URL): its rate-limit rows are left out`);
    const limitServers: { variant: LimitVariant; child: ChildProcess; port: number }[] = [];
    for (const variant of LIMIT_VARIANTS) {
      if (variant.store === "redis" && !redisUp) continue;
      const child = forkTs(benchFile, {
        ...process.env,
        BENCH_ROLE: "app",
        BENCH_LIMITS: variant.id,
        BENCH_APP_DATABASE_URL: benchUrl.toString(),
        BENCH_REDIS_URL: redisUrl,
      });
      limitChildren.push(child);
      const { port } = await waitForReady(child, `application server (${variant.label})`);
      limitServers.push({ variant, child, port });
    }

    // 3. The baseline, serving the default page fetched once from the real server.
    const defaultPage = await getJson(`${appOrigin}/api/v1/checkouts/`, headers);
    const page = defaultPage.json as { items: unknown[]; count: number };
    if (page.items.length !== 100 || page.count !== SEED.checkouts) {
      throw new Error(`default page has ${page.items.length} items and count ${page.count}; expected 100 and 100000`);
    }
    baselineChild = forkTs(fileURLToPath(new URL("./baseline-server.ts", import.meta.url)), { ...process.env });
    const baselineReady = waitForReady(baselineChild, "baseline server");
    baselineChild.send({ type: "body", body: defaultPage.json });
    const baseline = await baselineReady;
    const baselineOrigin = `http://127.0.0.1:${baseline.port}`;
    const baselineBody = await getJson(`${baselineOrigin}/baseline`, headers);
    const sameBytes = baselineBody.text === defaultPage.text;
    log(
      `baseline listening on ${baselineOrigin} (pid ${baselineChild.pid}); body ${Buffer.byteLength(baselineBody.text)} bytes, ` +
        `${sameBytes ? "byte-identical to" : "NOT byte-identical to"} the application's ${Buffer.byteLength(defaultPage.text)} bytes`,
    );

    // 4. Scenarios, each probed once for shape before it is loaded.
    const list = `${appOrigin}/api/v1/checkouts/`;
    const appServer = appChild;
    const scenarios: Scenario[] = [
      { name: "baseline (bare Fastify, in-memory body)", url: `${baselineOrigin}/baseline`, server: baselineChild },
      { name: "GET /api/v1/checkouts/ (default page)", url: list, server: appServer },
      { name: `GET /api/v1/checkouts/?q=${q}`, url: `${list}?q=${encodeURIComponent(q)}`, server: appServer },
      { name: `GET /api/v1/checkouts/?offset=${DEEP_OFFSET}`, url: `${list}?offset=${DEEP_OFFSET}`, server: appServer },
      {
        name: `GET /api/v1/checkouts/{id} (${singleIds.length} ids in turn)`,
        url: `${list}${singleIds[0]}`,
        paths: singleIds.map((id) => `/api/v1/checkouts/${id}`),
        server: appServer,
      },
    ];
    let nextCode = 0;
    const graphqlQuery =
      "{ checkouts(limit: 100) { count items { id create_date state amount frequency payment_method_label " +
      "campaign { id title } supporter { id first_name last_name email } donation { id code state } payment { id state } } } }";
    scenarios.push(
      {
        name: "POST /admin/graphql/ (100 checkouts with relations)",
        url: `${appOrigin}/admin/graphql/`,
        post: { contentType: "application/json", body: JSON.stringify({ query: graphqlQuery }) },
        server: appServer,
      },
      {
        name: "POST /oauth/token/ (authorization_code + PKCE)",
        url: `${appOrigin}/oauth/token/`,
        noAuth: true,
        form: {
          body: () =>
            new URLSearchParams({
              ...clientForm,
              grant_type: "authorization_code",
              code: codes[nextCode++ % codes.length] as string,
              redirect_uri: "http://127.0.0.1/callback",
              code_verifier: verifier,
            }).toString(),
        },
        server: appServer,
      },
      {
        name: "POST /oauth/token/ (refresh_token, rotating)",
        url: `${appOrigin}/oauth/token/`,
        noAuth: true,
        // autocannon resets a connection's context between requests, so live tokens wait in a queue:
        // a request takes one, its response puts the rotated one back (never two requests per chain).
        form: {
          body: () =>
            new URLSearchParams({
              ...clientForm,
              grant_type: "refresh_token",
              refresh_token: refreshChains.shift() as string,
            }).toString(),
          onResponse: (status, body) => {
            if (status === 200) refreshChains.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
          },
        },
        server: appServer,
      },
    );
    scenarios.push(
      sandboxCompletion(
        "POST …/checkouts/{id}/complete (one-off gift, sandbox card)",
        appOrigin,
        appServer,
        preparedCheckouts,
      ),
    );
    let nextStripe = 0;
    scenarios.push({
      name: "POST …/checkouts/{id}/complete (one-off gift, Stripe adapter against the local stand-in)",
      url: `${appOrigin}/api/v1/public/organizations/${STRIPE_ORG}/checkouts/0/complete`,
      noAuth: true,
      json: {
        next() {
          // Each checkout and token completes once; past the prepared ones the answers are 4xx and the run says so.
          const checkout = preparedStripe[nextStripe++ % preparedStripe.length] as (typeof preparedStripe)[number];
          return {
            path: `/api/v1/public/organizations/${STRIPE_ORG}/checkouts/${checkout.id}/complete`,
            headers: { "idempotency-key": `bench-${checkout.id}` },
            body: JSON.stringify({
              client_secret: checkout.secret,
              amount: 25,
              frequency: 0,
              processor: "stripe",
              confirmation_token: checkout.token,
              supporter: { first_name: "Bench", last_name: "Donor", email: `donor-${checkout.id}@bench.example` },
              consents: { privacy: true },
            }),
          };
        },
      },
      server: appServer,
    });
    const graphqlProbe = await fetch(`${appOrigin}/admin/graphql/`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ query: graphqlQuery }),
    });
    const graphqlBody = (await graphqlProbe.json()) as { data?: { checkouts: { items: unknown[] } }; errors?: unknown };
    if (graphqlProbe.status !== 200 || graphqlBody.errors || graphqlBody.data?.checkouts.items.length !== 100) {
      throw new Error(`GraphQL probe failed: HTTP ${graphqlProbe.status} ${JSON.stringify(graphqlBody).slice(0, 300)}`);
    }
    const probes: string[] = [];
    for (const scenario of scenarios.slice(1, 4)) {
      const { json } = await getJson(scenario.url, headers);
      const body = json as { items: { id: number }[]; count: number };
      probes.push(`${scenario.name}: ${body.items.length} items, count ${body.count}`);
    }
    log(probes.join("\n"));

    const backgroundBefore = await backgroundLoad(BACKGROUND_SECONDS);
    if (backgroundBefore !== undefined) {
      log(`background load with the benchmark idle: ${fmt(backgroundBefore * 100, 0)} % of a core`);
      if (backgroundBefore > 0.1) log("WARNING: other work is running on this machine; the figures will be disturbed");
    }
    const perScenario = warmup + duration + latencyDuration + 2;
    // Each way of counting: both pages at 1 connection.
    const limitSeconds =
      LIMIT_VARIANTS.length * LIMIT_PAGES.length * (warmup + LIMIT_ROUNDS * (LIMIT_ROUND_SECONDS + 0.5));
    const budget = (deadline - Date.now()) / 1000;
    const needed = perScenario * scenarios.length + limitSeconds + 2 * BACKGROUND_SECONDS + 5;
    if (budget < needed) {
      throw new Error(`only ${fmt(budget)} s left of the time budget, the scenarios need ${fmt(needed, 0)} s`);
    }

    const results: Measurement[] = [];
    // What one user sees: the same scenario with one request in flight at a time.
    const singles: Measurement[] = [];
    const failures: string[] = [];
    const checkStatuses = statusCheck(failures);
    for (const scenario of scenarios) {
      log(`\n${scenario.name}: ${warmup} s warm-up, ${duration} s measured, ${CONNECTIONS} connections`);
      const warm = await load(scenario, headers, warmup, scenario.server.pid);
      const measured = await load(scenario, headers, duration, scenario.server.pid);
      const single = await load(scenario, headers, latencyDuration, scenario.server.pid, 1);
      checkStatuses(scenario.name, [
        ["warm-up", warm],
        ["measured", measured],
        ["1 connection", single],
      ]);
      log(
        `  ${measured.requests} responses in ${fmt(measured.seconds, 2)} s: ${fmt(measured.rps, 0)} req/s, ` +
          `p50 ${fmt(measured.p50, 2)} ms, p99 ${fmt(measured.p99, 2)} ms, ${fmt(measured.bytesPerResponse, 0)} bytes/response`,
      );
      if (measured.cpu) {
        const c = measured.cpu;
        log(
          `  CPU ms/response: load generator ${fmt(c.loadGenerator, 2)}, server ${fmt(c.server, 2)}, ` +
            `PostgreSQL ${fmt(c.postgres, 2)}, kernel and other ${fmt(c.other, 2)}; machine ${fmt(c.machineBusy * 100, 0)} % busy`,
        );
      }
      log(`  1 connection, ${latencyDuration} s: p50 ${fmt(single.p50, 2)} ms, p99 ${fmt(single.p99, 2)} ms`);
      results.push(measured);
      singles.push(single);
    }

    // 5. The cost of rate limiting: the same pages at 1 connection on one application process per
    // way of counting (the main one idles meanwhile), taken in turns; each process counts the
    // database's counter writes.
    const slots: { variant: LimitVariant; page: LimitPage; scenario: Scenario; runs: Measurement[]; writes: number }[] =
      [];
    for (const { variant, child, port } of limitServers) {
      for (const page of LIMIT_PAGES) {
        const url = `http://127.0.0.1:${port}${page.path}`;
        await getJson(url, headers);
        const scenario: Scenario = { name: `${page.name}, ${variant.label}`, url, server: child };
        slots.push({ variant, page, scenario, runs: [], writes: 0 });
      }
    }
    log(
      `\nCost of rate limiting: ${slots.length} page × counter pairs, ${warmup} s warm-up each, then ` +
        `${LIMIT_ROUNDS} turns of ${LIMIT_ROUND_SECONDS} s each at 1 connection`,
    );
    for (const slot of slots) {
      checkStatuses(slot.scenario.name, [
        ["warm-up", await load(slot.scenario, headers, warmup, slot.scenario.server.pid, 1)],
      ]);
    }
    for (let round = 0; round < LIMIT_ROUNDS; round++) {
      for (const slot of round % 2 === 0 ? slots : [...slots].reverse()) {
        const child = slot.scenario.server;
        const before = await counterWrites(child);
        slot.runs.push(await load(slot.scenario, headers, LIMIT_ROUND_SECONDS, child.pid, 1));
        slot.writes += (await counterWrites(child)) - before;
      }
    }
    const limitRuns: LimitRun[] = slots.map(({ variant, page, scenario, runs, writes }) => ({
      name: scenario.name,
      variant,
      page,
      writes,
      measured: merged(runs),
    }));
    for (const run of limitRuns) {
      checkStatuses(run.name, [["measured", run.measured]]);
      log(
        `  ${run.name}: ${run.measured.requests} responses, ${fmt(run.measured.rps, 0)} req/s, ` +
          `p50 ${fmt(run.measured.p50, 2)} ms, p99 ${fmt(run.measured.p99, 2)} ms, ${run.writes} counter writes in the database`,
      );
    }
    await Promise.all(limitChildren.map(stopChild));

    // 6. The scale-out sections, each on data of its own, with the main servers stopped.
    await Promise.all([appChild, baselineChild, stripeChild].map(stopChild));
    const scaleOut = await runScaleOut(sections, { adminUrl, deadline, undo, failures });

    const backgroundAfter = await backgroundLoad(BACKGROUND_SECONDS);
    if (backgroundAfter !== undefined)
      log(`\nbackground load after the scenarios: ${fmt(backgroundAfter * 100, 0)} % of a core`);
    const disturbed = Math.max(backgroundBefore ?? 0, backgroundAfter ?? 0) > 0.1;
    if (disturbed) log("WARNING: other work was running on this machine; the figures are disturbed");

    // 7. Report.
    const baseRps = results[0]?.rps ?? Number.NaN;
    const rows = results.map((m) => [
      m.name,
      fmt(m.rps, 0),
      fmt(m.p50, 2),
      fmt(m.p99, 2),
      `${fmt((m.rps / baseRps) * 100, 1)} %`,
      String(m.requests),
    ]);
    const header = ["Scenario", "req/s", "p50 (ms)", "p99 (ms)", "vs baseline", "responses"];
    const table = [
      `| ${header.join(" | ")} |`,
      `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
      ...rows.map((row) => `| ${row.join(" | ")} |`),
    ].join("\n");
    const baseLatency = singles[0]?.p50 ?? Number.NaN;
    const latencyHeader = ["Scenario", "p50 (ms)", "p99 (ms)", "p50 vs baseline"];
    const latencyTable = [
      `| ${latencyHeader.join(" | ")} |`,
      `| ${latencyHeader.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
      ...singles.map((m) => `| ${m.name} | ${fmt(m.p50, 2)} | ${fmt(m.p99, 2)} | × ${fmt(m.p50 / baseLatency, 2)} |`),
    ].join("\n");
    const cpuHeader = ["Scenario", "load generator", "server", "PostgreSQL", "kernel and other", "machine busy"];
    const cpuRows = results.map((m) =>
      m.cpu
        ? [
            m.name,
            fmt(m.cpu.loadGenerator, 2),
            fmt(m.cpu.server, 2),
            fmt(m.cpu.postgres, 2),
            fmt(m.cpu.other, 2),
            `${fmt(m.cpu.machineBusy * 100, 0)} %`,
          ]
        : [m.name, "n/a", "n/a", "n/a", "n/a", "n/a"],
    );
    const cpuTable = [
      `| ${cpuHeader.join(" | ")} |`,
      `| ${cpuHeader.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
      ...cpuRows.map((row) => `| ${row.join(" | ")} |`),
    ].join("\n");
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
    const line = (cells: string[]) =>
      cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)));
    log(`\n${line(header).join("  ")}`);
    for (const row of rows) log(line(row).join("  "));

    // The cost of rate limiting, each page against the same page with no counter.
    const limitHeader = [
      "Page",
      "Rate-limit counter",
      "req/s",
      "p50 (ms)",
      "p99 (ms)",
      "req/s vs no counter",
      "p50 vs no counter",
      "database writes / 1000 requests",
    ];
    const byPage = LIMIT_PAGES.flatMap((page) => limitRuns.filter((run) => run.page === page));
    const limitRows = byPage.map((run) => {
      const none = limitRuns.find((other) => other.page === run.page && other.variant.id === "none")?.measured;
      const m = run.measured;
      return [
        run.page.name,
        run.variant.label,
        fmt(m.rps, 0),
        fmt(m.p50, 2),
        fmt(m.p99, 2),
        none ? `${fmt((m.rps / none.rps) * 100, 1)} %` : "n/a",
        none ? `× ${fmt(m.p50 / none.p50, 2)}` : "n/a",
        fmt((run.writes * 1000) / Math.max(1, m.requests), 1),
      ];
    });
    const limitTable = [
      `| ${limitHeader.join(" | ")} |`,
      `| ${limitHeader.map((_, i) => (i < 2 ? "---" : "---:")).join(" | ")} |`,
      ...limitRows.map((row) => `| ${row.join(" | ")} |`),
    ].join("\n");
    log(`\nCost of rate limiting, 1 connection:\n${limitTable}`);

    const defaultResult = results[1] as Measurement;
    const deepResult = results[3] as Measurement;
    const targets = [
      {
        text: "Default page at >= 30 % of the baseline's req/s",
        met: defaultResult.rps >= 0.3 * baseRps,
        actual: `${fmt((defaultResult.rps / baseRps) * 100, 1)} %`,
      },
      { text: "Default page p99 < 25 ms", met: defaultResult.p99 < 25, actual: `${fmt(defaultResult.p99, 2)} ms` },
      {
        text: `offset=${DEEP_OFFSET} p99 < 50 ms`,
        met: deepResult.p99 < 50,
        actual: `${fmt(deepResult.p99, 2)} ms`,
      },
    ];
    log("");
    for (const target of targets) log(`${target.met ? "MET    " : "NOT MET"}  ${target.text} (${target.actual})`);

    if (failures.length > 0) {
      throw new Error(
        `non-200 responses or errors, figures are not valid and docs/benchmarks.md was not written:\n  ${failures.join("\n  ")}`,
      );
    }

    const cpus = os.cpus();
    // The throughput this run's CPU costs allow at best, and the latency that follows from it.
    const ceiling = (m: Measurement | undefined) => {
      const c = m?.cpu;
      if (!c) return undefined;
      // "kernel and other" is left out: it holds unrelated processes when the machine is shared.
      const total = c.loadGenerator + c.server + c.postgres;
      const rps = Math.min(1000 / c.server, (cpus.length * 1000) / total);
      return { server: c.server, total, rps, latency: (CONNECTIONS / rps) * 1000 };
    };
    const ceilingText = (label: string, m: Measurement | undefined, target: number) => {
      const x = ceiling(m);
      if (!x) return `${label}: no CPU figures (no /proc).`;
      return (
        `${label}: ${fmt(x.server, 2)} ms of the application's single event loop and ${fmt(x.total, 2)} ms of CPU in all ` +
        `(load generator, application, PostgreSQL) per response, so at most about min(1000 / ${fmt(x.server, 2)}, ` +
        `${cpus.length} × 1000 / ${fmt(x.total, 2)}) = ${fmt(x.rps, 0)} req/s even with no idle time at all, and a mean latency of at ` +
        `least ${CONNECTIONS} / ${fmt(x.rps, 0)} = ${fmt(x.latency, 1)} ms with ${CONNECTIONS} requests in flight; the p99 target is ` +
        `${target} ms (measured: ${fmt(m?.p99 ?? Number.NaN, 1)} ms).`
      );
    };
    const baselineCeiling = ceiling(results[0]);
    const ceilings = `Lower bounds from this run's own CPU costs:

- ${ceilingText("Default page", results[1], 25)}
- ${ceilingText(`offset=${DEEP_OFFSET}`, results[3], 50)}
- The baseline itself needs ${fmt(baselineCeiling?.total ?? Number.NaN, 2)} ms of CPU per response, load generator included (it does no
  database or authentication work), which bounds it to about ${fmt(baselineCeiling?.rps ?? Number.NaN, 0)} req/s and a mean latency of
  ${fmt(baselineCeiling?.latency ?? Number.NaN, 1)} ms; its measured p99 was ${fmt(results[0]?.p99 ?? Number.NaN, 1)} ms. A p99 under 25 ms needs a mean under
  25 ms, so more than ${fmt(CONNECTIONS / 0.025, 0)} req/s, which leaves at most ${cpus.length} × 1000 / ${fmt(CONNECTIONS / 0.025, 0)} = ${fmt((cpus.length * 1000 * 0.025) / CONNECTIONS, 1)} ms of CPU per
  response for every process together, load generator and PostgreSQL included, against the ${fmt(baselineCeiling?.total ?? Number.NaN, 2)} ms the baseline
  spends to send the same bytes from memory. The baseline does strictly less than the application and does not meet the
  target either: with ${CONNECTIONS} connections on ${cpus.length} cores it is out of reach here however fast the queries are, and a matter of
  fewer connections or more cores (the single read, at ${fmt(results[4]?.p99 ?? Number.NaN, 1)} ms p99, shows that the request path itself
  adds little).`;
    const cpuModels = [...new Set(cpus.map((cpu) => cpu.model.trim()))].join(", ");
    const doc = `# Benchmarks

Generated by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString()}. Re-run it to refresh this page.

## Results

Throughput, ${CONNECTIONS} connections (${duration} s measured after ${warmup} s of warm-up):

${table}

Latency, 1 connection (what one user sees; ${latencyDuration} s right after the throughput run):

${latencyTable}

Cost of rate limiting, 1 connection (${warmup} s warm-up, then ${LIMIT_ROUNDS} turns of ${LIMIT_ROUND_SECONDS} s per row, the rows
taken in turns, in order then in reverse, so that the machine's other load falls on all alike): the same
application in a process of its own for each way of counting the token's requests (\`RATE_LIMIT_TOKEN=${LIMIT_VARIANT_RULE}\`,
far above the load; leased: the default \`RATE_LIMIT_LEASE_PERCENT=10\`, leases of 3,000 requests, so a write per 3,000 requests or per minute;
one write per request: \`RATE_LIMIT_LEASE_PERCENT=0\`, every request an upsert in \`rate_limits\` or a Redis script), against
the same page with no counter at all (a store that counts nothing). "Database writes" are the statements that
upserted \`rate_limits\` during the measured turns, counted by the application (the request a turn cuts off
at its end is counted there but not answered, hence a little over 1,000 for one write per request).${
      redisUp ? "" : ` Redis did not answer at ${redisUrl} (\`BENCH_REDIS_URL\`), so its rows are missing.`
    }

${limitTable}

Targets:

${targets.map((t) => `- ${t.met ? "**met**" : "**not met**"}: ${t.text} (measured ${t.actual})`).join("\n")}

CPU milliseconds per response during each measured run, from /proc: the load generator is this process; the
server is the application's or the baseline's child process; PostgreSQL is every local \`postgres\` process (other
databases' work on the same server included; system calls, loopback networking among them, count for the process
that makes them); "kernel and other" is the rest of the machine's busy time: interrupts and any unrelated process:

${cpuTable}

Background load with the benchmark idle, over ${BACKGROUND_SECONDS} s before and after the scenarios:
${backgroundBefore === undefined ? "not measured (no /proc)" : `${fmt(backgroundBefore * 100, 0)} % and ${fmt((backgroundAfter ?? Number.NaN) * 100, 0)} % of a core`}.${
      disturbed
        ? `
**Warning**: other work was running on the machine; the figures are disturbed by it. Re-run on an idle machine.`
        : ""
    }

Reading the targets: autocannon keeps ${CONNECTIONS} requests in flight, so the mean latency is ${CONNECTIONS} / req/s
(Little's law) and the p99 is above it. A p99 under 25 ms therefore needs more than ${fmt(CONNECTIONS / 0.025, 0)} req/s, and a
p99 under 50 ms more than ${fmt(CONNECTIONS / 0.05, 0)} req/s; the baseline, which only serializes the same page, reached
${fmt(baseRps, 0)} req/s with a p99 of ${fmt(results[0]?.p99 ?? Number.NaN, 1)} ms here. On this machine the latency targets are bound by
throughput (CPU per response × ${cpus.length} cores), not by a slow query. The application is one Node.js process: during the
default page it used ${fmt((((results[1]?.cpu?.server ?? Number.NaN) * (results[1]?.rps ?? Number.NaN)) / 1000) * 100, 0)} % of a core,
most of a single event loop, and that loop is what saturates first.

${ceilings}

Every response in the warm-ups and measurements was HTTP 200 (no other status, no socket error, no timeout);
the run fails without writing this page otherwise.

${scaleOut}

## Machine

- CPU: ${cpuModels} × ${cpus.length} logical cores
- Memory: ${fmt(os.totalmem() / 2 ** 30, 1)} GiB
- OS: ${os.type()} ${os.release()} (${os.platform()}/${os.arch()})
- Node.js: ${process.version}
- PostgreSQL: ${postgresVersion}

## Data

A fresh database \`donata_bench_<random>\` (dropped at the end) migrated with the project's migrations, one
organization, and \`seedOrganization\` with ${SEED.campaigns} campaigns, ${SEED.supporters.toLocaleString("en-US")} supporters and
${SEED.checkouts.toLocaleString("en-US")} checkouts (random seed ${SEED.randomSeed}): ${seeded.donations.toLocaleString("en-US")} donations,
${seeded.payments.toLocaleString("en-US")} payments, ${seeded.payment_methods.toLocaleString("en-US")} payment methods.
The seed (including its \`vacuum analyze\`) took **${fmt(seedSeconds)} s**.

The application is called with an access token issued for an installed application holding every permission
(\`createApplication\` / \`installApplication\` / \`createInstallationToken\`), sent as \`Authorization: Bearer …\`
on every request, so each request also runs the token lookup.

## Method

- **Application**: \`buildApp\` from src/app.ts with \`loadConfig({ LOG_LEVEL: "silent", RATE_LIMIT_*: "999999999/1s", CHECKOUTS_PER_IP, CARD_DECLINES_PER_IP, CARD_DECLINES_PER_CARD raised }, …)\` (rate limits
  far above the load, which comes from one token and one address; each request still counts against its limit, leased as
  by default, so the counter is written about once a second) and a PostgreSQL pool of
  ${app.poolSize} connections (the default \`DATABASE_POOL_SIZE\`), listening on an ephemeral port of 127.0.0.1 in a
  **child process** (bench/run.ts started with \`BENCH_ROLE=app\`).
- **Baseline**: bench/baseline-server.ts, another child process: a bare \`Fastify({ logger: false })\` with one route,
  \`GET /baseline\`, that does \`reply.send(body)\` where \`body\` is the object parsed from the application's default
  page (\`GET /api/v1/checkouts/\`, 100 items and the count), fetched once before the measurements. There is no
  response schema, so Fastify serializes the object with \`JSON.stringify\` on every request (${Buffer.byteLength(baselineBody.text)} bytes,
  ${sameBytes ? "byte-identical to" : "**not** byte-identical to"} the application's response). No database, no
  authentication (the header is sent but ignored), no query-string schema. It is the ceiling for "Fastify sends this payload" here.
- **Load**: autocannon ${CONNECTIONS} connections, no pipelining, loopback only (127.0.0.1), run in the parent process.
  Per scenario: ${warmup} s warm-up (discarded, but checked for non-200s), then ${duration} s measured. req/s is
  HTTP 200 responses / wall time of the measured run; p50 and p99 are exact percentiles of every response's latency
  (autocannon's per-response time in ms, not its integer-millisecond histogram).
- **Scenarios**: the baseline; the default page (\`GET /api/v1/checkouts/\`: 100 items, order \`-create_date\`,
  exact count from the trigger-maintained \`collection_counts\`); the same with \`q=${q}\` (the most common last
  name in the seed, lower-cased: an ILIKE substring search over supporter names and email, campaign title and donation
  code, with an exact filtered count); \`offset=${DEEP_OFFSET}\`; and single reads \`GET /api/v1/checkouts/{id}\`
  cycling over ${singleIds.length} ids sampled from the seed.
- **More scenarios** (issues 3 and 4): a GraphQL query for a page of 100 checkouts with campaign,
  supporter, donation and payment (\`POST /admin/graphql/\`); the token endpoint exchanging authorization
  codes with PKCE (${PREPARED_CODES} codes prepared ahead, as the authorize endpoint stores them, each used
  once); and refresh-token rotation, each connection following its own chain (every response's new refresh
  token is the next request's). These have no target; their ratio to the baseline is shown for reference.
- **Checkout completion, sandbox and Stripe**: a donor completing a one-off gift of 25 on the public API
  (\`POST …/checkouts/{id}/complete\`, each of ${PREPARED_CHECKOUTS} / ${PREPARED_STRIPE_CHECKOUTS} open checkouts
  prepared ahead used once): once with the sandbox card (its ledger is a table in the same PostgreSQL, so its
  charge is an extra insert and read there), once for an organization with Stripe keys, through the real Stripe
  adapter (the official \`stripe\` client, PaymentIntent created and confirmed with a confirmation token minted
  ahead at the stand-in, as Stripe.js does in the browser) against the local Stripe stand-in
  (test/helpers/stripe-stand-in.ts) in a child process of its own. The Stripe figure is Donata's side of a
  real charge: Stripe itself answers a confirmed PaymentIntent in roughly 0.3–1 s over the internet, which a
  donor waits for on top and which the stand-in does not imitate. The two are measured one after the other;
  on this machine the second of two similar scenarios tends to come out faster, so compare them with care.
- **Two cores**: the machine has ${cpus.length} logical cores shared by autocannon, the application and PostgreSQL.
  Running the application in a child process gives it its own event loop, so the load generator's JSON handling
  and timers do not run on the server's thread and inflate its latency; the operating system still schedules three
  busy processes (plus PostgreSQL backends) on ${cpus.length} cores, so absolute figures are lower than on a
  server, and the ratio to the baseline (which also shares the cores with autocannon) is the more portable
  figure. Nothing is pinned with taskset: PostgreSQL needs to run on either core.
`;
    const docPath = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url));
    mkdirSync(fileURLToPath(new URL("../docs/", import.meta.url)), { recursive: true });
    writeFileSync(docPath, doc);
    log(`\nwrote ${docPath}`);
    log(`seed: ${fmt(seedSeconds)} s`);
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

if (process.env.BENCH_ROLE === "stripe") {
  runStripeChild().catch((error) => {
    console.error("bench Stripe stand-in child:", error);
    process.exit(1);
  });
} else if (process.env.BENCH_ROLE === "sender") {
  runSenderChild().catch((error) => {
    console.error("bench webhook sender child:", error);
    process.exit(1);
  });
} else if (process.env.BENCH_ROLE === "receiver") {
  runReceiverChild().catch((error) => {
    console.error("bench webhook receiver child:", error);
    process.exit(1);
  });
} else if (process.env.BENCH_ROLE === "app") {
  runAppChild().catch((error) => {
    console.error("bench app child:", error);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(`\nBENCH FAILED: ${error instanceof Error ? error.message : String(error)}`);
      if (error instanceof Error && error.stack) console.error(error.stack);
      process.exit(1);
    },
  );
}
