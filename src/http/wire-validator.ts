import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { FastifyRequest } from "fastify";

/** The only forms a string on the wire may take to stand for a number or a boolean. */
export const WIRE_INTEGER = /^-?[0-9]+$/;
export const WIRE_DECIMAL = /^-?[0-9]+(?:\.[0-9]+)?$/;
const WIRE_BOOLEAN = /^(?:true|false)$/;

const shared: Options = { useDefaults: true, removeAdditional: false, allErrors: true, strict: false };

function newAjv(coerceTypes: boolean, externalSchemas: Record<string, unknown>): Ajv {
  const ajv = new Ajv({ ...shared, coerceTypes });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object);
  return ajv;
}

interface PropertySchema {
  type?: string | string[];
}

function typesOf(schema: PropertySchema | undefined): string[] {
  return ([] as string[]).concat(schema?.type ?? []);
}

/** The strictest JSON type a string property stands for, or null when the property takes text. */
function wireTypeOf(schema: PropertySchema | undefined): "integer" | "number" | "boolean" | null {
  const types = typesOf(schema);
  if (types.includes("string") || types.length === 0) return null;
  if (types.includes("integer")) return "integer";
  if (types.includes("number")) return "number";
  if (types.includes("boolean")) return "boolean";
  return null;
}

function acceptsWire(type: "integer" | "number" | "boolean", nullable: boolean, value: unknown): boolean {
  if (typeof value !== "string") return false; // a repeated parameter arrives as an array
  if (nullable && value === "") return true;
  if (type === "integer") return WIRE_INTEGER.test(value);
  if (type === "number") return WIRE_DECIMAL.test(value);
  return WIRE_BOOLEAN.test(value);
}

/**
 * A validator for string inputs (query strings, path parameters, headers, form-encoded bodies).
 * Ajv's coercion reads "0x10", "1e3", " 5" and "Infinity" as numbers; they are refused here first,
 * so only decimal integers (and decimals where a number is expected) are ever coerced.
 */
function wireValidator(schema: Record<string, unknown>, validate: ValidateFunction): ValidateFunction {
  const properties = (schema.properties ?? {}) as Record<string, PropertySchema>;
  const checks = Object.entries(properties)
    .map(([name, property]) => ({ name, type: wireTypeOf(property), nullable: typesOf(property).includes("null") }))
    .filter((check): check is { name: string; type: "integer" | "number" | "boolean"; nullable: boolean } =>
      Boolean(check.type),
    );
  const wrapped = ((data: unknown) => {
    const input = (data ?? {}) as Record<string, unknown>;
    const errors: ErrorObject[] = [];
    for (const { name, type, nullable } of checks) {
      const value = input[name];
      if (value === undefined || acceptsWire(type, nullable, value)) continue;
      errors.push({
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: "type",
        params: { type },
        message: `must be ${type}`,
      });
    }
    if (errors.length > 0) {
      wrapped.errors = errors;
      return false;
    }
    const valid = validate(data);
    wrapped.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return wrapped;
}

const formBodies = new WeakSet<object>();

/** Marks a body parsed from application/x-www-form-urlencoded: its values are strings, read by the wire rules. */
export function markFormBody(request: FastifyRequest) {
  const type = request.headers["content-type"] ?? "";
  if (request.body && typeof request.body === "object" && /^application\/x-www-form-urlencoded\b/i.test(type)) {
    formBodies.add(request.body);
  }
}

/**
 * Fastify's validator factory: JSON bodies are checked without any coercion (a JSON body takes JSON
 * types: "5e1" is not the number 50, true is not a frequency); strings from the URL, headers and
 * forms are coerced only from their strict decimal forms.
 */
export function buildWireValidator(externalSchemas: Record<string, unknown>) {
  const json = newAjv(false, externalSchemas);
  const wire = newAjv(true, externalSchemas);
  return ({ schema, httpPart }: { schema: Record<string, unknown>; httpPart?: string }): ValidateFunction => {
    const strictWire = wireValidator(schema, wire.compile(schema));
    if (httpPart !== "body") return strictWire;
    const strictJson = json.compile(schema);
    const body = ((data: unknown) => {
      const validate = data !== null && typeof data === "object" && formBodies.has(data) ? strictWire : strictJson;
      const valid = validate(data);
      body.errors = validate.errors;
      return valid;
    }) as ValidateFunction;
    return body;
  };
}
