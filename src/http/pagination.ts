import { type TProperties, type TSchema, Type } from "typebox";

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

const dateFilterDescription =
  "YYYY-MM-DD (whole day in the organization's time zone, inclusive) or an ISO 8601 date-time (exact bound)";

export const DateFilter = Type.String({ description: dateFilterDescription, examples: ["2026-03-01"] });

export function orderParameter(fields: readonly string[]) {
  return Type.String({
    enum: [...fields, ...fields.map((field) => `-${field}`)],
    default: "-create_date",
    description: "Field to order by; a leading - means descending. Ties are broken by id in the same direction.",
  });
}

/** limit/offset/order plus the collection's own filters; unknown parameters are refused. */
export function listQuerySchema<P extends TProperties>(orderFields: readonly string[], filters: P) {
  return Type.Object(
    {
      limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: "Page size" }),
      offset: Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        default: 0,
        description: "Items skipped from the start",
      }),
      order: orderParameter(orderFields),
      ...filters,
    },
    { additionalProperties: false },
  );
}

export function listResponseSchema<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      items: Type.Array(item),
      count: Type.Integer({ minimum: 0, description: "Total number of results ignoring limit and offset" }),
    },
    { additionalProperties: false, description: `A page of ${name}` },
  );
}
