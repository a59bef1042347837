import type { ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { and, eq, inArray, isNotNull, lte } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { jobs, outboxMessages, payments, sandboxCharges } from "../src/db/schema.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser, type Page } from "./helpers/browser.js";
import { runCliInProcess, spawnCli } from "./helpers/cli.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import { fakeAppToken, fakeCampaign, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { TEST_ENCRYPTION_KEY } from "./helpers/server.js";
import { startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

/**
 * Several processes on one PostgreSQL database: `serve --processes N` (HTTP children on one port,
 * the worker in one more), and separate `serve` and `worker` processes, each the real CLI. Every
 * step of a flow that keeps state between requests goes to another process than the step before.
 */

const PASSWORD = "correct horse battery";
const CALLBACK = "https://app.example.test/callback";
const insecure = { [oauth.allowInsecureRequests]: true };
/** Load shedding off, as in every test server: a busy machine must not answer these requests 503. */
const BASE_ENV = { DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, MAX_EVENT_LOOP_DELAY: "0", HOST: "127.0.0.1" };

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

/** A `donata …` child whose output (stdout and stderr together) the test reads as it comes. */
function start(args: string[], env: Record<string, string>) {
  const child = spawnCli(args, { ...BASE_ENV, ...env }, children);
  let output = "";
  const append = (chunk: string) => {
    output += chunk;
  };
  child.stdout?.setEncoding("utf8").on("data", append);
  child.stderr?.setEncoding("utf8").on("data", append);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    /** Resolves with the match once the output has it; fails when the process exits first. */
    async waitFor(pattern: RegExp): Promise<RegExpExecArray> {
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        const ended = await Promise.race([
          exited.then((code) => ({ code })),
          new Promise<undefined>((resolve) => setTimeout(resolve, 100)),
        ]);
        if (ended) {
          throw new Error(`donata ${args.join(" ")} exited (${ended.code}) before printing ${pattern}\n${output}`);
        }
      }
    },
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      expect(code, output).toBe(0);
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A GET on a connection of its own (no keep-alive), so the cluster's primary hands out each one. */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      })
      .on("error", reject);
  });
}

