import { desc, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { auditEvents } from "../../db/schema.js";

export type AuditEventRow = typeof auditEvents.$inferSelect;

export async function insertAuditEvent(
  tx: Executor,
  values: Omit<typeof auditEvents.$inferInsert, "id" | "createDate">,
): Promise<AuditEventRow> {
  const [row] = await tx.insert(auditEvents).values(values).returning();
  if (!row) throw new Error("audit event insert returned nothing");
  return row;
}

/** The organization's audit log, newest first. */
export async function listAuditEvents(tx: Executor, organizationId: number, limit: number) {
  return tx
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.organizationId, organizationId))
    .orderBy(desc(auditEvents.createDate), desc(auditEvents.id))
    .limit(limit);
}
