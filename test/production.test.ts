import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { AxeBuilder } from "@axe-core/playwright";
import { eq, sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { openMigratedDatabase } from "../src/cli/database.js";
import { type Config, ConfigError, loadConfig } from "../src/config.js";
import { type Db, openDatabase } from "../src/db/client.js";
import { memberships, outboxMessages, userSignInLinks, users } from "../src/db/schema.js";
import { enqueueEmail } from "../src/email/outbox.repo.js";
import { NO_MAIL_WARNING } from "../src/email/transport.js";
import { createSignInLink } from "../src/identity/one-time-links.service.js";
import { hashSecret } from "../src/identity/secrets.js";
import { insertUser } from "../src/identity/users.repo.js";
import { verifyPassword } from "../src/identity/users.service.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { DEMO_LOGIN } from "../src/seed/demo.js";
import { Browser, type Page } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { type CliResult, ROOT, runCliInProcess, runCli as runSpawned, spawnCli } from "./helpers/cli.js";
import { createPrivateDatabase, openTestDatabase, testDatabaseUrl } from "./helpers/database.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from "./helpers/server.js";

/**
 * From the demo to production: NODE_ENV=production refusals, `donata setup` and `donata user link`
 * (in process and as processes beside `donata serve`), the one-time link page, cookie attributes,
 * TRUST_PROXY, and what a failed migration leaves behind.
 */

const TIMEOUT = 120_000;
const PASSWORD = "correct horse battery staple";
const children = new Set<ChildProcess>();
let scratch = "";

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "donata-production-"));
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await rm(scratch, { recursive: true, force: true });
});

const describeRun = (result: CliResult) =>
  `donata ${result.args.join(" ")} → ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

/** A database of its own with no organization: a private PostgreSQL database, or a fresh PGlite directory. */
async function freshTarget(label: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const shared = testDatabaseUrl();
  if (shared) {
    const database = await createPrivateDatabase(shared, label);
    return { env: { DATABASE_URL: database.url }, drop: database.drop };
  }
  return { env: { DATA_DIR: path.join(scratch, `${label}-${unique(6)}`) }, drop: async () => {} };
}

const BASE_ENV = { LOG_LEVEL: "silent", DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, MAX_EVENT_LOOP_DELAY: "0" };

/** `donata …` in this process, over the test's settings. */
const donata = (
  args: string[],
  env: Record<string, string>,
  options: Parameters<typeof runCliInProcess>[2] = {},
): Promise<CliResult> => runCliInProcess(args, { ...BASE_ENV, ...env }, options);

/** The real application on an ephemeral port over the target's database, as `donata serve` builds it. */
async function serveInProcess(env: Record<string, string>) {
  const { config, database } = await openMigratedDatabase({ ...BASE_ENV, ...env }, { create: true });
  const app = await buildApp({ config, database });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    db: database.db,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

/** `donata serve --no-worker` as a child process; resolves once it listens. */
async function startServe(env: Record<string, string>) {
  const args = ["serve", "--no-worker"];
  const child = spawnCli(args, { ...env, PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0" }, children);
  let stdout = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ args, code, signal, stdout, stderr }));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`donata serve did not start\n${stdout}${stderr}`)), 90_000);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then((result) => reject(new Error(`donata serve exited\n${describeRun(result)}`)));
  });
  return {
    url,
    output: () => stdout,
    async stop() {
      // An answered request proves start-up is over, its signal handlers included.
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      child.kill("SIGTERM");
      const result = await exited;
      expect(result.code, describeRun(result)).toBe(0);
      return result;
    },
  };
}

const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

/** The attributes of the Set-Cookie line for `name`, lower-cased. */
function cookieAttributes(headers: Headers, name: string): string[] {
  const line = headers.getSetCookie().find((candidate) => candidate.startsWith(`${name}=`));
  expect(line, `Set-Cookie ${name} in ${JSON.stringify(headers.getSetCookie())}`).toBeDefined();
  return (line as string)
    .split(";")
    .slice(1)
    .map((attribute) => attribute.trim().toLowerCase());
}

async function signInWithPassword(url: string, email: string, password: string) {
  const response = await fetch(`${url}/admin/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe("production configuration", () => {
  it("refuses http public URLs in production, naming the variable, unless ALLOW_HTTP=true", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(
      new ConfigError(
        'AUTH_URL must be an https:// URL in production (NODE_ENV=production), got "http://localhost:3000"; set ALLOW_HTTP=true only on a private network or for a test',
      ),
    );
    expect(() => loadConfig({ NODE_ENV: "production", AUTH_URL: "https://give.example.org" })).toThrow(
      /^BASE_URL must be an https:\/\/ URL in production \(NODE_ENV=production\), got "http:\/\/localhost:3000"/,
    );
    expect(
      loadConfig({
        NODE_ENV: "production",
        AUTH_URL: "https://give.example.org",
        BASE_URL: "https://give.example.org/",
      }),
    ).toMatchObject({ production: true, allowHttp: false, baseUrl: "https://give.example.org" });
    const lan = { BASE_URL: "http://10.0.0.5:3000", AUTH_URL: "http://10.0.0.5:3000" };
    expect(loadConfig({ NODE_ENV: "production", ALLOW_HTTP: "true", ...lan })).toMatchObject({
      production: true,
      allowHttp: true,
      baseUrl: "http://10.0.0.5:3000",
    });
    expect(() => loadConfig({ NODE_ENV: "production", ALLOW_HTTP: "false", ...lan })).toThrow(ConfigError);
    expect(() => loadConfig({ ALLOW_HTTP: "yes please" })).toThrow(
      new ConfigError('ALLOW_HTTP must be true or false, got "yes please"'),
    );
    // Development keeps http://localhost as the default.
    expect(loadConfig({})).toMatchObject({ production: false, baseUrl: "http://localhost:3000" });
    expect(loadConfig({ NODE_ENV: "test" }).production).toBe(false);
  });

  it(
    "`serve --demo` in production is refused before any database is opened; http URLs stop `serve` with one line",
    async () => {
      const dataDir = path.join(scratch, "never-demo");
      const https = { BASE_URL: "https://give.example.org", AUTH_URL: "https://give.example.org", PORT: "0" };
      const [embedded, postgres, http] = await Promise.all([
        runSpawned(["serve", "--demo"], { NODE_ENV: "production", DATA_DIR: dataDir, ...https }, { children }),
        // An unreachable server: reaching for it would fail with exit 1, not the refusal's 2.
        runSpawned(
          ["serve", "--demo"],
          { NODE_ENV: "production", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", ...https },
          { children },
        ),
        runSpawned(["serve"], { NODE_ENV: "production", DATA_DIR: dataDir, PORT: "0" }, { children }),
      ]);
      for (const result of [embedded, postgres]) {
        expect(result.code, describeRun(result)).toBe(2);
        expect(result.stdout).toBe("");
        expect(result.stderr.split("\n")[0]).toBe(
          "donata serve: --demo is refused in production (NODE_ENV=production): run `donata serve`, and `donata setup` once to create the first organization",
        );
      }
      expect(http.code, describeRun(http)).toBe(1);
      expect(http.stderr).toBe(
        'donata serve: AUTH_URL must be an https:// URL in production (NODE_ENV=production), got "http://localhost:3000"; set ALLOW_HTTP=true only on a private network or for a test\n',
      );
      expect(existsSync(dataDir)).toBe(false);
    },
    TIMEOUT,
  );
});

