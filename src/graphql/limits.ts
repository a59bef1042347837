import {
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLNamedType,
  getIntrospectionQuery,
  getNamedType,
  isObjectType,
  Kind,
  parse,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from "graphql";
import type { ErrorCode } from "../errors/error-codes.js";

/** Limits of one GraphQL operation; each is set in config.ts (GRAPHQL_MAX_*). */
export interface GraphQLLimits {
  maxDepth: number;
  maxCost: number;
  /** Aliased fields anywhere in the operation. */
  maxAliases: number;
  /** Fields at the top of the operation (each one is at least one database statement). */
  maxRootFields: number;
  /** SQL statements one request may run, whatever the estimate said. */
  maxStatements: number;
}

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;
/** What one SQL statement is worth against the cost limit, beside 1 per field and result row. */
export const STATEMENT_COST = 10;
/** Fields that return a page of { items, count }. */
const PAGED_FIELDS = new Set([
  "campaigns",
  "supporters",
  "donations",
  "payments",
  "checkouts",
  "installations",
  "outboxMessages",
]);
/** Fields of a page that the page's own statements already fetched. */
const PAGE_MEMBERS = new Set(["items", "count"]);

type Fragments = Record<string, FragmentDefinitionNode>;

function fieldsOf(
  selectionSet: SelectionSetNode | undefined,
  fragments: Fragments,
  seen = new Set<string>(),
): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fields.push(...fieldsOf(selection.selectionSet, fragments, seen));
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      fields.push(...fieldsOf(fragments[selection.name.value]?.selectionSet, fragments, seen));
    }
  }
  return fields;
}

function depthOf(selectionSet: SelectionSetNode | undefined, fragments: Fragments, depth: number, cap: number): number {
  if (depth > cap) return depth;
  let deepest = depth;
  for (const field of fieldsOf(selectionSet, fragments)) {
    if (field.selectionSet) deepest = Math.max(deepest, depthOf(field.selectionSet, fragments, depth + 1, cap));
  }
  return deepest;
}

const isIntrospection = (field: FieldNode) => field.name.value.startsWith("__");

function fragmentsOf(context: ValidationContext): Fragments {
  const fragments: Fragments = {};
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  return fragments;
}

/**
 * Introspection has a fixed shape that is deeper than any data query (the type references of
 * graphql-js's own introspection query), and never reaches the database: it gets the depth of
 * that query, computed here, instead of the data limit. Its cycles are bounded by graphql-js's
 * MaxIntrospectionDepthRule, one of the specified rules.
 */
export const INTROSPECTION_DEPTH = (() => {
  const document = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
  );
  const fragments: Fragments = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  return operation && "selectionSet" in operation ? depthOf(operation.selectionSet, fragments, 1, 64) : 1;
})();

/** Page size a list field asks for: its literal limit, the worst case for a variable. */
function pageSize(field: FieldNode): number {
  // `limit` for offset pages, `first` for cursor pages (the Outbox).
  const limit = field.arguments?.find((argument) => argument.name.value === "limit" || argument.name.value === "first");
  if (!limit) return DEFAULT_PAGE;
  if (limit.value.kind === Kind.INT) return Math.min(Math.max(Number(limit.value.value), 1), MAX_PAGE);
  return MAX_PAGE;
}

/** Statements a field runs: a page runs its rows and its count, a search scans, a relation loads once per page. */
function statementsOf(field: FieldNode, parent: GraphQLNamedType | undefined, isRoot: boolean): number {
  if (isIntrospection(field)) return 0;
  if (isRoot) {
    const paged = PAGED_FIELDS.has(field.name.value) ? 1 : 0;
    const searched = field.arguments?.some((argument) => argument.name.value === "q") ? 1 : 0;
    return 1 + paged + searched;
  }
  if (!isObjectType(parent) || PAGE_MEMBERS.has(field.name.value)) return 0;
  const definition = parent.getFields()[field.name.value];
  return definition && isObjectType(getNamedType(definition.type)) ? 1 : 0;
}

