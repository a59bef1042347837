import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * A PGlite data directory holds everything: donors' data, password hashes, the platform's signing
 * keys, postgresql.conf. It is the server user's alone: created 0700, and at every start the
 * directory made 0700 and every file in it stripped of its group and other bits (an install made
 * by an older Donata had 0755 and 0666). New files are private from their creation
 * (src/db/private-node-fs.ts). See docs/embedded-database.md, "Who may read it".
 */

const GROUP_AND_OTHERS = 0o077;

/** Creates the directory (and any missing parent) 0700. */
export function createPrivateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
}

/**
 * Makes the data directory itself 0700, as far as this user may. Returns why it is still open to
 * others (it belongs to another user, who did not make it private), or undefined.
 */
export function makeDataDirPrivate(dataDir: string): string | undefined {
  // Windows has no such modes (its ACLs decide): nothing to check there.
  if (process.platform === "win32") return undefined;
  const resolved = path.resolve(dataDir);
  const stat = statSync(resolved);
  if ((stat.mode & GROUP_AND_OTHERS) !== 0) chmodQuietly(resolved, 0o700);
  const mode = statSync(resolved).mode & 0o777;
  if ((mode & GROUP_AND_OTHERS) === 0) return undefined;
  return (
    `the data directory ${resolved} can be entered by other users (mode ${mode.toString(8).padStart(4, "0")}) ` +
    `and this user (uid ${process.getuid?.() ?? "?"}) cannot make it private: make it belong to the user that runs ` +
    `Donata, with mode 0700 (chown USER ${resolved} && chmod 700 ${resolved})`
  );
}

/** Strips the group and other bits from everything inside the data directory (links are not followed). */
export function makeDataDirFilesPrivate(dataDir: string): void {
  if (process.platform === "win32") return;
  for (const name of readdirSync(dataDir)) tighten(path.join(dataDir, name));
}

function tighten(file: string): void {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(file);
  } catch {
    return; // gone, or not this user's to look at (lost+found on a mount point): nothing to tighten
  }
  if (stat.isSymbolicLink()) return;
  const mode = stat.mode & 0o7777;
  const wanted = stat.isDirectory() ? 0o700 : mode & ~GROUP_AND_OTHERS;
  if (mode !== wanted) chmodQuietly(file, wanted);
  if (!stat.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(file);
  } catch {
    return;
  }
  for (const name of names) tighten(path.join(file, name));
}

function chmodQuietly(file: string, mode: number): void {
  try {
    chmodSync(file, mode);
  } catch {
    // Not this user's, or a filesystem without modes (FUSE, SMB, read-only): the data directory's own mode is
    // checked afterwards and decides; what is inside a private one is unreachable anyway.
  }
}