describe("donata setup in process, and its one-time link against the real server", () => {
  let target: Awaited<ReturnType<typeof freshTarget>>;
  let server: Awaited<ReturnType<typeof serveInProcess>> | undefined;
  const ownerEmail = `owner-${unique()}@example.org`;
  let setupLink = "";

  beforeAll(async () => {
    target = await freshTarget("setup");
  });
  afterAll(async () => {
    await server?.close();
    await target?.drop();
  });

  const current = () => {
    if (!server) throw new Error("the server is not running");
    return server;
  };
  const linkRow = async (token: string) => {
    const [row] = await current()
      .db.select()
      .from(userSignInLinks)
      .where(eq(userSignInLinks.tokenHash, hashSecret(token)));
    return row;
  };
  const ownerRow = async () => {
    const [row] = await current().db.select().from(users).where(eq(users.email, ownerEmail));
    return row;
  };

  it(
    "without a terminal missing flags are a usage error; then it creates the organization and a passwordless owner, once",
    async () => {
      const missing = await donata(["setup", "--org-slug", "acme"], target.env);
      expect(missing.code, describeRun(missing)).toBe(2);
      expect(missing.stderr).toContain(
        "donata setup: --org-name, --email required (or run it in a terminal to be asked)",
      );
      const args = ["setup", "--org-slug", "acme", "--org-name", "Acme Relief", "--currency", "chf"];
      const result = await donata(
        [...args, "--timezone", "Europe/Rome", "--email", ownerEmail.toUpperCase(), "--name", "Ada", "--json"],
        target.env,
      );
      expect(result.code, describeRun(result)).toBe(0);
      const json = JSON.parse(result.stdout);
      expect(json).toMatchObject({
        organization: { slug: "acme", name: "Acme Relief", currency: "CHF", time_zone: "Europe/Rome" },
        owner: { email: ownerEmail },
        expires_in: 86400,
      });
      expect(json.sign_in_link).toMatch(/^http:\/\/localhost:3000\/admin\/welcome\?token=dnt_sl_[A-Za-z0-9_-]{43}$/);
      expect(JSON.stringify(json)).not.toMatch(/password/i);
      setupLink = json.sign_in_link;

      const again = await donata(
        ["setup", "--org-slug", "other", "--org-name", "Other", "--email", "x@example.org"],
        target.env,
      );
      expect(again.code, describeRun(again)).toBe(1);
      expect(again.stderr).toBe(
        "donata setup: This database already has an organization; add more with `donata org create` and `donata user create`, or get a sign-in link with `donata user link --email E`\n",
      );

      server = await serveInProcess(target.env);
      const owner = await ownerRow();
      expect(owner).toMatchObject({ name: "Ada", passwordHash: null });
      const token = new URL(setupLink).searchParams.get("token") as string;
      const link = await linkRow(token);
      // Only the hash is stored; the link lasts 24 hours.
      expect(link).toMatchObject({ userId: owner?.id, purpose: "setup", usedDate: null });
      expect((link?.expiresDate.getTime() ?? 0) - (link?.createDate.getTime() ?? 0)).toBe(86_400_000);
      const stored = await (server.db as Db).execute(sql`select * from user_sign_in_links`);
      expect(JSON.stringify(stored)).not.toContain(token);
      const roles = await (server.db as Db)
        .select()
        .from(memberships)
        .where(eq(memberships.userId, owner?.id ?? 0));
      expect(roles.map((row) => row.role)).toEqual(["owner"]);
    },
    TIMEOUT,
  );

  it("GET shows the form and uses nothing up; refused passwords and foreign origins keep the link", async () => {
    const url = current().url;
    const browser = new Browser(url);
    const first = await browser.get(pathOf(setupLink));
    const second = await browser.get(pathOf(setupLink));
    for (const page of [first, second]) {
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
      expect(page.headers.get("cache-control")).toBe("no-store");
    }
    expect(first.html).toContain("<h1>Choose your password</h1>");
    expect(first.html).toContain(`value="${ownerEmail}" readonly`);
    expect(first.html).toContain('autocomplete="new-password"');

    const short = await browser.submit(first, { password: "short", repeat: "short" });
    expect(short.status).toBe(400);
    expect(short.html).toContain("Choose at least 10 characters.");
    const differ = await browser.submit(first, { password: PASSWORD, repeat: `${PASSWORD}!` });
    expect(differ.status).toBe(400);
    expect(differ.html).toContain("The two passwords differ.");
    const foreign = await fetch(`${url}/admin/welcome`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
      body: new URLSearchParams({
        token: new URL(setupLink).searchParams.get("token") as string,
        password: PASSWORD,
        repeat: PASSWORD,
      }),
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).code).toBe("cross_origin_refused");
    expect(await linkRow(new URL(setupLink).searchParams.get("token") as string)).toMatchObject({ usedDate: null });
    expect(await ownerRow()).toMatchObject({ passwordHash: null });
  });

  it("POST sets the password and signs in to the panel; the link works once", async () => {
    const url = current().url;
    const browser = new Browser(url);
    const form = await browser.get(pathOf(setupLink));
    const done = await browser.submit(form, { password: PASSWORD, repeat: PASSWORD });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/admin/");
    const attributes = cookieAttributes(done.headers, "donata_session");
    expect(attributes).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/"]));
    expect(attributes).not.toContain("secure");
    const session = await browser.get("/admin/api/session");
    expect(JSON.parse(session.html)).toMatchObject({
      user: { email: ownerEmail },
      organizations: [{ slug: "acme", role: "owner", currency: "CHF" }],
    });

    const twice = await new Browser(url).submit(form, {
      password: "another password 123",
      repeat: "another password 123",
    });
    expect(twice.status).toBe(410);
    expect(twice.html).toContain("This link has expired or was already used.");
    expect((await new Browser(url).get(pathOf(setupLink))).status).toBe(410);
    expect(await verifyPassword((await ownerRow())?.passwordHash as string, PASSWORD)).toBe(true);
    expect((await signInWithPassword(url, ownerEmail, "another password 123")).status).toBe(401);
    const signedIn = await signInWithPassword(url, ownerEmail, PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.email).toBe(ownerEmail);
  });

  it("an unknown or expired link is refused and changes nothing", async () => {
    const url = current().url;
    const db = current().db;
    const unknown = await new Browser(url).get("/admin/welcome?token=dnt_sl_nothing");
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain("This link is not valid.");
    expect((await new Browser(url).get("/admin/welcome")).status).toBe(404);
    const owner = await ownerRow();
    const token = await createSignInLink(db, owner?.id as number, "reset");
    const browser = new Browser(url);
    const form = await browser.get(`/admin/welcome?token=${token}`);
    expect(form.status).toBe(200);
    await db
      .update(userSignInLinks)
      .set({ expiresDate: sql`now() - interval '1 second'` })
      .where(eq(userSignInLinks.tokenHash, hashSecret(token)));
    expect((await browser.get(`/admin/welcome?token=${token}`)).status).toBe(410);
    const late = await browser.submit(form, { password: "a brand new password", repeat: "a brand new password" });
    expect(late.status).toBe(410);
    expect(late.html).toContain("<h1>Link expired</h1>");
    expect(await linkRow(token)).toMatchObject({ usedDate: null });
    expect((await ownerRow())?.passwordHash).toBe(owner?.passwordHash);
    const unknownPost = await new Browser(url).submit(form, {
      token: "dnt_sl_madeup",
      password: PASSWORD,
      repeat: PASSWORD,
    });
    expect(unknownPost.status).toBe(404);
  });

  it("a user without a password cannot sign in, not even with the password the dummy hash was made of", async () => {
    const url = current().url;
    const email = `nopassword-${unique()}@example.org`;
    await insertUser(current().db, { email, passwordHash: null });
    for (const password of ["a password nobody has", PASSWORD]) {
      const refused = await signInWithPassword(url, email, password);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({
        code: "invalid_credentials",
        detail: "The email or password is incorrect.",
      });
    }
  });

  it(
    "`user link` (in process) gives a lost password back: a new password, the other sessions signed out",
    async () => {
      // A session from before the reset, which the new password must end.
      const signed = await signInWithPassword(current().url, ownerEmail, PASSWORD);
      const oldToken = (signed.headers.getSetCookie()[0] as string).split(";")[0]?.split("=")[1] as string;
      await server?.close();
      server = undefined;
      const unknown = await donata(["user", "link", "--email", "nobody@example.org"], target.env);
      expect(unknown.code, describeRun(unknown)).toBe(1);
      expect(unknown.stderr).toBe("donata user link: No user has the email nobody@example.org\n");
      const first = JSON.parse((await donata(["user", "link", "--email", ownerEmail, "--json"], target.env)).stdout);
      const result = await donata(["user", "link", "--email", ownerEmail.toUpperCase(), "--json"], target.env);
      expect(result.code, describeRun(result)).toBe(0);
      const json = JSON.parse(result.stdout);
      expect(json).toMatchObject({ user: { email: ownerEmail }, expires_in: 3600 });

      server = await serveInProcess(target.env);
      const browser = new Browser(server.url);
      // A newer link replaces an older unused one.
      expect((await browser.get(pathOf(first.sign_in_link))).status).toBe(410);
      const form = await browser.get(pathOf(json.sign_in_link));
      expect(form.status).toBe(200);
      expect(form.html).toContain("Choose a new password; your other sessions will be signed out.");
      const oldSession = new Browser(server.url);
      oldSession.cookies.set("donata_session", oldToken);
      expect(JSON.parse((await oldSession.get("/admin/api/session")).html)).toMatchObject({
        user: { email: ownerEmail },
      });
      const done = await browser.submit(form, { password: "the new password 2026", repeat: "the new password 2026" });
      expect(done.status).toBe(303);
      expect(JSON.parse((await oldSession.get("/admin/api/session")).html)).toEqual({ signed_in: false });
      expect(JSON.parse((await browser.get("/admin/api/session")).html)).toMatchObject({ user: { email: ownerEmail } });
      expect((await signInWithPassword(server.url, ownerEmail, PASSWORD)).status).toBe(401);
      expect((await signInWithPassword(server.url, ownerEmail, "the new password 2026")).status).toBe(200);
    },
    TIMEOUT,
  );
});

