import type { Db } from "../../db/client.js";
import { findEventSequence } from "../../events/events.repo.js";
import { eventToWire } from "../../events/events.service.js";
import { systemOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import type { SecretBox } from "../../secrets/secret-box.js";
import type { DestinationPolicy } from "./destination.js";
import { type SendOutcome, sendWebhook } from "./send.js";
import { webhookHeaders } from "./signing.js";
import {
  applicationPermissions,
  claimDueDeliveries,
  type DeliveryOutcome,
  endpointsBehind,
  failPendingDeliveries,
  findEventsBySeq,
  findWebhookEndpoints,
  insertAttempts,
  lockWebhookEndpoint,
  queueDeliveries,
  settleDeliveries,
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
/** Failures further apart than this (the longest wait between retries, and an hour) are not one run. */
const FAILURE_RUN_GAP_MS = 25 * 3_600_000;
/** A claimed delivery not settled within this time (its worker died) is sent again. */
const LEASE_SECONDS = 60;

export interface WebhookSenderDeps {
  secrets: SecretBox;
  destinations: DestinationPolicy;
  /** A batch that could not be recorded (the loop reports it). */
  onError?: (error: unknown) => void;
}

export interface WebhookPassResult {
  /** Organizations whose batch could not be recorded (its deliveries are sent again once their lease ends). */
  errors: number;
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
  const result: WebhookPassResult = { errors: 0, queued: 0, succeeded: 0, retried: 0, failed: 0, disabled: 0 };
  const now = options.now ?? new Date();
  // The real time at each step (a pass may outlast a lease, a slow receiver its retry's wait), or the
  // clock the caller gives (tests move it).
  const clock = () => options.now ?? new Date();
  result.queued = await dispatchWebhookEvents(db, { organizationIds: options.organizationIds, now });
  const limit = options.limit ?? 100;
  // Until nothing is due (a resource's next event becomes due once the one before it is delivered),
  // at most 100 rounds a pass.
  for (let round = 0; round < 100; round++) {
    const claimed = await db.transaction((tx) =>
      claimDueDeliveries(
        tx,
        clock(),
        new Date(clock().getTime() + LEASE_SECONDS * 1000),
        limit,
        options.organizationIds,
      ),
    );
    if (claimed.length === 0) return result;
    const byOrganization = new Map<number, WebhookDeliveryRow[]>();
    for (const delivery of claimed) {
      byOrganization.set(delivery.organizationId, [...(byOrganization.get(delivery.organizationId) ?? []), delivery]);
    }
    await Promise.all(
      [...byOrganization].map(([organizationId, deliveries]) =>
        deliverBatch(db, deps, organizationId, deliveries, clock, result, options.timeoutMs).catch((error: unknown) => {
          // Nothing of the batch was recorded: its deliveries are sent again after their lease, under the same ids.
          result.errors += 1;
          deps.onError?.(error);
        }),
      ),
    );
  }
  return result;
}

interface Attempted {
  delivery: WebhookDeliveryRow;
  endpoint: WebhookEndpointRow | undefined;
  outcome: SendOutcome | null;
  /** Why it fails for good without an attempt (its endpoint or event is gone). */
  gone?: string;
}

/**
 * One organization's claimed deliveries: their events and endpoints read in two statements, sent
 * side by side (outside any transaction), their outcomes recorded in one transaction: the attempts,
 * the deliveries' states, and each endpoint's run of failures (which may disable it).
 */
async function deliverBatch(
  db: Db,
  deps: WebhookSenderDeps,
  organizationId: number,
  deliveries: WebhookDeliveryRow[],
  clock: () => Date,
  result: WebhookPassResult,
  timeoutMs: number | undefined,
) {
  const [events, endpoints] = await Promise.all([
    findEventsBySeq(
      db,
      organizationId,
      deliveries.map((delivery) => delivery.eventSeq),
    ),
    findWebhookEndpoints(
      db,
      organizationId,
      deliveries.map((delivery) => delivery.endpointId),
    ),
  ]);
  const eventBySeq = new Map(events.map((event) => [event.seq, event]));
  const endpointById = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
  const secretsOf = new Map<number, string[]>();
  const signingSecrets = (endpoint: WebhookEndpointRow) => {
    let secrets = secretsOf.get(endpoint.id);
    if (!secrets) {
      secrets = [deps.secrets.open(endpoint.secretSealed)];
      if (
        endpoint.previousSecretSealed &&
        endpoint.previousSecretExpireDate &&
        endpoint.previousSecretExpireDate > new Date()
      ) {
        secrets.push(deps.secrets.open(endpoint.previousSecretSealed));
      }
      secretsOf.set(endpoint.id, secrets);
    }
    return secrets;
  };
  const attempted: Attempted[] = await Promise.all(
    deliveries.map(async (delivery): Promise<Attempted> => {
      const endpoint = endpointById.get(delivery.endpointId);
      const event = eventBySeq.get(delivery.eventSeq);
      if (!endpoint) return { delivery, endpoint, outcome: null, gone: "The endpoint is gone" };
      if (!event) {
        return { delivery, endpoint, outcome: null, gone: "The event is no longer kept (past the event retention)" };
      }
      let body: string;
      let headers: Record<string, string>;
      try {
        body = JSON.stringify(eventToWire(event));
        headers = webhookHeaders(signingSecrets(endpoint), event.id, Math.floor(Date.now() / 1000), body);
      } catch (error) {
        // A secret sealed with another key (DONATA_ENCRYPTION_KEY changed): a failed attempt, nothing sent.
        const reason = `not sent: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
        return { delivery, endpoint, outcome: { status: null, durationMs: 0, response: null, error: reason } };
      }
      return {
        delivery,
        endpoint,
        outcome: await sendWebhook(endpoint.url, headers, body, deps.destinations, timeoutMs),
      };
    }),
  );
  let disabled = 0;
  const now = clock();
  await withEvents(db, async (tx) => {
    // Each endpoint once: failing since now, failing long enough to be disabled, or well again.
    const disabledIds = new Set<number>();
    for (const endpoint of endpoints) {
      const mine = attempted.filter((each) => each.endpoint?.id === endpoint.id && each.outcome);
      if (mine.length === 0) continue;
      const last = mine.at(-1)?.outcome as SendOutcome;
      if (succeeded(last)) {
        if (endpoint.failingSince) await updateWebhookEndpoint(tx, organizationId, endpoint.id, { failingSince: null });
        continue;
      }
      const failing = await noteFailure(tx, endpoint, now);
      if (failing.endpointDisabled) disabledIds.add(endpoint.id);
      if (failing.disabled) disabled += 1;
    }
    const counts = { succeeded: 0, retried: 0, failed: 0 };
    const outcomes = attempted.map(({ delivery, outcome, gone }): DeliveryOutcome => {
      if (!outcome) {
        counts.failed += 1;
        return {
          id: delivery.id,
          attempts: delivery.attempts,
          state: "failed",
          lastStatus: null,
          lastError: gone ?? null,
          deliveredDate: null,
          nextAttemptDate: now,
        };
      }
      const ok = succeeded(outcome);
      const final = !ok && (delivery.attempts >= MAX_ATTEMPTS || disabledIds.has(delivery.endpointId));
      counts[ok ? "succeeded" : final ? "failed" : "retried"] += 1;
      return {
        id: delivery.id,
        attempts: delivery.attempts,
        state: ok ? "succeeded" : final ? "failed" : "pending",
        lastStatus: outcome.status,
        lastError: ok ? null : (outcome.error ?? `answered ${outcome.status}`),
        deliveredDate: ok ? now : null,
        nextAttemptDate:
          ok || final ? now : new Date(now.getTime() + (RETRY_SCHEDULE_SECONDS[delivery.attempts - 1] ?? 0) * 1000),
      };
    });
    // Only what is still this attempt's is recorded (a delivery deleted with its endpoint, or claimed again, is not).
    const recorded = await settleDeliveries(tx, organizationId, outcomes);
    await insertAttempts(
      tx,
      attempted.flatMap(({ delivery, outcome }) =>
        outcome && recorded.has(delivery.id)
          ? [
              {
                organizationId,
                deliveryId: delivery.id,
                attempt: delivery.attempts,
                status: outcome.status,
                durationMs: outcome.durationMs,
                response: outcome.response,
                error: outcome.error,
              },
            ]
          : [],
      ),
    );
    result.succeeded += counts.succeeded;
    result.retried += counts.retried;
    result.failed += counts.failed;
  });
  result.disabled += disabled;
}

const succeeded = (outcome: SendOutcome) => outcome.status !== null && outcome.status >= 200 && outcome.status < 300;

/** A failed attempt: the endpoint is failing since now, or since long enough to be disabled. */
async function noteFailure(
  tx: Parameters<Parameters<typeof withEvents>[1]>[0],
  endpoint: WebhookEndpointRow,
  now: Date,
) {
  const locked = await lockWebhookEndpoint(tx, endpoint.organizationId, endpoint.id);
  if (!locked || locked.status === "disabled") return { endpointDisabled: true };
  // A run of failures: broken by a success, or by a quiet spell longer than the retries' longest wait.
  const inRun =
    locked.failingSince !== null &&
    locked.lastFailureDate !== null &&
    now.getTime() - locked.lastFailureDate.getTime() <= FAILURE_RUN_GAP_MS;
  if (!inRun || !locked.failingSince) {
    await updateWebhookEndpoint(tx, locked.organizationId, locked.id, { failingSince: now, lastFailureDate: now });
    endpoint.failingSince = now;
    return { endpointDisabled: false };
  }
  if (now.getTime() - locked.failingSince.getTime() < DISABLE_AFTER_DAYS * 86_400_000) {
    await updateWebhookEndpoint(tx, locked.organizationId, locked.id, { lastFailureDate: now });
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
  // Its event tells the organization's owners and admins, by email (src/email/event-emails.ts).
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