const pathOf = (location: string) => {
  const url = new URL(location, "http://placeholder");
  return `${url.pathname}${url.search}`;
};

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("refusals", () => {
  it("--processes takes a whole number from 1 to 64: anything else is a usage error, exit 2", async () => {
    for (const value of ["0", "-1", "1.5", "two", "65", ""]) {
      const result = await runCliInProcess(["serve", `--processes=${value}`], {
        DATABASE_URL: "postgres://x@127.0.0.1/x",
      });
      expect(result.code, `--processes=${value}`).toBe(2);
      expect(result.stderr).toContain(`donata serve: --processes must be a whole number from 1 to 64, got "${value}"`);
    }
  });

  it("on the embedded database, several processes and a separate worker are refused before DATA_DIR is opened", async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), "donata-processes-"));
    try {
      const dataDir = path.join(scratch, "data");
      const serve = await runCliInProcess(["serve", "--processes", "2"], { DATA_DIR: dataDir });
      expect(serve.code).toBe(2);
      expect(serve.stderr).toContain(
        "donata serve: --processes 2 needs PostgreSQL (DATABASE_URL=postgres://…): the embedded database in DATA_DIR is opened by one process only, so `donata serve` alone serves HTTP and runs the worker there",
      );
      const worker = await runCliInProcess(["worker"], { DATA_DIR: dataDir });
      expect(worker.code).toBe(2);
      expect(worker.stderr).toContain("donata worker: a separate worker needs PostgreSQL (DATABASE_URL=postgres://…)");
      expect(await readdir(scratch)).toEqual([]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!testDatabaseUrl())("donata serve --processes 2", () => {
  let target: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    target = await createPrivateDatabase(testDatabaseUrl() as string, "cluster", { migrate: true });
  });
  afterAll(() => target?.drop());

  it("answers on one port from two HTTP processes, runs the worker in a third, restarts one that is killed, and stops all on SIGTERM", async () => {
    // info: every request is logged with the pid of the process that answered it.
    const serve = start(["serve", "--processes", "2"], {
      DATABASE_URL: target.url,
      PORT: "0",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
    });
    const [, url] = await serve.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const [, first, second, worker] = (
      await serve.waitFor(
        /Processes: 2 HTTP on this port \(pids (\d+), (\d+)\) and the worker \(pid (\d+)\), each started again if it exits/,
      )
    ).map(Number);
    expect(new Set([first, second, worker, serve.child.pid]).size).toBe(4);
    expect(serve.output()).toMatch(/Worker running every \d+ s \(postgres\)/);

    /** The pids that answered `count` requests, each on a new connection, told apart by a query parameter. */
    const answeredBy = async (count: number) => {
      const probe = unique(8);
      for (let index = 0; index < count; index++) {
        expect(await getOnNewConnection(`${url}/healthz?probe=${probe}-${index}`)).toBe(200);
      }
      // The processes write their log lines asynchronously: wait for every one.
      const lines = () =>
        serve
          .output()
          .split("\n")
          .filter((line) => line.includes(`probe=${probe}-`) && line.includes('"incoming request"'));
      await expect.poll(() => lines().length, { timeout: 30_000 }).toBe(count);
      return new Set(lines().map((line) => (JSON.parse(line) as { pid: number }).pid));
    };
    expect(await answeredBy(6)).toEqual(new Set([first, second]));

    process.kill(first as number, "SIGKILL");
    await serve.waitFor(
      new RegExp(`HTTP process 1 \\(pid ${first}\\) was killed by SIGKILL; starting it again in 1 s`),
    );
    const [, restarted] = (await serve.waitFor(/HTTP process 1 started again \(pid (\d+)\)/)).map(Number);
    expect(await answeredBy(6)).toEqual(new Set([restarted, second]));

    serve.child.kill("SIGTERM");
    expect(await serve.exited, serve.output()).toBe(0);
    expect(serve.output()).toContain(
      "SIGTERM received: every process finishes its in-flight requests and work, then stops",
    );
    expect(serve.output()).toContain("Worker stopped cleanly");
    expect(serve.output()).toContain("Stopped cleanly");
    for (const pid of [restarted, second, worker]) expect(isRunning(pid as number), `pid ${pid}`).toBe(false);
  }, 240_000);

  it("stops and exits 1 when an HTTP process cannot start (its port is taken), naming it", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const serve = start(["serve", "--processes", "2", "--no-worker"], {
        DATABASE_URL: target.url,
        PORT: String(port),
      });
      expect(await serve.exited, serve.output()).toBe(1);
      expect(serve.output()).toContain("EADDRINUSE");
      expect(serve.output()).toMatch(
        /donata serve: HTTP process \d \(pid \d+\) exited with code 1 before it was ready; see its output above/,
      );
      expect(serve.output()).not.toContain("listening on");
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 180_000);
});