describe("donata setup on a terminal", () => {
  it(
    "asks for what the flags did not say, with defaults, on stderr",
    async () => {
      const target = await freshTarget("asked");
      try {
        const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
        stdin.isTTY = true;
        const answers = ["Amici del Parco", "", "Europe/Rome", "ada@example.org", "Ada Lovelace"];
        const prompts: string[] = [];
        const result = await donata(["setup", "--currency", "USD", "--json"], target.env, {
          stdin,
          onStderr: (text) => {
            if (!text.endsWith(": ")) return;
            prompts.push(text);
            stdin.write(`${answers.shift()}\n`);
          },
        });
        expect(result.code, describeRun(result)).toBe(0);
        expect(prompts).toEqual([
          "Organization name: ",
          "Short name in URLs [amici-del-parco]: ",
          `Time zone [${Intl.DateTimeFormat().resolvedOptions().timeZone}]: `,
          "Owner's email: ",
          "Owner's name (optional): ",
        ]);
        expect(JSON.parse(result.stdout)).toMatchObject({
          organization: { slug: "amici-del-parco", name: "Amici del Parco", currency: "USD", time_zone: "Europe/Rome" },
          owner: { email: "ada@example.org" },
        });
        expect(answers).toEqual([]);
      } finally {
        await target.drop();
      }
    },
    TIMEOUT,
  );
});

