import { BackupError } from "../backups/backup-file.js";
import { ConfigError } from "../config.js";
import { DatabaseUnavailableError } from "../db/client.js";
import { DataDirBusyError } from "../db/data-dir-lock.js";
import { AppError } from "../errors/app-error.js";
import { type CliIo, type Command, type CommandValues, parseCommandArgs, UsageError } from "./cli-kit.js";
import { runAsCommand } from "./database.js";
import { LocalChannelError, sendToRunningServer } from "./local-channel.js";
import { ProcessError } from "./processes.js";

/**
 * The commands, each module loaded when its command runs: `donata user create` does not load the
 * HTTP server, the payment processors or the importer (a spawned command starts in a third of the time).
 * The name is the module's own, checked by src/cli/main.test.ts.
 */
export const COMMANDS: readonly { name: string; load(): Promise<Command> }[] = [
  { name: "serve", load: async () => (await import("./serve.command.js")).serveCommand },
  { name: "migrate", load: async () => (await import("./migrate.command.js")).migrateCommand },
  { name: "setup", load: async () => (await import("./setup.command.js")).setupCommand },
  { name: "org create", load: async () => (await import("./org.command.js")).orgCreateCommand },
  { name: "org set-processor", load: async () => (await import("./org.command.js")).orgSetProcessorCommand },
  { name: "org profile", load: async () => (await import("./org.command.js")).orgProfileCommand },
  { name: "user create", load: async () => (await import("./user.command.js")).userCreateCommand },
  { name: "user link", load: async () => (await import("./setup.command.js")).userLinkCommand },
  {
    name: "user reset-second-factor",
    load: async () => (await import("./user.command.js")).userResetSecondFactorCommand,
  },
  { name: "app create", load: async () => (await import("./app.command.js")).appCreateCommand },
  { name: "app install", load: async () => (await import("./app.command.js")).appInstallCommand },
  { name: "app uninstall", load: async () => (await import("./app.command.js")).appUninstallCommand },
  { name: "token create", load: async () => (await import("./token.command.js")).tokenCreateCommand },
  { name: "seed", load: async () => (await import("./seed.command.js")).seedCommand },
  { name: "worker", load: async () => (await import("./billing.command.js")).workerCommand },
  { name: "billing run", load: async () => (await import("./billing.command.js")).billingRunCommand },
  { name: "statements send", load: async () => (await import("./statements.command.js")).statementsSendCommand },
  { name: "import", load: async () => (await import("./import.command.js")).importCommand },
  { name: "backup", load: async () => (await import("./backup.command.js")).backupCommand },
  { name: "restore", load: async () => (await import("./backup.command.js")).restoreCommand },
];

/** Every command, loaded (for the overview and the tests). */
export function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMANDS.map((entry) => entry.load()));
}

async function overview(): Promise<string> {
  const commands = await loadCommands();
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    "Usage: donata <command> [options]",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Every command accepts --json and then prints one JSON object on stdout.",
    "Database: DATABASE_URL=postgres://… or the embedded PGlite in DATA_DIR (default ./data).",
  ].join("\n");
}

async function findCommand(argv: string[]): Promise<{ command: Command; rest: string[] } | undefined> {
  for (const words of [2, 1]) {
    const command = await findCommandByName(argv.slice(0, words).join(" "));
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

/** Exit codes: 0 done, 1 failed (bad data, unreachable database), 2 bad arguments. */
export async function runCli(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    (argv.length === 0 ? io.stderr : io.stdout).write(`${await overview()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = await findCommand(argv);
  if (!found) {
    const words = argv.slice(0, 2).filter((word) => !word.startsWith("-"));
    io.stderr.write(`donata: unknown command "${words.join(" ")}"\n\n${await overview()}\n`);
    return 2;
  }
  const { command, rest } = found;
  let values: CommandValues;
  try {
    const parsed = parseCommandArgs(command, rest);
    if (parsed.help) {
      io.stdout.write(`Usage: ${command.usage}\n${command.summary}\n`);
      return 0;
    }
    values = command.prepare ? await command.prepare(parsed, io) : parsed;
  } catch (error) {
    return reportError(command, error, io);
  }
  try {
    const sent = await sendToRunningServer(command, values, io);
    if (sent !== undefined) return sent;
  } catch (error) {
    return reportError(command, error, io);
  }
  return runAsCommand({ holder: `donata ${command.name}` }, () => executeCommand(command, values, io));
}

export async function findCommandByName(name: string): Promise<Command | undefined> {
  return COMMANDS.find((entry) => entry.name === name)?.load();
}

/** Runs a parsed command and prints its result; every error becomes an exit code and one line on stderr. */
export async function executeCommand(command: Command, values: CommandValues, io: CliIo): Promise<number> {
  try {
    const result = await command.run(values, io);
    io.stdout.write(values.json ? `${JSON.stringify(result.json)}\n` : result.text.map((line) => `${line}\n`).join(""));
    return 0;
  } catch (error) {
    return reportError(command, error, io);
  }
}

function reportError(command: Command, error: unknown, io: CliIo): number {
  if (error instanceof UsageError) {
    io.stderr.write(`donata ${command.name}: ${error.message}\nUsage: ${command.usage}\n`);
    return 2;
  }
  if (
    error instanceof AppError ||
    error instanceof ConfigError ||
    error instanceof DatabaseUnavailableError ||
    error instanceof DataDirBusyError ||
    error instanceof LocalChannelError ||
    error instanceof BackupError ||
    error instanceof ProcessError
  ) {
    io.stderr.write(`donata ${command.name}: ${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`donata ${command.name}: unexpected error: ${message}\n`);
  if (io.env.DEBUG) io.stderr.write(`${(error as Error)?.stack}\n`);
  return 1;
}
