import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { ConfigError, parseDatabaseUrl } from "../config.js";
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
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const logger = {
    logQuery(query: string) {
      spendStatement();
      options.onQuery?.(query);
    },
  };
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, logger);
  return openPglite(options.dataDir, logger);
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

async function openPglite(dataDir: string, logger: QueryLogger): Promise<Database> {
  let client: PGlite;
  try {
    if (dataDir !== "memory://") mkdirSync(dataDir, { recursive: true });
    client = await PGlite.create(dataDir === "memory://" ? undefined : dataDir);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot open the embedded database in ${dataDir}: ${message}`);
  }
  const db = drizzlePglite(client, { schema, logger }) as unknown as Db;
  let closed = false;
  return {
    kind: "pglite",
    db,
    pglite: client,
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
      await client.close();
    },
  };
}

export { ConfigError };