describe("donata setup and user link as processes beside donata serve", () => {
  it(
    "serve says how to begin; setup's link signs the owner in; user link replaces a lost password",
    async () => {
      const target = await freshTarget("spawned");
      try {
        const empty = await startServe(target.env);
        expect(empty.output()).toContain("no organization yet: run `npx donata setup`");
        await empty.stop();

        const setup = await runSpawned(
          ["setup", "--org-slug", "hope", "--org-name", "Hope", "--email", "hope@example.org", "--json"],
          target.env,
          { children },
        );
        expect(setup.code, describeRun(setup)).toBe(0);
        const link = JSON.parse(setup.stdout).sign_in_link as string;

        let serve = await startServe(target.env);
        expect(serve.output()).not.toContain("no organization yet");
        const browser = new Browser(serve.url);
        const done = await browser.submit(await browser.get(pathOf(link)), { password: PASSWORD, repeat: PASSWORD });
        expect(done.status).toBe(303);
        expect(JSON.parse((await browser.get("/admin/api/session")).html)).toMatchObject({
          organizations: [{ slug: "hope", role: "owner" }],
        });
        await serve.stop();

        const reset = await runSpawned(["user", "link", "--email", "hope@example.org"], target.env, { children });
        expect(reset.code, describeRun(reset)).toBe(0);
        const resetLink = /(http:\/\/\S+\/admin\/welcome\?token=\S+)/.exec(reset.stdout)?.[1] as string;
        expect(reset.stdout).toContain("Open this link within an hour to choose a new password for hope@example.org");

        serve = await startServe(target.env);
        const again = new Browser(serve.url);
        const changed = await again.submit(await again.get(pathOf(resetLink)), {
          password: "forgotten no more",
          repeat: "forgotten no more",
        });
        expect(changed.status).toBe(303);
        expect((await signInWithPassword(serve.url, "hope@example.org", PASSWORD)).status).toBe(401);
        expect((await signInWithPassword(serve.url, "hope@example.org", "forgotten no more")).status).toBe(200);
        await serve.stop();
      } finally {
        await target.drop();
      }
    },
    4 * TIMEOUT,
  );
});

