import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTableWithColumns } from "drizzle-orm/pg-core";
import type { Executor } from "./client.js";
import { selectTenantRow } from "./list-query.js";

// biome-ignore lint/suspicious/noExplicitAny: any tenant table of the schema
type TenantTable = PgTableWithColumns<any> & { organizationId: PgColumn; id: PgColumn };

/** One query for many rows of one organization, for batching loaders. */
export async function selectTenantRowsByIds<T extends TenantTable>(
  tx: Executor,
  table: T,
  organizationId: number,
  ids: readonly number[],
): Promise<T["$inferSelect"][]> {
  if (ids.length === 0) return [];
  return (await tx
    .select()
    .from(table as PgTableWithColumns<never>)
    .where(and(eq(table.organizationId, organizationId), inArray(table.id, [...ids])))) as T["$inferSelect"][];
}

/** Locks one row of the table's organization FOR UPDATE until the transaction ends. */
export const tenantRowLocker =
  <T extends TenantTable>(table: T) =>
  (tx: Executor, organizationId: number, id: number) =>
    selectTenantRow(tx, table, organizationId, id, "update");

/** Changes the given columns of one row of an organization; its update date is now. */
export async function updateTenantRow<T extends TenantTable & { updateDate: PgColumn }>(
  tx: Executor,
  table: T,
  organizationId: number,
  id: number,
  values: { [K in keyof T["$inferInsert"]]?: T["$inferInsert"][K] | SQL },
): Promise<T["$inferSelect"] | undefined> {
  const rows = await tx
    .update(table as TenantTable)
    .set({ ...values, updateDate: sql`now()` })
    .where(and(eq(table.organizationId, organizationId), eq(table.id, id)))
    .returning();
  return rows[0] as T["$inferSelect"] | undefined;
}

/** Changes the given columns of one row of the table's organization; its update date is now. */
export const tenantRowUpdater =
  <T extends TenantTable & { updateDate: PgColumn }>(table: T) =>
  (
    tx: Executor,
    organizationId: number,
    id: number,
    values: { [K in keyof T["$inferInsert"]]?: T["$inferInsert"][K] | SQL },
  ) =>
    updateTenantRow(tx, table, organizationId, id, values);
