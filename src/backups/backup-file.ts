import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { link, open, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";

/** A backup that cannot be made or restored, said in one line (the CLI prints it and exits 1). */
export class BackupError extends Error {
  override name = "BackupError";
}

export const BACKUP_FORMAT = 1;
const MAGIC = "DONATA-BACKUP 1\n";
const MAX_MANIFEST_BYTES = 64 * 1024;

/** The applied migrations: their count and the last one (drizzle.__drizzle_migrations vs the journal). */
export interface SchemaVersion {
  migrations: number;
  last_tag: string | null;
  /** The journal's `when` of the last migration, which drizzle stores as created_at. */
  last_created_at: number | null;
  last_hash: string | null;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  database: "pglite" | "postgres";
  schema: SchemaVersion;
  created_at: string;
  donata_version: string;
  /** Fingerprint (SecretBox keyId) of the key that sealed the processor secrets; null: no key yet. */
  encryption_key_id: string | null;
  /** Processor accounts (Stripe keys) in the backup: their secrets need the key above. */
  processor_accounts: number;
  payload: { format: "pglite-datadir-tar-gzip" | "pg_dump-custom"; bytes: number; sha256: string };
}

/**
 * A backup file: the line "DONATA-BACKUP 1", the manifest as one JSON line, then the payload
 * (PGlite: a gzipped tar of its data directory; PostgreSQL: pg_dump's custom format). The manifest
 * gives the payload's size and SHA-256, so a truncated or damaged file is refused before anything
 * is restored. Written beside its final name and renamed (or linked, which refuses an existing
 * name) once complete: the final name never holds half a backup.
 */
export async function writeBackupFile(
  out: string,
  manifest: Omit<BackupManifest, "payload">,
  payloadFormat: BackupManifest["payload"]["format"],
  writePayload: (file: string) => Promise<void>,
  options: { force?: boolean } = {},
): Promise<BackupManifest> {
  const target = path.resolve(out);
  const directory = path.dirname(target);
  const directoryStat = await stat(directory).catch(() => undefined);
  if (!directoryStat?.isDirectory()) throw new BackupError(`the directory ${directory} does not exist`);
  if (!options.force && (await stat(target).catch(() => undefined))) {
    throw new BackupError(`${target} already exists: choose another name, or pass --force to replace it`);
  }
  const stem = path.join(directory, `.${path.basename(target)}.${randomBytes(4).toString("hex")}`);
  const payloadFile = `${stem}.payload.partial`;
  const partial = `${stem}.partial`;
  try {
    await writePayload(payloadFile);
    const { bytes, sha256 } = await digest(payloadFile, 0);
    const complete: BackupManifest = { ...manifest, payload: { format: payloadFormat, bytes, sha256 } };
    const output = createWriteStream(partial, { mode: 0o600 });
    output.write(`${MAGIC}${JSON.stringify(complete)}\n`);
    await pipeline(createReadStream(payloadFile), output);
    const handle = await open(partial, "r+");
    await handle.sync().finally(() => handle.close());
    if (options.force) {
      await rename(partial, target);
    } else {
      await link(partial, target).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") throw new BackupError(`${target} already exists: pass --force to replace it`);
        throw error;
      });
    }
    return complete;
  } finally {
    await unlink(payloadFile).catch(() => {});
    await unlink(partial).catch(() => {});
  }
}

/** Reads and checks a backup's manifest and payload (size and SHA-256); returns where the payload starts. */
export async function readBackupFile(file: string): Promise<{ manifest: BackupManifest; payloadOffset: number }> {
  const target = path.resolve(file);
  const handle = await open(target, "r").catch((error: NodeJS.ErrnoException) => {
    throw new BackupError(`cannot read ${target}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
  });
  let head: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    head = Buffer.alloc(Math.min(size, MAX_MANIFEST_BYTES));
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (head.subarray(0, MAGIC.length).toString("latin1") !== MAGIC) {
    throw new BackupError(`${target} is not a Donata backup (made by donata backup)`);
  }
  const end = head.indexOf(0x0a, MAGIC.length);
  const manifest = end < 0 ? undefined : parseManifest(head.subarray(MAGIC.length, end).toString("utf8"));
  if (!manifest) throw new BackupError(`${target} is damaged: its manifest cannot be read`);
  const payloadOffset = end + 1;
  if (size - payloadOffset !== manifest.payload.bytes) {
    throw new BackupError(
      `${target} is truncated or damaged: ${size - payloadOffset} bytes of data where the manifest says ${manifest.payload.bytes}; nothing was restored`,
    );
  }
  const { sha256 } = await digest(target, payloadOffset);
  if (sha256 !== manifest.payload.sha256) {
    throw new BackupError(`${target} is damaged: its data does not match its checksum; nothing was restored`);
  }
  return { manifest, payloadOffset };
}

function parseManifest(text: string): BackupManifest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const manifest = value as BackupManifest;
  const valid =
    typeof manifest === "object" &&
    manifest !== null &&
    typeof manifest.format === "number" &&
    (manifest.database === "pglite" || manifest.database === "postgres") &&
    typeof manifest.schema?.migrations === "number" &&
    typeof manifest.payload?.bytes === "number" &&
    typeof manifest.payload?.sha256 === "string";
  if (valid && manifest.format > BACKUP_FORMAT) {
    throw new BackupError(`this backup has format ${manifest.format}, made by a newer Donata: upgrade first`);
  }
  return valid ? manifest : undefined;
}

async function digest(file: string, start: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(file, { start })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest("hex") };
}
