import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * One process at a time opens a PGlite data directory: the one holding `DATA_DIR/donata.pid`.
 * The file is created with O_EXCL, so of two processes starting together exactly one gets it;
 * a file left by a dead process is taken over (see docs/embedded-database.md).
 */

export const LOCK_FILE = "donata.pid";

export interface LockHolder {
  pid: number;
  /** What holds it, for the messages of the processes it refuses: "donata serve", "donata org create", … */
  command: string;
  startedAt: string;
  /** The Unix socket a running server takes CLI commands on (null: it takes none, or not yet). */
  channel: string | null;
  /** Why a running server takes no CLI commands (its socket directory was refused); absent otherwise. */
  channelRefused?: string;
}

export class DataDirBusyError extends Error {
  override name = "DataDirBusyError";
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      holder.command === "donata serve"
        ? `a server already runs on the data directory ${dataDir} (donata serve, pid ${holder.pid}, since ${holder.startedAt}); ` +
            "stop it first, or give this one another DATA_DIR"
        : `the data directory ${dataDir} is in use by ${holder.command} (pid ${holder.pid}, since ${holder.startedAt}); ` +
            "wait for it to finish or stop it",
    );
  }
}

export interface DataDirLock {
  readonly holder: LockHolder;
  /** Publishes (or withdraws) the socket this process takes CLI commands on, or why it takes none. */
  setChannel(channel: string | null, refused?: string): void;
  release(): void;
}

const lockPath = (dataDir: string) => path.join(dataDir, LOCK_FILE);

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, and someone else's.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(value.pid) || (value.pid as number) <= 0) return undefined;
    return {
      pid: value.pid as number,
      command: typeof value.command === "string" ? value.command : "an unknown process",
      startedAt: typeof value.startedAt === "string" ? value.startedAt : "an unknown time",
      channel: typeof value.channel === "string" ? value.channel : null,
      ...(typeof value.channelRefused === "string" ? { channelRefused: value.channelRefused } : {}),
    };
  } catch {
    return undefined;
  }
}

type Reading = { state: "absent" } | { state: "unreadable"; ageMs: number } | { state: "held"; holder: LockHolder };

function readLockFile(file: string): Reading {
  let text: string;
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(file).mtimeMs;
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "absent" };
    throw error;
  }
  const holder = parseHolder(text);
  return holder ? { state: "held", holder } : { state: "unreadable", ageMs };
}

/** The live process holding the directory, if any (a lock left by a dead process counts as none). */
export function readDataDirLock(dataDir: string): LockHolder | undefined {
  const reading = readLockFile(lockPath(dataDir));
  return reading.state === "held" && isAlive(reading.holder.pid) ? reading.holder : undefined;
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** A lock whose writer died between creating and filling it is garbage after this long. */
const UNREADABLE_GRACE_MS = 5000;

/**
 * Takes the directory's lock or throws DataDirBusyError naming its live holder.
 * A stale lock is removed under a second O_EXCL file, so two processes taking it over together
 * cannot both remove a lock (one of them might remove the other's fresh one); then both race
 * on O_EXCL again and one wins.
 */
export function acquireDataDirLock(dataDir: string, command: string): DataDirLock {
  const file = lockPath(dataDir);
  const holder: LockHolder = { pid: process.pid, command, startedAt: new Date().toISOString(), channel: null };
  for (let attempt = 0; attempt < 50; attempt++) {
    if (tryCreate(file, holder)) return heldLock(file, holder);
    const reading = readLockFile(file);
    if (reading.state === "absent") continue;
    if (reading.state === "held" && isAlive(reading.holder.pid)) throw new DataDirBusyError(dataDir, reading.holder);
    if (reading.state === "unreadable" && reading.ageMs < UNREADABLE_GRACE_MS) {
      // Being written by a process that has just created it.
      sleep(20);
      continue;
    }
    removeStaleLock(file, reading);
  }
  throw new Error(`could not take the lock ${file}: it keeps changing`);
}

function tryCreate(file: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

function sameReading(a: Reading, b: Reading): boolean {
  if (a.state === "held" && b.state === "held") {
    return a.holder.pid === b.holder.pid && a.holder.startedAt === b.holder.startedAt;
  }
  return a.state === b.state;
}

function removeStaleLock(file: string, stale: Reading): void {
  const guard = `${file}.takeover`;
  let fd: number;
  try {
    fd = openSync(guard, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another process is taking over; a guard its taker left behind by dying is cleared after a while.
    const guardReading = readLockFile(guard);
    const abandoned =
      (guardReading.state === "held" && !isAlive(guardReading.holder.pid)) ||
      (guardReading.state === "unreadable" && guardReading.ageMs > UNREADABLE_GRACE_MS);
    if (abandoned) unlinkQuietly(guard);
    else sleep(20);
    return;
  }
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, command: "takeover", startedAt: new Date().toISOString() }));
    closeSync(fd);
    // Still the stale lock we saw, and not a fresh one a faster process wrote meanwhile?
    if (sameReading(readLockFile(file), stale)) unlinkQuietly(file);
  } finally {
    unlinkQuietly(guard);
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function heldLock(file: string, holder: LockHolder): DataDirLock {
  let released = false;
  const ours = () => {
    const reading = readLockFile(file);
    return (
      reading.state === "held" && reading.holder.pid === holder.pid && reading.holder.startedAt === holder.startedAt
    );
  };
  const release = () => {
    if (released) return;
    released = true;
    process.off("exit", release);
    for (const signal of SIGNALS) process.off(signal, onSignal);
    try {
      if (ours()) unlinkSync(file);
    } catch {
      // Gone already, or the directory with it: nothing left to release.
    }
  };
  // A process that handles the signal itself (the server) closes its database and so releases;
  // otherwise the signal would end the process without an "exit" event: release, then die of it.
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return;
    release();
    process.kill(process.pid, signal);
  };
  process.on("exit", release);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    holder,
    setChannel(channel, refused) {
      if (released) return;
      holder.channel = channel;
      if (refused) holder.channelRefused = refused;
      else delete holder.channelRefused;
      // Written aside and renamed over, so a reader never sees half a file.
      const next = `${file}.${process.pid}.tmp`;
      writeFileSync(next, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
      renameSync(next, file);
    },
    release,
  };
}
