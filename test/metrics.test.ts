import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { ConfigError, loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { enqueueEmail } from "../src/email/outbox.repo.js";
import { queueRenewal } from "../src/jobs/jobs.repo.js";
import { openLimitStore } from "../src/limits/rate-limiter.js";
import { spawnCli } from "./helpers/cli.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import {
  fakeCampaign,
  fakeCheckout,
  fakeDonation,
  fakePayment,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { readResponse, TEST_ENCRYPTION_KEY } from "./helpers/server.js";

/**
 * /metrics of the real server, scraped over HTTP and parsed. On PostgreSQL the file has a database
 * of its own: the gauges count every organization, so other files' rows must not move them.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

/** The Prometheus text format 0.0.4: `# TYPE name kind` lines and `name{label="value",…} number` samples. */
function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = sample[2] ?? "";
    const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let end = 0;
    for (let match = pair.exec(body); match; match = pair.exec(body)) {
      labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_all, c: string) => (c === "n" ? "\n" : c));
      end = pair.lastIndex;
    }
    if (end !== body.length) throw new Error(`bad labels: ${line}`);
    samples.push({ name: sample[1] as string, labels, value: Number(sample[3]) });
  }
  return { types, samples };
}

const matches = (sample: Sample, name: string, labels: Record<string, string>) =>
  sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value);

/** The one sample with this name and these labels (among others); undefined when absent. */
function sampleOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = exposition.samples.filter((sample) => matches(sample, name, labels));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

interface Server {
  url: string;
  app: FastifyInstance;
  database: Database;
  close(): Promise<void>;
}

let privateDatabase: { url: string; drop(): Promise<void> } | undefined;

/** The real application on an ephemeral loopback port, over this file's database, configured by `env`. */
async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const database = await openDatabase({ databaseUrl: privateDatabase?.url, dataDir: "memory://", poolSize: 4 });
  if (!privateDatabase) await database.migrate();
  const config = loadConfig({
    LOG_LEVEL: "silent",
    MAX_EVENT_LOOP_DELAY: "0",
    DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    CARD_DECLINE_FLOOR_MS: "0",
    ...env,
  });
  const limits = openLimitStore({ db: database.db, namespace: `t${randomBytes(6).toString("hex")}:` });
  const app = await buildApp({ config, database, limits });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    app,
    database,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

async function get(server: Server, pathname: string, headers: Record<string, string> = {}) {
  return readResponse(await fetch(`${server.url}${pathname}`, { headers }));
}

async function scrape(server: Server, headers: Record<string, string> = {}): Promise<Exposition> {
  const response = await fetch(`${server.url}/metrics`, { headers });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(text);
}

