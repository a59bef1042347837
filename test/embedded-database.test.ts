import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { channelPath, socketDirectory } from "../src/cli/local-channel.js";
import { openDatabase } from "../src/db/client.js";
import { type CliResult, runCli as runDonata, spawnCli } from "./helpers/cli.js";
import { testDatabaseUrl } from "./helpers/database.js";
import { unique } from "./helpers/factories.js";

/**
 * The embedded database shared safely (docs/embedded-database.md): `donata serve` holds its PGlite
 * data directory alone, CLI commands started beside it run inside it over the local channel, a second
 * server is refused, a lock left by a dead process is taken over, and a command that expects data
 * never creates an empty database. Real processes throughout. On PostgreSQL only the commands beside
 * a running server apply (they reach the database themselves); the rest is about PGlite directories.
 */

const TEST_TIMEOUT = 120_000;
const onPostgres = Boolean(testDatabaseUrl());
const pgliteOnly = onPostgres ? "(PGlite data directories only: skipped on PostgreSQL)" : "";

// biome-ignore lint/suspicious/noExplicitAny: JSON output is asserted field by field
type Json = Record<string, any>;

let scratch = "";
let dataDir = "";
const children = new Set<ChildProcess>();
/** The server outlives each test (unlike `children`, killed after each); killed at the end if still there. */
const servers = new Set<ChildProcess>();

const target = (): Record<string, string> => {
  const url = testDatabaseUrl();
  return url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
};
const runCli = (args: string[], env: Record<string, string> = target()) => runDonata(args, env, { children });