describe.skipIf(!testDatabaseUrl())("two servers and a worker on one database", () => {
  let target: { url: string; drop(): Promise<void> };
  let database: Database;
  let smtp: TestSmtpServer;
  let servers: ReturnType<typeof start>[] = [];
  let worker: ReturnType<typeof start>;
  /** Server A's and server B's address; A's is the public one (BASE_URL, AUTH_URL), as a load balancer's would be. */
  let A = "";
  let B = "";
  let tenant: Tenant;
  let campaignSlug = "";

  beforeAll(async () => {
    target = await createPrivateDatabase(testDatabaseUrl() as string, "twoservers", { migrate: true });
    database = await openDatabase({ databaseUrl: target.url, dataDir: "", poolSize: 2 });
    smtp = await startSmtpServer();
    const [portA, portB] = [await freePort(), await freePort()];
    A = `http://127.0.0.1:${portA}`;
    B = `http://127.0.0.1:${portB}`;
    const env = {
      DATABASE_URL: target.url,
      BASE_URL: A,
      AUTH_URL: A,
      SMTP_URL: smtp.url,
      // Low enough to reach in a test; counted per access token.
      RATE_LIMIT_TOKEN: "6/1h",
      WORKER_INTERVAL: "1",
      MAIL_INTERVAL: "1",
    };
    servers = [start(["serve", "--no-worker"], { ...env, PORT: String(portA) })];
    await servers[0]?.waitFor(/listening on http/);
    servers.push(start(["serve", "--no-worker"], { ...env, PORT: String(portB) }));
    worker = start(["worker"], env);
    await Promise.all([servers[1]?.waitFor(/listening on http/), worker.waitFor(/Worker running/)]);
    tenant = await fakeTenant(database.db);
    const campaign = await fakeCampaign(database.db, tenant.organizationId, {
      slug: `give-${unique(6)}`,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 1,
      maxAmount: 1000,
      requiredFields: ["first_name", "email"],
      archiveDate: null,
    });
    campaignSlug = campaign.slug as string;
  }, 240_000);
  afterAll(async () => {
    await Promise.all([...servers, worker].filter(Boolean).map((child) => child.stop()));
    await database?.close();
    await smtp?.close();
    await target?.drop();
  }, 120_000);

  /** One browser (one cookie jar) whose every request goes to the server the test names. */
  const jar = new Map<string, string>();
  const browserAt = (server: string) => Object.assign(new Browser(server), { cookies: jar });

  it("the OAuth flow: each step on the other server than the step before", async () => {
    const email = `owner-${unique(6)}@example.test`;
    await createUser(database.db, { email, password: PASSWORD, organization: tenant.slug, role: "owner" });
    const application = await createApplication(database.db, {
      name: "Two Servers App",
      applicationUrl: "https://app.example.test/",
      callbackUrls: [CALLBACK],
    });
    const issuer = new URL(A);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
    );
    /** The authorization server's metadata with its token endpoint on one server. */
    const tokenEndpointAt = (server: string) => ({ ...as, token_endpoint: `${server}/oauth/token/` });
    const client: oauth.Client = { client_id: application.client_id };
    const clientAuth = oauth.ClientSecretPost(application.client_secret);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const query = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
    });

    const login = await browserAt(A).get(`${pathOf(as.authorization_endpoint as string)}?${query}`);
    expect(login.status).toBe(200);
    const signedIn = await browserAt(B).submit(login, { email, password: PASSWORD });
    expect(signedIn.status, signedIn.html).toBe(303);
    const page: Page = await browserAt(A).get(pathOf(signedIn.location as string));
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain("Two Servers App");
    const callback = await browserAt(B).submit(page, { decision: "allow" });
    expect(callback.status, callback.html).toBe(303);
    const params = oauth.validateAuthResponse(as, client, new URL(callback.location as string), state);

    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        tokenEndpointAt(A),
        client,
        clientAuth,
        params,
        CALLBACK,
        codeVerifier,
        insecure,
      ),
    );
    const api = (server: string, token: string) =>
      fetch(`${server}/api/v1/campaigns/`, { headers: { authorization: `Bearer ${token}` } });
    expect((await api(B, tokens.access_token)).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(
        tokenEndpointAt(B),
        client,
        clientAuth,
        tokens.refresh_token as string,
        insecure,
      ),
    );
    expect((await api(A, refreshed.access_token)).status).toBe(200);
    // Reusing the first refresh token on A revokes the family that B issued.
    const reuse = await oauth.refreshTokenGrantRequest(
      tokenEndpointAt(A),
      client,
      clientAuth,
      tokens.refresh_token as string,
      insecure,
    );
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).error).toBe("invalid_grant");
    expect((await api(B, refreshed.access_token)).status).toBe(401);
    // The code was redeemed on A: B knows it is spent.
    const codeAgain = await oauth.authorizationCodeGrantRequest(
      tokenEndpointAt(B),
      client,
      clientAuth,
      params,
      CALLBACK,
      codeVerifier,
      insecure,
    );
    expect(codeAgain.status).toBe(400);
    expect(await codeAgain.json()).toEqual({
      error: "invalid_grant",
      error_description: "The authorization code was already used; its tokens are revoked",
    });
  });

  it("a checkout started on A is completed on B; its receipt is mailed by the worker", async () => {
    const post = async (server: string, route: string, body: unknown) => {
      const response = await fetch(`${server}/api/v1/public/organizations/${tenant.slug}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    };
    const started = await post(A, `/campaigns/${campaignSlug}/checkouts/`, {});
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const email = `donor-${unique(6)}@example.test`;
    const completed = await post(B, `/checkouts/${started.body.id}/complete`, {
      client_secret: started.body.client_secret,
      amount: 25,
      frequency: 0,
      processor: "sandbox",
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
      supporter: { first_name: "Ada", last_name: "Lovelace", email },
      consents: { privacy: true },
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body).toMatchObject({ result: "succeeded", payment: { state: "PAID" } });
    const checkout = await fetch(`${A}/api/v1/checkouts/${started.body.id}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(await checkout.json()).toMatchObject({ id: started.body.id, state: "CLOSED" });
    await expect.poll(() => smtp.to(email).length, { timeout: 60_000 }).toBe(1);
  });

  it("a donor portal sign-in link asked for on A signs in on B", async () => {
    const supporter = await fakeSupporter(database.db, tenant.organizationId);
    const email = supporter.email as string;
    const asked = await browserAt(A).request(`/donor/${tenant.slug}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email }).toString(),
    });
    expect(asked.status).toBe(200);
    await expect.poll(() => smtp.to(email).length, { timeout: 60_000 }).toBe(1);
    const link = /(http:\/\/\S+\/enter\?token=\S+)/.exec(smtp.to(email)[0]?.text ?? "")?.[1] as string;
    expect(link.startsWith(`${A}/donor/${tenant.slug}/enter?token=`)).toBe(true);
    const entered = await browserAt(B).get(pathOf(link));
    expect(entered.status).toBe(303);
    expect(entered.location).toBe(`/donor/${tenant.slug}/`);
    const home = await browserAt(A).get(`/donor/${tenant.slug}/`);
    expect(home.status).toBe(200);
    expect(home.html).toContain(`Signed in as <strong>${email.toLowerCase()}</strong>`);
    // Used once on B: A does not take it again for another browser.
    expect((await new Browser(A).get(pathOf(link))).status).toBe(410);
  });

  it("rate limits count across both servers: API calls with one token, wrong passwords for one account", async () => {
    const token = await fakeAppToken(database.db, tenant, ["campaigns:read"]);
    const statuses: number[] = [];
    for (let index = 0; index < 8; index++) {
      const server = index % 2 === 0 ? A : B;
      statuses.push(
        (await fetch(`${server}/api/v1/campaigns/`, { headers: { authorization: `Bearer ${token}` } })).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);

    const email = `guessed-${unique(6)}@example.test`;
    await createUser(database.db, { email, password: PASSWORD, organization: tenant.slug });
    const attempts: number[] = [];
    for (let index = 0; index < 7; index++) {
      const server = index % 2 === 0 ? B : A;
      const response = await fetch(`${server}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "not the password!" }),
      });
      attempts.push(response.status);
    }
    // RATE_LIMIT_SIGN_IN_ACCOUNT's default: 5 failures in 15 minutes, wherever they were tried.
    expect(attempts).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});

