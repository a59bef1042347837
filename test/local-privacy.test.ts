import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
} from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { channelPath, socketDirectory } from "../src/cli/local-channel.js";
import { openDatabase } from "../src/db/client.js";
import { BIN, type CliResult, ROOT, runCli as runDonata, spawnCli } from "./helpers/cli.js";
import { testDatabaseUrl } from "./helpers/database.js";
import { unique } from "./helpers/factories.js";

/**
 * The embedded database is private to the server's user (docs/security.md, "Local users"): its data
 * directory is 0700 and its files 0600, from creation and after every write, tightened on existing
 * installs; the local channel's socket directory is the server's own 0700 directory, never a link,
 * checked by the server before it listens and by the CLI before it sends a command.
 * Real processes; another local user is `nobody` (runuser), which needs the tests to run as root.
 */

// Generous: a PGlite database is created and migrated in some tests, and CI machines are shared.
const TEST_TIMEOUT = 400_000;
const PROCESS_TIMEOUT_MS = 300_000;
const onPostgres = Boolean(testDatabaseUrl());
const pgliteOnly = onPostgres ? "(PGlite data directories only: skipped on PostgreSQL)" : "";
const asRoot = process.getuid?.() === 0;
const needsRoot = asRoot ? "" : "(acting as another local user needs root: skipped)";
const NOBODY_UID = asRoot ? Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim()) : -1;

/** Whether `nobody` can run this checkout's CLI (a clone under /root is out of its reach). */
const repoForNobody =
  asRoot &&
  spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", path.join(ROOT, "node_modules/tsx/package.json")])
    .status === 0;
const needsReadableRepo = repoForNobody ? "" : "(this checkout is not readable by nobody: skipped)";
/** The Node.js binary `nobody` runs: this one, or a copy when it lives where nobody may not go (~/.cache). */
let nodeForNobody = process.execPath;

let scratch = "";
const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void>)[] = [];

const runCli = (args: string[], env: Record<string, string>) =>
  runDonata(args, env, { children, timeoutMs: PROCESS_TIMEOUT_MS });
const describeRun = (result: { args?: string[]; code: number | null; stdout: string; stderr: string }) =>
  `${result.args?.join(" ") ?? ""} → ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

/** A command run as the local user `nobody`. */
function asNobody(command: string[], env: Record<string, string> = {}) {
  const result = spawnSync("runuser", ["-u", "nobody", "--", "env", ...toAssignments(env), ...command], {
    encoding: "utf8",
    cwd: ROOT,
    timeout: PROCESS_TIMEOUT_MS,
  });
  return { args: command, code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const toAssignments = (env: Record<string, string>) => Object.entries(env).map(([name, value]) => `${name}=${value}`);

/** `donata …` run by `nobody`, with only the settings given (and the system's PATH). */
function spawnAsNobody(args: string[], env: Record<string, string>) {
  const result = spawnSync(
    "runuser",
    [
      ...["-u", "nobody", "--", "env", "-i", `PATH=${process.env.PATH}`, "HOME=/tmp", "LOG_LEVEL=warn"],
      ...toAssignments(env),
      ...[nodeForNobody, BIN, ...args],
    ],
    { encoding: "utf8", cwd: ROOT, timeout: PROCESS_TIMEOUT_MS },
  );
  return { args, code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

/** Every entry under `directory` (itself included) that its group or other users may use, with its mode. */
function openToOthers(directory: string): string[] {
  const found: string[] = [];
  const visit = (file: string) => {
    const stat = lstatSync(file);
    if ((stat.mode & 0o077) !== 0)
      found.push(`${path.relative(directory, file) || "."} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(file)) visit(path.join(file, name));
  };
  visit(directory);
  return found;
}

let template: Promise<string> | undefined;

/** A data directory made by the real code (openDatabase, its migrations), once; tests work on copies. */
function migratedDataDir(): Promise<string> {
  template ??= (async () => {
    const dataDir = path.join(scratch, "template");
    const database = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
    return dataDir;
  })();
  return template;
}

async function copyOfMigrated(name: string): Promise<string> {
  const dataDir = path.join(scratch, `${name}-${unique()}`);
  cpSync(await migratedDataDir(), dataDir, { recursive: true });
  return dataDir;
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "donata-privacy-"));
  // Others may pass through the scratch directory, as through /srv or a home directory: what stops
  // them must be the data directory itself.
  await chmod(scratch, 0o755);
  if (asRoot && spawnSync("runuser", ["-u", "nobody", "--", "test", "-x", process.execPath]).status !== 0) {
    await mkdir(path.join(scratch, "node-bin"), { mode: 0o755 });
    nodeForNobody = path.join(scratch, "node-bin", "node");
    await copyFile(process.execPath, nodeForNobody);
    await chmod(nodeForNobody, 0o755);
  }
});

