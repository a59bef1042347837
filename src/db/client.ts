import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { ConfigError, parseDatabaseUrl } from "../config.js";
import { acquireDataDirLock, type DataDirLock } from "./data-dir-lock.js";
import { createPrivateDirectory, makeDataDirFilesPrivate, makeDataDirPrivate } from "./data-dir-privacy.js";
import { distributeSchema, hasCitus } from "./distribution.js";
import { gatedPglite } from "./pglite-gate.js";
import { PrivateNodeFS } from "./private-node-fs.js";
import * as schema from "./schema.js";
import { spendStatement } from "./statement-budget.js";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema>;
/** A database handle or an open transaction: repositories accept either. */
export type Executor = Db | Tx;

export interface Database {
  readonly kind: "postgres" | "pglite";
  readonly db: Db;
  /** The embedded database itself (PGlite only): backups dump it, the inspection socket serves it. */
  readonly pglite?: PGlite;
  /** The PostgreSQL pool's connections (/metrics); undefined on PGlite, a single embedded connection. */
  poolUsage?(): PoolUsage;
  /** The data directory's lock (PGlite on a directory only): a server publishes its CLI channel in it. */
  readonly dataDirLock?: DataDirLock;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface PoolUsage {
  /** Connections open (idle or in use), at most `max`. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));
const MIGRATION_LOCK_KEY = 4_242_001;

export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

// node-pg returns NUMERIC and BIGINT as strings; Drizzle's number modes convert them.
function describeConnectError(url: URL, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `cannot connect to PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}: ${message}`;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Called with every SQL statement the application runs (tests count queries with it). */
  onQuery?: (query: string) => void;
  /**
   * PGlite: whether a missing or empty data directory becomes a new database (true unless false).
   * The CLI says false for commands that expect data, so a forgotten DATA_DIR is not an empty ./data.
   */
  createDataDir?: boolean;
  /** PGlite: who opens the directory, as its lock shows it to processes it refuses ("donata serve"). */
  holder?: string;
  /** PGlite: a data directory others can enter (and this user cannot make private) is refused, not warned about. */
  production?: boolean;
  /** PGlite: where that warning goes (stderr by default). */
  warn?: (message: string) => void;
  /**
   * PGlite in memory ("memory://") only: start from this dump of a data directory (PGlite's
   * `dumpDataDir`) rather than from an empty database, skipping its creation (the test suite
   * opens hundreds of migrated databases from one dump).
   */
  snapshot?: Blob;
}

const warnOnStderr = (message: string) => process.stderr.write(`donata: warning: ${message}\n`);

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const logger = {
    logQuery(query: string) {
      spendStatement();
      options.onQuery?.(query);
    },
  };
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, logger);
  return openPglite(options.dataDir, logger, options);
}

type QueryLogger = { logQuery(query: string): void };

async function openPostgres(databaseUrl: string, poolSize: number, logger: QueryLogger): Promise<Database> {
  const url = parseDatabaseUrl(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5000 });
  pool.on("error", () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new DatabaseUnavailableError(describeConnectError(url, error));
  }
  const db = drizzlePg(pool, { schema, logger }) as unknown as Db;
  // Readiness checks get a connection of their own: a saturated main pool must not stall /readyz.
  const healthPool = new pg.Pool({
    connectionString: databaseUrl,
    max: 1,
    connectionTimeoutMillis: 2000,
    query_timeout: 2000,
    idleTimeoutMillis: 0,
  });
  healthPool.on("error", () => {
    // Replaced on the next check, like the main pool's.
  });
  return {
    kind: "postgres",
    db,
    poolUsage: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolSize }),
    async migrate() {
      // One migrator at a time across processes sharing the server.
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
        await migratePg(drizzlePg(client), { migrationsFolder });
        // On a Citus coordinator, the tables each migration created take their place on the cluster.
        if (await hasCitus(client)) await distributeSchema(client);
      } finally {
        await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
        await client.end();
      }
    },
    async ping() {
      await healthPool.query("select 1");
    },
    async close() {
      await Promise.all([pool.end(), healthPool.end()]);
    },
  };
}

export class MissingDataDirError extends DatabaseUnavailableError {
  override name = "MissingDataDirError";
}

function defaultHolder(): string {
  const script = process.argv[1];
  return script ? `node ${path.basename(script)}` : "node";
}

async function openPglite(
  dataDir: string,
  logger: QueryLogger,
  options: Pick<DatabaseOptions, "createDataDir" | "holder" | "production" | "warn" | "snapshot">,
): Promise<Database> {
  if (dataDir === "memory://") return wrapPglite(await createPglite(undefined, dataDir, options.snapshot), logger);
  if (options.createDataDir === false && !existsSync(path.join(dataDir, "PG_VERSION"))) {
    throw new MissingDataDirError(
      `no database in ${path.resolve(dataDir)} (${existsSync(dataDir) ? "an empty directory" : "no such directory"}): ` +
        "set DATA_DIR to the server's data directory, or create a database there with `donata migrate`",
    );
  }
  let stillOpen: string | undefined;
  try {
    createPrivateDirectory(dataDir);
    stillOpen = makeDataDirPrivate(dataDir);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot open the embedded database in ${dataDir}: ${message}`);
  }
  if (stillOpen && options.production) throw new DatabaseUnavailableError(stillOpen);
  if (stillOpen) (options.warn ?? warnOnStderr)(`${stillOpen}; in production (NODE_ENV=production) it is refused`);
  const lock = acquireDataDirLock(dataDir, options.holder ?? defaultHolder());
  try {
    // Under the lock: no other process of ours writes there meanwhile.
    makeDataDirFilesPrivate(dataDir);
    return wrapPglite(await createPglite(dataDir, dataDir), logger, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function createPglite(directory: string | undefined, name: string, snapshot?: Blob): Promise<PGlite> {
  try {
    // On disk, through a NODEFS whose files and directories are private from their creation.
    return directory
      ? await PGlite.create({ dataDir: directory, fs: new PrivateNodeFS(directory) })
      : await PGlite.create(snapshot ? { loadDataDir: snapshot } : {});
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot open the embedded database in ${name}: ${message}`);
  }
}

function wrapPglite(raw: PGlite, logger: QueryLogger, lock?: DataDirLock): Database {
  // On a data directory, what else reaches the instance (the inspection socket) waits at one gate with it.
  const client = lock ? gatedPglite(raw) : raw;
  const db = drizzlePglite(client, { schema, logger }) as unknown as Db;
  let closed = false;
  return {
    kind: "pglite",
    db,
    pglite: client,
    dataDirLock: lock,
    async migrate() {
      await migratePglite(drizzlePglite(client), { migrationsFolder });
    },
    async ping() {
      if (closed) throw new DatabaseUnavailableError("database is closed");
      await client.query("select 1");
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await raw.close();
      } finally {
        lock?.release();
      }
    },
  };
}

export { ConfigError };
