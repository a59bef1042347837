import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/client.js";
import { createDatabase } from "./database.js";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
    /** On PGlite: a file holding a migrated database's dump, which every test database starts from. */
    pgliteSnapshot: string | undefined;
  }
}

/**
 * With TEST_DATABASE_URL (a server URL), the suite runs on PostgreSQL in a database of its own,
 * created and migrated here and dropped at the end. Without it, each test file uses PGlite.
 * Either way the admin panel is built first (web/admin/dist). On PGlite, one database is migrated
 * here and dumped: each test database is loaded from that dump rather than created and migrated
 * anew (a few seconds of CPU each, hundreds of times in a run).
 */
export default async function setup(project: TestProject) {
  // The admin panel's pages and browser tests need its built assets, as `npm start` builds them.
  // NODE_ENV=production: the same React build users get (vitest sets NODE_ENV=test for its workers).
  // TEST_ADMIN_BUILT=1: built already (CI builds it once, then runs the suite on two databases at once).
  if (process.env.TEST_ADMIN_BUILT !== "1") {
    execFileSync("npm", ["run", "--silent", "build:admin", "--", "--logLevel", "error"], {
      stdio: "inherit",
      env: { ...process.env, NODE_ENV: "production" },
    });
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    project.provide("databaseUrl", undefined);
    const database = await openDatabase({ databaseUrl: undefined, dataDir: "memory://" });
    const file = path.join(tmpdir(), `donata-test-${randomBytes(6).toString("hex")}.tar`);
    try {
      await database.migrate();
      const dump = await (database.pglite as PGlite).dumpDataDir("none");
      writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    } finally {
      await database.close();
    }
    project.provide("pgliteSnapshot", file);
    return () => rmSync(file, { force: true });
  }
  project.provide("pgliteSnapshot", undefined);
  const name = `donata_test_${randomBytes(4).toString("hex")}`;
  const created = await createDatabase(serverUrl, name);
  const database = await openDatabase({ databaseUrl: created.url, dataDir: "" });
  await database.migrate();
  await database.close();
  project.provide("databaseUrl", created.url);
  const cluster = await citusCounters(created.url, "reset");
  console.log(`tests run on ${cluster ? "the Citus cluster's" : "PostgreSQL"} database ${name}`);

  return async () => {
    try {
      const counters = await citusCounters(created.url, "read");
      if (counters) {
        // Every request runs on one shard: the worker's scans are the rare multi-shard work (docs/scaling.md).
        const total = counters.single + counters.multi;
        const share = total === 0 ? 0 : counters.multi / total;
        console.log(
          `Citus executions in ${name}: ${counters.single} single-shard, ${counters.multi} multi-shard (${(share * 100).toFixed(1)} %)`,
        );
        if (share > MULTI_SHARD_BUDGET) {
          throw new Error(
            `multi-shard executions were ${(share * 100).toFixed(1)} % of all, over the ${MULTI_SHARD_BUDGET * 100} % budget`,
          );
        }
      }
    } finally {
      await created.drop();
    }
  };
}

const MULTI_SHARD_BUDGET = 0.05;

/**
 * Citus's execution counters of the test database (citus.enable_stat_counters), reset after the
 * migration so that they count the tests alone; undefined on plain PostgreSQL.
 */
async function citusCounters(url: string, action: "reset" | "read") {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const citus = await client.query("select 1 from pg_extension where extname = 'citus'");
    if (citus.rows.length === 0) return undefined;
    if (action === "reset") {
      await client.query("select citus_stat_counters_reset()");
      return { single: 0, multi: 0 };
    }
    const { rows } = await client.query<{ single: string; multi: string }>(
      "select query_execution_single_shard as single, query_execution_multi_shard as multi from citus_stat_counters where name = current_database()",
    );
    return { single: Number(rows[0]?.single ?? 0), multi: Number(rows[0]?.multi ?? 0) };
  } finally {
    await client.end();
  }
}