afterEach(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe.skipIf(onPostgres)(`the data directory ${pgliteOnly}`, () => {
  it(
    "is created 0700 with files 0600, and stays so after writes (new WAL segments, caches); another user reads and changes nothing",
    async () => {
      const created = await migratedDataDir();
      expect(modeOf(created)).toBe(0o700);
      expect(openToOthers(created)).toEqual([]);

      const dataDir = await copyOfMigrated("written");
      const database = await openDatabase({ databaseUrl: undefined, dataDir });
      const walBefore = readdirSync(path.join(dataDir, "pg_wal"));
      try {
        await database.pglite?.exec(
          "create table bulk (x text); " +
            "insert into bulk select (select string_agg(md5(random()::text || i || j), '') from generate_series(1, 30) j) " +
            "from generate_series(1, 25000) i; checkpoint; select pg_switch_wal();",
        );
      } finally {
        await database.close();
      }
      const walAfter = readdirSync(path.join(dataDir, "pg_wal"));
      expect(walAfter.filter((name) => !walBefore.includes(name)).length).toBeGreaterThan(0);
      expect(openToOthers(dataDir)).toEqual([]);

      if (!asRoot) return;
      const conf = path.join(dataDir, "postgresql.conf");
      const read = asNobody(["cat", conf]);
      expect(read.code, describeRun(read)).not.toBe(0);
      expect(read.stdout).toBe("");
      expect(read.stderr).toContain("Permission denied");
      const before = readFileSync(conf, "utf8");
      const write = asNobody(["sh", "-c", `echo "shared_preload_libraries = 'evil'" >> ${conf}`]);
      expect(write.code, describeRun(write)).not.toBe(0);
      expect(readFileSync(conf, "utf8")).toBe(before);
    },
    TEST_TIMEOUT,
  );

  it(
    "an existing install readable by others is made private at the next start",
    async () => {
      const dataDir = await copyOfMigrated("old");
      // As an older Donata left it: directories 0755, files 0666.
      const loosen = (file: string) => {
        const stat = lstatSync(file);
        if (stat.isDirectory()) {
          chmodSync(file, 0o755);
          for (const name of readdirSync(file)) loosen(path.join(file, name));
        } else chmodSync(file, 0o666);
      };
      loosen(dataDir);
      expect(openToOthers(dataDir).length).toBeGreaterThan(900);

      const warnings: string[] = [];
      const database = await openDatabase({ databaseUrl: undefined, dataDir, warn: (line) => warnings.push(line) });
      await database.close();
      expect(warnings).toEqual([]);
      expect(modeOf(dataDir)).toBe(0o700);
      expect(openToOthers(dataDir)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it.skipIf(!repoForNobody)(
    `one that others can enter and this user cannot make private: refused in production, a warning otherwise ${needsRoot}${needsReadableRepo}`,
    async () => {
      // A directory of root's, open to all (mode 0777), given to a server running as nobody.
      const dataDir = path.join(scratch, `shared-${unique()}`);
      await mkdir(dataDir);
      await chmod(dataDir, 0o777);
      const production = {
        NODE_ENV: "production",
        BASE_URL: "https://donate.example.org",
        AUTH_URL: "https://donate.example.org",
        DATA_DIR: dataDir,
      };
      const refused = spawnAsNobody(["migrate"], production);
      expect(refused.code, describeRun(refused)).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(
        `donata migrate: the data directory ${dataDir} can be entered by other users (mode 0777) and this user ` +
          `(uid ${NOBODY_UID}) cannot make it private: make it belong to the user that runs Donata, with mode 0700 ` +
          `(chown USER ${dataDir} && chmod 700 ${dataDir})\n`,
      );
      expect(readdirSync(dataDir)).toEqual([]);

      const warned = spawnAsNobody(["migrate"], { DATA_DIR: dataDir });
      expect(warned.code, describeRun(warned)).toBe(0);
      expect(warned.stderr).toBe(
        `donata: warning: the data directory ${dataDir} can be entered by other users (mode 0777) and this user ` +
          `(uid ${NOBODY_UID}) cannot make it private: make it belong to the user that runs Donata, with mode 0700 ` +
          `(chown USER ${dataDir} && chmod 700 ${dataDir}); in production (NODE_ENV=production) it is refused\n`,
      );
      expect(existsSync(path.join(dataDir, "PG_VERSION"))).toBe(true);
      // What it could make private, it did: everything inside.
      expect(openToOthers(dataDir)).toEqual([". 777"]);
    },
    TEST_TIMEOUT,
  );
});

interface Server {
  pid: number;
  output(): string;
  stop(): Promise<number | null>;
}

function startServe(env: Record<string, string>): Promise<Server> {
  const child = spawnCli(
    ["serve", "--no-worker"],
    { ...env, PORT: "0", HOST: "127.0.0.1", MAX_EVENT_LOOP_DELAY: "0", LOG_LEVEL: "info" },
    children,
  );
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`donata serve did not start\n${output}`)), PROCESS_TIMEOUT_MS);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      if (!/Ctrl-C stops/.test(output)) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid as number,
        output: () => output,
        stop() {
          child.kill("SIGTERM");
          return exited;
        },
      });
    });
    void exited.then(() => reject(new Error(`donata serve exited before listening\n${output}`)));
  });
}

