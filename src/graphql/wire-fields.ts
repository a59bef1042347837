import type { TSchema } from "typebox";
import { can } from "../auth/actor.js";
import { DOCUMENT_LINK_PERMISSIONS, mayOpenLink } from "../modules/documents/document-access.js";
import type { GraphQLContext } from "./context.js";

// biome-ignore lint/suspicious/noExplicitAny: Pothos' field builder, whatever the parent shape
type FieldBuilder = any;

interface JsonSchema {
  type?: string | string[];
  items?: JsonSchema;
  description?: string;
  properties?: Record<string, JsonSchema>;
}

/**
 * Exposes every scalar field of a REST wire schema under the same name and nullability, so the
 * two APIs share one model of each resource. Object fields are left to the caller.
 */
export function exposeWireFields(t: FieldBuilder, schema: TSchema, skip: readonly string[] = []) {
  const properties = (schema as unknown as JsonSchema).properties ?? {};
  const fields: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (skip.includes(name)) continue;
    const types = Array.isArray(property.type) ? property.type : [property.type];
    const nullable = types.includes("null");
    const type = types.find((candidate) => candidate !== "null");
    const options = { nullable, description: property.description } as const;
    // biome-ignore lint/suspicious/noExplicitAny: the field builder is typed per parent shape
    const expose = t as any;
    switch (type) {
      case "integer":
        fields[name] = expose.exposeInt(name, options);
        break;
      case "number":
        fields[name] = expose.exposeFloat(name, options);
        break;
      case "boolean":
        fields[name] = expose.exposeBoolean(name, options);
        break;
      case "string":
        fields[name] =
          name in DOCUMENT_LINK_PERMISSIONS
            ? expose.string({
                ...options,
                resolve: (parent: Record<string, string | null>, _args: unknown, context: GraphQLContext) =>
                  mayOpenLink(name, (permission) => can(context.actor, permission)) ? parent[name] : null,
              })
            : expose.exposeString(name, options);
        break;
      case "array": {
        const itemType = property.items?.type;
        const list = {
          ...options,
          type: [itemType === "number" ? "Float" : itemType === "integer" ? "Int" : "String"],
        };
        fields[name] = expose.expose(name, list);
        break;
      }
      default:
        break;
    }
  }
  return fields as Record<string, never>;
}

export function describe(schema: TSchema): string | undefined {
  return (schema as unknown as JsonSchema).description;
}

/** Input fields of a GraphQL input type from a TypeBox request schema: same names, types, requiredness. */
export function inputFieldsFrom(t: FieldBuilder, schema: TSchema) {
  const { properties = {}, required = [] } = schema as unknown as JsonSchema & { required?: string[] };
  const fields: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const types = Array.isArray(property.type) ? property.type : [property.type];
    const type = types.find((candidate) => candidate !== "null");
    const options = { required: required.includes(name), description: property.description };
    const scalar = (kind: string | undefined) =>
      kind === "integer" ? "Int" : kind === "number" ? "Float" : kind === "boolean" ? "Boolean" : "String";
    fields[name] =
      type === "array"
        ? t.field({ ...options, type: [scalar(property.items?.type as string)] })
        : t.field({ ...options, type: scalar(type) });
  }
  return fields as Record<string, never>;
}