const describeRun = (result: CliResult) =>
  `donata ${result.args.join(" ")} → ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

function json(result: CliResult): Json {
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout.slice(0, -1), describeRun(result)).not.toContain("\n");
  return JSON.parse(result.stdout) as Json;
}

/** Exit 1, one line on stderr naming the command, no stack trace, nothing on stdout. */
function expectFailure(result: CliResult, message: RegExp) {
  expect(result.code, describeRun(result)).toBe(1);
  expect(result.stdout, describeRun(result)).toBe("");
  expect(result.stderr.endsWith("\n"), describeRun(result)).toBe(true);
  expect(result.stderr.slice(0, -1), describeRun(result)).not.toContain("\n");
  expect(result.stderr, describeRun(result)).toMatch(new RegExp(`^donata ${result.args[0]}`));
  expect(result.stderr, describeRun(result)).toMatch(message);
}

interface Server {
  url: string;
  pid: number;
  /** Everything the server printed so far (its request log included). */
  output(): string;
  stop(): Promise<CliResult>;
}

function startServe(env: Record<string, string>): Promise<Server> {
  const args = ["serve", "--no-worker"];
  // LOG_LEVEL=info: the server logs each command it runs for the CLI, asserted below.
  const child = spawnCli(
    args,
    { ...env, PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0", LOG_LEVEL: "info", CHECKOUTS_PER_IP: "1000" },
    servers,
  );
  let stdout = "";
  let stderr = "";
  const exited = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ args, code, signal, stdout, stderr }));
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`donata serve did not start\n${stdout}${stderr}`)), 90_000);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        pid: child.pid as number,
        output: () => stdout + stderr,
        async stop() {
          child.kill("SIGTERM");
          return exited;
        },
      });
    });
    void exited.then((result) => reject(new Error(`donata serve exited before listening\n${describeRun(result)}`)));
  });
}

/** The pid of a process that has just exited: a lock naming it is stale. */
async function deadPid(): Promise<number> {
  const child = spawnCli(["--help"], {}, children);
  await new Promise((resolve) => child.on("close", resolve));
  return child.pid as number;
}

const lockFile = () => path.join(dataDir, "donata.pid");
const readLock = () => JSON.parse(readFileSync(lockFile(), "utf8")) as Json;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "donata-embedded-"));
  dataDir = path.join(scratch, "data");
});

afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
});

afterAll(async () => {
  for (const child of servers) child.kill("SIGKILL");
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe.skipIf(onPostgres)(`a data directory without a database ${pgliteOnly}`, () => {
  it(
    "is refused by commands that expect data, which create nothing; migrate creates it",
    async () => {
      const missing = path.join(scratch, "missing");
      const empty = path.join(scratch, "empty");
      await mkdir(empty);
      const [org, billing, token] = await Promise.all([
        runCli(["org", "create", "--slug", "x", "--name", "X", "--json"], { DATA_DIR: missing }),
        runCli(["billing", "run", "--json"], { DATA_DIR: missing }),
        runCli(["token", "create", "--client-id", "dnt_app_x", "--org", "x"], { DATA_DIR: empty }),
      ]);
      expectFailure(org, new RegExp(`no database in ${missing} \\(no such directory\\): set DATA_DIR`));
      expectFailure(billing, /no database in .*\(no such directory\)/);
      expectFailure(token, new RegExp(`no database in ${empty} \\(an empty directory\\)`));
      expect(existsSync(missing)).toBe(false);
      expect(readdirSync(empty)).toEqual([]);

      const migrated = await runCli(["migrate"], { DATA_DIR: empty });
      expect(migrated.code, describeRun(migrated)).toBe(0);
      expect(existsSync(path.join(empty, "PG_VERSION"))).toBe(true);
      // Released on exit.
      expect(existsSync(path.join(empty, "donata.pid"))).toBe(false);
      expect(
        json(await runCli(["org", "create", "--slug", "x", "--name", "X", "--json"], { DATA_DIR: empty })).slug,
      ).toBe("x");
    },
    TEST_TIMEOUT,
  );

  it(
    "held by a process other than a server: a command refuses, naming it, instead of opening it too",
    async () => {
      const directory = path.join(scratch, "held");
      expect((await runCli(["migrate"], { DATA_DIR: directory })).code).toBe(0);
      const database = await openDatabase({ databaseUrl: undefined, dataDir: directory, holder: "donata backup" });
      try {
        const refused = await runCli(["org", "create", "--slug", "y", "--name", "Y"], { DATA_DIR: directory });
        expectFailure(
          refused,
          new RegExp(`the data directory ${directory} is in use by donata backup \\(pid ${process.pid}, since `),
        );
      } finally {
        await database.close();
      }
      expect(existsSync(path.join(directory, "donata.pid"))).toBe(false);
      expect(
        json(await runCli(["org", "create", "--slug", "y", "--name", "Y", "--json"], { DATA_DIR: directory })).slug,
      ).toBe("y");
    },
    TEST_TIMEOUT,
  );
});

describe("CLI commands beside a running server", () => {
  let server: Server;
  let stalePid = 0;
  /** Made through the server by the CLI, used by the psql checks. */
  const made = { org: "", token: "", campaign: "" };

  beforeAll(async () => {
    if (!onPostgres) {
      // A server killed without its shutdown left its lock and socket behind.
      expect((await runCli(["migrate"])).code).toBe(0);
      stalePid = await deadPid();
      const stale = { pid: stalePid, command: "donata serve", startedAt: "2020-01-01T00:00:00.000Z" };
      await writeFile(lockFile(), JSON.stringify({ ...stale, channel: channelPath(dataDir) }));
      await mkdir(socketDirectory(dataDir), { recursive: true, mode: 0o700 });
      await writeFile(channelPath(dataDir), "");
    }
    server = await startServe(target());
  }, TEST_TIMEOUT);

  afterAll(async () => {
    if (!server) return;
    const exit = await server.stop();
    expect(exit.code, describeRun(exit)).toBe(0);
    expect(exit.stdout).toContain("Stopped cleanly");
    if (!onPostgres) {
      expect(existsSync(lockFile())).toBe(false);
      expect(existsSync(channelPath(dataDir))).toBe(false);
      expect(existsSync(path.join(socketDirectory(dataDir), ".s.PGSQL.5432"))).toBe(false);
    }
  }, TEST_TIMEOUT);

  it.skipIf(onPostgres)(
    `took over the stale lock, and publishes its channel in it ${pgliteOnly}`,
    () => {
      const lock = readLock();
      expect(lock).toEqual({
        pid: server.pid,
        command: "donata serve",
        startedAt: expect.any(String),
        channel: channelPath(dataDir),
      });
      expect(lock.pid).not.toBe(stalePid);
      // Only the server's user may talk to it; no socket in the data directory (PGlite's dumpDataDir fails on one).
      expect(statSync(lock.channel).mode & 0o777).toBe(0o600);
      expect(statSync(socketDirectory(dataDir)).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(socketDirectory(dataDir), ".s.PGSQL.5432")).mode & 0o777).toBe(0o600);
      expect(readdirSync(dataDir).filter((name) => statSync(path.join(dataDir, name)).isSocket())).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "org create, app create/install, seed and token create succeed, and the token reads the seeded data from the server",
    async () => {
      const org = `emb-${unique()}`;
      const [created, app] = await Promise.all([
        runCli(["org", "create", "--slug", org, "--name", "Beside the server", "--json"]),
        runCli([
          ...["app", "create", "--name", "Beside", "--url", "https://beside.example.org/"],
          ...[
            "--callback",
            "https://beside.example.org/cb",
            "--permission",
            "campaigns:read",
            "--permission",
            "checkouts:read",
            "--json",
          ],
        ]),
      ]);
      expect(json(created)).toMatchObject({ slug: org, name: "Beside the server" });
      const clientId: string = json(app).client_id;
      expect(json(await runCli(["app", "install", "--client-id", clientId, "--org", org, "--json"])).installed).toBe(
        true,
      );
      const seeded = json(
        await runCli(["seed", "--org", org, "--campaigns", "2", "--supporters", "2", "--checkouts", "2", "--json"]),
      );
      expect(seeded).toMatchObject({ organization: org, campaigns: 2 });
      const tokens = json(await runCli(["token", "create", "--client-id", clientId, "--org", org, "--json"]));

      const response = await fetch(`${server.url}/api/v1/campaigns/`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(200);
      const campaigns = (await response.json()) as Json;
      expect(campaigns.count).toBe(2);
      Object.assign(made, { org, token: tokens.access_token, campaign: campaigns.items[0].slug });

      if (!onPostgres) {
        // They ran inside the server, which logged each by name only.
        const log = server.output();
        for (const name of ["org create", "app create", "app install", "seed", "token create"]) {
          expect(log).toContain(`"command":"${name}","exit":0`);
        }
        expect(log).not.toContain(org);
        expect(log).not.toContain(tokens.access_token);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "errors keep their exit codes and messages, and leave the server serving",
    async () => {
      const [usage, missing, duplicate] = await Promise.all([
        runCli(["token", "create", "--client-id", "dnt_app_x"]),
        runCli(["token", "create", "--client-id", "dnt_app_000000000000000000000000", "--org", `no-${unique()}`]),
        runCli(["org", "create", "--slug", "dup", "--name", "Dup"]).then(() =>
          runCli(["org", "create", "--slug", "dup", "--name", "Dup"]),
        ),
      ]);
      expect(usage.code, describeRun(usage)).toBe(2);
      expect(usage.stderr).toBe(
        "donata token create: --org is required\nUsage: donata token create --client-id ID --org S [--json]\n",
      );
      expectFailure(missing, /No application with client_id "dnt_app_0+"/);
      expectFailure(duplicate, /An organization with slug "dup" already exists/);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    },
    TEST_TIMEOUT,
  );

  it.skipIf(onPostgres)(
    `backup runs inside the running server; its restore holds what was there then, not what came after ${pgliteOnly}`,
    async () => {
      const before = `bak-${unique()}`;
      const after = `aft-${unique()}`;
      expect((await runCli(["org", "create", "--slug", before, "--name", "Before the backup"])).code).toBe(0);
      const file = path.join(scratch, `beside-${unique()}.donata-backup`);
      const backup = json(await runCli(["backup", "--out", file, "--json"]));
      expect(backup).toMatchObject({ file, database: "pglite" });
      expect(server.output()).toContain('"command":"backup","exit":0');
      expect((await runCli(["org", "create", "--slug", after, "--name", "After the backup"])).code).toBe(0);

      const restoredDir = path.join(scratch, `restored-${unique()}`);
      const restored = await runCli(["restore", file, "--json"], { DATA_DIR: restoredDir });
      expect(json(restored)).toMatchObject({ restored: true });
      // The server kept serving its own directory throughout.
      expect(readLock().pid).toBe(server.pid);
      const database = await openDatabase({ databaseUrl: undefined, dataDir: restoredDir });
      try {
        const slugs = await database.pglite?.query<{ slug: string }>(
          "select slug from organizations where slug = any($1) order by slug",
          [[before, after]],
        );
        expect(slugs?.rows.map((row) => row.slug)).toEqual([before]);
      } finally {
        await database.close();
      }
    },
    TEST_TIMEOUT,
  );

  it.skipIf(onPostgres)(
    `a second server on the same data directory refuses to start, naming the first ${pgliteOnly}`,
    async () => {
      const second = await runCli(["serve", "--no-worker"], { ...target(), PORT: "0", HOST: "127.0.0.1" });
      expectFailure(
        second,
        new RegExp(`a server already runs on the data directory ${dataDir} \\(donata serve, pid ${server.pid}, since `),
      );
      expect(readLock().pid).toBe(server.pid);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    },
    TEST_TIMEOUT,
  );

  describe.skipIf(onPostgres)(`psql on the socket in the data directory ${pgliteOnly}`, () => {
    const psql = async () => {
      const client = new pg.Client({ host: socketDirectory(dataDir), user: "postgres", database: "postgres" });
      client.on("error", () => {});
      await client.connect();
      return client;
    };
    const slugCount = async (client: pg.Client, slug: string) =>
      Number((await client.query("select count(*) as n from organizations where slug = $1", [slug])).rows[0].n);

    it(
      "sees the server's data; the server's writes never land in a client's transaction, nor its own in the server's",
      async () => {
        expect(made.org).not.toBe("");
        const client = await psql();
        try {
          expect(await slugCount(client, made.org)).toBe(1);
          const mine = `psql-${unique()}`;
          const countCheckouts = async () =>
            Number(
              (
                await client.query(
                  "select count(*) as n from checkouts where organization_id = (select id from organizations where slug = $1)",
                  [made.org],
                )
              ).rows[0].n,
            );
          const before = await countCheckouts();
          await client.query("BEGIN");
          await client.query(
            "insert into organizations (slug, name, currency, time_zone) values ($1, 'P', 'EUR', 'UTC')",
            [mine],
          );
          // A write by the server while the client's transaction is open waits for it to end.
          let answered = false;
          const checkout = fetch(
            `${server.url}/api/v1/public/organizations/${made.org}/campaigns/${made.campaign}/checkouts/`,
            {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ amount: 10, frequency: 0 }),
            },
          ).then((response) => {
            answered = true;
            return response;
          });
          await new Promise((resolve) => setTimeout(resolve, 1000));
          expect(answered).toBe(false);
          expect(await countCheckouts()).toBe(before);
          await client.query("ROLLBACK");
          expect((await checkout).status).toBe(201);
          expect(await slugCount(client, mine)).toBe(0);
          expect(await countCheckouts()).toBe(before + 1);
        } finally {
          await client.end();
        }
      },
      TEST_TIMEOUT,
    );

    it(
      "under load: every HTTP response is 2xx, every checkout the server made persists, no rolled-back row does",
      async () => {
        const [writer, reader] = await Promise.all([psql(), psql()]);
        const before = Number(
          (
            await reader.query(
              "select count(*) as n from checkouts where organization_id = (select id from organizations where slug = $1)",
              [made.org],
            )
          ).rows[0].n,
        );
        let loading = true;
        let transactions = 0;
        const rolledBack = `rolled-${unique()}`;
        const transactionLoop = (async () => {
          for (let index = 0; loading; index++) {
            await writer.query("BEGIN");
            await writer.query(
              "insert into organizations (slug, name, currency, time_zone) values ($1, 'R', 'EUR', 'UTC')",
              [`${rolledBack}-${index}`],
            );
            await writer.query("select count(*) from checkouts");
            await writer.query("ROLLBACK");
            transactions++;
          }
        })();
        const selectLoop = (async () => {
          while (loading) await reader.query("select count(*) from supporters");
        })();
        const statuses: number[] = [];
        const createCheckout = () =>
          fetch(`${server.url}/api/v1/public/organizations/${made.org}/campaigns/${made.campaign}/checkouts/`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ amount: 10, frequency: 0 }),
          });
        const listCheckouts = () =>
          fetch(`${server.url}/api/v1/checkouts/?limit=5`, { headers: { authorization: `Bearer ${made.token}` } });
        // Four at a time, a write and a read each.
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            for (let round = 0; round < 10; round++) {
              for (const response of await Promise.all([createCheckout(), listCheckouts()])) {
                statuses.push(response.status);
                await response.arrayBuffer();
              }
            }
          }),
        );
        loading = false;
        await Promise.all([transactionLoop, selectLoop]);
        try {
          expect(statuses.filter((status) => status !== 200 && status !== 201)).toEqual([]);
          expect(statuses.filter((status) => status === 201).length).toBe(40);
          expect(transactions).toBeGreaterThan(0);
          const after = Number(
            (
              await reader.query(
                "select count(*) as n from checkouts where organization_id = (select id from organizations where slug = $1)",
                [made.org],
              )
            ).rows[0].n,
          );
          expect(after - before).toBe(40);
          const left = await reader.query("select count(*) as n from organizations where slug like $1", [
            `${rolledBack}-%`,
          ]);
          expect(Number(left.rows[0].n)).toBe(0);
        } finally {
          await Promise.all([writer.end(), reader.end()]);
        }
      },
      TEST_TIMEOUT,
    );

    it(
      "a client idle in a transaction is cut after 5 s and its work rolled back; the server goes on",
      async () => {
        const client = await psql();
        const ended = new Promise((resolve) => client.once("end", resolve));
        const slug = `idle-${unique()}`;
        await client.query("BEGIN");
        await client.query(
          "insert into organizations (slug, name, currency, time_zone) values ($1, 'I', 'EUR', 'UTC')",
          [slug],
        );
        const started = Date.now();
        await ended;
        expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
        const other = await psql();
        try {
          expect(await slugCount(other, slug)).toBe(0);
        } finally {
          await other.end();
        }
      },
      TEST_TIMEOUT,
    );
  });
});
