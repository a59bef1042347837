import type { TSchema } from "typebox";
import { validateAgainst } from "../http/validate.js";

/** GraphQL list arguments are checked against the REST list query schema of the collection. */
export function parseListArgs<Q>(schema: TSchema, args: Record<string, unknown>): Q {
  return validateAgainst<Q>(schema, args, "parameter");
}
