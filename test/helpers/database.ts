import { inject } from "vitest";
import { type Database, openDatabase } from "../../src/db/client.js";

export const testDatabaseUrl = (): string | undefined => inject("databaseUrl");

/** PostgreSQL when the run has one, otherwise a fresh in-memory PGlite, migrated. */
export async function openTestDatabase(onQuery?: (query: string) => void): Promise<Database> {
  const databaseUrl = testDatabaseUrl();
  const database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4, onQuery });
  if (!databaseUrl) await database.migrate();
  return database;
}
