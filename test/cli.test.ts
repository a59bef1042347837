import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../src/db/client.js";
import { memberships, organizations, recoveryCodes, sessions, userFactors, users } from "../src/db/schema.js";
import { verifyPassword } from "../src/identity/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { type CliResult, runCli as runDonata, spawnCli as spawnDonata } from "./helpers/cli.js";
import { testDatabaseUrl } from "./helpers/database.js";
import { unique } from "./helpers/factories.js";

/**
 * The `donata` CLI as a user runs it: `node bin/donata.js …` in a child process, against the
 * run's PostgreSQL database or, without one, a PGlite directory of this file's own.
 */

// A guard against a hung child, not a measure: CI runs two suites side by side on 2 cores, where each
// spawned command starts slower.
const TEST_TIMEOUT = 300_000;

// biome-ignore lint/suspicious/noExplicitAny: JSON output is asserted field by field
type Json = Record<string, any>;

let databaseUrl: string | undefined;
let dataDir = "";
let scratch = "";
const children = new Set<ChildProcess>();

/** The database of this file: DATABASE_URL on PostgreSQL, DATA_DIR on PGlite (never both). */
const target = (): Record<string, string> => (databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir });

const spawnCli = (args: string[], env: Record<string, string>) => spawnDonata(args, env, children);
const runCli = (args: string[], env: Record<string, string>, timeoutMs?: number) =>
  runDonata(args, env, { children, timeoutMs });

const cli = (...args: string[]) => runCli(args, target());

/**
 * Independent CLI calls: concurrent on PostgreSQL; one after the other on PGlite, whose
 * directory only one process may open at a time.
 */
function together<T extends unknown[]>(...tasks: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if (databaseUrl) return Promise.all(tasks.map((task) => task())) as Promise<T>;
  return (async () => {
    const results: unknown[] = [];
    for (const task of tasks) results.push(await task());
    return results as T;
  })();
}

