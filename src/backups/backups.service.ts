import { spawn } from "node:child_process";
import { createReadStream, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import pg from "pg";
import type { Config } from "../config.js";
import { type Database, type Executor, openDatabase } from "../db/client.js";
import { hasCitus } from "../db/distribution.js";
import { PrivateNodeFS } from "../db/private-node-fs.js";
import { createSecretBox, KEY_FILE_NAME, parseEncryptionKey } from "../secrets/secret-box.js";
import {
  BackupError,
  type BackupManifest,
  readBackupFile,
  type SchemaVersion,
  writeBackupFile,
} from "./backup-file.js";
import { tarPgliteDataDir } from "./data-dir-tar.js";

const gzipAsync = promisify(gzip);

interface JournalEntry {
  tag: string;
  when: number;
}

/** The migrations this code ships (src/db/migrations/meta/_journal.json). */
export function codeSchemaVersion(): { migrations: number; last: JournalEntry; entries: JournalEntry[] } {
  const journal = JSON.parse(readFileSync(new URL("../db/migrations/meta/_journal.json", import.meta.url), "utf8")) as {
    entries: JournalEntry[];
  };
  const entries = journal.entries;
  return { migrations: entries.length, last: entries[entries.length - 1] as JournalEntry, entries };
}

const donataVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** The migrations applied to a database, named by the journal's tags. */
export async function appliedSchemaVersion(db: Executor): Promise<SchemaVersion> {
  return schemaOfRows(
    rowsOf<{ hash: string; created_at: string | number }>(
      await db.execute(sql`select hash, created_at from drizzle.__drizzle_migrations order by created_at, id`),
    ),
  );
}

/**
 * The fingerprint of the key processor secrets are sealed with, without creating a key file:
 * DONATA_ENCRYPTION_KEY, else DATA_DIR/encryption.key when it exists; null when there is none.
 */
export function encryptionKeyId(config: Pick<Config, "encryptionKey" | "dataDir">): string | null {
  try {
    if (config.encryptionKey) return createSecretBox(parseEncryptionKey(config.encryptionKey)).keyId;
    if (config.dataDir === "memory://") return null;
    return createSecretBox(parseEncryptionKey(readFileSync(path.join(config.dataDir, KEY_FILE_NAME), "utf8"))).keyId;
  } catch {
    return null;
  }
}

/** Key ids of the sealed processor secrets ("v1.<key id>.…") and how many accounts hold them. */
async function sealedSecrets(db: Executor): Promise<{ accounts: number; keyId: string | null }> {
  const rows = rowsOf<{ key_id: string | null; accounts: string | number }>(
    await db.execute(
      sql`select min(split_part(secret_key_ciphertext, '.', 2)) as key_id, count(*) as accounts from processor_accounts`,
    ),
  );
  return { accounts: Number(rows[0]?.accounts ?? 0), keyId: rows[0]?.key_id ?? null };
}

/**
 * Writes a backup of the database to `out` (see backup-file.ts for the format). On PGlite the
 * data directory is read inside the instance that serves it; on PostgreSQL pg_dump takes it.
 */
export async function createBackup(
  context: { config: Config; database: Database },
  out: string,
  options: { force?: boolean; now?: Date } = {},
): Promise<{ file: string; manifest: BackupManifest }> {
  const { config, database } = context;
  if (database.kind === "postgres" && (await onCitus(database.db))) {
    throw new BackupError(
      "donata backup cannot back up a Citus cluster: pg_dump on the coordinator copies the schema but not the shards on the workers. " +
        "Use the backups of your Citus service, or a physical backup of every node taken together (docs/scaling.md)",
    );
  }
  const schema = await appliedSchemaVersion(database.db);
  const secrets = await sealedSecrets(database.db);
  const manifest = {
    format: 1 as const,
    database: database.kind,
    schema,
    created_at: (options.now ?? new Date()).toISOString(),
    donata_version: donataVersion(),
    encryption_key_id: secrets.keyId ?? encryptionKeyId(config),
    processor_accounts: secrets.accounts,
  };
  const file = path.resolve(out);
  const pglite = database.pglite;
  const complete = pglite
    ? await writeBackupFile(
        file,
        manifest,
        "pglite-datadir-tar-gzip",
        async (payload) => writeFile(payload, await gzipAsync(await tarPgliteDataDir(pglite))),
        options,
      )
    : await writeBackupFile(
        file,
        manifest,
        "pg_dump-custom",
        (payload) => runClientTool("pg_dump", ["--format=custom", `--file=${payload}`], databaseUrlOf(config)),
        options,
      );
  return { file, manifest: complete };
}

export interface RestoreResult {
  manifest: BackupManifest;
  target: string;
  /** Migrations this code has beyond the backup's: they run on the next start. */
  pendingMigrations: number;
  /** Restored into a Citus coordinator: migrated, and the tables laid out on the cluster. */
  cluster: boolean;
  warnings: string[];
}

/**
 * Restores a backup into the configured database, which must hold no data yet: an empty or missing
 * DATA_DIR (PGlite), a database without Donata tables (PostgreSQL). Every check on the file runs
 * before anything is written.
 */
export async function restoreBackup(config: Config, file: string): Promise<RestoreResult> {
  const { manifest, payloadOffset } = await readBackupFile(file);
  const kind = config.databaseUrl ? "postgres" : "pglite";
  if (manifest.database !== kind) {
    throw new BackupError(
      manifest.database === "pglite"
        ? "this backup is of the embedded database (PGlite): restore it without DATABASE_URL, into an empty DATA_DIR"
        : "this backup is of a PostgreSQL database: restore it with DATABASE_URL set to an empty PostgreSQL database",
    );
  }
  const code = codeSchemaVersion();
  const known = code.entries.some((entry) => entry.when === manifest.schema.last_created_at);
  if (
    manifest.schema.migrations > code.migrations ||
    (manifest.schema.last_created_at ?? 0) > code.last.when ||
    (manifest.schema.migrations > 0 && !known)
  ) {
    throw new BackupError(
      `this backup was made by a newer Donata (schema at ${manifest.schema.last_tag ?? "?"}, ${manifest.schema.migrations} migrations; this one has ${code.migrations}, up to ${code.last.tag}): upgrade first`,
    );
  }
  const target =
    kind === "pglite"
      ? await restorePglite(config, file, payloadOffset)
      : await restorePostgres(config, file, payloadOffset);
  const restored = target.schema;
  if (restored.migrations !== manifest.schema.migrations || restored.last_hash !== manifest.schema.last_hash) {
    throw new BackupError(
      `the restored database does not show the backup's schema version (${restored.migrations} migrations)`,
    );
  }
  const warnings: string[] = [];
  const keyId = encryptionKeyId(config);
  if (manifest.processor_accounts > 0 && manifest.encryption_key_id !== keyId) {
    const where = config.encryptionKey
      ? "DONATA_ENCRYPTION_KEY"
      : config.dataDir === "memory://"
        ? "this configuration"
        : path.join(config.dataDir, KEY_FILE_NAME);
    warnings.push(
      `the ${manifest.processor_accounts} processor account(s) in this backup have secrets encrypted with the key ${manifest.encryption_key_id}, ` +
        `but ${where} ${keyId ? `holds the key ${keyId}` : "holds no key"}: they cannot be decrypted. Before starting, copy the ` +
        `${KEY_FILE_NAME} of the backed-up DATA_DIR (fingerprint ${manifest.encryption_key_id}) to ${config.dataDir === "memory://" ? "DATA_DIR" : path.join(config.dataDir, KEY_FILE_NAME)} ` +
        "or set DONATA_ENCRYPTION_KEY to that key; without it, enter the Stripe keys again (admin panel → Payment settings).",
    );
  }
  // Into a Citus coordinator, the restored tables are the coordinator's own until they take their
  // place: the newer migrations run and every table moves to its shards now (an organization's
  // rows together), so the cluster serves what was restored at its next start.
  let cluster = false;
  if (kind === "postgres" && (await withClient(config, hasCitus))) {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: "" });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
    cluster = true;
  }
  const pendingMigrations = cluster ? 0 : code.migrations - manifest.schema.migrations;
  return { manifest, target: target.name, pendingMigrations, cluster, warnings };
}

