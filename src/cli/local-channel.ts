import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { type Config, loadConfig } from "../config.js";
import type { Database } from "../db/client.js";
import { LOCK_FILE, readDataDirLock } from "../db/data-dir-lock.js";
import { openInspectionSocket } from "../db/inspection-socket.js";
import type { CliIo, Command, CommandValues } from "./cli-kit.js";
import { runAsCommand } from "./database.js";

/**
 * The local channel: a server on a PGlite data directory holds it alone (src/db/data-dir-lock.ts),
 * so a CLI command started beside it is sent here, over a Unix socket only the server's user may
 * open, and runs inside the server with the server's own database (docs/embedded-database.md).
 *
 * Wire: the client writes one JSON line {command, values}; the server answers with JSON lines
 * {stdout} / {stderr} as the command writes, then {exit}.
 */

interface ChannelRequest {
  command: string;
  values: CommandValues;
}

type ChannelFrame = { stdout: string } | { stderr: string } | { exit: number };

/** Options whose values are paths: made absolute in the user's directory, since the server's is another. */
const PATH_OPTIONS = ["out", "file", "results"];
const MAX_REQUEST_BYTES = 1_000_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** How long a CLI command waits for a server that is still starting (migrating, seeding the demo). */
const STARTING_SERVER_WAIT_MS = 60_000;

/**
 * Where a server's sockets live: outside the data directory, since PGlite's dumpDataDir (backups)
 * fails on a socket file inside it; in a directory of the system's temporary directory only the
 * server's user may enter, named after the data directory (as PostgreSQL's own socket is in /tmp).
 */
export function socketDirectory(dataDir: string): string {
  const digest = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 16);
  return path.join(os.tmpdir(), `donata-${digest}`);
}

/** A command that must not be sent: the server's socket is not where only the server could have put it. */
export class LocalChannelError extends Error {
  override name = "LocalChannelError";
}

/**
 * Why `directory` is not the 0700 directory of the user `uid` (undefined when it is). The directory
 * itself is examined, not what a symbolic link there points to: a local user may plant a link in
 * the temporary directory before the server starts and point it elsewhere later.
 */
export function socketDirectoryProblem(directory: string, uid: number | undefined): string | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "does not exist";
    throw error;
  }
  if (stat.isSymbolicLink()) return "is a symbolic link";
  if (!stat.isDirectory()) return "is not a directory";
  if (stat.uid !== uid) return `belongs to uid ${stat.uid}, not to the server's user (uid ${uid})`;
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) !== 0) return `has mode ${mode.toString(8).padStart(4, "0")}, not 0700`;
  return undefined;
}

function prepareSocketDirectory(dataDir: string): string {
  const directory = socketDirectory(dataDir);
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const problem = socketDirectoryProblem(directory, process.getuid?.());
  if (problem) {
    throw new LocalChannelError(
      `the socket directory ${directory} ${problem}, so it may not be this server's; remove it and start the server again`,
    );
  }
  return directory;
}

/** The socket CLI commands are sent to. */
export function channelPath(dataDir: string): string {
  return path.join(socketDirectory(dataDir), "donata.sock");
}

export interface LocalChannel {
  readonly path: string;
  /** Stops taking commands and waits for the ones running to finish. */
  close(): Promise<void>;
}

export interface LocalChannelOptions {
  config: Config;
  database: Database;
  env: NodeJS.ProcessEnv;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
    error(object: object, message: string): void;
  };
}

/** How long a psql client may hold the database in an open transaction without sending anything. */
const PSQL_IDLE_IN_TRANSACTION_MS = 5000;

