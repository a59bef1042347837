import { AppError } from "../../../http/errors.js";
import { manualProcessor } from "./manual.js";
import type { Processor } from "./processor.js";
import { sandboxProcessor } from "./sandbox.js";

export type { Processor } from "./processor.js";

const PROCESSORS: ReadonlyMap<string, Processor> = new Map(
  [sandboxProcessor, manualProcessor].map((processor) => [processor.name, processor]),
);

export const PROCESSOR_NAMES = [...PROCESSORS.keys()];

export function findProcessor(name: string): Processor | undefined {
  return PROCESSORS.get(name);
}

export function requireProcessor(name: string): Processor {
  const processor = PROCESSORS.get(name);
  if (!processor) {
    throw new AppError("invalid_request", 400, `Unknown payment processor "${name}"`, [
      { field: "processor", message: `must be one of ${PROCESSOR_NAMES.join(", ")}` },
    ]);
  }
  return processor;
}