describe.skipIf(!testDatabaseUrl())("two donata worker processes on one database", () => {
  const COUNT = 40;
  let target: { url: string; drop(): Promise<void> };
  let database: Database;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    target = await createPrivateDatabase(testDatabaseUrl() as string, "workers", { migrate: true });
    database = await openDatabase({ databaseUrl: target.url, dataDir: "", poolSize: 2 });
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await database?.close();
    await smtp?.close();
    await target?.drop();
  });

  it("run every due renewal and deliver every message exactly once", async () => {
    // The gifts come through the public checkout of the real application, in this process.
    const config = loadConfig({ LOG_LEVEL: "silent", DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    const app = await buildApp({ config, database });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    const tenant = await fakeTenant(database.db);
    const campaign = await fakeCampaign(database.db, tenant.organizationId, {
      slug: `monthly-${unique(6)}`,
      hasSubscription: true,
      allowCustomSubscriptionAmount: true,
      minSubscriptionAmount: 1,
      maxSubscriptionAmount: 1000,
      requiredFields: ["first_name", "email"],
      archiveDate: null,
    });
    const donations: number[] = [];
    try {
      for (let index = 0; index < COUNT; index++) {
        const post = (route: string, body: unknown) =>
          fetch(`${url}/api/v1/public/organizations/${tenant.slug}${route}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          }).then((response) => response.json());
        const started = await post(`/campaigns/${campaign.slug}/checkouts/`, {});
        const completed = await post(`/checkouts/${started.id}/complete`, {
          client_secret: started.client_secret,
          amount: 5 + index,
          frequency: 1,
          processor: "sandbox",
          card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
          supporter: { first_name: "Ada", last_name: "Lovelace", email: `ada-${unique(6)}@example.test` },
          consents: { privacy: true },
        });
        expect(completed.result, JSON.stringify(completed)).toBe("succeeded");
        donations.push(completed.donation.id);
      }
    } finally {
      await app.close();
    }

    const env = { DATABASE_URL: target.url, SMTP_URL: smtp.url, WORKER_INTERVAL: "1", MAIL_INTERVAL: "1" };
    const workers = [start(["worker"], env), start(["worker"], env)];
    await Promise.all(workers.map((worker) => worker.waitFor(/Worker running/)));
    // Both are polling: every first renewal falls due at once.
    await database.db
      .update(jobs)
      .set({ runDate: new Date(Date.now() - 60_000) })
      .where(and(eq(jobs.kind, "renewal"), eq(jobs.state, "queued")));

    // Done when no renewal is due any more, none is still being charged, and no message waits.
    const unfinished = async () => {
      const due = await database.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, "renewal"), eq(jobs.state, "queued"), lte(jobs.runDate, new Date())));
      const charging = await database.db
        .select()
        .from(payments)
        .where(and(isNotNull(payments.billingCycle), eq(payments.state, "PENDING")));
      const waiting = await database.db
        .select()
        .from(outboxMessages)
        .where(inArray(outboxMessages.state, ["queued", "sending"]));
      return due.length + charging.length + waiting.length;
    };
    await expect.poll(unfinished, { timeout: 120_000, interval: 500 }).toBe(0);
    await Promise.all(workers.map((worker) => worker.stop()));

    for (const id of donations) {
      const rows = await database.db.select().from(payments).where(eq(payments.donationId, id));
      const cycles = rows.map((row) => `${row.billingCycle ?? "first"} ${row.state}`).sort();
      expect(cycles, `donation ${id}`).toEqual(["1 PAID", "first PAID"]);
    }
    const charges = await database.db.select().from(sandboxCharges);
    expect(charges).toHaveLength(2 * COUNT);
    expect(new Set(charges.map((charge) => charge.idempotencyKey)).size).toBe(2 * COUNT);
    const renewalJobs = await database.db.select().from(jobs).where(eq(jobs.kind, "renewal"));
    expect(renewalJobs.filter((job) => job.state === "done")).toHaveLength(COUNT);
    expect(renewalJobs.filter((job) => job.state === "done").every((job) => job.attempts === 1)).toBe(true);
    // The next cycle of each, queued once, not yet due.
    expect(renewalJobs.filter((job) => job.state === "queued")).toHaveLength(COUNT);
    expect(renewalJobs).toHaveLength(2 * COUNT);

    const sent = await database.db.select().from(outboxMessages).where(eq(outboxMessages.state, "sent"));
    const messageIds = smtp.messages.map((message) => message.messageId);
    expect(messageIds).toHaveLength(sent.length);
    expect(new Set(messageIds).size).toBe(messageIds.length);
    expect(messageIds.length).toBeGreaterThanOrEqual(2 * COUNT);
  }, 300_000);
});