/** Opens the channel when the server runs on a PGlite data directory; undefined otherwise (nothing to share). */
export async function openLocalChannel(options: LocalChannelOptions): Promise<LocalChannel | undefined> {
  const lock = options.database.dataDirLock;
  if (!lock) return undefined;
  const socketPath = channelPath(options.config.dataDir);
  const { executeCommand, findCommandByName } = await import("./main.js");
  const running = new Set<Promise<void>>();
  const server = net.createServer((socket) => {
    const task = serveConnection(socket, options, executeCommand, findCommandByName).finally(() =>
      running.delete(task),
    );
    running.add(task);
  });
  server.on("error", (error) => options.log.error({ err: error }, "local channel failed"));
  try {
    prepareSocketDirectory(options.config.dataDir);
    // Whatever is at the path was left by a process that held the lock before us.
    unlinkIfPresent(socketPath);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    chmodSync(socketPath, 0o600);
    lock.setChannel(socketPath);
  } catch (error) {
    // The server still serves; CLI commands beside it are refused at once, told why.
    options.log.error({ err: error, path: socketPath }, "cannot open the local channel for CLI commands");
    lock.setChannel(null, error instanceof LocalChannelError ? error.message : "its local channel could not be opened");
    server.close();
    return undefined;
  }
  const psql = options.database.pglite
    ? await openInspectionSocket(options.database.pglite, {
        directory: socketDirectory(options.config.dataDir),
        idleInTransactionMs: PSQL_IDLE_IN_TRANSACTION_MS,
        log: options.log,
      }).catch((error: unknown) => {
        options.log.error({ err: error }, "cannot open the psql socket");
        return undefined;
      })
    : undefined;
  return {
    path: socketPath,
    async close() {
      lock.setChannel(null);
      await psql?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...running]);
      unlinkIfPresent(socketPath);
    },
  };
}

function unlinkIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

type Execute = (command: Command, values: CommandValues, io: CliIo) => Promise<number>;

async function serveConnection(
  socket: net.Socket,
  options: LocalChannelOptions,
  executeCommand: Execute,
  findCommandByName: (name: string) => Promise<Command | undefined>,
): Promise<void> {
  // A client gone mid-command must not take the server with it: its writes are dropped.
  socket.on("error", () => {});
  const send = (frame: ChannelFrame) => {
    if (socket.writable) socket.write(`${JSON.stringify(frame)}\n`);
  };
  const finish = (exit: number) => {
    send({ exit });
    socket.end();
  };
  let request: ChannelRequest;
  // A client that connects and sends nothing must not hold the server's shutdown.
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
  try {
    request = parseRequest(await readLine(socket));
    socket.setTimeout(0);
  } catch (error) {
    send({ stderr: `donata: bad request on the local channel: ${(error as Error).message}\n` });
    return finish(2);
  }
  const command = await findCommandByName(request.command);
  if (!command || command.local) {
    send({ stderr: `donata: "${request.command}" cannot run inside the server\n` });
    return finish(2);
  }
  const stream = (name: "stdout" | "stderr") =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        send(name === "stdout" ? { stdout: chunk.toString() } : { stderr: chunk.toString() });
        callback();
      },
    });
  const io: CliIo = { stdout: stream("stdout"), stderr: stream("stderr"), env: options.env };
  const started = Date.now();
  let exit = 1;
  try {
    exit = await runAsCommand(
      { holder: `donata ${command.name}`, server: { config: options.config, database: options.database } },
      () => executeCommand(command, request.values, io),
    );
  } catch (error) {
    // executeCommand turns every error into an exit code; this is the net under it.
    options.log.error({ err: error, command: command.name }, "CLI command over the local channel failed");
    send({ stderr: `donata ${command.name}: unexpected error\n` });
  }
  // The command's name only: its arguments may hold passwords and personal data.
  options.log.info({ command: command.name, exit, ms: Date.now() - started }, "CLI command over the local channel");
  finish(exit);
}

function readLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const end = buffered.indexOf("\n");
      if (end >= 0) {
        socket.off("data", onData);
        resolve(buffered.slice(0, end));
      } else if (buffered.length > MAX_REQUEST_BYTES) {
        socket.off("data", onData);
        reject(new Error("request too large"));
      }
    };
    socket.on("data", onData);
    socket.once("end", () => reject(new Error("no request")));
    socket.once("close", () => reject(new Error("no request")));
  });
}

