import { createHash } from "node:crypto";
import {
  type AnyColumn,
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  inArray,
  is,
  type Placeholder,
  SQL,
  sql,
} from "drizzle-orm";
import { type PgColumn, PgDialect, type PgTableWithColumns } from "drizzle-orm/pg-core";
import { invalidParameter } from "../errors/app-error.js";
import type { Executor } from "./client.js";
import { collectionCounts } from "./schema.js";

/** A page of a list: how many items, after how many. */
export interface Page {
  limit: number;
  offset: number;
}

/** A list's order: one field, ties broken by id in the same direction. */
export interface Order {
  field: string;
  descending: boolean;
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

/** The create/update date bounds every list accepts, parsed from their query parameters. */
export function createUpdateBounds(query: {
  create_date_from?: string;
  create_date_to?: string;
  update_date_from?: string;
  update_date_to?: string;
}) {
  return {
    createDateFrom: optionalDateBound("create_date_from", query.create_date_from),
    createDateTo: optionalDateBound("create_date_to", query.create_date_to),
    updateDateFrom: optionalDateBound("update_date_from", query.update_date_from),
    updateDateTo: optionalDateBound("update_date_to", query.update_date_to),
  };
}

/** A list request's page. */
export const pageOf = (query: Page): Page => ({ limit: query.limit, offset: query.offset });

export type OrderColumns = Record<string, AnyColumn | SQL>;

/** ORDER BY the requested field, ties broken by id in the same direction. */
export function orderTerms(columns: OrderColumns, idColumn: AnyColumn, order: Order): SQL[] {
  const column = columns[order.field];
  if (!column) throw new Error(`no order column for ${order.field}`);
  const direction = order.descending ? desc : asc;
  return order.field === "id" ? [direction(idColumn)] : [direction(column), direction(idColumn)];
}

/** A date filter bound: whole days are taken in the organization's time zone, both ends inclusive. */
export function dateCondition(column: AnyColumn, side: "from" | "to", bound: DateBound, timeZone: string): SQL {
  if (bound.kind === "instant") {
    return side === "from"
      ? sql`${column} >= ${bound.instant}::timestamptz`
      : sql`${column} <= ${bound.instant}::timestamptz`;
  }
  return side === "from"
    ? sql`${column} >= (${bound.day}::date)::timestamp at time zone ${timeZone}`
    : sql`${column} < (${bound.day}::date + 1)::timestamp at time zone ${timeZone}`;
}

export function dateRangeConditions(
  column: AnyColumn,
  from: DateBound | undefined,
  to: DateBound | undefined,
  timeZone: string,
): SQL[] {
  const conditions: SQL[] = [];
  if (from) conditions.push(dateCondition(column, "from", from, timeZone));
  if (to) conditions.push(dateCondition(column, "to", to, timeZone));
  return conditions;
}

/**
 * The trigger-maintained total as a scalar subquery, to read it in the statement that reads the
 * page (0 when the organization never had a row). Nested, so its columns stay table-qualified.
 */
export function collectionCountSql(organizationId: number | Placeholder, collection: string): SQL<number> {
  const inner = sql`select coalesce((select ${collectionCounts.count} from ${collectionCounts} where ${collectionCounts.organizationId} = ${organizationId} and ${collectionCounts.collection} = ${collection}), 0)`;
  return sql<number>`(${inner})`.mapWith(Number);
}

/** Unfiltered totals come from the trigger-maintained counters, exact and O(1). */
export async function countAll(tx: Executor, organizationId: number, collection: string): Promise<number> {
  const [row] = await prepared(
    "collection_count",
    tx
      .select({ count: collectionCounts.count })
      .from(collectionCounts)
      .where(and(eq(collectionCounts.organizationId, organizationId), eq(collectionCounts.collection, collection))),
  ).execute();
  return row?.count ?? 0;
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

export interface PageQuery {
  organizationId: number;
  conditions: (SQL | undefined)[];
  order: SQL[];
  page: Page;
}

// biome-ignore lint/suspicious/noExplicitAny: any tenant table of the schema
export type TenantTable = PgTableWithColumns<any> & { organizationId: PgColumn; id: PgColumn };

/** Wire names are the SQL column names, so a table orders by any of its scalar columns. */
export function orderColumnsOf(table: TenantTable, fields: readonly string[]): OrderColumns {
  const byName = new Map<string, AnyColumn>(
    Object.values(getTableColumns(table) as Record<string, AnyColumn>).map((column) => [column.name, column]),
  );
  return Object.fromEntries(
    fields.map((field) => {
      const column = byName.get(field);
      if (!column) throw new Error(`${field} is not a column`);
      return [field, column];
    }),
  );
}

export function tenantWhere(table: TenantTable, query: Pick<PageQuery, "organizationId" | "conditions">) {
  return and(eq(table.organizationId, query.organizationId), ...query.conditions);
}

/**
 * A deferred join: the page's ids come from an index scan over (organization_id, order, id),
 * and only those rows are read, so deep offsets do not fetch the rows they skip.
 */
export async function selectTenantPage<T extends TenantTable>(
  tx: Executor,
  table: T,
  query: PageQuery,
): Promise<T["$inferSelect"][]> {
  const ids = tx
    .select({ id: table.id })
    .from(table as PgTableWithColumns<never>)
    .where(tenantWhere(table, query))
    .orderBy(...query.order)
    .limit(query.page.limit)
    .offset(query.page.offset);
  return (await tx
    .select()
    .from(table as PgTableWithColumns<never>)
    .where(and(eq(table.organizationId, query.organizationId), inArray(table.id, ids)))
    .orderBy(...query.order)) as T["$inferSelect"][];
}

/** A page of a single-table collection and its exact total under the same filters. */
export async function listTenantPage<T extends TenantTable>(
  tx: Executor,
  table: T,
  collection: string,
  query: PageQuery,
): Promise<{ rows: T["$inferSelect"][]; count: number }> {
  const [rows, count] = await Promise.all([
    selectTenantPage(tx, table, query),
    countTenantRows(tx, table, collection, query),
  ]);
  return { rows, count };
}

export async function countTenantRows(
  tx: Executor,
  table: TenantTable,
  collection: string,
  query: Pick<PageQuery, "organizationId" | "conditions">,
): Promise<number> {
  if (query.conditions.every((condition) => condition === undefined)) {
    return countAll(tx, query.organizationId, collection);
  }
  const [row] = await tx
    .select({ count: count() })
    .from(table as unknown as PgTableWithColumns<never>)
    .where(tenantWhere(table, query));
  return (row as { count: number } | undefined)?.count ?? 0;
}

export async function selectTenantRow<T extends TenantTable>(
  tx: Executor,
  table: T,
  organizationId: number,
  id: number,
  lock?: "update",
): Promise<T["$inferSelect"] | undefined> {
  const query = tx
    .select()
    .from(table as PgTableWithColumns<never>)
    .where(and(eq(table.organizationId, organizationId), eq(table.id, id)));
  const [row] = await (lock ? query.for(lock) : query);
  return row as T["$inferSelect"] | undefined;
}

/**
 * Runs `query` as a named prepared statement, named after its text: PostgreSQL parses it once per
 * connection (and may keep a generic plan) instead of on every request, which matters for wide
 * selects whose parse and analysis cost more than their execution. Values stay bind parameters,
 * so the number of statements is bounded by the query shapes, not by the values.
 */
export function prepared<Q extends { toSQL(): { sql: string }; prepare(name: string): unknown }>(
  prefix: string,
  query: Q,
): ReturnType<Q["prepare"]> {
  const digest = createHash("sha1").update(query.toSQL().sql).digest("base64url").slice(0, 16);
  return query.prepare(`${prefix}_${digest}`) as ReturnType<Q["prepare"]>;
}

const dialect = new PgDialect();

/**
 * Renders a parameterless expression once, to raw SQL with table-qualified columns. Building a
 * select walks every chunk of every expression on each call; a constant selection of a hundred
 * columns costs more to rebuild than to run.
 */
export function constantSql<T>(expression: SQL): SQL<T> {
  const { sql: text, params } = dialect.sqlToQuery(expression);
  if (params.length > 0) throw new Error("constantSql takes an expression without parameters");
  return sql.raw(text) as SQL<T>;
}

const MAX_JSON_ARGUMENTS = 100; // FUNC_MAX_ARGS, the most values json_build_array() takes

/**
 * A timestamptz column in the wire's date-time form, computed by PostgreSQL: `Date#toISOString()`'s
 * "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC, three fraction digits, whatever the session's TimeZone). Exact
 * for the schema's timestamptz(3) columns, which hold whole milliseconds, in years 1 to 9999.
 */
export function isoInstantSql(column: AnyColumn): SQL<string | null> {
  return sql<string | null>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * Columns whose to_json() form is already their wire value: strings, booleans, JSON, numbers the
 * wire shows as numbers (ids, integers, money), "YYYY-MM-DD" dates, and arrays of strings or money.
 */
const WIRE_IDENTITY = new Set([
  "PgText",
  "PgVarchar",
  "PgChar",
  "PgBoolean",
  "PgJson",
  "PgJsonb",
  "PgInteger",
  "PgSmallInt",
  "PgBigInt53",
  "PgNumericNumber",
  "PgDateString",
]);
const WIRE_ARRAY_ITEM = new Set([
  "PgText",
  "PgVarchar",
  "PgChar",
  "PgNumeric",
  "PgNumericNumber",
  "PgInteger",
  "PgSmallInt",
]);

/** A timestamptz column whose wire form is its instant in `Date#toISOString()` form. */
export interface InstantField {
  readonly instant: AnyColumn;
}

export const instant = (column: AnyColumn): InstantField => ({ instant: column });

/** A wire field: a column, an instant, an SQL expression of the wire value, or a constant null. */
export type WireField = AnyColumn | InstantField | SQL | null;

export interface WireRow<T> {
  /** Constant SQL: json_build_array() of every field's wire value, in the order `decode` reads them. */
  readonly sql: SQL<unknown[]>;
  /** The wire object; its fields are still checked and serialized by the route's response schema. */
  decode(values: unknown[]): T;
  /** The same wire object from a row Drizzle selected (the fields must be columns or instants). */
  fromRow(row: object): T;
}

const isInstant = (field: WireField): field is InstantField =>
  field !== null && typeof field === "object" && "instant" in field && !is(field, SQL);

/** How one field's wire value is read from a Drizzle row: the property, converted as PostgreSQL's to_json does. */
function rowReader(key: string, field: WireField): (row: Record<string, unknown>) => unknown {
  if (field === null) return () => null;
  if (is(field, SQL)) {
    return () => {
      throw new Error(`wireRowOf: ${key} is an SQL expression, which has no row form`);
    };
  }
  const column = (isInstant(field) ? field.instant : field) as PgColumn;
  const property = Object.entries(getTableColumns(column.table)).find(([, candidate]) => candidate === column)?.[0];
  if (property === undefined) throw new Error(`wireRowOf: ${key} names no column of its table`);
  if (isInstant(field)) return (row) => (row[property] as Date | null)?.toISOString() ?? null;
  const base = (column as unknown as { baseColumn?: PgColumn }).baseColumn;
  // numeric[] arrives as strings; to_json() gives numbers.
  if (column.columnType === "PgArray" && base?.columnType === "PgNumeric") {
    return (row) => (row[property] as string[] | null)?.map(Number) ?? null;
  }
  return (row) => row[property];
}

function wireExpression(key: string, field: WireField): SQL {
  if (field === null) return sql`null`;
  if (is(field, SQL)) return field;
  if (isInstant(field)) return isoInstantSql(field.instant);
  const column = field as PgColumn;
  const kind = column.columnType;
  const base = (column as unknown as { baseColumn?: PgColumn }).baseColumn;
  if (WIRE_IDENTITY.has(kind) || (kind === "PgArray" && base && WIRE_ARRAY_ITEM.has(base.columnType))) {
    return sql`${column}`;
  }
  // Timestamps need isoInstantSql; anything else might not be its own wire form: refuse rather than guess.
  throw new Error(`wireRowOf: no wire form for ${key} (column ${column.name}, ${kind})`);
}

/**
 * A record in its wire shape, built by PostgreSQL as one JSON array: the application reads it back
 * by position, with no per-value conversion (no Date parsing and formatting, no numeric strings).
 * The projection must name every field of the wire type (checked at compile time).
 */
export function wireRowOf<T extends Record<string, unknown>>(fields: { [K in keyof T]: WireField }): WireRow<T> {
  const entries = Object.entries(fields) as [string, WireField][];
  if (entries.length > MAX_JSON_ARGUMENTS)
    throw new Error(`json_build_array takes at most ${MAX_JSON_ARGUMENTS} values`);
  const keys = entries.map(([key]) => key);
  const expressions = entries.map(([key, field]) => wireExpression(key, field));
  let readers: [string, (row: Record<string, unknown>) => unknown][] | undefined;
  return {
    sql: constantSql<unknown[]>(sql`json_build_array(${sql.join(expressions, sql`, `)})`),
    decode(values) {
      const row: Record<string, unknown> = {};
      for (let index = 0; index < keys.length; index++) row[keys[index] as string] = values[index] ?? null;
      return row as T;
    },
    fromRow(row) {
      readers ??= entries.map(([key, field]) => [key, rowReader(key, field)]);
      const wire: Record<string, unknown> = {};
      for (const [key, read] of readers) wire[key] = read(row as Record<string, unknown>);
      return wire as T;
    },
  };
}