/** A process of `nobody` answering on `socketPath` as a server would, with a forged sign-in link; it logs what it receives. */
async function impostor(socketPath: string, received: string): Promise<ChildProcess> {
  const script = `
    const net = require("node:net"), fs = require("node:fs");
    const [socketPath, received] = process.argv.slice(1);
    net.createServer((socket) => socket.on("data", (data) => {
      fs.appendFileSync(received, data);
      socket.end(JSON.stringify({ stdout: "Sign in: https://evil.example/sign-in/forged\\n" }) + "\\n" + JSON.stringify({ exit: 0 }) + "\\n");
    })).listen(socketPath, () => console.log("ready"));`;
  // setpriv runs node in its own process (runuser would fork it): killing the child kills the impostor.
  const child = spawn(
    "setpriv",
    ["--reuid=nobody", "--regid=nogroup", "--clear-groups", nodeForNobody, "-e", script, socketPath, received],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.add(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("close", (code) => reject(new Error(`impostor exited with ${code}`)));
  });
  return child;
}

describe.skipIf(onPostgres)(`the local channel's socket directory ${pgliteOnly}`, () => {
  it.skipIf(!asRoot)(
    `a server refuses one planted before it starts (a link, another user's directory), and says so to the CLI ${needsRoot}`,
    async () => {
      const dataDir = await copyOfMigrated("planted");
      const socketDir = socketDirectory(dataDir);
      // The link points at a 0700 directory of the server's user, as stat() would accept.
      const decoy = await mkdtemp(path.join(os.tmpdir(), "donata-decoy-"));
      cleanups.push(() => rm(decoy, { recursive: true, force: true }));
      cleanups.push(() => rm(socketDir, { recursive: true, force: true }));
      const planted = asNobody(["ln", "-s", decoy, socketDir]);
      expect(planted.code, describeRun(planted)).toBe(0);

      for (const problem of ["is a symbolic link", `belongs to uid ${NOBODY_UID}, not to the server's user (uid 0)`]) {
        const server = await startServe({ DATA_DIR: dataDir });
        try {
          expect(readdirSync(decoy)).toEqual([]);
          const refusal = `the socket directory ${socketDir} ${problem}, so it may not be this server's; remove it and start the server again`;
          const lock = JSON.parse(readFileSync(path.join(dataDir, "donata.pid"), "utf8"));
          expect(lock).toEqual({
            pid: server.pid,
            command: "donata serve",
            startedAt: expect.any(String),
            channel: null,
            channelRefused: refusal,
          });
          expect(server.output()).toContain("cannot open the local channel for CLI commands");
          const beside = await runCli(["org", "create", "--slug", "x", "--name", "X"], { DATA_DIR: dataDir });
          expect(beside.code, describeRun(beside)).toBe(1);
          expect(beside.stdout).toBe("");
          expect(beside.stderr).toBe(
            `donata org create: the server on ${dataDir} (pid ${server.pid}) takes no CLI commands: ${refusal}\n`,
          );
        } finally {
          expect(await server.stop()).toBe(0);
        }
        // Next: a real directory, but nobody's.
        await rm(socketDir, { recursive: true, force: true });
        expect(asNobody(["mkdir", "-m", "700", socketDir]).code).toBe(0);
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "the CLI sends nothing to a socket in a link, another user's directory or one others may enter",
    async () => {
      const dataDir = path.join(scratch, `lure-${unique()}`);
      await mkdir(dataDir, { mode: 0o700 });
      const socketDir = socketDirectory(dataDir);
      cleanups.push(() => rm(socketDir, { recursive: true, force: true }));
      const password = `correct horse ${unique()}`;
      const userCreate = () =>
        runCli(["user", "create", "--email", `${unique()}@example.org`, "--password", password], { DATA_DIR: dataDir });
      /** A lock as a live server would have left it, naming the socket at the usual place. */
      const publish = (pid: number) =>
        writeFile(
          path.join(dataDir, "donata.pid"),
          JSON.stringify({
            pid,
            command: "donata serve",
            startedAt: new Date().toISOString(),
            channel: channelPath(dataDir),
          }),
          { mode: 0o600 },
        );
      const expectNotSent = (result: CliResult, problem: string) => {
        expect(result.code, describeRun(result)).toBe(1);
        expect(result.stdout).toBe("");
        expect(result.stderr).toBe(
          `donata user create: the socket directory ${socketDir} ${problem}, so it may not be the server's: ` +
            `the command was not sent (stop the server, remove ${socketDir} and start it again)\n`,
        );
      };

      if (asRoot) {
        // Another user's directory of the temporary directory, a link to it where the server's would be.
        const trap = asNobody(["mktemp", "-d", path.join(os.tmpdir(), "donata-trap-XXXXXX")]).stdout.trim();
        cleanups.push(() => rm(trap, { recursive: true, force: true }));
        const linked = await impostor(path.join(trap, "donata.sock"), path.join(trap, "received"));
        expect(asNobody(["ln", "-s", trap, socketDir]).code).toBe(0);
        await publish(linked.pid as number);
        expectNotSent(await userCreate(), "is a symbolic link");
        expect(existsSync(path.join(trap, "received"))).toBe(false);

        // Another user's directory itself.
        await rm(socketDir, { force: true });
        expect(asNobody(["mkdir", "-m", "700", socketDir]).code).toBe(0);
        const owned = await impostor(path.join(socketDir, "donata.sock"), path.join(socketDir, "received"));
        await publish(owned.pid as number);
        expectNotSent(await userCreate(), `belongs to uid ${NOBODY_UID}, not to the server's user (uid 0)`);
        expect(existsSync(path.join(socketDir, "received"))).toBe(false);
        await rm(socketDir, { recursive: true, force: true });
      }

      // This user's directory, but others may enter it (and so replace the socket).
      await mkdir(socketDir);
      await chmod(socketDir, 0o755);
      const received: string[] = [];
      const listener = net.createServer((socket) =>
        socket.on("data", (data) => {
          received.push(String(data));
          socket.end(`${JSON.stringify({ stdout: "forged\n" })}\n${JSON.stringify({ exit: 0 })}\n`);
        }),
      );
      await new Promise<void>((resolve) => listener.listen(channelPath(dataDir), resolve));
      try {
        await publish(process.pid);
        expectNotSent(await userCreate(), "has mode 0755, not 0700");
        expect(received).toEqual([]);
      } finally {
        await new Promise((resolve) => listener.close(resolve));
      }
    },
    TEST_TIMEOUT,
  );
});

describe.skipIf(onPostgres)(`donata serve's start-up output ${pgliteOnly}`, () => {
  it(
    "the start-up logs, the psql socket's among them, come before the start-up box, which is last (stdout a file)",
    async () => {
      // Written to a file, as by a service manager: pino's asynchronous writes then lagged behind the box.
      const file = path.join(scratch, `serve-${unique()}.log`);
      const fd = openSync(file, "w");
      const child = spawn(process.execPath, [BIN, "serve", "--no-worker"], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          DATA_DIR: path.join(scratch, `box-${unique()}`),
          PORT: "0",
          HOST: "127.0.0.1",
          MAX_EVENT_LOOP_DELAY: "0",
          LOG_LEVEL: "info",
        },
        stdio: ["ignore", fd, fd],
      });
      children.add(child);
      closeSync(fd);
      const output = () => readFileSync(file, "utf8");
      try {
        await expect.poll(output, { timeout: PROCESS_TIMEOUT_MS, interval: 500 }).toContain("Ctrl-C stops");
        // Whatever was logged before the box has had time to arrive.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const lines = output().split("\n");
        const rules = lines.flatMap((line, index) => (/^─{20,}$/.test(line) ? [index] : []));
        const logged = (message: string) => lines.findIndex((line) => line.includes(`"msg":"${message}`));
        expect(rules.length, output()).toBe(2);
        expect(logged("Server listening at"), output()).toBeGreaterThanOrEqual(0);
        expect(logged("Server listening at"), output()).toBeLessThan(rules[0] as number);
        expect(logged("psql socket open"), output()).toBeGreaterThanOrEqual(0);
        expect(logged("psql socket open"), output()).toBeLessThan(rules[0] as number);
      } finally {
        const exited = new Promise((resolve) => child.once("close", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
    TEST_TIMEOUT,
  );
});
