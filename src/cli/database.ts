import { AsyncLocalStorage } from "node:async_hooks";
import { type Config, loadConfig } from "../config.js";
import { type Database, openDatabase } from "../db/client.js";

export interface CommandContext {
  /** "donata org create": shown in the data directory's lock while this command holds it. */
  holder: string;
  /** Set when the command runs inside a server (the local channel): its open database, shared. */
  server?: { config: Config; database: Database };
}

const commandContext = new AsyncLocalStorage<CommandContext>();

/** Runs `work` as the named command, inside the server whose database it then uses when `server` is given. */
export function runAsCommand<T>(context: CommandContext, work: () => Promise<T>): Promise<T> {
  return commandContext.run(context, work);
}

export interface OpenOptions {
  /**
   * Create the embedded database when DATA_DIR is missing or empty (migrate, serve, setup).
   * Without it such a directory is refused: a command that expects data must not find a new, empty database.
   */
  create?: boolean;
}

/**
 * Opens the configured database and brings its schema up to date. Inside a server (a command sent
 * over the local channel) it is the server's own database, already migrated, whose close() does nothing.
 */
export async function openMigratedDatabase(
  env: NodeJS.ProcessEnv,
  options: OpenOptions = {},
): Promise<{ config: Config; database: Database }> {
  const context = commandContext.getStore();
  if (context?.server) {
    const { config, database } = context.server;
    return { config, database: { ...database, close: async () => {} } };
  }
  const config = loadConfig(env);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    createDataDir: options.create ?? false,
    holder: context?.holder,
    production: config.production,
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
  options: OpenOptions = {},
): Promise<T> {
  const context = await openMigratedDatabase(env, options);
  try {
    return await work(context);
  } finally {
    await context.database.close();
  }
}