describe("GET /metrics", () => {
  let server: Server;
  let tenant: Tenant;
  // Two requests per minute and token: the third is refused 429 by the api_token limit.
  // One completion attempt per checkout: a retry is refused 429 by the card-testing defences.
  const env = { RATE_LIMIT_TOKEN: "2/1m", CHECKOUT_ATTEMPTS_PER_CHECKOUT: "1" };

  beforeAll(async () => {
    const shared = testDatabaseUrl();
    if (shared) privateDatabase = await createPrivateDatabase(shared, "metrics", { migrate: true });
    server = await startServer(env);
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(async () => {
    await server?.close();
    await privateDatabase?.drop();
  });

  it("counts requests by route pattern, method and status, with their durations and the rate-limit refusals", async () => {
    const auth = { authorization: `Bearer ${tenant.token}` };
    const missing = 900_000_000 + Math.floor(Math.random() * 1000);
    expect((await get(server, "/healthz")).status).toBe(200);
    expect((await get(server, "/api/v1/checkouts/", auth)).status).toBe(200);
    expect((await get(server, `/api/v1/checkouts/${missing}`, auth)).status).toBe(404);
    expect((await get(server, "/api/v1/checkouts/", auth)).status).toBe(429);
    expect((await get(server, "/api/v1/checkouts/", { authorization: "Bearer dnt_at_madeup" })).status).toBe(401);
    expect((await get(server, `/no/such/route/${missing}`)).status).toBe(404);

    const metrics = await scrape(server);
    const requests = (route: string, status: string) =>
      sampleOf(metrics, "donata_http_requests_total", { method: "GET", route, status });
    expect(metrics.types.get("donata_http_requests_total")).toBe("counter");
    expect(requests("/healthz", "200")).toBe(1);
    expect(requests("/api/v1/checkouts/", "200")).toBe(1);
    expect(requests("/api/v1/checkouts/:id", "404")).toBe(1);
    expect(requests("/api/v1/checkouts/", "429")).toBe(1);
    expect(requests("/api/v1/checkouts/", "401")).toBe(1);
    expect(requests("unmatched", "404")).toBe(1);
    // Route patterns only: no series carries a raw URL.
    expect(
      metrics.samples.some((sample) => Object.values(sample.labels).some((v) => v.includes(String(missing)))),
    ).toBe(false);

    expect(metrics.types.get("donata_http_request_duration_seconds")).toBe("histogram");
    const series = { method: "GET", route: "/api/v1/checkouts/", status: "200" };
    const buckets = metrics.samples.filter((sample) =>
      matches(sample, "donata_http_request_duration_seconds_bucket", series),
    );
    expect(buckets.map((bucket) => bucket.labels.le)).toEqual([
      ...["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"],
    ]);
    const counts = buckets.map((bucket) => bucket.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(1);
    expect(sampleOf(metrics, "donata_http_request_duration_seconds_count", series)).toBe(1);
    expect(sampleOf(metrics, "donata_http_request_duration_seconds_sum", series)).toBeGreaterThan(0);

    expect(metrics.types.get("donata_rate_limit_refusals_total")).toBe("counter");
    expect(sampleOf(metrics, "donata_rate_limit_refusals_total", { limit: "api_token" })).toBe(1);
    expect(sampleOf(metrics, "donata_rate_limit_refusals_total", { limit: "client_ip" })).toBe(0);

    const kind = privateDatabase ? "postgres" : "pglite";
    expect(sampleOf(metrics, "donata_build_info", { database: kind, node: process.versions.node })).toBe(1);
    // The process metrics of prom-client, in this application's own registry.
    expect(sampleOf(metrics, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    if (kind === "postgres") {
      expect(sampleOf(metrics, "donata_database_pool_max")).toBe(4);
      const idle = sampleOf(metrics, "donata_database_pool_connections", { state: "idle" }) ?? -1;
      const inUse = sampleOf(metrics, "donata_database_pool_connections", { state: "in_use" }) ?? -1;
      expect(idle).toBeGreaterThanOrEqual(0);
      expect(inUse).toBeGreaterThanOrEqual(0);
      expect(idle + inUse).toBeLessThanOrEqual(4);
      expect(sampleOf(metrics, "donata_database_pool_waiting")).toBe(0);
    } else {
      // PGlite is one embedded connection: no pool to describe.
      expect(metrics.samples.some((sample) => sample.name.startsWith("donata_database_pool"))).toBe(false);
    }
    // The scrape itself is counted from the next one on.
    const next = await scrape(server);
    expect(sampleOf(next, "donata_http_requests_total", { route: "/metrics", status: "200" })).toBe(1);
  });

  it("shows the work due to the worker, by queue, with the age of the oldest", async () => {
    const db = server.database.db;
    const config = loadConfig({});
    const queue = (metrics: Exposition, name: string) => ({
      due: sampleOf(metrics, "donata_queue_due", { queue: name }),
      age: sampleOf(metrics, "donata_queue_oldest_due_age_seconds", { queue: name }) ?? -1,
    });
    const before = await scrape(server);
    for (const name of ["renewal", "checkout_expiry", "reconcile_payment", "reconcile_refund", "email"]) {
      expect(queue(before, name).due, name).toBe(0);
      expect(queue(before, name).age, name).toBe(0);
    }
    const now = Date.now();
    const campaign = await fakeCampaign(db, tenant.organizationId);
    const supporter = await fakeSupporter(db, tenant.organizationId);
    const donation = await fakeDonation(db, tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
    });
    // A renewal due 2 minutes ago, and one next month (queued, not due).
    await queueRenewal(db, {
      organizationId: tenant.organizationId,
      donationId: donation.id,
      cycle: 2,
      runDate: new Date(now - 120_000),
    });
    const later = await fakeDonation(db, tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
    });
    await queueRenewal(db, {
      organizationId: tenant.organizationId,
      donationId: later.id,
      cycle: 2,
      runDate: new Date(now + 30 * 86_400_000),
    });
    // An OPEN checkout a minute past its time to live, and a fresh one.
    await fakeCheckout(db, tenant.organizationId, {
      state: "OPEN",
      createDate: new Date(now - (config.checkoutTtlSeconds + 60) * 1000),
    });
    await fakeCheckout(db, tenant.organizationId, { state: "OPEN" });
    // A charge left PENDING 5 minutes past the reconciler's timeout, and one in flight.
    const stale = new Date(now - (config.paymentPendingTimeoutSeconds + 300) * 1000);
    await fakePayment(db, tenant.organizationId, {
      donationId: donation.id,
      state: "PENDING",
      idempotencyKey: `key-${unique()}`,
      createDate: stale,
      updateDate: stale,
    });
    await fakePayment(db, tenant.organizationId, {
      donationId: donation.id,
      state: "PENDING",
      idempotencyKey: `key-${unique()}`,
    });
    // An email due now and one whose retry is in an hour.
    const email = { organizationId: tenant.organizationId, kind: "receipt" as const, to: "ada@example.test" };
    await enqueueEmail(db, email);
    const retry = await enqueueEmail(db, email);
    await db.execute(
      sql`update outbox_messages set next_attempt_date = now() + interval '1 hour' where id = ${retry} and organization_id = ${tenant.organizationId}`,
    );

    const after = await scrape(server);
    expect(queue(after, "renewal").due).toBe(1);
    expect(queue(after, "renewal").age).toBeGreaterThanOrEqual(120);
    expect(queue(after, "renewal").age).toBeLessThan(120 + 60);
    expect(queue(after, "checkout_expiry").due).toBe(1);
    expect(queue(after, "checkout_expiry").age).toBeGreaterThanOrEqual(60);
    expect(queue(after, "checkout_expiry").age).toBeLessThan(60 + 60);
    expect(queue(after, "reconcile_payment").due).toBe(1);
    expect(queue(after, "reconcile_payment").age).toBeGreaterThanOrEqual(300);
    expect(queue(after, "reconcile_payment").age).toBeLessThan(300 + 60);
    expect(queue(after, "reconcile_refund").due).toBe(0);
    expect(queue(after, "email").due).toBe(1);
    expect(queue(after, "email").age).toBeGreaterThanOrEqual(0);
    expect(queue(after, "email").age).toBeLessThan(60);

    // The outbox itself: both messages wait, due or not; both were created today.
    expect(sampleOf(after, "donata_email_outbox_messages", { state: "queued" })).toBe(2);
    expect(sampleOf(after, "donata_email_outbox_messages", { state: "sending" })).toBe(0);
    expect(sampleOf(after, "donata_email_outbox_recent_messages", { state: "queued" })).toBe(2);
    expect(sampleOf(after, "donata_email_outbox_recent_messages", { state: "failed" })).toBe(0);
    await db.execute(
      sql`update outbox_messages set state = 'failed' where id = ${retry} and organization_id = ${tenant.organizationId}`,
    );
    const failed = await scrape(server);
    expect(sampleOf(failed, "donata_email_outbox_messages", { state: "queued" })).toBe(1);
    expect(sampleOf(failed, "donata_email_outbox_recent_messages", { state: "failed" })).toBe(1);
  });

  it("counts today's payments and checkout attempts by processor and outcome once a checkout completes", async () => {
    const db = server.database.db;
    const campaign = await fakeCampaign(db, tenant.organizationId, {
      slug: `metrics-${unique(6)}`,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 5,
      maxAmount: 1000,
      requiredFields: ["email"],
      archiveDate: null,
    });
    const before = await scrape(server);
    const payments = (metrics: Exposition, state: string) =>
      sampleOf(metrics, "donata_payments_recent", { processor: "sandbox", state }) ?? 0;
    const attempts = (metrics: Exposition, state: string) =>
      sampleOf(metrics, "donata_checkout_attempts_recent", { processor: "sandbox", state }) ?? 0;

    const post = async (pathname: string, body: unknown) =>
      readResponse(
        await fetch(`${server.url}${pathname}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    const base = `/api/v1/public/organizations/${tenant.slug}`;
    const give = async (cardNumber: string) => {
      const started = await post(`${base}/campaigns/${campaign.slug}/checkouts/`, {});
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      const complete = (number: string) =>
        post(`${base}/checkouts/${started.body.id}/complete`, {
          client_secret: started.body.client_secret,
          amount: 25,
          frequency: 0,
          processor: "sandbox",
          card: { number, exp_month: 12, exp_year: 2035, cvc: "123" },
          supporter: { email: `ada-${unique(6)}@example.test` },
          consents: { privacy: true },
        });
      return { ...(await complete(cardNumber)), retry: complete };
    };
    expect((await give("4242424242424242")).status).toBe(200);
    const declined = await give("4000000000000002");
    expect(declined.status).toBe(402);
    const retried = await declined.retry("4242424242424242");
    expect(retried.status).toBe(429);
    expect(retried.body.code).toBe("too_many_attempts");

    const after = await scrape(server);
    expect(after.types.get("donata_payments_recent")).toBe("gauge");
    expect(payments(after, "PAID") - payments(before, "PAID")).toBe(1);
    expect(payments(after, "FAILED") - payments(before, "FAILED")).toBe(0);
    expect(attempts(after, "SUCCEEDED") - attempts(before, "SUCCEEDED")).toBe(1);
    expect(attempts(after, "DECLINED") - attempts(before, "DECLINED")).toBe(1);
    // The refusal is counted by its own name, not by the address limit the response also reports.
    expect(sampleOf(after, "donata_rate_limit_refusals_total", { limit: "too_many_attempts" })).toBe(1);
    expect(sampleOf(after, "donata_rate_limit_refusals_total", { limit: "client_ip" })).toBe(0);
  });

  it("leaves out a collector that fails, and still answers 200 with the others", async () => {
    const db = server.database.db;
    await db.execute(sql`alter table outbox_messages rename to outbox_messages_away`);
    let metrics: Exposition;
    try {
      metrics = await scrape(server);
    } finally {
      await db.execute(sql`alter table outbox_messages_away rename to outbox_messages`);
    }
    expect(sampleOf(metrics, "donata_metrics_collector_up", { collector: "email_outbox" })).toBe(0);
    expect(sampleOf(metrics, "donata_metrics_collector_up", { collector: "payments" })).toBe(1);
    // The queues collector reads the outbox too: it is left out as well, never shown stale.
    expect(sampleOf(metrics, "donata_metrics_collector_up", { collector: "queues" })).toBe(0);
    expect(metrics.samples.some((sample) => sample.name === "donata_email_outbox_messages")).toBe(false);
    expect(metrics.samples.some((sample) => sample.name === "donata_queue_due")).toBe(false);
    expect(sampleOf(metrics, "donata_http_requests_total", { route: "/metrics", status: "200" })).toBeGreaterThan(0);
    const back = await scrape(server);
    expect(sampleOf(back, "donata_metrics_collector_up", { collector: "email_outbox" })).toBe(1);
    expect(sampleOf(back, "donata_email_outbox_messages", { state: "queued" })).toBeGreaterThanOrEqual(0);
  });

  it("is listed in the OpenAPI document beside the health checks", async () => {
    const document = await get(server, "/api/v1/openapi.json");
    const operation = document.body.paths["/metrics"].get;
    expect(operation.tags).toEqual(["health"]);
    expect(Object.keys(operation.responses["200"].content)).toEqual(["text/plain"]);
    expect(operation.responses["403"].content["application/problem+json"].schema).toEqual({
      $ref: "#/components/schemas/Problem",
    });
  });

  describe("access", () => {
    const token = randomBytes(24).toString("hex");
    let guarded: Server;
    beforeAll(async () => {
      // A local reverse proxy relays public requests: its X-Forwarded-For names the real client.
      guarded = await startServer({ TRUST_PROXY: "127.0.0.1", METRICS_TOKEN: token });
    });
    afterAll(() => guarded?.close());

    const refused = (detail: string) => ({
      type: "urn:donata:problem:metrics_forbidden",
      title: "Forbidden",
      status: 403,
      detail,
      code: "metrics_forbidden",
    });

    it("refuses a public client relayed by a trusted local proxy, unless it brings the token", async () => {
      const relayed = { "x-forwarded-for": "203.0.113.9" };
      const response = await get(guarded, "/metrics", relayed);
      expect(response.status).toBe(403);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.body).toEqual(
        refused("The metrics are served to loopback clients, or with Authorization: Bearer <METRICS_TOKEN>"),
      );
      const withToken = await scrape(guarded, { ...relayed, authorization: `Bearer ${token}` });
      expect(sampleOf(withToken, "donata_http_requests_total", { route: "/metrics", status: "403" })).toBe(1);
      const wrong = await get(guarded, "/metrics", { ...relayed, authorization: `Bearer ${token.slice(0, -1)}x` });
      expect(wrong.status).toBe(403);
      expect(wrong.body).toEqual(refused("The metrics token is not valid"));
      // A wrong token is refused from loopback too: a misconfigured scraper hears of it.
      expect((await get(guarded, "/metrics", { authorization: "Bearer nope" })).status).toBe(403);
      // A loopback client (the proxy's own address, nothing forwarded) needs no token.
      expect((await get(guarded, "/metrics")).status).toBe(200);
      expect((await get(guarded, "/metrics", { "x-forwarded-for": "127.0.0.1" })).status).toBe(200);
    });

    it("ignores X-Forwarded-For without TRUST_PROXY: the socket's loopback address is the client", async () => {
      expect((await get(server, "/metrics", { "x-forwarded-for": "203.0.113.9" })).status).toBe(200);
    });

    it("refuses a METRICS_TOKEN shorter than 32 characters, and an unknown LOG_FORMAT", () => {
      expect(() => loadConfig({ METRICS_TOKEN: "short-token" })).toThrow(ConfigError);
      expect(() => loadConfig({ METRICS_TOKEN: "short-token" })).toThrow(/METRICS_TOKEN must be at least 32/);
      expect(() => loadConfig({ METRICS_TOKEN: `${"x".repeat(32)} y` })).toThrow(ConfigError);
      expect(loadConfig({ METRICS_TOKEN: token }).metricsToken).toBe(token);
      expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT must be pretty or json/);
    });
  });
});

describe("donata serve: logs and the start-up box", () => {
  let scratch = "";
  const children = new Set<ChildProcess>();
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), "donata-metrics-"));
  });
  afterEach(() => {
    for (const child of children) child.kill("SIGKILL");
  });
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** Runs serve on a fresh embedded database until `done(stdout)` holds, then stops it; returns stdout. */
  async function serveUntil(
    args: string[],
    env: Record<string, string>,
    done: (stdout: string) => boolean,
    during?: (url: string) => Promise<void>,
  ): Promise<string> {
    const child = spawnCli(
      ["serve", ...args],
      { DATA_DIR: path.join(scratch, unique()), PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0", ...env },
      children,
    );
    let stdout = "";
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not finish starting\n${stdout}${stderr}`)), 100_000);
      let started = false;
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        if (started || !done(stdout)) return;
        started = true;
        clearTimeout(timer);
        const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1] as string;
        (during ? during(url) : Promise.resolve()).then(resolve, reject);
      });
      void exited.then(() => reject(new Error(`serve exited early\n${stdout}${stderr}`)));
    });
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(0);
    return stdout;
  }

  const RULE = /^─{20,}$/;

  it("prints the box after the start-up logs, with the refresh token, the CLI for a new pair and the LOG_LEVEL hint", async () => {
    const stdout = await serveUntil(
      ["--demo"],
      { LOG_LEVEL: "info" },
      (out) => out.split("\n").filter((line) => RULE.test(line)).length >= 2,
    );
    const lines = stdout.split("\n");
    const first = lines.findIndex((line) => RULE.test(line));
    const last = lines.findLastIndex((line) => RULE.test(line));
    const logs = lines.flatMap((line, index) => (line.startsWith("{") ? [index] : []));
    // Not a TTY: JSON lines, the listening one among them, all before the box.
    expect(lines.some((line) => line.startsWith("{") && JSON.parse(line).msg?.startsWith("Server listening at"))).toBe(
      true,
    );
    expect(logs.length).toBeGreaterThan(0);
    // Start-up logs come before the box and none inside it; what the running server logs later
    // (the worker's first pass, the shutdown after SIGTERM) comes after it.
    expect(Math.min(...logs)).toBeLessThan(first);
    expect(logs.filter((index) => index > first && index < last)).toEqual([]);
    expect(
      lines
        .slice(last + 1)
        .some((line) => line.startsWith("{") && JSON.parse(line).msg?.startsWith("Server listening at")),
    ).toBe(false);
    const box = lines.slice(first, last + 1).join("\n");
    expect(box).toMatch(/Donata \(pglite\) listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(box).toMatch(/^ {2}access_token: {2}dnt_at_\S+ {2}\(valid 3600 s\)$/m);
    expect(box).toMatch(/^ {2}refresh_token: dnt_rt_\S+ /m);
    expect(box).toMatch(/npx donata token create --client-id dnt_app_[0-9a-f]+ --org demo/);
    expect(box).toContain("LOG_LEVEL=warn npm start");
  }, 150_000);

  it("logs one short human line per request with LOG_FORMAT=pretty (a terminal's default)", async () => {
    const stdout = await serveUntil(
      ["--no-worker"],
      { LOG_LEVEL: "info", LOG_FORMAT: "pretty" },
      (out) => out.split("\n").filter((line) => RULE.test(line)).length >= 2,
      async (url) => {
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
        expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
      },
    );
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+$/m);
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 \d+\.\d ms$/m);
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/no-such-page 404 \d+\.\d ms$/m);
    expect(stdout).not.toContain("incoming request");
    expect(stdout).not.toMatch(/^\{/m);
  }, 150_000);
});
