import {
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql";

export const MAX_DEPTH = 8;
export const MAX_COST = 50_000;
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;
/** Fields that return a page of { items, count }. */
const PAGED_FIELDS = new Set(["campaigns", "supporters", "donations", "payments", "checkouts", "installations"]);

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

function depthOf(selectionSet: SelectionSetNode | undefined, fragments: Fragments, depth: number): number {
  if (depth > MAX_DEPTH) return depth;
  let deepest = depth;
  for (const field of fieldsOf(selectionSet, fragments)) {
    if (field.selectionSet) deepest = Math.max(deepest, depthOf(field.selectionSet, fragments, depth + 1));
  }
  return deepest;
}

/** Page size a list field asks for: its literal limit, the worst case for a variable. */
function pageSize(field: FieldNode): number {
  const limit = field.arguments?.find((argument) => argument.name.value === "limit");
  if (!limit) return DEFAULT_PAGE;
  if (limit.value.kind === Kind.INT) return Math.min(Math.max(Number(limit.value.value), 1), MAX_PAGE);
  return MAX_PAGE;
}

/** Each field costs 1, multiplied by the page sizes of the lists around it. */
function costOf(
  selectionSet: SelectionSetNode | undefined,
  fragments: Fragments,
  multiplier: number,
  depth = 0,
): number {
  if (depth > MAX_DEPTH) return 0;
  let cost = 0;
  for (const field of fieldsOf(selectionSet, fragments)) {
    const inner = PAGED_FIELDS.has(field.name.value) ? multiplier * pageSize(field) : multiplier;
    cost += multiplier + (field.selectionSet ? costOf(field.selectionSet, fragments, inner, depth + 1) : 0);
  }
  return cost;
}

function fragmentsOf(context: ValidationContext): Fragments {
  const fragments: Fragments = {};
  for (const definition of context.getDocument().definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  return fragments;
}

export function depthLimitRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(operation) {
      const depth = depthOf(operation.selectionSet, fragmentsOf(context), 1);
      if (depth > MAX_DEPTH) {
        context.reportError(
          new GraphQLError(`The query is nested too deeply: at most ${MAX_DEPTH} levels are allowed`, {
            nodes: [operation],
            extensions: { code: "query_too_deep" },
          }),
        );
      }
    },
  };
}

export function costLimitRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(operation) {
      const cost = costOf(operation.selectionSet, fragmentsOf(context), 1);
      if (cost > MAX_COST) {
        context.reportError(
          new GraphQLError(
            `The query is too expensive: its estimated cost is ${cost}, at most ${MAX_COST} is allowed (lower the limits or ask for fewer fields)`,
            { nodes: [operation], extensions: { code: "query_too_expensive", cost, max_cost: MAX_COST } },
          ),
        );
      }
    },
  };
}
