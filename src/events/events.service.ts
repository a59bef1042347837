import { applicationActor, requirePermission } from "../auth/actor.js";
import type { Db } from "../db/client.js";
import { AppError, invalidParameter, notFound } from "../errors/app-error.js";
import { EVENT_CATALOG, type EventType, isEventType, readableEventTypes } from "./catalog.js";
import { type EventRow, findEventById, findEventSequence, listEventsAfter } from "./events.repo.js";
import type { EventListQuery, EventWire } from "./events.schemas.js";
import type { EventActor } from "./origin.js";

/** Who may read events: an application's token, with the permissions it was granted. */
export interface EventReader {
  organizationId: number;
  applicationId: number;
  permissions: string[];
}

/** A position in one organization's events: opaque to clients, refused for another organization. */
export const encodeCursor = (organizationId: number, seq: number) =>
  Buffer.from(`ev1.${organizationId}.${seq}`).toString("base64url");

function decodeCursor(organizationId: number, cursor: string): number {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  const match = /^ev1\.([1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})$/.exec(text);
  if (!match || Number(match[1]) !== organizationId) {
    throw invalidParameter("after", "is not a cursor this API gave for this organization's events");
  }
  return Number(match[2]);
}

function actorToWire(actor: EventActor): EventWire["actor"] {
  switch (actor.type) {
    case "user":
      return { type: "user", id: actor.user_id };
    case "application":
      return { type: "application", id: actor.application_id };
    case "donor":
      return { type: "donor", id: actor.supporter_id };
    default:
      return { type: "system", id: null };
  }
}

export function eventToWire(row: EventRow): EventWire {
  return {
    id: row.id,
    type: row.type,
    create_date: row.createDate.toISOString(),
    resource: { type: row.resourceType, id: row.resourceId },
    actor: actorToWire(row.actor as EventActor),
    request: row.requestId ? { id: row.requestId } : null,
    data: row.data as Record<string, unknown>,
    cursor: encodeCursor(row.organizationId, row.seq),
  };
}

/** The types asked for (all that the token may read when none are named), each checked. */
function typesFor(reader: EventReader, asked: string | undefined): EventType[] {
  const readable = readableEventTypes(reader.permissions);
  if (asked === undefined) {
    if (readable.length === 0) {
      throw new AppError("insufficient_scope", "This application was granted no permission that reads any event type");
    }
    return readable;
  }
  const names = [...new Set(asked.split(",").map((name) => name.trim()))];
  const unknown = names.filter((name) => !isEventType(name));
  if (names.length === 0 || unknown.length > 0) {
    throw invalidParameter("type", `unknown event type ${unknown.map((name) => `"${name}"`).join(", ") || '""'}`);
  }
  requireReadableTypes(reader, names as EventType[]);
  return names as EventType[];
}

/** Each type's resource must be readable by the application (403 otherwise); members-only types never are. */
export function requireReadableTypes(reader: Pick<EventReader, "applicationId" | "permissions">, types: EventType[]) {
  for (const name of types) {
    const permission = EVENT_CATALOG[name].permission;
    if (permission === null) {
      throw new AppError(
        "insufficient_scope",
        `Applications cannot read "${name}" events: members see them in the audit log`,
      );
    }
    requirePermission(
      applicationActor({ applicationId: reader.applicationId, permissions: reader.permissions }),
      permission,
    );
  }
}

/**
 * The organization's events after a cursor, in commit order: a reader that keeps the last cursor
 * it was given reads every event exactly once, whatever commits meanwhile. A cursor from before
 * the retention window answers 410: events after it are gone, and skipping them silently would
 * lose them.
 */
export async function listEvents(db: Db, reader: EventReader, query: EventListQuery) {
  const types = typesFor(reader, query.type);
  const sequence = await findEventSequence(db, reader.organizationId);
  const after = query.after === undefined ? sequence.prunedThrough : decodeCursor(reader.organizationId, query.after);
  if (after < sequence.prunedThrough) {
    throw new AppError(
      "cursor_expired",
      "This cursor is older than the events kept: the events after it are gone. Read the resources again, then start without a cursor",
    );
  }
  if (after > sequence.lastSeq) throw invalidParameter("after", "is past the last event of this organization");
  const rows = await listEventsAfter(db, reader.organizationId, after, types, query.limit + 1);
  const items = rows.slice(0, query.limit).map(eventToWire);
  return {
    items,
    next_cursor: items.at(-1)?.cursor ?? encodeCursor(reader.organizationId, after),
    has_more: rows.length > query.limit,
  };
}

export async function getEvent(db: Db, reader: EventReader, id: string) {
  const row = /^evt_[A-Za-z0-9_-]{1,40}$/.test(id) ? await findEventById(db, reader.organizationId, id) : undefined;
  if (!row || !readableEventTypes(reader.permissions).includes(row.type as EventType)) throw notFound("Event");
  return eventToWire(row);
}