describe("a demo database taken to production", () => {
  it(
    "serve warns while the demo login still has its published password",
    async () => {
      const target = await freshTarget("demo");
      try {
        const { database } = await openMigratedDatabase({ ...BASE_ENV, ...target.env }, { create: true });
        try {
          await createOrganization(database.db, { slug: "demo", name: "Demo" });
          await createUser(database.db, { ...DEMO_LOGIN, organization: "demo", role: "owner" });
        } finally {
          await database.close();
        }
        const serve = await startServe({ ...target.env, NODE_ENV: "production", ALLOW_HTTP: "true" });
        await serve.stop();
        expect(serve.output()).toContain(
          "WARNING: demo@donata.local still signs in with the demo password published in the README: run `donata user link --email demo@donata.local` and choose another",
        );
      } finally {
        await target.drop();
      }
    },
    2 * TIMEOUT,
  );
});

// On the embedded database the worker runs inside `donata serve` only (test/processes.test.ts: refused alone).
describe.skipIf(!testDatabaseUrl())("donata worker as its own process", () => {
  it(
    "delivers the outbox too, so `serve --no-worker` beside it still sends email",
    async () => {
      const target = await freshTarget("worker");
      try {
        const { database } = await openMigratedDatabase({ ...BASE_ENV, ...target.env }, { create: true });
        try {
          const organization = await createOrganization(database.db, { slug: "mail", name: "Mail" });
          const id = await database.db.transaction((tx) =>
            enqueueEmail(tx, {
              organizationId: organization.id,
              kind: "donor_sign_in",
              to: "donor@example.test",
              data: { url: "http://localhost:3000/donor/mail/enter?token=x" },
            }),
          );
          const state = async () => {
            const [row] = await database.db
              .select()
              .from(outboxMessages)
              .where(eq(outboxMessages.id, id ?? 0));
            return row?.state;
          };
          const child = spawnCli(["worker"], { ...target.env, MAIL_INTERVAL: "1" }, children);
          let output = "";
          child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
            output += chunk;
          });
          child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
            output += chunk;
          });
          const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
          await expect.poll(() => output, { timeout: 60_000 }).toContain("Worker running");
          await expect.poll(state, { timeout: 60_000 }).toBe("captured");
          child.kill("SIGTERM");
          expect(await exited, output).toBe(0);
          expect(output).toContain("Worker stopped cleanly");
        } finally {
          await database.close();
        }
      } finally {
        await target.drop();
      }
    },
    4 * TIMEOUT,
  );
});

