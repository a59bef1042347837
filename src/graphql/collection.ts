import type { ObjectRef } from "@pothos/core";
import type { TSchema } from "typebox";
import type { Permission } from "../auth/permissions.js";
import type { Scope } from "../auth/scope.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { builder } from "./builder.js";
import { authorize } from "./context.js";
import { parseListArgs } from "./list-args.js";

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
}

export interface CollectionDefinition<Wire, Query> {
  /** Plural wire name, e.g. "checkouts"; also the list field's name. */
  collection: string;
  /** Singular field name, e.g. "checkout". */
  singular: string;
  type: ObjectRef<GraphQLTypes, Wire>;
  listQuery: TSchema;
  permission: Permission;
  list(db: Db, scope: Scope, query: Query): Promise<{ items: Wire[]; count: number }>;
  retrieve(db: Db, scope: Scope, id: string): Promise<Wire>;
}

// biome-ignore lint/suspicious/noExplicitAny: Pothos' schema types parameter
type GraphQLTypes = any;

/**
 * A list field with the REST collection's parameters as arguments (same names, defaults and
 * validation) returning { items, count }, and a single-item field returning null for an id that
 * is not the organization's.
 */
export function defineCollection<Wire, Query>(definition: CollectionDefinition<Wire, Query>) {
  const typeName = (definition.type as unknown as { name: string }).name;
  const listType = builder.objectRef<{ items: Wire[]; count: number }>(`${typeName}List`).implement({
    description: `A page of ${definition.collection} and the total under the same filters`,
    fields: (t) => ({
      items: t.field({ type: [definition.type], resolve: (page) => page.items }),
      count: t.exposeInt("count", { description: "Total number of results ignoring limit and offset" }),
    }),
  });

  const parameters = (definition.listQuery as unknown as JsonSchema).properties ?? {};
  builder.queryField(definition.collection, (t) =>
    t.field({
      type: listType,
      description: `List ${definition.collection}, as GET /api/v1/${definition.collection}/`,
      args: Object.fromEntries(
        Object.entries(parameters).map(([name, parameter]) => {
          const type = Array.isArray(parameter.type) ? parameter.type[0] : parameter.type;
          const options = { required: false, description: parameter.description } as const;
          const arg =
            type === "integer"
              ? t.arg.int(options)
              : type === "boolean"
                ? t.arg.boolean(options)
                : t.arg.string(options);
          return [name, arg];
        }),
      ),
      resolve: async (_root, args, context) => {
        authorize(context, definition.permission);
        const query = parseListArgs<Query>(definition.listQuery, args as Record<string, unknown>);
        return definition.list(context.db, context.scope, query);
      },
    }),
  );

  builder.queryField(definition.singular, (t) =>
    t.field({
      type: definition.type,
      nullable: true,
      description: `One ${definition.singular} by id; null when the organization has none with that id`,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, context) => {
        authorize(context, definition.permission);
        return definition.retrieve(context.db, context.scope, String(args.id)).catch((error: unknown) => {
          if (error instanceof AppError && error.status === 404) return null;
          throw error;
        }) as never;
      },
    }),
  );
  return listType;
}