async function restorePglite(
  config: Config,
  file: string,
  payloadOffset: number,
): Promise<{ name: string; schema: SchemaVersion }> {
  const dataDir = config.dataDir;
  if (dataDir === "memory://")
    throw new BackupError("DATA_DIR is memory://: set DATA_DIR to a new directory to restore into");
  const existing = await readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw new BackupError(`cannot read DATA_DIR ${dataDir}: ${error.message}`);
  });
  // The key file may be put there first: it is what the restored secrets need.
  if (existing?.some((name) => name !== KEY_FILE_NAME)) {
    throw new BackupError(`DATA_DIR ${dataDir} is not empty; restore into a new directory, then point DATA_DIR at it`);
  }
  const payload = (await readFile(path.resolve(file))).subarray(payloadOffset);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  try {
    const restored = await PGlite.create({
      dataDir,
      fs: new PrivateNodeFS(dataDir),
      loadDataDir: new Blob([payload], { type: "application/x-gzip" }),
    });
    try {
      return { name: dataDir, schema: await schemaOfPglite(restored) };
    } finally {
      await restored.close();
    }
  } catch (error) {
    // Leave the directory as it was found: gone, or holding only the key file.
    if (!existing) await rm(dataDir, { recursive: true, force: true });
    else {
      for (const name of await readdir(dataDir)) {
        if (name !== KEY_FILE_NAME) await rm(path.join(dataDir, name), { recursive: true, force: true });
      }
    }
    if (error instanceof BackupError) throw error;
    throw new BackupError(`the backup could not be restored (${(error as Error).message}); DATA_DIR was left empty`);
  }
}