/** Every cookie we set, as served from https and from http public URLs (the server itself listens on http). */
describe.each([
  { label: "https", baseUrl: "https://give.example.org", authUrl: "https://give.example.org" },
  { label: "http", baseUrl: "http://give.example.org", authUrl: "http://give.example.org" },
  {
    label: "https panel, http authorization server",
    baseUrl: "https://give.example.org",
    authUrl: "http://auth.example.org",
  },
])("cookies with $label public URLs", ({ baseUrl, authUrl }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ baseUrl, authUrl } as Partial<Config>);
  });
  afterAll(() => server?.close());

  const panelSecure = baseUrl.startsWith("https:");
  const authSecure = authUrl.startsWith("https:");
  const expectCookie = (
    headers: Headers,
    name: string,
    expected: { path: string; sameSite: string; secure: boolean },
  ) => {
    const attributes = cookieAttributes(headers, name);
    expect(attributes).toEqual(
      expect.arrayContaining(["httponly", `path=${expected.path}`, `samesite=${expected.sameSite}`]),
    );
    expect(attributes.includes("secure"), `${name}: ${attributes.join("; ")}`).toBe(expected.secure);
    return attributes;
  };

  it("the admin session: set and cleared with the same attributes (Secure from BASE_URL)", async () => {
    const slug = `org-${unique()}`;
    const email = `panel-${unique()}@example.org`;
    await createOrganization(server.database.db, { slug, name: "Panel" });
    await createUser(server.database.db, { email, password: PASSWORD, organization: slug, role: "owner" });
    const signed = await signInWithPassword(server.url, email, PASSWORD);
    expect(signed.status).toBe(200);
    expectCookie(signed.headers, "donata_session", { path: "/", sameSite: "lax", secure: panelSecure });
    const token = (signed.headers.getSetCookie()[0] as string).split(";")[0] as string;
    const out = await fetch(`${server.url}/admin/api/session`, { method: "DELETE", headers: { cookie: token } });
    expect(out.status).toBe(204);
    const cleared = expectCookie(out.headers, "donata_session", { path: "/", sameSite: "lax", secure: panelSecure });
    expect(cleared).toContain("max-age=0");
  });

  it("the welcome page's session (Secure from BASE_URL)", async () => {
    const slug = `org-${unique()}`;
    const organization = await createOrganization(server.database.db, { slug, name: "Welcome" });
    const user = await insertUser(server.database.db, { email: `welcome-${unique()}@example.org`, passwordHash: null });
    await server.database.db
      .insert(memberships)
      .values({ organizationId: organization.id, userId: user.id, role: "owner" });
    const token = await createSignInLink(server.database.db, user.id, "setup");
    const browser = new Browser(server.url);
    const done = await browser.submit(await browser.get(`/admin/welcome?token=${token}`), {
      password: PASSWORD,
      repeat: PASSWORD,
    });
    expect(done.status).toBe(303);
    expectCookie(done.headers, "donata_session", { path: "/", sameSite: "lax", secure: panelSecure });
  });

  it("the OAuth login: its CSRF cookie (Strict, /oauth/) and the session (Secure from AUTH_URL)", async () => {
    const slug = `org-${unique()}`;
    const email = `oauth-${unique()}@example.org`;
    await createOrganization(server.database.db, { slug, name: "OAuth" });
    await createUser(server.database.db, { email, password: PASSWORD, organization: slug, role: "owner" });
    const application = await createApplication(server.database.db, {
      name: `App ${unique(6)}`,
      applicationUrl: "https://client.example.test/",
      callbackUrls: ["https://client.example.test/callback"],
    });
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      client_id: application.client_id,
      redirect_uri: "https://client.example.test/callback",
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      state: "s",
    });
    const browser = new Browser(server.url);
    const login: Page = await browser.get(`/oauth/authorize/?${query}`);
    expect(login.status).toBe(200);
    expectCookie(login.headers, "donata_login_csrf", { path: "/oauth/", sameSite: "strict", secure: authSecure });
    const done = await browser.submit(login, { email, password: PASSWORD });
    expect(done.status).toBe(303);
    expectCookie(done.headers, "donata_session", { path: "/", sameSite: "lax", secure: authSecure });
    const cleared = expectCookie(done.headers, "donata_login_csrf", {
      path: "/oauth/",
      sameSite: "strict",
      secure: authSecure,
    });
    expect(cleared).toContain("max-age=0");
  });

  it("the donor portal's cookie is cleared with its path and Secure from BASE_URL", async () => {
    const slug = `org-${unique()}`;
    await createOrganization(server.database.db, { slug, name: "Portal" });
    const out = await fetch(`${server.url}/donor/${slug}/sign-out`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(out.status).toBe(303);
    const cleared = expectCookie(out.headers, "donata_donor", {
      path: `/donor/${slug}/`,
      sameSite: "lax",
      secure: panelSecure,
    });
    expect(cleared).toContain("max-age=0");
  });
});

