import { type Static, type TSchema, Type } from "typebox";

/** A field that is always present and null when unknown (decisions §3). */
export function nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, "null"] });
}

export const DateTime = Type.String({ format: "date-time", description: "ISO 8601 UTC with milliseconds" });
export const CalendarDate = Type.String({ format: "date", description: "YYYY-MM-DD" });
export const Money = Type.Number({ description: "Amount in the organization's currency, at most 2 decimals" });
export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const Tags = Type.Array(Type.String());
export const Frequency = Type.Integer({
  enum: [0, 12, 1],
  description: "Charges per year: 0 one-off, 1 yearly, 12 monthly",
});

/** Every field is required on the wire; the response serializer fails rather than omit one. */
export function wireObject<T extends Record<string, TSchema>>(properties: T, description?: string) {
  return Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });
}
