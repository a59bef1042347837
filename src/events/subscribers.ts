import type { Executor } from "../db/client.js";
import { emailSubscriber } from "../email/event-emails.js";
import { receiptSubscriber } from "../modules/receipts/receipt-subscriber.js";
import type { EventType } from "./catalog.js";
import type { EventOrigin } from "./origin.js";
import type { EventChanges, EventData } from "./record-event.js";

/** One event as a subscriber is told of it, in the transaction that made the change. */
export interface SubscribedEvent {
  organizationId: number;
  type: EventType;
  resourceId: number | null;
  origin: EventOrigin;
  /** The resource before an update, as the service that changed it gave it (null for a new one); no read. */
  before: EventData | null;
  /** The event's data and what it changed, read once and shared with the event as it is written. */
  read(): Promise<{ data: EventData; changes: EventChanges | null }>;
}

/**
 * What follows from an event in the transaction that records it (the pattern of medusa's
 * subscribers and Open Collective's notifications): a subscriber names the types it listens to and
 * is called once per event of those types, when the transaction's work is done and before its
 * events are numbered, so whatever it writes commits with the change or not at all. Webhooks and
 * the audit log read the written events instead (after the commit, in commit order).
 */
export interface EventSubscriber {
  name: string;
  types: readonly EventType[];
  handle(tx: Executor, event: SubscribedEvent): Promise<void>;
}

/**
 * Every subscriber, in the order each event is handed to them: receipts first, so the receipt a
 * payment's email links to exists when the email is written.
 */
const SUBSCRIBERS = (): readonly EventSubscriber[] => [receiptSubscriber, emailSubscriber];

let byType: Map<EventType, EventSubscriber[]> | undefined;

/** The subscribers of a type (built on first use: the list's modules import this room's). */
export function subscribersOf(type: EventType): readonly EventSubscriber[] {
  if (!byType) {
    byType = new Map();
    for (const subscriber of SUBSCRIBERS()) {
      for (const listened of subscriber.types) byType.set(listened, [...(byType.get(listened) ?? []), subscriber]);
    }
  }
  return byType.get(type) ?? [];
}