function parseRequest(line: string): ChannelRequest {
  const value = JSON.parse(line) as Partial<ChannelRequest>;
  if (typeof value.command !== "string") throw new Error("no command");
  if (typeof value.values !== "object" || value.values === null || Array.isArray(value.values)) {
    throw new Error("no values");
  }
  const values: CommandValues = {};
  for (const [name, given] of Object.entries(value.values)) {
    const ok =
      typeof given === "string" ||
      typeof given === "boolean" ||
      (Array.isArray(given) && given.every((item) => typeof item === "string"));
    if (!ok) throw new Error(`bad value for --${name}`);
    values[name] = given as CommandValues[string];
  }
  return { command: value.command, values };
}

/**
 * In the user's process: when a server holds the data directory, runs the command there and returns
 * its exit code (its output written to `io`); undefined when the command is to run here.
 */
export async function sendToRunningServer(
  command: Command,
  values: CommandValues,
  io: CliIo,
): Promise<number | undefined> {
  if (command.local) return undefined;
  let dataDir: string;
  try {
    const config = loadConfig(io.env);
    if (config.databaseUrl || config.dataDir === "memory://") return undefined;
    dataDir = config.dataDir;
  } catch {
    // Reported by the command itself, as without a server.
    return undefined;
  }
  let holder = readDataDirLock(dataDir);
  const deadline = Date.now() + STARTING_SERVER_WAIT_MS;
  const starting = () => holder && !holder.channel && !holder.channelRefused && holder.command === "donata serve";
  while (starting() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    holder = readDataDirLock(dataDir);
  }
  if (holder?.channelRefused) {
    throw new LocalChannelError(
      `the server on ${path.resolve(dataDir)} (pid ${holder.pid}) takes no CLI commands: ${holder.channelRefused}`,
    );
  }
  // No live holder: run here. A holder without a channel: opening the directory here refuses with its name.
  if (!holder?.channel) return undefined;
  checkChannel(dataDir, holder.channel);
  const request: ChannelRequest = { command: command.name, values: absolutePaths(values) };
  return exchange(holder.channel, request, io);
}

/**
 * Before anything is sent (a password, personal data): the socket must be in a directory only the
 * server's user may have written to (its own 0700 directory, not a link), and be that user's. The
 * server's user is the owner of the lock it wrote in the data directory.
 */
function checkChannel(dataDir: string, socketPath: string): void {
  const lock = lstatSync(path.join(dataDir, LOCK_FILE), { throwIfNoEntry: false });
  const serverUid = lock?.uid ?? -1;
  const directory = path.dirname(socketPath);
  const directoryProblem = lock ? socketDirectoryProblem(directory, serverUid) : undefined;
  let problem = lock
    ? directoryProblem
      ? `the socket directory ${directory} ${directoryProblem}`
      : undefined
    : "the server stopped while the command was connecting (run it again)";
  if (!problem) {
    const socket = lstatSync(socketPath, { throwIfNoEntry: false });
    if (!socket?.isSocket() || socket.uid !== serverUid) problem = `${socketPath} is not the server's socket`;
  }
  if (problem) {
    throw new LocalChannelError(
      `${problem}, so it may not be the server's: the command was not sent (stop the server, remove ${directory} and start it again)`,
    );
  }
}

function absolutePaths(values: CommandValues): CommandValues {
  const result: CommandValues = { ...values };
  for (const name of PATH_OPTIONS) {
    const value = result[name];
    if (typeof value === "string" && value !== "") result[name] = path.resolve(value);
  }
  return result;
}

function exchange(socketPath: string, request: ChannelRequest, io: CliIo): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    let buffered = "";
    let exit: number | undefined;
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const frame = JSON.parse(buffered.slice(0, end)) as ChannelFrame;
        buffered = buffered.slice(end + 1);
        if ("stdout" in frame) io.stdout.write(frame.stdout);
        else if ("stderr" in frame) io.stderr.write(frame.stderr);
        else exit = frame.exit;
      }
    });
    socket.on("error", (error) => {
      io.stderr.write(
        `donata ${request.command}: cannot reach the running server at ${socketPath}: ${error.message}\n`,
      );
      exit ??= 1;
    });
    socket.on("close", () => {
      if (exit === undefined) io.stderr.write(`donata ${request.command}: the server closed the local channel\n`);
      resolve(exit ?? 1);
    });
  });
}