/** Each field costs 1 per result row it may appear in, plus STATEMENT_COST per statement it runs. */
function costOf(
  selectionSet: SelectionSetNode | undefined,
  parent: GraphQLNamedType | undefined,
  fragments: Fragments,
  multiplier: number,
  depth: number,
  maxDepth: number,
): number {
  if (depth > maxDepth) return 0;
  let cost = 0;
  for (const field of fieldsOf(selectionSet, fragments)) {
    const inner = PAGED_FIELDS.has(field.name.value) ? multiplier * pageSize(field) : multiplier;
    const definition = isObjectType(parent) ? parent.getFields()[field.name.value] : undefined;
    cost += multiplier + STATEMENT_COST * statementsOf(field, parent, depth === 0);
    if (field.selectionSet) {
      const type = definition ? getNamedType(definition.type) : undefined;
      cost += costOf(field.selectionSet, type, fragments, inner, depth + 1, maxDepth);
    }
  }
  return cost;
}

function aliasesOf(selectionSet: SelectionSetNode | undefined, fragments: Fragments, depth: number, cap: number) {
  if (depth > cap) return 0;
  let aliases = 0;
  for (const field of fieldsOf(selectionSet, fragments)) {
    if (field.alias) aliases += 1;
    if (field.selectionSet) aliases += aliasesOf(field.selectionSet, fragments, depth + 1, cap);
  }
  return aliases;
}

const refuse = (
  context: ValidationContext,
  node: unknown,
  message: string,
  extensions: { code: ErrorCode } & Record<string, unknown>,
) => context.reportError(new GraphQLError(message, { nodes: node as FieldNode, extensions }));

/** Validation rules: they run before execution, so a refused operation runs no SQL at all. */
export function limitRules(limits: GraphQLLimits): ValidationRule[] {
  const depthRule = (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      const fragments = fragmentsOf(context);
      for (const root of fieldsOf(operation.selectionSet, fragments)) {
        const max = isIntrospection(root) ? INTROSPECTION_DEPTH : limits.maxDepth;
        if (root.selectionSet && depthOf(root.selectionSet, fragments, 2, max) > max) {
          refuse(context, operation, `The query is nested too deeply: at most ${max} levels are allowed`, {
            code: "query_too_deep",
          });
          return;
        }
      }
    },
  });
  const shapeRule = (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      const fragments = fragmentsOf(context);
      const roots = fieldsOf(operation.selectionSet, fragments).filter((field) => !isIntrospection(field)).length;
      if (roots > limits.maxRootFields) {
        refuse(
          context,
          operation,
          `The operation asks for ${roots} top-level fields; at most ${limits.maxRootFields} are allowed (split it)`,
          { code: "too_many_root_fields", max_root_fields: limits.maxRootFields },
        );
      }
      const aliases = aliasesOf(operation.selectionSet, fragments, 1, limits.maxDepth);
      if (aliases > limits.maxAliases) {
        refuse(
          context,
          operation,
          `The operation uses ${aliases} aliases; at most ${limits.maxAliases} are allowed (split it)`,
          { code: "too_many_aliases", max_aliases: limits.maxAliases },
        );
      }
    },
  });
  const costRule = (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(operation) {
      const root = context.getSchema().getRootType(operation.operation) ?? undefined;
      const cost = costOf(operation.selectionSet, root, fragmentsOf(context), 1, 0, limits.maxDepth);
      if (cost > limits.maxCost) {
        refuse(
          context,
          operation,
          `The query is too expensive: its estimated cost is ${cost}, at most ${limits.maxCost} is allowed (lower the limits or ask for fewer fields)`,
          { code: "query_too_expensive", cost, max_cost: limits.maxCost },
        );
      }
    },
  });
  return [depthRule, shapeRule, costRule];
}
