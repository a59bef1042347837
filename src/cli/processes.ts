import cluster, { type Worker } from "node:cluster";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import { UsageError } from "./cli-kit.js";

/** What every child runs: the `donata` command itself, as the operator's own start does. */
const BIN = fileURLToPath(new URL("../../bin/donata.js", import.meta.url));

const MAX_PROCESSES = 64;
/** A child that lived this long before it exited starts again at once (after the first delay). */
const STABLE_MS = 60_000;
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

/** `--processes N`: 1 (the default) is one process that does everything. */
export function processCount(raw: unknown): number {
  if (raw === undefined) return 1;
  const text = String(raw);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_PROCESSES) {
    throw new UsageError(`--processes must be a whole number from 1 to ${MAX_PROCESSES}, got "${text}"`);
  }
  return Number(text);
}

/**
 * PGlite is one connection inside one process, which holds DATA_DIR: a second process can neither
 * open it nor see the first one's writes (docs/embedded-database.md). Refused before anything is opened.
 */
export function refuseEmbeddedDatabase(env: NodeJS.ProcessEnv, what: string) {
  if (env.DATABASE_URL) return;
  throw new UsageError(
    `${what} needs PostgreSQL (DATABASE_URL=postgres://…): the embedded database in DATA_DIR is opened by one process only, so \`donata serve\` alone serves HTTP and runs the worker there`,
  );
}

/** What a child of `serve --processes` says to its primary once it listens and handles SIGTERM. */
export interface ReadyMessage {
  donata: "ready";
  /** The port an HTTP child listens on (shared by all of them); absent for the worker. */
  port?: number;
}

/** In a child of `serve --processes`: tells the primary this process is ready; elsewhere nothing. */
export function announceReady(port?: number) {
  if (cluster.isWorker) process.send?.({ donata: "ready", port } satisfies ReadyMessage);
}

export class ProcessError extends Error {
  override name = "ProcessError";
}

export interface ChildSpec {
  /** "HTTP process 2", "worker": how the logs and the start-up box name it. */
  label: string;
  /** The `donata` command it runs, e.g. ["serve", "--no-worker"]. */
  args: string[];
}

interface Slot {
  spec: ChildSpec;
  worker: Worker;
  startedAt: number;
  /** Exits in a row, each soon after its start: the next start waits longer. */
  failures: number;
  ready: boolean;
  /** Set once this slot's first child was ready: later exits restart it instead of failing start-up. */
  wasReady: boolean;
  restart?: NodeJS.Timeout;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

export interface Supervisor {
  /** Resolves once every child is ready, with their pids and the HTTP port; rejects when one exits first. */
  started: Promise<{ pids: Record<string, number>; port: number | undefined }>;
  /** Sends SIGTERM to every child and waits for all to exit; returns those that did not exit 0. */
  stop(): Promise<string[]>;
}

const describeExit = (code: number | null, signal: string | null) =>
  signal ? `was killed by ${signal}` : `exited with code ${code}`;

/**
 * The primary of `serve --processes`: forks each child (node:cluster, so the HTTP children share
 * one port and the primary hands them connections in turn), restarts one that exits with a
 * growing delay (1 s, 2 s, … 30 s; back to 1 s after a child that ran a minute), and logs each.
 */
export function superviseChildren(specs: ChildSpec[], options: { env: NodeJS.ProcessEnv; log: Logger }): Supervisor {
  const slots: Slot[] = [];
  let stopping = false;
  let starting = true;
  let settleStart: { resolve(): void; reject(error: Error): void } | undefined;
  const allReady = new Promise<void>((resolve, reject) => {
    settleStart = { resolve, reject };
  });
  let port: number | undefined;

  const fork = (spec: ChildSpec, previous?: Slot): Slot => {
    cluster.setupPrimary({ exec: BIN, args: spec.args });
    const worker = cluster.fork(options.env);
    const slot: Slot = {
      spec,
      worker,
      startedAt: Date.now(),
      failures: previous?.failures ?? 0,
      ready: false,
      wasReady: previous?.wasReady ?? false,
      exited: new Promise((resolve) => worker.once("exit", (code, signal) => resolve({ code, signal }))),
    };
    worker.on("message", (message: Partial<ReadyMessage>) => {
      if (message?.donata !== "ready") return;
      slot.ready = true;
      if (message.port !== undefined) port = message.port;
      if (slot.wasReady) options.log.warn(`${spec.label} started again (pid ${worker.process.pid})`);
      slot.wasReady = true;
      if (starting && slots.every((each) => each.ready)) {
        starting = false;
        settleStart?.resolve();
      }
    });
    void slot.exited.then(({ code, signal }) => exited(slot, code, signal));
    return slot;
  };

  const exited = (slot: Slot, code: number | null, signal: string | null) => {
    if (stopping) return;
    const how = `${slot.spec.label} (pid ${slot.worker.process.pid}) ${describeExit(code, signal)}`;
    if (!slot.wasReady) {
      // Start-up failed (a port in use, the database unreachable): restarting would fail the same way.
      stopping = true;
      settleStart?.reject(new ProcessError(`${how} before it was ready; see its output above`));
      return;
    }
    slot.failures = Date.now() - slot.startedAt >= STABLE_MS ? 0 : slot.failures + 1;
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, slot.failures - 1));
    options.log.error(`${how}; starting it again in ${delay / 1000} s`);
    slot.restart = setTimeout(() => {
      if (stopping) return;
      slots[slots.indexOf(slot)] = fork(slot.spec, slot);
    }, delay);
  };

  for (const spec of specs) slots.push(fork(spec));

  return {
    started: allReady.then(() => ({
      pids: Object.fromEntries(slots.map((slot) => [slot.spec.label, slot.worker.process.pid as number])),
      port,
    })),
    async stop() {
      stopping = true;
      for (const slot of slots) {
        clearTimeout(slot.restart);
        if (!slot.worker.isDead()) slot.worker.process.kill("SIGTERM");
      }
      const outcomes = await Promise.all(
        slots.map(async (slot) => {
          // A slot waiting for its restart has nothing left to stop.
          if (slot.restart) return undefined;
          const { code, signal } = await slot.exited;
          // One still starting has no handler yet: SIGTERM ends it at once, with nothing in flight.
          if (!slot.ready && signal === "SIGTERM") return undefined;
          return code === 0
            ? undefined
            : `${slot.spec.label} (pid ${slot.worker.process.pid}) ${describeExit(code, signal)}`;
        }),
      );
      return outcomes.filter((outcome): outcome is string => outcome !== undefined);
    },
  };
}