async function schemaOfPglite(pglite: PGlite): Promise<SchemaVersion> {
  const result = await pglite.query<{ hash: string; created_at: string | number }>(
    "select hash, created_at from drizzle.__drizzle_migrations order by created_at, id",
  );
  return schemaOfRows(result.rows);
}

function schemaOfRows(rows: { hash: string; created_at: string | number }[]): SchemaVersion {
  const last = rows[rows.length - 1];
  const lastCreatedAt = last ? Number(last.created_at) : null;
  return {
    migrations: rows.length,
    last_tag: codeSchemaVersion().entries.find((entry) => entry.when === lastCreatedAt)?.tag ?? null,
    last_created_at: lastCreatedAt,
    last_hash: last?.hash ?? null,
  };
}

async function restorePostgres(
  config: Config,
  file: string,
  payloadOffset: number,
): Promise<{ name: string; schema: SchemaVersion }> {
  const target = databaseUrlOf(config);
  const name = `PostgreSQL database "${target.database}" on ${target.host}`;
  const tables = await withClient(config, async (client) => {
    const result = await client.query<{ count: string }>(
      // Tables, not views: a Citus coordinator's database has views of its own in public.
      "select count(*) from information_schema.tables where table_schema in ('public', 'drizzle') and table_type = 'BASE TABLE'",
    );
    return Number(result.rows[0]?.count ?? 0);
  });
  if (tables > 0) {
    throw new BackupError(
      `the ${name} already has ${tables} table(s); restore into a new empty database (createdb), then point DATABASE_URL at it`,
    );
  }
  await runClientTool(
    "pg_restore",
    ["--no-owner", "--no-acl", "--exit-on-error", "--single-transaction"],
    target,
    createReadStream(path.resolve(file), { start: payloadOffset }),
  );
  const schema = await withClient(config, async (client) =>
    schemaOfRows(
      (
        await client.query<{ hash: string; created_at: string }>(
          "select hash, created_at from drizzle.__drizzle_migrations order by created_at, id",
        )
      ).rows,
    ),
  );
  return { name, schema };
}

/** Whether the database is a Citus coordinator. */
async function onCitus(db: Executor): Promise<boolean> {
  const result = (await db.execute(sql`select 1 from pg_extension where extname = 'citus'`)) as unknown as {
    rows: unknown[];
  };
  return result.rows.length > 0;
}

async function withClient<T>(config: Config, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    throw new BackupError(`cannot connect to ${databaseUrlOf(config).describe}: ${(error as Error).message}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface ClientTarget {
  /** The URL without its password, which goes in PGPASSWORD (not on a command line others can read). */
  dbname: string;
  password: string | undefined;
  database: string;
  host: string;
  describe: string;
}

function databaseUrlOf(config: Config): ClientTarget {
  const url = new URL(config.databaseUrl ?? "");
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.password = "";
  const database = decodeURIComponent(url.pathname.slice(1));
  const host = `${url.hostname}:${url.port || 5432}`;
  return { dbname: url.toString(), password, database, host, describe: `PostgreSQL at ${host}/${database}` };
}

const CLIENT_TOOLS_HINT =
  "install the PostgreSQL client tools of the server's major version or newer (Debian/Ubuntu: apt install postgresql-client; macOS: brew install libpq)";

/** Runs pg_dump / pg_restore on the target database; a failure becomes one BackupError line. */
function runClientTool(
  tool: "pg_dump" | "pg_restore",
  args: string[],
  target: ClientTarget,
  input?: NodeJS.ReadableStream,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...(target.password === undefined ? {} : { PGPASSWORD: target.password }) };
    const child = spawn(tool, [...args, `--dbname=${target.dbname}`], {
      env,
      stdio: [input ? "pipe" : "ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    if (input && child.stdin) {
      child.stdin.on("error", () => {
        // pg_restore stopped reading (it failed): its exit code and message say why.
      });
      input.pipe(child.stdin);
    }
    child.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        new BackupError(
          error.code === "ENOENT" ? `${tool} was not found on PATH: ${CLIENT_TOOLS_HINT}` : `${tool}: ${error.message}`,
        ),
      );
    });
    child.on("close", (code) => {
      if (code === 0) return resolve();
      const message = stderr
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean)
        .slice(0, 3)
        .join("; ");
      const hint = /version mismatch/.test(stderr) ? `; ${CLIENT_TOOLS_HINT}` : "";
      reject(new BackupError(`${tool} failed (exit ${code}): ${message || "no message"}${hint}`));
    });
  });
}