describe("TRUST_PROXY", () => {
  /** The app with one extra route that shows what Fastify believes about the client. */
  async function whoamiServer(trustProxy: string | undefined) {
    const database = await openTestDatabase();
    const config = loadConfig({ ...BASE_ENV, ...(trustProxy ? { TRUST_PROXY: trustProxy } : {}) });
    const app = await buildApp({ config, database });
    app.get("/whoami", async (request) => ({ ip: request.ip, protocol: request.protocol, host: request.host }));
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    return {
      url,
      close: async () => {
        await app.close();
        await database.close();
      },
    };
  }
  const forwarded = (address: string) => ({
    "x-forwarded-for": address,
    "x-forwarded-proto": "https",
    "x-forwarded-host": "give.example.org",
  });
  const remaining = async (url: string, address: string) => {
    const response = await fetch(`${url}/oauth/authorize/?client_id=nobody`, { headers: forwarded(address) });
    return Number(/;r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]);
  };

  it("unset: X-Forwarded-For, -Proto and -Host are ignored; the rate limit counts the socket's address", async () => {
    const server = await whoamiServer(undefined);
    try {
      const response = await fetch(`${server.url}/whoami`, { headers: forwarded("203.0.113.9") });
      expect(await response.json()).toEqual({
        ip: "127.0.0.1",
        protocol: "http",
        host: new URL(server.url).host,
      });
      const first = await remaining(server.url, `198.51.100.${randomBytes(1)[0]}`);
      const second = await remaining(server.url, "192.0.2.77");
      expect(second).toBe(first - 1);
    } finally {
      await server.close();
    }
  });

  it("set to the proxy's address: they are believed, and each client has its own budget", async () => {
    const server = await whoamiServer("127.0.0.1");
    try {
      const response = await fetch(`${server.url}/whoami`, { headers: forwarded("203.0.113.9") });
      expect(await response.json()).toEqual({ ip: "203.0.113.9", protocol: "https", host: "give.example.org" });
      const first = await remaining(server.url, "198.51.100.20");
      const second = await remaining(server.url, "192.0.2.78");
      expect(second).toBe(first);
      expect(await remaining(server.url, "192.0.2.78")).toBe(second - 1);
      // A client cannot choose its address by prepending one: the nearest untrusted hop counts.
      const spoofed = await fetch(`${server.url}/whoami`, { headers: forwarded("10.9.9.9, 203.0.113.10") });
      expect((await spoofed.json()).ip).toBe("203.0.113.10");
    } finally {
      await server.close();
    }
  });

  it("a proxy that is not trusted is not believed", async () => {
    const server = await whoamiServer("10.0.0.1");
    try {
      const response = await fetch(`${server.url}/whoami`, { headers: forwarded("203.0.113.9") });
      expect((await response.json()).ip).toBe("127.0.0.1");
    } finally {
      await server.close();
    }
  });
});

/** The message of a rejection and of its cause (drizzle wraps the database's error as "Failed query"). */
async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return `${(error as Error).message} ${((error as Error).cause as Error | undefined)?.message ?? ""}`;
  }
  return "no failure";
}

