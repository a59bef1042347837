import { BackupError } from "../backups/backup-file.js";
import { ConfigError } from "../config.js";
import { DatabaseUnavailableError } from "../db/client.js";
import { DataDirBusyError } from "../db/data-dir-lock.js";
import { AppError } from "../errors/app-error.js";
import { appCreateCommand, appInstallCommand, appUninstallCommand } from "./app.command.js";
import { backupCommand, restoreCommand } from "./backup.command.js";
import { billingRunCommand, workerCommand } from "./billing.command.js";
import { type CliIo, type Command, type CommandValues, parseCommandArgs, UsageError } from "./cli-kit.js";
import { runAsCommand } from "./database.js";
import { LocalChannelError, sendToRunningServer } from "./local-channel.js";
import { migrateCommand } from "./migrate.command.js";
import { orgCreateCommand, orgProfileCommand, orgSetProcessorCommand } from "./org.command.js";
import { ProcessError } from "./processes.js";
import { seedCommand } from "./seed.command.js";
import { serveCommand } from "./serve.command.js";
import { setupCommand, userLinkCommand } from "./setup.command.js";
import { statementsSendCommand } from "./statements.command.js";
import { tokenCreateCommand } from "./token.command.js";
import { userCreateCommand } from "./user.command.js";

const COMMANDS: Command[] = [
  serveCommand,
  migrateCommand,
  setupCommand,
  orgCreateCommand,
  orgSetProcessorCommand,
  orgProfileCommand,
  userCreateCommand,
  userLinkCommand,
  appCreateCommand,
  appInstallCommand,
  appUninstallCommand,
  tokenCreateCommand,
  seedCommand,
  workerCommand,
  billingRunCommand,
  statementsSendCommand,
  backupCommand,
  restoreCommand,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    "Usage: donata <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    "",
    "Every command accepts --json and then prints one JSON object on stdout.",
    "Database: DATABASE_URL=postgres://… or the embedded PGlite in DATA_DIR (default ./data).",
  ].join("\n");
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(" ");
    const command = COMMANDS.find((candidate) => candidate.name === name);
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
    (argv.length === 0 ? io.stderr : io.stdout).write(`${overview()}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const words = argv.slice(0, 2).filter((word) => !word.startsWith("-"));
    io.stderr.write(`donata: unknown command "${words.join(" ")}"\n\n${overview()}\n`);
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

export function findCommandByName(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
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
