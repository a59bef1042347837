import { and, desc, eq, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { events } from "../../db/schema.js";

export type AuditRow = typeof events.$inferSelect;

/** What the audit log can be narrowed to: who, which kinds of change, which record, when. */
export interface AuditFilters {
  actorType?: "user" | "application" | "donor" | "system";
  actorId?: number;
  types?: readonly string[];
  resourceType?: string;
  resourceId?: number;
  from?: Date;
  to?: Date;
  /** After this entry in the log's order (newest first): the last entry of the page before. */
  before?: { date: Date; seq: number };
}

/** The id an actor of each type carries in the events' actor record. */
const ACTOR_ID = sql`coalesce(${events.actor}->>'user_id', ${events.actor}->>'application_id', ${events.actor}->>'supporter_id')`;

function conditionsOf(organizationId: number, filters: AuditFilters): (SQL | undefined)[] {
  return [
    eq(events.organizationId, organizationId),
    filters.actorType ? sql`${events.actor}->>'type' = ${filters.actorType}` : undefined,
    filters.actorId !== undefined ? sql`${ACTOR_ID} = ${String(filters.actorId)}` : undefined,
    filters.types ? inArray(events.type, [...filters.types]) : undefined,
    filters.resourceType ? eq(events.resourceType, filters.resourceType) : undefined,
    filters.resourceId !== undefined ? eq(events.resourceId, filters.resourceId) : undefined,
    filters.from ? gte(events.createDate, filters.from) : undefined,
    filters.to ? lt(events.createDate, filters.to) : undefined,
    filters.before
      ? sql`(${events.createDate}, ${events.seq}) < (${filters.before.date.toISOString()}::timestamptz, ${filters.before.seq})`
      : undefined,
  ];
}

/**
 * The organization's record of changes, newest first by time (numbers break ties): one page of the
 * audit log. By time, not by number alone: what the old audit table recorded was numbered after the
 * events that existed when it moved in, but happened before them.
 */
export function listAuditRows(tx: Executor, organizationId: number, filters: AuditFilters, limit: number) {
  return tx
    .select()
    .from(events)
    .where(and(...conditionsOf(organizationId, filters)))
    .orderBy(desc(events.createDate), desc(events.seq))
    .limit(limit);
}
