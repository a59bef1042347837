import type { Db } from "../../db/client.js";
import { enqueueEmails } from "../../email/outbox.repo.js";
import { findEventSequence } from "../../events/events.repo.js";
import { eventToWire } from "../../events/events.service.js";
import { systemOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import type { SecretBox } from "../../secrets/secret-box.js";
import { listMemberEmails } from "../members/members.repo.js";
import type { DestinationPolicy } from "./destination.js";
import { sendWebhook } from "./send.js";
import { webhookHeaders } from "./signing.js";
import {
  applicationPermissions,
  claimDueDeliveries,
  endpointsBehind,
  failPendingDeliveries,
  findApplicationOf,
  findEventBySeq,
  findWebhookEndpoint,
  insertAttempt,
  lockWebhookEndpoint,
  queueDeliveries,
  updateDelivery,
  updateWebhookEndpoint,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from "./webhooks.repo.js";
import { deliveredTypes, webhookEndpointToWire } from "./webhooks.service.js";

/**
 * Waits after each failed attempt, in seconds: 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 12 h,
 * 24 h, 24 h. The 11th attempt, about 3 days and 5 hours after the first, is the last.
 */
export const RETRY_SCHEDULE_SECONDS = [5, 60, 300, 1800, 7200, 18_000, 36_000, 43_200, 86_400, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;
/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_DAYS = 5;
/** A claimed delivery not settled within this time (its worker died) is sent again. */
const LEASE_SECONDS = 60;

export interface WebhookSenderDeps {
  secrets: SecretBox;
  destinations: DestinationPolicy;
  /** Called when an endpoint is disabled for failing (the job emails the organization's admins). */
  onDisabled?: (endpoint: WebhookEndpointRow) => Promise<void> | void;
}

export interface WebhookPassResult {
  queued: number;
  succeeded: number;
  retried: number;
  failed: number;
  disabled: number;
}

/**
 * Gives each endpoint its deliveries: the events of its types numbered after its mark, in commit
 * order, each endpoint in its own short transaction with its row locked (two workers never queue the
 * same event twice). A paused endpoint keeps receiving deliveries to send once it is resumed.
 */
export async function dispatchWebhookEvents(
  db: Db,
  options: { organizationIds?: readonly number[]; batch?: number; now?: Date } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  const batch = options.batch ?? 1000;
  let queued = 0;
  for (const { organizationId, id } of await endpointsBehind(db, options.organizationIds)) {
    for (;;) {
      const result = await db.transaction(async (tx) => {
        const endpoint = await lockWebhookEndpoint(tx, organizationId, id);
        if (!endpoint || endpoint.status === "disabled") return null;
        const { lastSeq } = await findEventSequence(tx, organizationId);
        if (lastSeq <= endpoint.dispatchedSeq) return null;
        const types = deliveredTypes(endpoint, await applicationPermissions(tx, endpoint.applicationId));
        const step = await queueDeliveries(tx, endpoint, types, lastSeq, batch, now);
        await updateWebhookEndpoint(tx, organizationId, id, { dispatchedSeq: step.reached });
        return { ...step, more: step.reached < lastSeq };
      });
      if (!result) break;
      queued += result.queued;
      if (!result.more) break;
    }
  }
  return queued;
}

/**
 * One pass of delivery: queue what the events hold, then claim due deliveries (at most `limit` at a
 * time, never two of one resource to one endpoint: each waits for the one before it), send them
 * side by side outside any transaction, and record each answer. 2xx succeeds; anything else is
 * tried again on the schedule until the 11th attempt fails it; an endpoint failing for 5 days is
 * disabled. The clock (`now`) decides what is due; signatures carry the real time.
 */
export async function deliverWebhooks(
  db: Db,
  deps: WebhookSenderDeps,
  options: { now?: Date; limit?: number; organizationIds?: readonly number[]; timeoutMs?: number } = {},
): Promise<WebhookPassResult> {
  const result: WebhookPassResult = { queued: 0, succeeded: 0, retried: 0, failed: 0, disabled: 0 };
  const now = options.now ?? new Date();
  result.queued = await dispatchWebhookEvents(db, { organizationIds: options.organizationIds, now });
  const limit = options.limit ?? 100;
  const endpoints = new Map<string, WebhookEndpointRow | undefined>();
  // Until nothing is due (a resource's next event becomes due once the one before it is delivered),
  // at most 100 rounds a pass.
  for (let round = 0; round < 100; round++) {
    const claimed = await db.transaction((tx) =>
      claimDueDeliveries(tx, now, new Date(now.getTime() + LEASE_SECONDS * 1000), limit, options.organizationIds),
    );
    if (claimed.length === 0) return result;
    await Promise.all(
      claimed.map((delivery) => deliverOne(db, deps, delivery, now, endpoints, result, options.timeoutMs)),
    );
    endpoints.clear();
  }
  return result;
}

async function deliverOne(
  db: Db,
  deps: WebhookSenderDeps,
  delivery: WebhookDeliveryRow,
  now: Date,
  endpoints: Map<string, WebhookEndpointRow | undefined>,
  result: WebhookPassResult,
  timeoutMs: number | undefined,
) {
  const key = `${delivery.organizationId}:${delivery.endpointId}`;
  if (!endpoints.has(key)) {
    endpoints.set(key, await findWebhookEndpoint(db, delivery.organizationId, delivery.endpointId));
  }
  const endpoint = endpoints.get(key);
  const event = await findEventBySeq(db, delivery.organizationId, delivery.eventSeq);
  if (!endpoint || !event) {
    result.failed += 1;
    await updateDelivery(db, delivery.organizationId, delivery.id, {
      state: "failed",
      lastError: endpoint ? "The event is no longer kept (past the event retention)" : "The endpoint is gone",
    });
    return;
  }
  const body = JSON.stringify(eventToWire(event));
  const secrets = [deps.secrets.open(endpoint.secretSealed)];
  if (
    endpoint.previousSecretSealed &&
    endpoint.previousSecretExpireDate &&
    endpoint.previousSecretExpireDate > new Date()
  ) {
    secrets.push(deps.secrets.open(endpoint.previousSecretSealed));
  }
  const headers = webhookHeaders(secrets, event.id, Math.floor(Date.now() / 1000), body);
  const outcome = await sendWebhook(endpoint.url, headers, body, deps.destinations, timeoutMs);
  const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  const final = !ok && delivery.attempts >= MAX_ATTEMPTS;
  let disabled: WebhookEndpointRow | undefined;
  let endpointDisabled = false;
  await withEvents(db, async (tx) => {
    await insertAttempt(tx, {
      organizationId: delivery.organizationId,
      deliveryId: delivery.id,
      attempt: delivery.attempts,
      status: outcome.status,
      durationMs: outcome.durationMs,
      response: outcome.response,
      error: outcome.error,
    });
    if (ok && endpoint.failingSince) {
      await updateWebhookEndpoint(tx, endpoint.organizationId, endpoint.id, { failingSince: null });
      endpoint.failingSince = null;
    } else if (!ok) {
      const failing = await noteFailure(tx, endpoint, now);
      disabled = failing.disabled;
      endpointDisabled = failing.endpointDisabled;
    }
    await updateDelivery(tx, delivery.organizationId, delivery.id, {
      state: ok ? "succeeded" : final || endpointDisabled ? "failed" : "pending",
      lastStatus: outcome.status,
      lastError: ok ? null : (outcome.error ?? `answered ${outcome.status}`),
      deliveredDate: ok ? new Date() : null,
      nextAttemptDate:
        ok || final ? now : new Date(now.getTime() + (RETRY_SCHEDULE_SECONDS[delivery.attempts - 1] ?? 0) * 1000),
    });
  });
  result[ok ? "succeeded" : final || endpointDisabled ? "failed" : "retried"] += 1;
  if (disabled) {
    result.disabled += 1;
    await deps.onDisabled?.(disabled);
  }
}

/** A failed attempt: the endpoint is failing since now, or since long enough to be disabled. */
async function noteFailure(
  tx: Parameters<Parameters<typeof withEvents>[1]>[0],
  endpoint: WebhookEndpointRow,
  now: Date,
) {
  const locked = await lockWebhookEndpoint(tx, endpoint.organizationId, endpoint.id);
  if (!locked || locked.status === "disabled") return { endpointDisabled: true };
  if (!locked.failingSince) {
    await updateWebhookEndpoint(tx, locked.organizationId, locked.id, { failingSince: now });
    endpoint.failingSince = now;
    return { endpointDisabled: false };
  }
  if (now.getTime() - locked.failingSince.getTime() < DISABLE_AFTER_DAYS * 86_400_000) {
    return { endpointDisabled: false };
  }
  const reason = `Every delivery failed for ${DISABLE_AFTER_DAYS} days (since ${locked.failingSince.toISOString()})`;
  const after = await updateWebhookEndpoint(tx, locked.organizationId, locked.id, {
    status: "disabled",
    disabledReason: reason,
  });
  await failPendingDeliveries(
    tx,
    locked.organizationId,
    locked.id,
    "The endpoint was disabled after failing for 5 days",
  );
  if (!after) return { endpointDisabled: true };
  endpoint.status = "disabled";
  // The organization's owners and admins are told: an application of theirs stopped receiving its events.
  const application = await findApplicationOf(tx, locked.applicationId);
  await enqueueEmails(
    tx,
    (await listMemberEmails(tx, locked.organizationId, ["owner", "admin"])).map((to) => ({
      organizationId: locked.organizationId,
      kind: "webhook_disabled" as const,
      to,
      data: { application_name: application?.name ?? "", endpoint_url: locked.url, reason },
      dedupeKey: `webhook_disabled:${locked.id}:${locked.failingSince?.getTime()}:${to}`,
    })),
  );
  await recordEvent(
    tx,
    { organizationId: locked.organizationId, origin: systemOrigin("worker") },
    "webhook_endpoint.updated",
    after.id,
    webhookEndpointToWire(after),
    { before: webhookEndpointToWire(locked) },
  );
  return { endpointDisabled: true, disabled: after };
}
