import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";

/**
 * `donata serve --demo` as a process manager runs it: SIGTERM or SIGINT lets in-flight
 * requests finish, closes the database and exits 0; the next start finds the same data.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = path.join(ROOT, "bin", "donata.js");
const DEMO_CHECKOUTS = 1500;

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = Record<string, any>;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Server {
  url: string;
  stdout(): string;
  /** How many requests Fastify has logged as received so far. */
  received(): number;
  /** Resolves when the process is gone. */
  exited: Promise<Exit>;
  kill(signal: NodeJS.Signals): void;
}

const children = new Set<ChildProcess>();

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    ...["DATABASE_URL", "DATA_DIR", "PORT", "HOST", "BASE_URL", "AUTH_URL", "DATABASE_POOL_SIZE"],
    ...["ACCESS_TOKEN_TTL", "REFRESH_TOKEN_TTL", "DEBUG", "NODE_OPTIONS"],
  ]) {
    delete env[name];
  }
  // info: Fastify then logs "incoming request" for each request that got past its closing check.
  // Load shedding off (as in every test server): on a busy machine the serve process would shed the
  // checks with 503 overloaded, which is not what this test is about.
  return { ...env, LOG_LEVEL: "info", PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0", ...extra };
}

/** `donata serve --demo`, resolved once it prints the address it listens on. */
function startServe(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [BIN, "serve", "--demo"], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  const exited = new Promise<Exit>((resolve) => {
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  let listening = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`donata serve --demo did not start within 100 s\n${stdout}${stderr}`));
    }, 100_000);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (listening) return;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (!match?.[1]) return;
      listening = true;
      clearTimeout(timer);
      resolve({
        url: match[1],
        stdout: () => stdout,
        received: () => stdout.split('"msg":"incoming request"').length - 1,
        exited,
        kill: (signal) => child.kill(signal),
      });
    });
    void exited.then((exit) => {
      clearTimeout(timer);
      reject(
        new Error(`donata serve --demo exited (${exit.code ?? exit.signal}) before listening\n${stdout}${stderr}`),
      );
    });
  });
}

/** A GET on its own connection: `sent` once written, `answered` once the response headers arrive. */
function request(url: string, token: string) {
  let answered = false;
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const response = new Promise<{ status: number; body: Json }>((resolve, reject) => {
    const outgoing = http.get(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (incoming) => {
      answered = true;
      let text = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => {
        text += chunk;
      });
      incoming.on("error", reject);
      incoming.on("end", () => {
        try {
          resolve({ status: incoming.statusCode ?? 0, body: JSON.parse(text) as Json });
        } catch (error) {
          reject(error);
        }
      });
    });
    outgoing.on("error", reject);
    outgoing.on("finish", () => markSent());
  });
  return { sent, response, answered: () => answered };
}

async function countCheckouts(server: Server, token: string): Promise<number> {
  const response = await request(`${server.url}/api/v1/checkouts/?limit=1`, token).response;
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.count;
}

/**
 * The README's showcase campaign has raised something (README: "€0 raised" no more), the same figure on
 * its public page's API and on GraphQL (one definition of raised), and short of its goal; its page
 * has the story, impact lines and cover of docs/screenshots/campaign-story-en.png.
 */
async function expectShowcaseRaised(server: Server, token: string) {
  const page = await fetch(`${server.url}/donate/demo/school-kits`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("<h2>Every child starts school ready to learn</h2>");
  expect(html).toContain("buys a complete school kit");
  const showcase = (await (
    await fetch(`${server.url}/api/v1/public/organizations/demo/campaigns/school-kits`)
  ).json()) as {
    id: number;
    raised: number;
    goal: number;
    cover_image_url: string | null;
    ask_impacts: unknown[];
  };
  expect(showcase.ask_impacts).toHaveLength(3);
  // Its address names the configured BASE_URL (this process listens on another port): fetched by its path.
  expect(showcase.cover_image_url).toMatch(/\/images\/\d+\/img_[\w-]+\/1600\.jpg$/);
  const cover = await fetch(`${server.url}${new URL(showcase.cover_image_url ?? "").pathname}`);
  expect(cover.status).toBe(200);
  expect(cover.headers.get("content-type")).toBe("image/jpeg");
  expect(showcase.raised).toBeGreaterThan(0);
  expect(showcase.raised).toBeLessThan(showcase.goal);
  const graphql = await fetch(`${server.url}/admin/graphql/`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query: `{ campaign(id: "${showcase.id}") { raised { all_time this_year } } }` }),
  });
  const body = (await graphql.json()) as { data?: { campaign: { raised: { all_time: number } } } };
  expect(body.data?.campaign.raised.all_time, JSON.stringify(body)).toBe(showcase.raised);
}

