import { Ajv, type ValidateFunction } from "ajv";
import type { TSchema } from "typebox";
import { AppError } from "../http/errors.js";
import { describeIssue } from "../http/problem.js";

// The same validator settings as the REST routes, so both APIs accept and refuse the same input.
const ajv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: true, strict: false });
const compiled = new WeakMap<TSchema, ValidateFunction>();

/**
 * Checks GraphQL list arguments against the REST list query schema of the collection (bounds,
 * order fields, enums) and fills in its defaults.
 */
export function parseListArgs<Q>(schema: TSchema, args: Record<string, unknown>): Q {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema as object);
    compiled.set(schema, validate);
  }
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) if (value !== null && value !== undefined) query[name] = value;
  if (!validate(query)) {
    const errors = (validate.errors ?? []).map((issue) => {
      const name =
        issue.keyword === "additionalProperties"
          ? String(issue.params.additionalProperty)
          : issue.instancePath.replace(/^\//, "");
      return { parameter: name, message: describeIssue(issue) };
    });
    const first = errors[0];
    throw new AppError("invalid_request", 400, `Invalid argument "${first?.parameter}": ${first?.message}`, errors);
  }
  return query as Q;
}
