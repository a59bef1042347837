import { and, asc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { eventSequences, events } from "../db/schema.js";

export type EventRow = typeof events.$inferSelect;
export type EventInsert = Omit<typeof events.$inferInsert, "seq">;

/**
 * Numbers and inserts one organization's events of a transaction, in the order given. The counter's
 * row stays locked until the transaction ends, so another transaction of the same organization that
 * records events waits for this one to commit or roll back: numbers are gap-free and in commit order,
 * and a reader that has seen number N has seen every number below it. Events are written after the
 * change's other writes (`withEvents`), which keeps that wait short.
 */
export async function insertEvents(tx: Executor, organizationId: number, values: EventInsert[]): Promise<void> {
  if (values.length === 0) return;
  const count = values.length;
  const [counter] = await tx
    .insert(eventSequences)
    .values({ organizationId, lastSeq: count })
    .onConflictDoUpdate({
      target: eventSequences.organizationId,
      set: { lastSeq: sql`${eventSequences.lastSeq} + ${count}` },
    })
    .returning({ seq: eventSequences.lastSeq });
  if (!counter) throw new Error("event counter not advanced");
  const first = counter.seq - count + 1;
  await tx.insert(events).values(values.map((value, index) => ({ ...value, organizationId, seq: first + index })));
}

/** The organization's counter: the last number given, and the last number past retention. */
export async function findEventSequence(tx: Executor, organizationId: number) {
  const [row] = await tx.select().from(eventSequences).where(eq(eventSequences.organizationId, organizationId));
  return { lastSeq: row?.lastSeq ?? 0, prunedThrough: row?.prunedThrough ?? 0 };
}

/** Events numbered after `afterSeq`, oldest first, of the given types only. */
export function listEventsAfter(
  tx: Executor,
  organizationId: number,
  afterSeq: number,
  types: readonly string[],
  limit: number,
) {
  return tx
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId), gt(events.seq, afterSeq), inArray(events.type, [...types])))
    .orderBy(asc(events.seq))
    .limit(limit);
}

export async function findEventById(tx: Executor, organizationId: number, id: string) {
  const [row] = await tx
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId), eq(events.id, id)));
  return row;
}

/**
 * The organizations with events older than the cutoff: each organization's counter, probed with its
 * (organization_id, create_date) index (in the worker; every shard on a cluster).
 */
export async function listOrganizationsWithEvents(tx: Executor, olderThan: Date) {
  const rows = await tx
    .select({ organizationId: eventSequences.organizationId })
    .from(eventSequences)
    .where(
      sql`exists (select 1 from ${events} where ${events.organizationId} = ${eventSequences.organizationId} and ${events.createDate} < ${olderThan.toISOString()}::timestamptz)`,
    );
  return rows.map((row) => row.organizationId);
}

/**
 * How far an organization's events may be deleted: the highest number written before the cutoff,
 * but never past an event that is still within retention (numbers follow commit order, and what the
 * old audit table recorded was numbered after newer events): what remains is a whole tail (0: none).
 */
export async function lastEventBefore(tx: Executor, organizationId: number, olderThan: Date) {
  const [edge] = await tx
    .select({
      old: sql<
        string | null
      >`max(${events.seq}) filter (where ${events.createDate} < ${olderThan.toISOString()}::timestamptz)`,
      kept: sql<
        string | null
      >`min(${events.seq}) filter (where ${events.createDate} >= ${olderThan.toISOString()}::timestamptz)`,
    })
    .from(events)
    .where(eq(events.organizationId, organizationId));
  const old = Number(edge?.old ?? 0);
  const kept = edge?.kept === null || edge?.kept === undefined ? Number.POSITIVE_INFINITY : Number(edge.kept);
  return Math.max(0, Math.min(old, kept - 1));
}

/**
 * Deletes an organization's oldest events, at most `batchSize`, none past number `through`, and
 * records the highest number deleted, so a cursor from before it is answered as gone rather than
 * silently skipping events. Returns how many it deleted: the retention pass repeats it until fewer
 * than a batch are left, each batch its own short transaction.
 */
export async function pruneEventsThrough(tx: Executor, organizationId: number, through: number, batchSize: number) {
  const [last] = await tx
    .select({ seq: events.seq })
    .from(events)
    .where(and(eq(events.organizationId, organizationId), lte(events.seq, through)))
    .orderBy(asc(events.seq))
    .offset(batchSize - 1)
    .limit(1);
  const upTo = last?.seq ?? through;
  const deleted = await tx
    .delete(events)
    .where(and(eq(events.organizationId, organizationId), lte(events.seq, upTo)))
    .returning({ seq: events.seq });
  await tx
    .update(eventSequences)
    .set({ prunedThrough: sql`greatest(${eventSequences.prunedThrough}, ${upTo})` })
    .where(eq(eventSequences.organizationId, organizationId));
  return deleted.length;
}

/**
 * After a supporter's personal data is erased, none of it may survive in the record: events about
 * the supporter keep their type and time, with the erased record as their data (and as the supporter
 * a completed checkout embeds); requests the donor made keep no address nor user agent.
 */
export async function scrubSupporterEvents(
  tx: Executor,
  organizationId: number,
  supporterId: number,
  erased: Record<string, unknown>,
) {
  await tx
    .update(events)
    .set({
      data: erased,
      // Which fields an update changed stays; what they held goes.
      changes: sql`(select jsonb_object_agg(field, '{"before":null,"after":null}'::jsonb) from jsonb_object_keys(${events.changes}) as field)`,
    })
    .where(
      and(
        eq(events.organizationId, organizationId),
        eq(events.resourceType, "supporter"),
        eq(events.resourceId, supporterId),
      ),
    );
  // A completed checkout's event embeds its supporter as it was: the erased record takes its place.
  await tx
    .update(events)
    .set({ data: sql`jsonb_set(${events.data}, '{supporter}', ${JSON.stringify(erased)}::jsonb)` })
    .where(
      and(
        eq(events.organizationId, organizationId),
        eq(events.resourceType, "checkout"),
        sql`${events.data}->'supporter'->>'id' = ${String(supporterId)}`,
      ),
    );
  await tx
    .update(events)
    .set({ ip: null, userAgent: null })
    .where(
      and(
        eq(events.organizationId, organizationId),
        sql`${events.actor}->>'type' = 'donor'`,
        sql`(${events.actor}->>'supporter_id')::bigint = ${supporterId}`,
      ),
    );
}
