import { chmodSync, unlinkSync } from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { gateOf } from "./pglite-gate.js";

/**
 * The embedded database over the PostgreSQL wire protocol, on a Unix socket named as psql expects
 * it: `psql -h DIRECTORY -U postgres postgres` (docs/embedded-database.md).
 *
 * pglite-socket runs each protocol message alone. Here a client passes the database's gate
 * (src/db/pglite-gate.ts) with its first message and keeps it until the backend says it is idle
 * (ReadyForQuery, status I): a transaction or an extended-protocol sequence then runs without the
 * server's own queries in the middle, and none of the server's transactions has the client's in it.
 * While a client holds the gate the server waits, so a client idle that long is cut (its work rolled back).
 */

export const SOCKET_FILE = ".s.PGSQL.5432";

export interface InspectionSocket {
  readonly path: string;
  close(): Promise<void>;
}

export interface InspectionSocketOptions {
  /** Where to put the socket: `psql -h DIRECTORY` finds it there. */
  directory: string;
  /** A client holding the database (in a transaction) without sending anything is disconnected after this. */
  idleInTransactionMs: number;
  maxConnections?: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/** The socket pglite-socket's handlers and queue expose at run time (not in their types). */
interface SocketServerInternals {
  handlers: Set<{ handlerId: number; handleError(error: Error): void }>;
  queryQueue: { lastHandlerId: number | null };
}

const READY_FOR_QUERY = 0x5a;
const IDLE = 0x49;

export async function openInspectionSocket(
  pglite: PGlite,
  options: InspectionSocketOptions,
): Promise<InspectionSocket | undefined> {
  const gated = gateOf(pglite);
  if (!gated) return undefined;
  const { gate, raw } = gated;
  const socketPath = path.join(options.directory, SOCKET_FILE);

  let release: (() => void) | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let server: PGLiteSocketServer | undefined;
  const holding = () => release !== undefined;
  const letGo = () => {
    clearTimeout(idleTimer);
    idleTimer = undefined;
    release?.();
    release = undefined;
  };
  /** Disconnects the client holding the gate; pglite-socket then rolls its transaction back (exec below). */
  const cutHolder = (reason: string) => {
    const internals = server as unknown as SocketServerInternals | undefined;
    const holderId = internals?.queryQueue.lastHandlerId;
    const holder = [...(internals?.handlers ?? [])].find((handler) => handler.handlerId === holderId);
    options.log.warn({ reason }, "psql socket: client disconnected");
    if (holder) holder.handleError(new Error(reason));
    else void rollBackAndLetGo();
  };
  const rollBackAndLetGo = async () => {
    try {
      await raw.exec("ROLLBACK");
    } catch {
      // Nothing was open.
    } finally {
      letGo();
    }
  };

  // What pglite-socket's queue calls on its `db`.
  const wire = {
    waitReady: raw.waitReady,
    /** True while a client holds the gate: the queue then takes that client's messages only. */
    isInTransaction: holding,
    async runExclusive<T>(work: () => Promise<T>): Promise<T | number> {
      clearTimeout(idleTimer);
      release ??= await gate.acquire();
      try {
        return await raw.runExclusive(work);
      } catch (error) {
        // A failure here would stop pglite-socket's queue for good: cut the client instead.
        setImmediate(() => cutHolder(`protocol failure: ${(error as Error).message}`));
        return 0;
      } finally {
        if (holding()) idleTimer = setTimeout(() => cutHolder("idle in transaction"), options.idleInTransactionMs);
      }
    },
    async execProtocolRawStream(message: Uint8Array, streamOptions: { onRawData: (data: Uint8Array) => void }) {
      // The backend is idle when its reply ends with ReadyForQuery 'I'; whatever else, the client keeps the gate.
      let tail = new Uint8Array(0);
      const result = await raw.execProtocolRawStream(message, {
        onRawData: (data) => {
          const joined = new Uint8Array(tail.length + data.length);
          joined.set(tail);
          joined.set(data, tail.length);
          tail = joined.slice(-6);
          streamOptions.onRawData(data);
        },
      });
      const idle =
        tail.length === 6 && tail[0] === READY_FOR_QUERY && tail[4] === 5 && tail[5] === IDLE && !raw.isInTransaction();
      if (idle) letGo();
      return result;
    },
    /** pglite-socket rolls back what a departing client left open. */
    async exec(query: string) {
      if (!holding()) return [];
      if (query !== "ROLLBACK") throw new Error(`unexpected statement from pglite-socket: ${query}`);
      await rollBackAndLetGo();
      return [];
    },
  };

  unlinkQuietly(socketPath);
  server = new PGLiteSocketServer({
    db: wire as unknown as PGlite,
    path: socketPath,
    maxConnections: options.maxConnections ?? 8,
  });
  await server.start();
  chmodSync(socketPath, 0o600);
  options.log.info({ psql: `psql -h ${options.directory} -U postgres postgres` }, "psql socket open");
  const started = server;
  return {
    path: socketPath,
    async close() {
      await started.stop();
      if (holding()) await rollBackAndLetGo();
      unlinkQuietly(socketPath);
    },
  };
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
