import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../src/db/client.js";
import { events } from "../../src/db/schema.js";

/** The organization's recorded changes of these types, oldest first, as the audit log reads them. */
export async function auditRowsOf(db: Db, organizationId: number, types: string[]) {
  const rows = await db
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId), inArray(events.type, types)))
    .orderBy(asc(events.seq));
  return rows.map((row) => ({ type: row.type, actor: row.actor, data: row.data, changes: row.changes }));
}