describe("a failed migration", () => {
  it(
    "leaves the database as it was: every pending migration runs in one transaction",
    async () => {
      const folder = await mkdtemp(path.join(scratch, "migrations-"));
      await cp(path.join(ROOT, "src", "db", "migrations"), folder, { recursive: true });
      const journalFile = path.join(folder, "meta", "_journal.json");
      const journal = JSON.parse(await readFile(journalFile, "utf8"));
      const last = journal.entries.at(-1);
      for (const [offset, tag, body] of [
        [1, "9998_fine", 'CREATE TABLE "migration_probe" ("id" integer);'],
        [2, "9999_broken", 'ALTER TABLE "users" ADD COLUMN "probe" integer;--> statement-breakpoint\nSELECT 1/0;'],
      ] as const) {
        journal.entries.push({
          idx: last.idx + offset,
          version: "7",
          when: last.when + offset * 1000,
          tag,
          breakpoints: true,
        });
        await writeFile(path.join(folder, `${tag}.sql`), body);
      }
      await writeFile(journalFile, JSON.stringify(journal));
      const applied = journal.entries.length - 2;
      const shared = testDatabaseUrl();
      const checks = [
        "select count(*)::int as n from drizzle.__drizzle_migrations",
        "select to_regclass('public.migration_probe') is not null as n",
        "select count(*)::int as n from information_schema.columns where table_name = 'users' and column_name = 'probe'",
      ];
      if (shared) {
        const database = await createPrivateDatabase(shared, "migrate", { migrate: true });
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          expect(await failure(migratePg(drizzlePg(client), { migrationsFolder: folder }))).toMatch(/division by zero/);
          const results = [];
          for (const check of checks) results.push((await client.query(check)).rows[0].n);
          expect(results).toEqual([applied, false, 0]);
        } finally {
          await client.end();
          await database.drop();
        }
      } else {
        const database = await openDatabase({ databaseUrl: undefined, dataDir: "memory://" });
        try {
          await database.migrate();
          const pglite = database.pglite as NonNullable<typeof database.pglite>;
          expect(await failure(migratePglite(drizzlePglite(pglite), { migrationsFolder: folder }))).toMatch(
            /division by zero/,
          );
          const results = [];
          for (const check of checks) results.push((await pglite.query<{ n: unknown }>(check)).rows[0]?.n);
          expect(results).toEqual([applied, false, 0]);
        } finally {
          await database.close();
        }
      }
    },
    TIMEOUT,
  );
});

describe("the welcome page in chromium", () => {
  it(
    "is axe-clean, and choosing a password lands in the panel with an HttpOnly Lax session",
    async () => {
      const server = await startTestServer();
      const browser = await launchChromium();
      try {
        const slug = `org-${unique()}`;
        const organization = await createOrganization(server.database.db, { slug, name: "Chromium" });
        const user = await insertUser(server.database.db, { email: `c-${unique()}@example.org`, passwordHash: null });
        await server.database.db
          .insert(memberships)
          .values({ organizationId: organization.id, userId: user.id, role: "owner" });
        const token = await createSignInLink(server.database.db, user.id, "setup");
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${server.url}/admin/welcome?token=${token}`);
        const results = await new AxeBuilder({ page }).analyze();
        expect(results.violations).toEqual([]);
        await page.fill("#password", PASSWORD);
        await page.fill("#repeat", PASSWORD);
        await page.click('button[type="submit"]');
        await page.waitForURL(/\/admin\//);
        const cookie = (await context.cookies()).find((candidate) => candidate.name === "donata_session");
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/" });
        const session = await page.request.get(`${server.url}/admin/api/session`);
        expect(await session.json()).toMatchObject({ user: { email: user.email } });

        // The Strict login CSRF cookie survives a cross-site arrival at the login page (from an
        // opaque-origin page, as from another site): the form it sets it in posts it back.
        const application = await createApplication(server.database.db, {
          name: "Cross-site",
          applicationUrl: "https://client.example.test/",
          callbackUrls: ["https://client.example.test/callback"],
        });
        const query = new URLSearchParams({
          client_id: application.client_id,
          redirect_uri: "https://client.example.test/callback",
          response_type: "code",
          code_challenge_method: "S256",
          code_challenge: createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url"),
          state: "s",
        });
        const elsewhere = await (await browser.newContext()).newPage();
        await elsewhere.setContent(`<a id="go" href="${server.url}/oauth/authorize/?${query}">Connect</a>`);
        await elsewhere.click("#go");
        await elsewhere.waitForSelector("#password");
        await elsewhere.fill("#email", user.email);
        await elsewhere.fill("#password", PASSWORD);
        await elsewhere.click('button[type="submit"]');
        await elsewhere.waitForSelector("button[name=decision][value=allow]");
      } finally {
        await browser.close();
        await server.close();
      }
    },
    TIMEOUT,
  );
});

describe("a production server without SMTP_URL", () => {
  it(
    "says at start that email is not delivered",
    async () => {
      const target = await freshTarget("nomail");
      try {
        const serve = await startServe({ ...target.env, NODE_ENV: "production", ALLOW_HTTP: "true" });
        await serve.stop();
        expect(serve.output()).toContain(NO_MAIL_WARNING);
        expect(NO_MAIL_WARNING).toBe(
          "WARNING: no SMTP_URL: email is not delivered. Receipts and sign-in links are only captured in the admin panel's Outbox; set SMTP_URL (smtp:// or smtps://) to send them",
        );
      } finally {
        await target.drop();
      }
    },
    2 * TIMEOUT,
  );
});
