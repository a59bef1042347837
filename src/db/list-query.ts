import { type AnyColumn, and, asc, count, desc, eq, getTableColumns, inArray, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTableWithColumns } from "drizzle-orm/pg-core";
import type { DateBound, Order, Page } from "../http/pagination.js";
import type { Executor } from "./client.js";
import { collectionCounts } from "./schema.js";

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

/** Unfiltered totals come from the trigger-maintained counters, exact and O(1). */
export async function countAll(tx: Executor, organizationId: number, collection: string): Promise<number> {
  const [row] = await tx
    .select({ count: collectionCounts.count })
    .from(collectionCounts)
    .where(and(eq(collectionCounts.organizationId, organizationId), eq(collectionCounts.collection, collection)));
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
): Promise<T["$inferSelect"] | undefined> {
  const [row] = await tx
    .select()
    .from(table as PgTableWithColumns<never>)
    .where(and(eq(table.organizationId, organizationId), eq(table.id, id)));
  return row as T["$inferSelect"] | undefined;
}
