import type { Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { manualProcessor } from "./manual.js";
import type { Processor, ProcessorDescription } from "./processor.js";
import { createSandboxProcessor, sandboxDescription } from "./sandbox.js";

export type { Processor, ProcessorDescription } from "./processor.js";
export { ProcessorTimeoutError } from "./processor.js";

const DESCRIPTIONS: ReadonlyMap<string, ProcessorDescription> = new Map(
  [sandboxDescription, manualProcessor].map((processor) => [processor.name, processor]),
);

export const PROCESSOR_NAMES = [...DESCRIPTIONS.keys()];

export function findProcessor(name: string): ProcessorDescription | undefined {
  return DESCRIPTIONS.get(name);
}

export function requireProcessor(name: string): ProcessorDescription {
  const processor = DESCRIPTIONS.get(name);
  if (!processor) {
    throw new AppError("invalid_request", `Unknown payment processor "${name}"`, {
      errors: [{ field: "processor", message: `must be one of ${PROCESSOR_NAMES.join(", ")}` }],
    });
  }
  return processor;
}

const connected = new WeakMap<Executor, ReadonlyMap<string, Processor>>();

/** The adapter that moves money, connected to what it keeps (the sandbox's ledger lives in the database). */
export function connectProcessor(db: Executor, name: string): Processor | undefined {
  let processors = connected.get(db);
  if (!processors) {
    processors = new Map([createSandboxProcessor(db), manualProcessor].map((processor) => [processor.name, processor]));
    connected.set(db, processors);
  }
  return processors.get(name);
}
