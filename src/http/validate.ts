import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { TSchema } from "typebox";
import { AppError, type ValidationIssue } from "../errors/app-error.js";
import { describeIssue, issuePath } from "./problem.js";

// The same validator settings as the REST routes, so every entry point accepts and refuses the same input.
const ajv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
(addFormats as unknown as (ajv: Ajv) => void)(ajv);
const compiled = new WeakMap<TSchema, ValidateFunction>();

/**
 * Validates input that did not come through a Fastify route (GraphQL arguments, CLI, jobs)
 * against the route's schema, filling in defaults. Errors name the parameter or field.
 */
export function validateAgainst<T>(schema: TSchema, value: Record<string, unknown>, kind: "parameter" | "field"): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema as object);
    compiled.set(schema, validate);
  }
  const input: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) if (item !== undefined) input[name] = item;
  if (kind === "parameter") for (const name of Object.keys(input)) if (input[name] === null) delete input[name];
  if (!validate(input)) {
    const errors: ValidationIssue[] = (validate.errors ?? []).map((issue) => {
      const name = issuePath(issue);
      const message = issue.keyword === "required" ? "is required" : describeIssue(issue);
      return { [kind]: name, message } as ValidationIssue;
    });
    const first = errors[0];
    const name = first?.parameter ?? first?.field;
    throw new AppError(
      "invalid_request",
      `Invalid ${kind === "parameter" ? "argument" : "field"} "${name}": ${first?.message}`,
      { errors },
    );
  }
  return input as T;
}
