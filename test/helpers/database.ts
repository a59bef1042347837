import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";

export const testDatabaseUrl = (): string | undefined => inject("databaseUrl");

/**
 * PostgreSQL when the run has one, otherwise a fresh in-memory PGlite, migrated. `applicationName`
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
  const database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4, onQuery });
  if (!databaseUrl) await database.migrate();
  return database;
}

/**
 * A database of one test file's own, next to the run's PostgreSQL test database (for tests that
 * need it to themselves: workers racing, CLI commands acting on every organization); migrated when asked.
 */
export async function createPrivateDatabase(
  sharedUrl: string,
  label: string,
  options: { migrate?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${new URL(sharedUrl).pathname.slice(1)}_${label}_${randomBytes(3).toString("hex")}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: sharedUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(sharedUrl);
  url.pathname = `/${name}`;
  if (options.migrate) {
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: "" });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
  }
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}
