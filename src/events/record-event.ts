import { randomBytes } from "node:crypto";
import type { Executor } from "../db/client.js";
import { EVENT_CATALOG, type EventType } from "./catalog.js";
import { insertEvent } from "./events.repo.js";
import { type EventOrigin, systemOrigin } from "./origin.js";

/** What a service knows of where a change comes from: its organization and, for requests, the origin. */
export interface EventScope {
  organizationId: number;
  origin?: EventOrigin;
}

export const newEventId = () => `evt_${randomBytes(15).toString("base64url")}`;

/**
 * Records one event in the transaction that makes the change (no event for a rolled-back change,
 * no change without its event). `data` is the resource as the REST API returns it by id. Call it
 * after the change's other writes: it holds the organization's event counter until commit.
 */
export function recordEvent(
  tx: Executor,
  scope: EventScope,
  type: EventType,
  resourceId: number | null,
  data: Record<string, unknown>,
) {
  const origin = scope.origin ?? systemOrigin();
  return insertEvent(tx, {
    organizationId: scope.organizationId,
    id: newEventId(),
    type,
    resourceType: EVENT_CATALOG[type].resource,
    resourceId,
    actor: origin.actor,
    requestId: origin.requestId,
    ip: origin.ip,
    userAgent: origin.userAgent,
    data,
  });
}
