import { type TProperties, type TSchema, Type } from "typebox";
import { invalidParameter } from "../errors/app-error.js";

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface Page {
  limit: number;
  offset: number;
}

export interface Order {
  field: string;
  descending: boolean;
}

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

export function parseOrder(order: string | undefined): Order {
  const value = order ?? "-create_date";
  return value.startsWith("-") ? { field: value.slice(1), descending: true } : { field: value, descending: false };
}

export type DateBound = { kind: "day"; day: string } | { kind: "instant"; instant: string };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC would read years below 100 as 19xx
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

// Instants must keep a four-digit year once converted to UTC.
const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/** Parses a date filter: a calendar day or an exact date-time with an offset. */
export function parseDateBound(parameter: string, value: string): DateBound {
  const day = DAY.exec(value);
  if (day) {
    if (!isCalendarDay(Number(day[1]), Number(day[2]), Number(day[3]))) {
      throw invalidParameter(parameter, `"${value}" is not a calendar date`);
    }
    return { kind: "day", day: value };
  }
  const instant = INSTANT.exec(value);
  if (instant) {
    const [, y, mo, d, h, mi, s, oh, om] = instant;
    const valid =
      isCalendarDay(Number(y), Number(mo), Number(d)) &&
      Number(h) < 24 &&
      Number(mi) < 60 &&
      Number(s ?? 0) < 60 &&
      Number(oh ?? 0) < 24 &&
      Number(om ?? 0) < 60;
    const time = new Date(value).getTime();
    if (valid && time >= EARLIEST && time <= LATEST) return { kind: "instant", instant: new Date(time).toISOString() };
  }
  throw invalidParameter(parameter, "must be a date (YYYY-MM-DD) or an ISO 8601 date-time with a time zone");
}

export function optionalDateBound(parameter: string, value: string | undefined): DateBound | undefined {
  return value === undefined ? undefined : parseDateBound(parameter, value);
}
