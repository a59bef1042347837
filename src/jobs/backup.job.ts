import { mkdir, readdir, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { createBackup } from "../backups/backups.service.js";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import { startLoop } from "./loop.js";

/** Our periodic backups, named by their UTC time: donata-20261124T030000Z.backup. Nothing else is ever deleted. */
const PERIODIC_NAME = /^donata-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.backup$/;
/** What a periodic backup cut short (the server killed while writing it) leaves behind, see writeBackupFile. */
const PERIODIC_PARTIAL = /^\.donata-\d{8}T\d{6}Z\.backup\.[0-9a-f]{8}(\.payload)?\.partial$/;
const PARTIAL_MAX_AGE_MS = 3600_000;
/** How often the loop looks whether a backup is due (a look is one readdir). */
const CHECK_SECONDS = 600;

export const periodicBackupName = (now: Date) =>
  `donata-${now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}Z$/, "Z")}.backup`;

function takenAt(name: string): number | undefined {
  return PERIODIC_NAME.test(name) ? Date.parse(name.replace(PERIODIC_NAME, "$1-$2-$3T$4:$5:$6Z")) : undefined;
}

export interface PeriodicBackupResult {
  /** The backup taken by this pass, if one was due. */
  created: string | undefined;
  /** Our older backups deleted beyond BACKUP_KEEP. */
  deleted: string[];
}

/**
 * One pass: a backup into the backup directory when the newest of ours is older than the interval,
 * then only the newest `keep` of ours are kept. `now` is the pass's clock (tests move it).
 */
export async function runPeriodicBackup(
  context: { config: Config; database: Database },
  now: Date = new Date(),
): Promise<PeriodicBackupResult> {
  const { dir, keep, intervalHours } = context.config.backups;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const names = await readdir(dir);
  const ours = names.filter((name) => takenAt(name) !== undefined).sort();
  for (const name of names.filter((candidate) => PERIODIC_PARTIAL.test(candidate))) {
    const file = path.join(dir, name);
    const modified = (await stat(file).catch(() => undefined))?.mtimeMs ?? now.getTime();
    if (now.getTime() - modified > PARTIAL_MAX_AGE_MS) await unlink(file).catch(() => {});
  }
  const newest = ours.length ? (takenAt(ours[ours.length - 1] as string) as number) : undefined;
  let created: string | undefined;
  if (newest === undefined || now.getTime() - newest >= intervalHours * 3600_000) {
    const name = periodicBackupName(now);
    const { file } = await createBackup(context, path.join(dir, name), { now });
    created = file;
    if (!ours.includes(name)) ours.push(name);
  }
  const deleted = ours.sort().slice(0, Math.max(0, ours.length - keep));
  for (const name of deleted) await unlink(path.join(dir, name));
  return { created, deleted: deleted.map((name) => path.join(dir, name)) };
}

/**
 * Periodic backups of the embedded database on a data directory (PostgreSQL has its own tools,
 * memory:// nothing to keep); undefined when they are off (BACKUP_KEEP=0). A failed pass is reported
 * and the next one tries again.
 */
export function startPeriodicBackups(
  context: { config: Config; database: Database },
  options: { onError(error: unknown): void; onBackup?(result: PeriodicBackupResult): void },
) {
  const { config, database } = context;
  if (database.kind !== "pglite" || config.dataDir === "memory://" || config.backups.keep === 0) return undefined;
  let starting = true;
  return startLoop(
    async () => {
      // The first look waits one interval: start-up (migrations, the demo seed) is not slowed by a dump.
      if (starting) {
        starting = false;
        return;
      }
      const result = await runPeriodicBackup(context);
      if (result.created) options.onBackup?.(result);
    },
    { intervalSeconds: CHECK_SECONDS, onError: options.onError },
  );
}
