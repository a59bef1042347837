import { randomBytes } from "node:crypto";
import type { Db, Executor } from "../db/client.js";
import { EVENT_CATALOG, type EventType } from "./catalog.js";
import { type EventInsert, insertEvents } from "./events.repo.js";
import { type EventOrigin, systemOrigin } from "./origin.js";
import { type SubscribedEvent, subscribersOf } from "./subscribers.js";

/** What a service knows of where a change comes from: its organization and, for requests, the origin. */
export interface EventScope {
  organizationId: number;
  origin?: EventOrigin;
}

export const newEventId = () => `evt_${randomBytes(15).toString("base64url")}`;

/** An event's data: the resource as the REST API returns it by id, or how to read it at the end of the transaction. */
export type EventData = Record<string, unknown>;
type DataSource = EventData | (() => Promise<EventData>);

interface QueuedEvent {
  scope: EventScope;
  type: EventType;
  resourceId: number | null;
  data: DataSource;
  before?: EventData;
  also?: EventChanges;
  /** Its data and changes once read: subscribers and the written event share one read. */
  read?: Promise<{ data: EventData; changes: EventChanges | null }>;
}

function readEvent(event: QueuedEvent) {
  event.read ??= (async () => {
    const data = typeof event.data === "function" ? await event.data() : event.data;
    return { data, changes: changesWith(event.before ? changesOf(event.before, data) : null, event.also) };
  })();
  return event.read;
}

/** What an update changed: each field whose value differs, with its value before and after. */
export type EventChanges = Record<string, { before: unknown; after: unknown }>;

function changesWith(changes: EventChanges | null, also: EventChanges | undefined): EventChanges | null {
  const more = Object.entries(also ?? {}).filter(
    ([, change]) => JSON.stringify(change.before ?? null) !== JSON.stringify(change.after ?? null),
  );
  if (more.length === 0) return changes;
  return { ...changes, ...Object.fromEntries(more) };
}

/** The fields of `after` (and of `before`) whose values differ, compared as JSON; null when none. */
export function changesOf(before: EventData, after: EventData): EventChanges | null {
  const changes: EventChanges = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (field === "update_date") continue;
    const was = before[field] ?? null;
    const is = after[field] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(is)) changes[field] = { before: was, after: is };
  }
  return Object.keys(changes).length > 0 ? changes : null;
}

/** A transaction as the database handle opens it (with the schema's relations). */
type Transaction = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** The events of each transaction opened by `withEvents`, written when its work is done. */
const queued = new WeakMap<object, QueuedEvent[]>();

/**
 * A transaction whose events are written at its end, after every other write of its work. Numbering
 * an event locks the organization's counter until commit; taken last, that lock never stands between
 * two transactions locking the same rows in different orders (a transaction that numbered its event
 * first, then locked a payment another one holds while it waits for the counter, would deadlock).
 * Whatever the work records, in whichever module, is written in the order it was recorded, in the
 * same commit: no event for a rolled-back change, no change without its event.
 */
export function withEvents<T>(db: Db | Transaction, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const outer = queued.get(db);
  if (outer) {
    // Inside another: a savepoint whose events join the outer transaction's, dropped if it rolls back.
    return db.transaction(async (tx) => {
      const mark = outer.length;
      queued.set(tx, outer);
      try {
        return await work(tx);
      } catch (error) {
        outer.length = mark;
        throw error;
      } finally {
        queued.delete(tx);
      }
    });
  }
  return db.transaction(async (tx) => {
    queued.set(tx, []);
    try {
      const result = await work(tx);
      await flushEvents(tx);
      return result;
    } finally {
      queued.delete(tx);
    }
  });
}

/** Whether the transaction was opened by `withEvents` (its events and their subscribers wait for its work's end). */
export function inEventsTransaction(tx: Executor): boolean {
  return queued.has(tx);
}

/**
 * Records one event of the change the transaction makes. In a `withEvents` transaction it is written
 * when the work is done (a function as `data` is read then, so the event shows the resource as the
 * change leaves it); elsewhere it is written at once, so the caller records it after its other writes.
 */
export async function recordEvent(
  tx: Executor,
  scope: EventScope,
  type: EventType,
  resourceId: number | null,
  data: DataSource,
  options: {
    /** The resource before an update, as the API returned it: the event keeps the fields that changed (the audit log's before/after). */
    before?: EventData;
    /** Changes the resource's API fields do not show (a pause, a cancel's reason), kept with those. */
    also?: EventChanges;
  } = {},
): Promise<void> {
  const event = { scope, type, resourceId, data, before: options.before, also: options.also };
  const pending = queued.get(tx);
  if (pending) {
    pending.push(event);
    return;
  }
  await notifySubscribers(tx, [event]);
  await writeEvents(tx, [event]);
}

/**
 * The transaction's events at the end of its work: first their subscribers (what they write, such as
 * an email, is part of the work; events they record join the batch), then the events themselves.
 */
async function flushEvents(tx: Executor) {
  const pending = queued.get(tx);
  if (!pending) return;
  const done: QueuedEvent[] = [];
  while (pending.length > 0) {
    const batch = pending.splice(0);
    await notifySubscribers(tx, batch);
    done.push(...batch);
  }
  if (done.length > 0) await writeEvents(tx, done);
}

async function notifySubscribers(tx: Executor, events: QueuedEvent[]) {
  for (const event of events) {
    const subscribers = subscribersOf(event.type);
    if (subscribers.length === 0) continue;
    const told: SubscribedEvent = {
      organizationId: event.scope.organizationId,
      type: event.type,
      resourceId: event.resourceId,
      origin: event.scope.origin ?? systemOrigin(),
      before: event.before ?? null,
      read: () => readEvent(event),
    };
    for (const subscriber of subscribers) await subscriber.handle(tx, told);
  }
}

/**
 * The benchmark's instrument, and nothing else's: `npm run bench` measures checkout completions in
 * an application process that records no events, to show what recording them costs (their
 * subscribers still run: the emails were sent before there were events). Never called by the product.
 */
let recording = true;
export function stopRecordingEventsForBenchmark() {
  recording = false;
}

async function writeEvents(tx: Executor, pending: QueuedEvent[]) {
  if (!recording) return;
  // Every read first (the data of each event), then the counters: nothing waits on a row while holding one.
  const rows: EventInsert[] = [];
  for (const event of pending) {
    const origin = event.scope.origin ?? systemOrigin();
    const { data, changes } = await readEvent(event);
    rows.push({
      organizationId: event.scope.organizationId,
      id: newEventId(),
      type: event.type,
      resourceType: EVENT_CATALOG[event.type].resource,
      resourceId: event.resourceId,
      actor: origin.actor,
      requestId: origin.requestId,
      ip: origin.ip,
      userAgent: origin.userAgent,
      data,
      changes,
    });
  }
  // One organization at a time, always in the same order (a transaction rarely spans two).
  const organizations = [...new Set(rows.map((row) => row.organizationId))].sort((a, b) => a - b);
  for (const organizationId of organizations) {
    await insertEvents(
      tx,
      organizationId,
      rows.filter((row) => row.organizationId === organizationId),
    );
  }
}
