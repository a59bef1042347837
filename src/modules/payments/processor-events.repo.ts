import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { processorEvents } from "../../db/schema.js";

export type ProcessorEventRow = typeof processorEvents.$inferSelect;

/** An event the organization's processor already delivered, by its id. */
export async function findProcessorEvent(db: Executor, organizationId: number, processor: string, eventId: string) {
  const [row] = await db
    .select()
    .from(processorEvents)
    .where(
      and(
        eq(processorEvents.organizationId, organizationId),
        eq(processorEvents.processor, processor),
        eq(processorEvents.eventId, eventId),
      ),
    );
  return row;
}

/** Keeps an event's id and what it did; a second delivery of it (racing the first) records nothing. */
export async function insertProcessorEvent(
  db: Executor,
  values: { organizationId: number; processor: string; eventId: string; eventType: string; outcome: string },
) {
  const rows = await db.insert(processorEvents).values(values).onConflictDoNothing().returning();
  return rows[0];
}
