import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import pg from "pg";
import { inject } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";

export const testDatabaseUrl = (): string | undefined => inject("databaseUrl");

let snapshot: Promise<Blob | undefined> | undefined;
/** The run's migrated PGlite dump (test/helpers/global-setup.ts), read once per test file's process. */
function pgliteSnapshot(): Promise<Blob | undefined> {
  snapshot ??= (async () => {
    const file = inject("pgliteSnapshot");
    return file ? new Blob([await readFile(file)]) : undefined;
  })();
  return snapshot;
}

/**
 * PostgreSQL when the run has one, otherwise a fresh in-memory PGlite, migrated (loaded from the
 * run's migrated dump). `applicationName`
 * tags the PostgreSQL connections, so a test can find (and terminate) its own server's only.
 */
export async function openTestDatabase(onQuery?: (query: string) => void, applicationName?: string): Promise<Database> {
  const serverUrl = testDatabaseUrl();
  let databaseUrl = serverUrl;
  if (serverUrl && applicationName) {
    const url = new URL(serverUrl);
    url.searchParams.set("application_name", applicationName);
    databaseUrl = url.toString();
  }
  const database = await openDatabase({
    databaseUrl,
    dataDir: "memory://",
    poolSize: 4,
    onQuery,
    snapshot: databaseUrl ? undefined : await pgliteSnapshot(),
  });
  // On PGlite, loaded already migrated: this finds nothing to do (and would apply a migration the dump lacks).
  if (!databaseUrl) await database.migrate();
  return database;
}

async function run(url: string, statements: string[]): Promise<{ rows: Record<string, unknown>[] }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results = [];
    for (const statement of statements) results.push(await client.query(statement));
    return results;
  } finally {
    await client.end();
  }
}

function onDatabase(url: string, database: string, host?: string, port?: number): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  if (host) next.hostname = host;
  if (port) next.port = String(port);
  return next.toString();
}

/**
 * Creates database `name` on the server of `sharedUrl`. When the shared database is a Citus
 * coordinator, the new one is too (unless `plain`), as `cluster db` makes them: created on every node with the
 * extension, the workers registered; 4 shards per table (32 in production) keep a test database's
 * migration quick. Returns its URL and a function that drops it everywhere.
 */
export async function createDatabase(
  sharedUrl: string,
  name: string,
  options: { plain?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const [found] = await run(sharedUrl, ["select 1 from pg_extension where extname = 'citus'"]);
  // plain: a database of PostgreSQL alone on the same server (the coordinator), as a single-node one would be.
  const citus = options.plain ? undefined : found;
  const workers = citus?.rows.length
    ? ((
        await run(sharedUrl, [
          "select nodename, nodeport from pg_dist_node where groupid <> 0 and noderole = 'primary' order by nodeport",
        ])
      )[0]?.rows as { nodename: string; nodeport: number }[])
    : [];
  const url = onDatabase(sharedUrl, name);
  await run(sharedUrl, [`create database ${name}`]);
  if (citus?.rows.length) {
    for (const worker of workers) {
      const admin = onDatabase(sharedUrl, "postgres", worker.nodename, worker.nodeport);
      await run(admin, [`create database ${name}`]);
      await run(onDatabase(admin, name), ["create extension citus"]);
    }
    const coordinator = new URL(sharedUrl);
    await run(url, [
      "create extension citus",
      `alter database ${name} set citus.shard_count = 4`,
      `select citus_set_coordinator_host('${coordinator.hostname}', ${Number(coordinator.port || 5432)})`,
      ...workers.map((worker) => `select citus_add_node('${worker.nodename}', ${worker.nodeport})`),
    ]);
  }
  return {
    url,
    async drop() {
      await run(sharedUrl, [`drop database if exists ${name} with (force)`]);
      for (const worker of workers) {
        await run(onDatabase(sharedUrl, "postgres", worker.nodename, worker.nodeport), [
          `drop database if exists ${name} with (force)`,
        ]);
      }
    },
  };
}

/**
 * A database of one test file's own, next to the run's PostgreSQL test database (for tests that
 * need it to themselves: workers racing, CLI commands acting on every organization); migrated when asked.
 */
export async function createPrivateDatabase(
  sharedUrl: string,
  label: string,
  options: { migrate?: boolean; plain?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${new URL(sharedUrl).pathname.slice(1)}_${label}_${randomBytes(3).toString("hex")}`;
  const created = await createDatabase(sharedUrl, name, options);
  if (options.migrate) {
    const database = await openDatabase({ databaseUrl: created.url, dataDir: "" });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
  }
  return created;
}
