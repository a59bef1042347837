import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { processorAccounts } from "../../db/schema.js";

export type ProcessorAccountRow = typeof processorAccounts.$inferSelect;

export async function findProcessorAccount(db: Executor, organizationId: number, processor: string) {
  const rows = await db
    .select()
    .from(processorAccounts)
    .where(and(eq(processorAccounts.organizationId, organizationId), eq(processorAccounts.processor, processor)));
  return rows[0];
}

/** Saves the organization's account at a processor (one per processor), replacing the one before. */
export async function upsertProcessorAccount(
  db: Executor,
  values: Omit<typeof processorAccounts.$inferInsert, "createDate" | "updateDate">,
): Promise<ProcessorAccountRow> {
  const { organizationId: _organizationId, processor: _processor, ...changes } = values;
  const rows = await db
    .insert(processorAccounts)
    .values(values)
    .onConflictDoUpdate({
      target: [processorAccounts.organizationId, processorAccounts.processor],
      set: { ...changes, updateDate: new Date() },
    })
    .returning();
  const row = rows[0];
  if (!row) throw new Error("processor account upsert returned nothing");
  return row;
}

export async function deleteProcessorAccount(db: Executor, organizationId: number, processor: string) {
  const rows = await db
    .delete(processorAccounts)
    .where(and(eq(processorAccounts.organizationId, organizationId), eq(processorAccounts.processor, processor)))
    .returning({ processor: processorAccounts.processor });
  return rows.length > 0;
}
