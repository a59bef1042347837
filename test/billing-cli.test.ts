import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { checkouts, jobs, payments } from "../src/db/schema.js";
import { cycleDueDate } from "../src/payments/schedule.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import { fakeCampaign, fakeTenant, unique } from "./helpers/factories.js";

/**
 * `donata billing run` as an operator runs it: the bin in a child process, against a database
 * holding due renewals made through the public checkout API. Like src/jobs/runner.test.ts, it uses
 * a database of its own (a PGlite directory, or a PostgreSQL database created for this file), so
 * that its clock in 2030 charges and expires nothing of the other test files.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = path.join(ROOT, "bin", "donata.js");
const TEST_TIMEOUT = 120_000;
const NOW = "2030-01-01T00:00:00.000Z";

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Settings the child must not inherit (vitest sets BASE_URL to "/"): it gets its database from this file only. */
const INHERITED_SETTINGS = [
  ...["DATABASE_URL", "DATA_DIR", "PORT", "HOST", "BASE_URL", "AUTH_URL", "LOG_LEVEL", "DATABASE_POOL_SIZE"],
  ...["DEBUG", "NODE_OPTIONS"],
];

function runBin(args: string[], env: Record<string, string>): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_SETTINGS) delete childEnv[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...childEnv, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const describeRun = (result: CliResult) => `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

let scratch = "";
let databaseUrl: string | undefined;
let dataDir = "";
let dropDatabase: (() => Promise<void>) | undefined;
let organizationId = 0;
const made = { yearly: 0, yearlyStart: new Date(0), failing: 0, openCheckout: 0 };

const openFileDatabase = () => openDatabase({ databaseUrl, dataDir, poolSize: 1 });
const target = (): Record<string, string> => (databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir });

async function withDatabase<T>(work: (database: Database) => Promise<T>): Promise<T> {
  const database = await openFileDatabase();
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "donata-billing-cli-"));
  dataDir = path.join(scratch, "data");
  const sharedUrl = testDatabaseUrl();
  if (sharedUrl) {
    const created = await createPrivateDatabase(sharedUrl, "billing_cli");
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
  // Donors give through the public API of an app over this database, which is then closed:
  // a PGlite directory is opened by one process at a time.
  await withDatabase(async (database) => {
    await database.migrate();
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: "silent" }), database });
    try {
      const tenant = await fakeTenant(database.db);
      organizationId = tenant.organizationId;
      const campaign = await fakeCampaign(database.db, organizationId, {
        slug: `cli-${unique()}`,
        hasSubscription: true,
        allowCustomSubscriptionAmount: true,
        minSubscriptionAmount: 1,
        maxSubscriptionAmount: 10_000,
      });
      const start = async (frequency: number) => {
        const response = await app.inject({
          method: "POST",
          url: `/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`,
          payload: { amount: 25, frequency },
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json() as { id: number; client_secret: string };
      };
      const give = async (frequency: number, card: string) => {
        const checkout = await start(frequency);
        const response = await app.inject({
          method: "POST",
          url: `/api/v1/public/organizations/${tenant.slug}/checkouts/${checkout.id}/complete`,
          payload: {
            client_secret: checkout.client_secret,
            amount: 25,
            frequency,
            processor: "sandbox",
            card: { number: card, exp_month: 12, exp_year: 2030, cvc: "123" },
            supporter: { email: `${unique()}@example.org`, first_name: "Ada", last_name: "Donor" },
            consents: { privacy: true },
          },
        });
        expect(response.statusCode, response.body).toBe(200);
        return response.json().donation as { id: number; state: string; completed_date: string };
      };
      const yearly = await give(1, "4242424242424242");
      made.yearly = yearly.id;
      made.yearlyStart = new Date(yearly.completed_date);
      made.failing = (await give(12, "4000000000000341")).id;
      made.openCheckout = (await start(12)).id;
    } finally {
      await app.close();
    }
  });
}, TEST_TIMEOUT);

afterAll(async () => {
  await dropDatabase?.();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("donata billing run", () => {
  it(
    "--now 2030-01-01 --json charges due renewals once, prints one JSON object with the counts, exit 0",
    async () => {
      // The yearly gift is several cycles overdue: one charge covers them and the schedule resumes
      // at the first cycle ahead. The failing monthly gift fails its first renewal, and its retry
      // (two days after the run's clock) is not due yet.
      let dueCycles = 0;
      while (cycleDueDate(made.yearlyStart, 1, dueCycles + 1) <= new Date(NOW)) dueCycles++;
      expect(dueCycles).toBeGreaterThanOrEqual(3);

      const result = await runBin(["billing", "run", "--now", "2030-01-01", "--json"], target());
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stderr, describeRun(result)).toBe("");
      expect(result.stdout.endsWith("\n"), describeRun(result)).toBe(true);
      expect(result.stdout.slice(0, -1), describeRun(result)).not.toContain("\n");
      expect(JSON.parse(result.stdout)).toEqual({
        now: NOW,
        renewed: 1,
        failed: 1,
        revoked: 0,
        skipped: 0,
        errors: 0,
        expired_checkouts: 1,
        reconciled: 0,
      });

      // The same clock again: nothing is charged twice. Without --json: one line for a person.
      const again = await runBin(["billing", "run", "--now", NOW], target());
      expect(again.code, describeRun(again)).toBe(0);
      expect(again.stdout).toBe(
        `Billing run at ${NOW}: 0 renewed, 0 failed, 0 revoked, 0 skipped, 0 errors, 0 expired checkouts closed, 0 reconciled\n`,
      );

      await withDatabase(async ({ db }) => {
        const states = async (donationId: number) =>
          (
            await db
              .select({ state: payments.state })
              .from(payments)
              .where(and(eq(payments.organizationId, organizationId), eq(payments.donationId, donationId)))
              .orderBy(asc(payments.id))
          ).map((row) => row.state);
        expect(await states(made.yearly)).toEqual(["PAID", "PAID"]);
        expect(await states(made.failing)).toEqual(["PAID", "FAILED"]);
        const queued = await db
          .select({ subjectId: jobs.subjectId, payload: jobs.payload, runDate: jobs.runDate })
          .from(jobs)
          .where(eq(jobs.state, "queued"))
          .orderBy(asc(jobs.subjectId));
        expect(queued).toEqual([
          {
            subjectId: made.yearly,
            payload: { cycle: dueCycles + 1 },
            runDate: cycleDueDate(made.yearlyStart, 1, dueCycles + 1),
          },
          { subjectId: made.failing, payload: { cycle: 1 }, runDate: new Date("2030-01-03T00:00:00.000Z") },
        ]);
        const [checkout] = await db
          .select({ state: checkouts.state, paymentId: checkouts.paymentId })
          .from(checkouts)
          .where(eq(checkouts.id, made.openCheckout));
        expect(checkout).toEqual({ state: "CLOSED", paymentId: null });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "--now notadate is a usage error, exit 2, before any database is opened",
    async () => {
      const never = path.join(scratch, "never");
      const results = await Promise.all(
        ["notadate", "2030-13-45", ""].map((now) =>
          runBin(["billing", "run", "--now", now, "--json"], { DATA_DIR: never }),
        ),
      );
      for (const result of results) {
        expect(result.code, describeRun(result)).toBe(2);
        expect(result.stdout, describeRun(result)).toBe("");
        expect(result.stderr, describeRun(result)).toMatch(/^donata billing run: --now must be an ISO 8601 date/);
        expect(result.stderr, describeRun(result)).toContain("Usage: donata billing run");
        expect(result.stderr, describeRun(result)).not.toMatch(/^\s+at /m);
      }
      expect(existsSync(never)).toBe(false);
    },
    TEST_TIMEOUT,
  );
});