const describeRun = (result: CliResult) =>
  `donata ${result.args.join(" ")} → ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

/** A successful --json run: exit 0 and exactly one JSON object, alone on one line of stdout. */
function json(result: CliResult): Json {
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout.endsWith("\n"), describeRun(result)).toBe(true);
  expect(result.stdout.slice(0, -1), describeRun(result)).not.toContain("\n");
  const value: unknown = JSON.parse(result.stdout);
  expect(typeof value === "object" && value !== null && !Array.isArray(value), describeRun(result)).toBe(true);
  return value as Json;
}

/** Bad data or an unusable database: one line on stderr, no stack trace, nothing on stdout, exit 1. */
function expectFailure(result: CliResult, message: RegExp) {
  expect(result.code, describeRun(result)).toBe(1);
  expect(result.stdout, describeRun(result)).toBe("");
  expect(result.stderr.endsWith("\n"), describeRun(result)).toBe(true);
  expect(result.stderr.slice(0, -1), describeRun(result)).not.toContain("\n");
  expect(result.stderr, describeRun(result)).not.toMatch(/^\s+at /m);
  expect(result.stderr).toMatch(new RegExp(`^donata ${result.args[0]}`));
  expect(result.stderr).toMatch(message);
}

/** Bad arguments: the problem and a usage message on stderr, nothing on stdout, exit 2. */
function expectUsageError(result: CliResult, message: RegExp) {
  expect(result.code, describeRun(result)).toBe(2);
  expect(result.stdout, describeRun(result)).toBe("");
  expect(result.stderr, describeRun(result)).toContain("Usage:");
  expect(result.stderr, describeRun(result)).not.toMatch(/^\s+at /m);
  expect(result.stderr, describeRun(result)).toMatch(message);
}

interface Serve {
  url: string;
  get(path: string, token: string): Promise<{ status: number; body: Json }>;
  /** Sends the signal and resolves with the exit once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** `donata serve` on an ephemeral port; resolves once it prints the address it listens on. */
function startServe(env: Record<string, string>): Promise<Serve> {
  // No worker: it acts on every organization of the database, which other test files share.
  const args = ["serve", "--no-worker"];
  // Load shedding off, as in every test server: a busy machine must not turn these checks into 503s.
  const child = spawnCli(args, { ...env, PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0" });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ args, code, signal, stdout, stderr }));
  });
  let listening = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`donata serve did not start within 90 s\n${stdout}${stderr}`));
    }, 90_000);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (listening) return;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (!match?.[1]) return;
      listening = true;
      clearTimeout(timer);
      const url = match[1];
      resolve({
        url,
        async get(apiPath, token) {
          const response = await fetch(`${url}${apiPath}`, { headers: { authorization: `Bearer ${token}` } });
          return { status: response.status, body: (await response.json()) as Json };
        },
        async stop(signal = "SIGTERM") {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((result) => {
      clearTimeout(timer);
      reject(new Error(`donata serve exited before listening\n${describeRun(result)}`));
    });
  });
}

/** Serves the file's database for `work`, then stops and checks the shutdown was clean. */
async function withServe<T>(work: (server: Serve) => Promise<T>): Promise<T> {
  const server = await startServe(target());
  let value: T;
  try {
    value = await work(server);
  } catch (error) {
    await server.stop("SIGKILL");
    throw error;
  }
  const exit = await server.stop("SIGTERM");
  expect(exit.code, describeRun(exit)).toBe(0);
  expect(exit.stdout).toContain("Stopped cleanly");
  return value;
}

async function readDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl, dataDir, poolSize: 1 });
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

const orgCreate = (slug: string, ...extra: string[]) =>
  cli("org", "create", "--slug", slug, "--name", `Org ${slug}`, ...extra, "--json");

describe("donata CLI", () => {
  beforeAll(async () => {
    databaseUrl = testDatabaseUrl();
    scratch = await mkdtemp(path.join(os.tmpdir(), "donata-cli-"));
    dataDir = path.join(scratch, "data");
  });

  afterEach(() => {
    // A failed test must not leave a server behind.
    for (const child of children) child.kill("SIGKILL");
  });

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it(
    "migrate --json brings the database up to date, and again as a no-op",
    async () => {
      const first = json(await cli("migrate", "--json"));
      expect(first).toEqual({ migrated: true, database: databaseUrl ? "postgres" : "pglite" });
      const again = await cli("migrate");
      expect(again.code, describeRun(again)).toBe(0);
      expect(again.stdout).toBe(`Database (${databaseUrl ? "postgres" : "pglite"}) is up to date\n`);
      expect(again.stderr).toBe("");
    },
    TEST_TIMEOUT,
  );

  it(
    "answers bad arguments with a usage message on stderr and exit code 2, before opening a database",
    async () => {
      const cases: [string[], RegExp][] = [
        [[], /^Usage: donata <command> \[options\][\s\S]*org create/],
        [["frobnicate", "--json"], /unknown command "frobnicate/],
        [["org", "create", "--slug", "x", "--name", "X", "--colour", "red"], /Unknown option '--colour'/],
        [["org", "create", "--name", "X", "--json"], /--slug is required\nUsage: donata org create --slug S/],
        [["app", "create", "--name", "X", "--url", "https://app.example.org/"], /--callback is required/],
        [["user", "create", "--email", "a@example.org", "--org", "x", "--role", "root"], /--role must be one of/],
        [["seed", "--org", "x", "--checkouts", "12abc"], /--checkouts must be a non-negative integer/],
        [["seed", "--org", "x", "--checkouts", "1.5", "--json"], /--checkouts must be a non-negative integer/],
        [["token", "create", "--client-id", "dnt_app_x"], /--org is required\nUsage: donata token create/],
        [["migrate", "now"], /Unexpected argument 'now'/],
      ];
      // Each run gets a data directory of its own that must still not exist afterwards.
      const directory = (index: number) => path.join(scratch, `usage-${index}`);
      const results = await Promise.all(cases.map(([args], index) => runCli(args, { DATA_DIR: directory(index) })));
      results.forEach((result, index) => {
        expectUsageError(result, (cases[index] as [string[], RegExp])[1]);
        expect(existsSync(directory(index)), describeRun(result)).toBe(false);
      });
      const help = await runCli(["--help"], { DATA_DIR: directory(99) });
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: donata <command>/);
      expect(help.stderr).toBe("");
    },
    TEST_TIMEOUT,
  );

  it(
    "reports an unreachable or malformed DATABASE_URL in one line without a stack trace, exit 1, also for serve",
    async () => {
      const unreachable = "postgres://postgres@127.0.0.1:1/nope";
      const refused = /cannot connect to PostgreSQL at 127\.0\.0\.1:1\/nope: .*ECONNREFUSED/;
      const cases: [string, string[], RegExp][] = [
        [unreachable, ["migrate", "--json"], refused],
        [unreachable, ["org", "create", "--slug", "x", "--name", "X", "--json"], refused],
        [unreachable, ["serve"], refused],
        ["not a url", ["migrate"], /DATABASE_URL is not a valid URL/],
        ["not a url", ["serve", "--demo"], /DATABASE_URL is not a valid URL/],
        ["mysql://x", ["seed", "--org", "x", "--json"], /DATABASE_URL must start with postgres:\/\//],
        ["mysql://x", ["serve"], /DATABASE_URL must start with postgres:\/\//],
      ];
      const results = await Promise.all(
        cases.map(([url, args]) =>
          runCli(args, { DATABASE_URL: url, DATA_DIR: path.join(scratch, "never"), PORT: "0" }, 60_000),
        ),
      );
      results.forEach((result, index) => {
        expectFailure(result, (cases[index] as [string, string[], RegExp])[2]);
      });
      expect(existsSync(path.join(scratch, "never"))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "org create --json prints the organization; domain errors are one line on stderr, exit 1",
    async () => {
      const slug = `cli-org-${unique()}`;
      const before = Date.now();
      const organization = json(await orgCreate(slug, "--currency", "usd", "--timezone", "Europe/Rome"));
      expect(Object.keys(organization).sort()).toEqual(["create_date", "currency", "id", "name", "slug", "time_zone"]);
      expect(organization).toMatchObject({ slug, name: `Org ${slug}`, currency: "USD", time_zone: "Europe/Rome" });
      expect(Number.isInteger(organization.id)).toBe(true);
      expect(new Date(organization.create_date).toISOString()).toBe(organization.create_date);
      expect(Date.parse(organization.create_date)).toBeGreaterThan(before - 60_000);

      const rejected = `cli-org-${unique()}`;
      const [duplicate, currency, timeZone, unknownOrg, unknownSeed, noPassword] = await together(
        () => orgCreate(slug),
        () => orgCreate(rejected, "--currency", "EURO"),
        () => orgCreate(rejected, "--timezone", "Mars/Olympus_Mons"),
        () =>
          cli("user", "create", "--email", `${unique()}@example.org`, "--password", "long-enough-1", "--org", rejected),
        () => cli("seed", "--org", rejected, "--campaigns", "1", "--supporters", "1", "--checkouts", "1", "--json"),
        () => cli("user", "create", "--email", `${unique()}@example.org`, "--org", slug, "--json"),
      );
      expectFailure(duplicate, /An organization with slug "cli-org-\w+" already exists/);
      expectFailure(currency, /Invalid currency: "EURO" is not an ISO 4217 currency code/);
      expectFailure(timeZone, /Invalid time_zone: "Mars\/Olympus_Mons" is not an IANA time zone/);
      expectFailure(unknownOrg, new RegExp(`No organization with slug "${rejected}"`));
      expectFailure(unknownSeed, new RegExp(`No organization with slug "${rejected}"`));
      expectFailure(noPassword, /Invalid password: must be at least 10 characters/);

      // The rejected slug was left unused by every failed command.
      expect(json(await orgCreate(rejected)).slug).toBe(rejected);
    },
    TEST_TIMEOUT,
  );

  it(
    "user create adds an existing user to another organization without requiring or changing the password",
    async () => {
      const [first, second] = [`cli-usr-${unique()}`, `cli-usr-${unique()}`];
      const email = `Pat.${unique()}@Example.org`;
      const password = "correct horse battery";
      const [a, b] = await together(
        () => orgCreate(first),
        () => orgCreate(second),
      );
      json(a);
      json(b);

      const created = json(
        await cli(
          "user",
          "create",
          "--email",
          email,
          "--password",
          password,
          "--org",
          first,
          "--role",
          "owner",
          "--json",
        ),
      );
      // Stored in its one normalised form (normalizeEmail), so every spelling finds the same account.
      expect(created).toEqual({
        id: expect.any(Number),
        email: email.toLowerCase(),
        created: true,
        organization: first,
        role: "owner",
      });

      // Found by email whatever its case; no password needed.
      const added = json(await cli("user", "create", "--email", email.toLowerCase(), "--org", second, "--json"));
      expect(added).toEqual({
        id: created.id,
        email: email.toLowerCase(),
        created: false,
        organization: second,
        role: "member",
      });

      // A password given for an existing user, even one too short for a new user, is ignored.
      const promoted = json(
        await cli(
          "user",
          "create",
          "--email",
          email,
          "--password",
          "short",
          "--org",
          second,
          "--role",
          "admin",
          "--json",
        ),
      );
      expect(promoted).toEqual({
        id: created.id,
        email: email.toLowerCase(),
        created: false,
        organization: second,
        role: "admin",
      });

      const stored = await readDatabase(async (db) => {
        const rows = await db
          .select({ hash: users.passwordHash })
          .from(users)
          .where(sql`lower(${users.email}) = lower(${email})`);
        const roles = await db
          .select({ organization: organizations.slug, role: memberships.role })
          .from(memberships)
          .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
          .where(eq(memberships.userId, created.id))
          .orderBy(organizations.id);
        return { rows, roles };
      });
      expect(stored.rows.length).toBe(1);
      const hash = stored.rows[0]?.hash as string;
      expect(await verifyPassword(hash, password)).toBe(true);
      expect(await verifyPassword(hash, "short")).toBe(false);
      // The two organizations were created concurrently, so their ids say nothing about order.
      const byOrganization = (x: { organization: string }, y: { organization: string }) =>
        x.organization.localeCompare(y.organization);
      expect([...stored.roles].sort(byOrganization)).toEqual(
        [
          { organization: first, role: "owner" },
          { organization: second, role: "admin" },
        ].sort(byOrganization),
      );
    },
    TEST_TIMEOUT,
  );

  it(
    "user reset-second-factor takes away a lost app, passkeys and recovery codes, ends the sessions, and says what comes next",
    async () => {
      const org = `cli-2fa-${unique()}`;
      const email = `${unique()}@example.org`;
      const organization = json(await orgCreate(org));
      const user = json(
        await cli(
          "user",
          "create",
          "--email",
          email,
          "--password",
          "long-enough-1",
          "--org",
          org,
          "--role",
          "owner",
          "--json",
        ),
      );
      // What the account page leaves behind: an app, a passkey, recovery codes, a session; the rule on.
      await readDatabase(async (db) => {
        const confirmedDate = new Date();
        await db.insert(userFactors).values([
          { userId: user.id, kind: "totp", name: "Authenticator app", totpSecretSealed: "sealed", confirmedDate },
          { userId: user.id, kind: "passkey", name: "Laptop", credentialId: unique(), publicKey: "key", confirmedDate },
        ]);
        await db.insert(recoveryCodes).values([{ userId: user.id, codeHash: unique() }]);
        await db.insert(sessions).values({
          userId: user.id,
          tokenHash: unique(),
          csrfToken: unique(),
          expiresDate: new Date(Date.now() + 3_600_000),
        });
        await db.update(organizations).set({ requireSecondFactor: true }).where(eq(organizations.id, organization.id));
      });

      const reset = json(await cli("user", "reset-second-factor", "--email", email.toUpperCase(), "--json"));
      expect(reset).toEqual({
        user: { id: user.id, email },
        removed: { totp: true, passkeys: 1 },
        sessions_ended: 1,
        must_set_up: [`Org ${org}`],
      });
      const left = await readDatabase(async (db) => ({
        factors: await db.select().from(userFactors).where(eq(userFactors.userId, user.id)),
        codes: await db.select().from(recoveryCodes).where(eq(recoveryCodes.userId, user.id)),
        sessions: await db.select().from(sessions).where(eq(sessions.userId, user.id)),
        audit: await auditRowsOf(db, organization.id, ["user.second_factor_removed"]),
      }));
      expect(left).toMatchObject({ factors: [], codes: [], sessions: [] });
      expect(left.audit.map((row) => [row.actor, row.data])).toEqual([
        [
          { type: "system", label: "cli" },
          { user_id: user.id, email, kind: "totp" },
        ],
        [
          { type: "system", label: "cli" },
          { user_id: user.id, email, kind: "passkey", id: expect.any(Number), name: "Laptop" },
        ],
      ]);

      // Again, in words: nothing left to remove, and the organization's rule still asks for a new one.
      const again = await cli("user", "reset-second-factor", "--email", email);
      expect(again.code, describeRun(again)).toBe(0);
      expect(again.stdout).toBe(
        `${email} had no second factor; 0 sessions ended\n` +
          `At the next sign-in they set up a new one first (Org ${org} requires it of its owners and admins).\n`,
      );
      expectFailure(
        await cli("user", "reset-second-factor", "--email", `nobody-${unique()}@example.org`),
        /No user has the email nobody-/,
      );
      expectUsageError(await cli("user", "reset-second-factor"), /--email/);
    },
    TEST_TIMEOUT,
  );

  it(
    "app create/install, token create and app uninstall: the token works on the API until the uninstall",
    async () => {
      const org = `cli-tok-${unique()}`;
      const [orgResult, appResult] = await together(
        () => orgCreate(org),
        () =>
          cli(
            ...["app", "create", "--name", "CLI Test App", "--url", "https://app.example.org/"],
            ...["--callback", "https://app.example.org/cb", "--callback", "https://app.example.org/cb2"],
            ...["--permission", "checkouts:read", "--json"],
          ),
      );
      json(orgResult);
      const app = json(appResult);
      expect(app).toEqual({
        id: expect.any(Number),
        client_id: expect.stringMatching(/^dnt_app_[0-9a-f]{24}$/),
        client_secret: expect.stringMatching(/^dnt_cs_\S{20,}$/),
        name: "CLI Test App",
        application_url: "https://app.example.org/",
        callback_urls: ["https://app.example.org/cb", "https://app.example.org/cb2"],
        permissions: ["checkouts:read"],
        client_type: "confidential",
      });
      const clientId: string = app.client_id;

      const [notInstalled, unknownApp] = await together(
        () => cli("token", "create", "--client-id", clientId, "--org", org, "--json"),
        () => cli("app", "install", "--client-id", "dnt_app_000000000000000000000000", "--org", org, "--json"),
      );
      expectFailure(notInstalled, new RegExp(`The application is not installed in "${org}"`));
      expectFailure(unknownApp, /No application with client_id "dnt_app_0+"/);

      const installed = json(await cli("app", "install", "--client-id", clientId, "--org", org, "--json"));
      expect(installed).toEqual({ client_id: clientId, organization: org, installed: true });
      const again = json(await cli("app", "install", "--client-id", clientId, "--org", org, "--json"));
      expect(again).toEqual({ client_id: clientId, organization: org, installed: false });

      const tokens = json(await cli("token", "create", "--client-id", clientId, "--org", org, "--json"));
      expect(tokens).toMatchObject({
        access_token: expect.stringMatching(/^dnt_at_/),
        refresh_token: expect.stringMatching(/^dnt_rt_/),
        expires_in: 3600,
        token_type: "Bearer",
      });
      // The client secret is printed by app create only.
      expect(JSON.stringify([installed, again, tokens])).not.toContain(app.client_secret);

      await withServe(async (server) => {
        const checkouts = await server.get("/api/v1/checkouts/", tokens.access_token);
        expect(checkouts.status).toBe(200);
        expect(checkouts.body).toEqual({ items: [], count: 0 });
        // Only the permission asked for was granted.
        expect((await server.get("/api/v1/supporters/", tokens.access_token)).status).toBe(403);
        expect((await server.get("/api/v1/checkouts/", `${tokens.access_token}x`)).status).toBe(401);
      });

      const uninstalled = json(await cli("app", "uninstall", "--client-id", clientId, "--org", org, "--json"));
      expect(uninstalled).toEqual({ client_id: clientId, organization: org, revoked_tokens: 1 });
      const [reissue, reuninstall] = await together(
        () => cli("token", "create", "--client-id", clientId, "--org", org, "--json"),
        () => cli("app", "uninstall", "--client-id", clientId, "--org", org, "--json"),
      );
      expectFailure(reissue, /is not installed/);
      expectFailure(reuninstall, /is not installed/);

      await withServe(async (server) => {
        const revoked = await server.get("/api/v1/checkouts/", tokens.access_token);
        expect(revoked.status).toBe(401);
        expect(revoked.body.code).toBe("invalid_token");
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "app create --public registers a public client: no client secret, PKCE and client_id alone",
    async () => {
      const app = json(
        await cli(
          ...["app", "create", "--name", "CLI Mobile App", "--url", "https://mobile.example.org/"],
          ...["--callback", "https://mobile.example.org/cb", "--public", "--json"],
        ),
      );
      expect(app).toMatchObject({ client_secret: null, client_type: "public", name: "CLI Mobile App" });
      const text = await cli(
        ...["app", "create", "--name", "CLI SPA", "--url", "https://spa.example.org/"],
        ...["--callback", "https://spa.example.org/cb", "--public"],
      );
      expect(text.code, describeRun(text)).toBe(0);
      expect(text.stdout).toContain("public client: no client secret");
      expect(text.stdout).not.toContain("client_secret:");
    },
    TEST_TIMEOUT,
  );

  it(
    "seed --json fills an organization deterministically: same --random-seed, same data",
    async () => {
      const slugs = [`cli-sd-${unique()}`, `cli-sd-${unique()}`, `cli-sd-${unique()}`] as const;
      const randomSeeds = ["7", "7", "8"];
      const [a, b, c, appResult] = await together(
        () => orgCreate(slugs[0]),
        () => orgCreate(slugs[1]),
        () => orgCreate(slugs[2]),
        () =>
          cli(
            ...["app", "create", "--name", "Seed Reader", "--url", "https://seed.example.org/"],
            ...["--callback", "https://seed.example.org/cb", "--json"],
          ),
      );
      for (const result of [a, b, c]) json(result);
      const clientId: string = json(appResult).client_id;
      const each = <T>(task: (slug: string, index: number) => Promise<T>) =>
        together(
          () => task(slugs[0], 0),
          () => task(slugs[1], 1),
          () => task(slugs[2], 2),
        );

      const installs = await each((slug) => cli("app", "install", "--client-id", clientId, "--org", slug, "--json"));
      for (const result of installs) expect(json(result).installed).toBe(true);
      const seeded = (
        await each((slug, index) =>
          cli(
            ...["seed", "--org", slug, "--campaigns", "3", "--supporters", "20", "--checkouts", "50"],
            ...["--random-seed", randomSeeds[index] as string, "--json"],
          ),
        )
      ).map(json);
      expect(seeded[0]).toMatchObject({ organization: slugs[0], campaigns: 3, supporters: 20, checkouts: 50 });
      expect(Object.keys(seeded[0] ?? {}).sort()).toEqual(
        ["campaigns", "checkouts", "donations", "organization", "payment_methods", "payments", "supporters"].sort(),
      );
      expect(seeded[1]).toEqual({ ...seeded[0], organization: slugs[1] });
      expect(seeded[2]).toMatchObject({ organization: slugs[2], campaigns: 3, supporters: 20, checkouts: 50 });
      const tokens = (await each((slug) => cli("token", "create", "--client-id", clientId, "--org", slug, "--json")))
        .map(json)
        .map((pair) => pair.access_token as string);

      // Everything but ids (and what embeds them: codes, slugs, emails) and the organization.
      const snapshots = await withServe((server) =>
        Promise.all(
          tokens.map(async (token) => {
            const list = async (collection: string) => {
              const response = await server.get(`/api/v1/${collection}/?order=id&limit=1000`, token);
              expect(response.status).toBe(200);
              expect(response.body.items.length).toBe(response.body.count);
              return response.body.items as Json[];
            };
            const [campaigns, supporters, checkouts] = await Promise.all([
              list("campaigns"),
              list("supporters"),
              list("checkouts"),
            ]);
            return {
              campaigns: campaigns.map((row) => [row.title, row.type, row.goal, row.create_date]),
              supporters: supporters.map((row) => [row.first_name, row.last_name, row.city, row.create_date]),
              checkouts: checkouts.map((row) => [
                row.create_date,
                row.state,
                row.amount,
                row.frequency,
                row.completed_date,
                row.campaign?.title ?? null,
                row.supporter ? `${row.supporter.first_name} ${row.supporter.last_name}` : null,
                row.donation?.state ?? null,
                row.payment?.state ?? null,
              ]),
            };
          }),
        ),
      );
      const [first, second, third] = snapshots as unknown as [Json, Json, Json];
      expect(first.campaigns.length).toBe(3);
      expect(first.supporters.length).toBe(20);
      expect(first.checkouts.length).toBe(50);
      expect(new Set(first.checkouts.map((row: unknown[]) => row[1])).size).toBe(2);
      expect(second).toEqual(first);
      expect(third.checkouts.length).toBe(50);
      expect(third.supporters).not.toEqual(first.supporters);
      expect(third.checkouts).not.toEqual(first.checkouts);
    },
    // A dozen CLI processes (about 7 s each to start on a 2-core machine) and a server, one after another.
    2 * TEST_TIMEOUT,
  );
});