/**
 * Sends `signal` while large list requests are in flight, and checks that every one of them
 * completes with 200 and that the process then exits 0 on its own.
 *
 * A request counts as in flight once the server has read it: one it has not read yet when the
 * signal is handled rightly gets a 503 or a closed connection. On PostgreSQL the server reads
 * several requests at once and logs each right away, so the test waits for those logs. PGlite
 * runs every query synchronously on the server's event loop: the server reads and answers one
 * request at a time and its logs come out only afterwards, so there the test sends a single
 * request and gives the idle server a moment to read it, far less than answering it takes.
 */
async function stopDuringRequests(server: Server, signal: NodeJS.Signals, token: string, postgres: boolean) {
  const before = server.received();
  const send = () =>
    Array.from({ length: postgres ? 6 : 1 }, () => request(`${server.url}/api/v1/checkouts/?limit=1000`, token));
  let requests = send();
  await Promise.all(requests.map((pending) => pending.sent));
  if (postgres) {
    const deadline = Date.now() + 30_000;
    while (server.received() < before + requests.length) {
      expect(Date.now(), "the server did not receive the requests within 30 s").toBeLessThan(deadline);
      await sleep(5);
    }
  } else {
    // On a busy machine this process's 100 ms may outlast the server's answer: a request answered
    // before the signal proves nothing about shutdown, so it is checked and another one is sent.
    for (let round = 0; round < 10; round++) {
      await sleep(100);
      if (requests.some((pending) => !pending.answered())) break;
      for (const answered of requests) expect((await answered.response).status).toBe(200);
      requests = send();
      await Promise.all(requests.map((pending) => pending.sent));
    }
  }
  const pendingAtSignal = requests.filter((pending) => !pending.answered()).length;
  const signalledAt = Date.now();
  server.kill(signal);
  const responses = await Promise.all(requests.map((pending) => pending.response));
  const exit = await server.exited;
  const stopSeconds = (Date.now() - signalledAt) / 1000;

  expect(pendingAtSignal, "requests still unanswered when the signal was sent").toBeGreaterThan(0);
  for (const response of responses) {
    expect(response.status).toBe(200);
    expect(response.body.count).toBe(DEMO_CHECKOUTS);
    expect(response.body.items.length).toBe(1000);
  }
  expect(exit.code, `${exit.stdout}${exit.stderr}`).toBe(0);
  expect(exit.signal).toBeNull();
  // (Request logs may be flushed around these lines.)
  expect(exit.stdout).toMatch(
    new RegExp(
      `^${signal} received: finishing in-flight requests, then closing the database$[\\s\\S]*^Stopped cleanly$`,
      "m",
    ),
  );
  expect(exit.stderr).not.toMatch(/^\s+at /m);
  expect(stopSeconds).toBeLessThan(15);
  // Nothing listens any more.
  await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
}

describe("donata serve: graceful shutdown", () => {
  let env: Record<string, string> = {};
  let cleanup: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const databaseUrl = testDatabaseUrl();
    if (databaseUrl) {
      // --demo only bootstraps an empty database: this test gets a fresh one of its own.
      const created = await createPrivateDatabase(databaseUrl, "shutdown");
      env = { DATABASE_URL: created.url };
      cleanup = created.drop;
    } else {
      const directory = await mkdtemp(path.join(os.tmpdir(), "donata-shutdown-"));
      env = { DATA_DIR: directory };
      cleanup = () => rm(directory, { recursive: true, force: true });
    }
  });

  afterEach(() => {
    for (const child of children) child.kill("SIGKILL");
  });

  afterAll(async () => {
    await cleanup();
  });

  it("finishes in-flight requests on SIGTERM and SIGINT, exits 0, and restarts on the same data", async () => {
    const postgres = env.DATABASE_URL !== undefined;
    const first = await startServe(env);
    expect(first.stdout()).toContain("Demo data created");
    const token = /access_token:\s+(\S+)/.exec(first.stdout())?.[1];
    expect(token).toMatch(/^dnt_at_/);
    expect(await countCheckouts(first, token as string)).toBe(DEMO_CHECKOUTS);
    await expectShowcaseRaised(first, token as string);
    await stopDuringRequests(first, "SIGTERM", token as string, postgres);

    const second = await startServe(env);
    expect(second.stdout()).not.toContain("Demo data created");
    expect(second.stdout()).not.toContain("access_token");
    expect(await countCheckouts(second, token as string)).toBe(DEMO_CHECKOUTS);
    await stopDuringRequests(second, "SIGINT", token as string, postgres);
  }, 120_000);
});
