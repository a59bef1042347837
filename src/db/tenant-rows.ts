import { and, eq, inArray } from "drizzle-orm";
import type { PgColumn, PgTableWithColumns } from "drizzle-orm/pg-core";
import type { Executor } from "./client.js";

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
