import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type { PassThrough } from "node:stream";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { runCli as runCliMain } from "../../src/cli/main.js";

/** The `donata` CLI as a user runs it: `node bin/donata.js …` from the repository's root. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(ROOT, "bin", "donata.js");

export interface CliResult {
  args: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Settings a CLI child must not inherit from the test process: it gets them from each test or not at all. */
const INHERITED_SETTINGS = [
  ...["DATABASE_URL", "DATA_DIR", "PORT", "HOST", "BASE_URL", "AUTH_URL", "LOG_LEVEL", "DATABASE_POOL_SIZE"],
  ...["ACCESS_TOKEN_TTL", "REFRESH_TOKEN_TTL", "DEBUG", "NODE_OPTIONS", "DONATA_ENCRYPTION_KEY", "STRIPE_API_URL"],
  ...["NODE_ENV", "ALLOW_HTTP", "TRUST_PROXY"],
];

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_SETTINGS) delete env[name];
  return { ...env, LOG_LEVEL: "warn", ...extra };
}

/** A CLI child process, kept in `children` until it exits (so a test file can kill what is left). */
export function spawnCli(args: string[], env: Record<string, string>, children: Set<ChildProcess>): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

/** Runs the CLI to its end and collects what it printed; killed (and the test failed) past the timeout. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { children: Set<ChildProcess>; timeoutMs?: number },
): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env, options.children);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`donata ${args.join(" ")} still running after ${timeoutMs} ms\n${stdout}${stderr}`));
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ args, code, signal, stdout, stderr });
    });
  });
}

/**
 * `donata …` in this process (src/cli/main.ts's runCli), its output collected: faster than a child
 * process where the test needs no process boundary. `stdin` stands for a terminal in `prepare`.
 */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string>,
  options: { stdin?: PassThrough & { isTTY?: boolean }; onStderr?: (text: string) => void } = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await runCliMain(args, {
    stdout: sink((text) => {
      stdout += text;
    }),
    stderr: sink((text) => {
      stderr += text;
      options.onStderr?.(text);
    }),
    env,
    stdin: options.stdin,
  });
  return { args, code, signal: null, stdout, stderr };
}
