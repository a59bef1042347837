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
