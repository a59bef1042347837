import { type ParseArgsConfig, parseArgs } from "node:util";

export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Where `prepare` reads answers from; process.stdin when absent (tests pass a stream of their own). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface Command {
  name: string;
  usage: string;
  summary: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  /**
   * Runs in the process the user started, before `run`: asks on a terminal what the flags did not say
   * and returns the completed values (`run` may then execute in a running server, see docs/embedded-database.md).
   */
  prepare?(values: CommandValues, io: CliIo): Promise<CommandValues>;
  /** Never handed to a running server (serve, worker, restore): always runs in this process. */
  local?: boolean;
  /** The option that may also be given as the one positional argument (`donata restore FILE`). */
  positional?: string;
  run(values: CommandValues, io: CliIo): Promise<CommandResult>;
}

export type CommandValues = Record<string, string | boolean | string[] | undefined>;

/** What a command produced: an object for --json, and the lines a person reads. */
export interface CommandResult {
  json: object;
  text: string[];
}

export function parseCommandArgs(command: Command, argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...command.options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: command.positional !== undefined,
      strict: true,
    });
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    return positionals[0] !== undefined && command.positional
      ? { ...values, [command.positional]: positionals[0] }
      : values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function requiredString(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function optionalInteger(values: Record<string, unknown>, name: string, fallback: number): number {
  const value = values[name];
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a non-negative integer`);
  }
  return Number(value);
}

/**
 * A command that acts on one application's installation in one organization
 * (`--client-id ID --org S`): install, uninstall, issue a token.
 */
export function installationCommand<T extends object>(
  spec: Pick<Command, "name" | "summary"> & {
    act(env: NodeJS.ProcessEnv, clientId: string, org: string): Promise<T>;
    describe(result: T, clientId: string, org: string): string[];
  },
): Command {
  return {
    name: spec.name,
    usage: `donata ${spec.name} --client-id ID --org S [--json]`,
    summary: spec.summary,
    options: { "client-id": { type: "string" }, org: { type: "string" } },
    async run(values, io) {
      const clientId = requiredString(values, "client-id");
      const org = requiredString(values, "org");
      const result = await spec.act(io.env, clientId, org);
      return { json: result, text: spec.describe(result, clientId, org) };
    },
  };
}
