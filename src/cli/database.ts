import { type Config, loadConfig } from "../config.js";
import { type Database, openDatabase } from "../db/client.js";

/** Opens the configured database and brings its schema up to date. */
export async function openMigratedDatabase(env: NodeJS.ProcessEnv): Promise<{ config: Config; database: Database }> {
  const config = loadConfig(env);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  return { config, database };
}

export async function withDatabase<T>(
  env: NodeJS.ProcessEnv,
  work: (context: { config: Config; database: Database }) => Promise<T>,
): Promise<T> {
  const context = await openMigratedDatabase(env);
  try {
    return await work(context);
  } finally {
    await context.database.close();
  }
}
