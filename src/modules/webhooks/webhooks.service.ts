import type { Db, Executor } from "../../db/client.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { type EventType, isEventType, readableEventTypes } from "../../events/catalog.js";
import { findEventSequence } from "../../events/events.repo.js";
import { requireReadableTypes } from "../../events/events.service.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { idempotent } from "../../http/idempotency.js";
import { parseId } from "../../http/ids.js";
import type { SecretBox } from "../../secrets/secret-box.js";
import { findInstallation } from "../applications/applications.repo.js";
import { checkWebhookUrl, type DestinationPolicy } from "./destination.js";
import { newWebhookSecret } from "./signing.js";
import {
  applicationNames,
  applicationPermissions,
  deleteWebhookEndpoint,
  failPendingDeliveries,
  findDelivery,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listAttempts,
  listDeliveries,
  listWebhookEndpoints,
  lockWebhookEndpoint,
  requeueSince,
  updateDelivery,
  updateWebhookEndpoint,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from "./webhooks.repo.js";
import type {
  WebhookDeliveryListQuery,
  WebhookDeliveryWire,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  WebhookEndpointWire,
} from "./webhooks.schemas.js";

/** What the webhook services need of the process: the box that seals secrets, and where deliveries may go. */
export interface WebhookDeps {
  secrets: SecretBox;
  destinations: DestinationPolicy;
}

/** An installed application acting with its token: it manages its own endpoints only. */
export interface EndpointOwner {
  organizationId: number;
  applicationId: number;
  permissions: string[];
  origin?: EventOrigin;
}

/** How long the secret before a rotation keeps signing. */
export const PREVIOUS_SECRET_HOURS = 24;
/** Endpoints an installation may have. */
export const MAX_ENDPOINTS_PER_INSTALLATION = 16;

export function webhookEndpointToWire(row: WebhookEndpointRow): WebhookEndpointWire {
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    update_date: row.updateDate.toISOString(),
    url: row.url,
    description: row.description,
    event_types: row.eventTypes,
    status: row.status,
    disabled_reason: row.disabledReason,
    previous_secret_expire_date:
      row.previousSecretExpireDate && row.previousSecretExpireDate > new Date()
        ? row.previousSecretExpireDate.toISOString()
        : null,
  };
}

/**
 * The event types an endpoint asks for, each one the application may read: ["*"] stands for all of
 * them, now and as its permissions grow. Unknown names are a 400, unreadable ones a 403.
 */
function checkedEventTypes(owner: EndpointOwner, asked: readonly string[]): string[] {
  const names = [...new Set(asked.map((name) => name.trim()))];
  if (names.includes("*")) {
    if (names.length > 1) throw fieldError("event_types", '"*" stands for every type: send it alone');
    if (readableEventTypes(owner.permissions).length === 0) {
      throw new AppError("insufficient_scope", "This application was granted no permission that reads any event type");
    }
    return ["*"];
  }
  const unknown = names.filter((name) => !isEventType(name));
  if (unknown.length > 0) {
    throw fieldError("event_types", `unknown event type ${unknown.map((name) => `"${name}"`).join(", ")}`);
  }
  requireReadableTypes(owner, names as EventType[]);
  return names;
}

const fieldError = (field: string, message: string) =>
  new AppError("invalid_request", `Invalid body field "${field}": ${message}`, { errors: [{ field, message }] });

/**
 * The types an endpoint is sent now: what it asked for, narrowed to what both the token that saved it
 * was granted and its application may read today.
 */
export function deliveredTypes(
  endpoint: Pick<WebhookEndpointRow, "eventTypes" | "permissions">,
  applicationPermissions: readonly string[],
) {
  const readable = readableEventTypes(
    applicationPermissions.filter((permission) => endpoint.permissions.includes(permission)),
  );
  return endpoint.eventTypes.includes("*") ? readable : readable.filter((type) => endpoint.eventTypes.includes(type));
}

async function ownedEndpoint(tx: Executor, owner: EndpointOwner, rawId: string, lock = false) {
  const id = parseId(rawId, "Webhook endpoint");
  const row = lock
    ? await lockWebhookEndpoint(tx, owner.organizationId, id)
    : await findWebhookEndpoint(tx, owner.organizationId, id, owner.applicationId);
  if (!row || row.applicationId !== owner.applicationId) throw notFound("Webhook endpoint");
  return row;
}

const scopeOf = (owner: EndpointOwner) => ({ organizationId: owner.organizationId, origin: owner.origin });

/**
 * An answer that shows a new secret, kept for an Idempotency-Key's replay with the secret sealed (as
 * every stored secret is) and opened again when it is replayed: the same answer, never a second secret.
 */
async function withSecretOnce(
  tx: Executor,
  deps: WebhookDeps,
  owner: EndpointOwner,
  operation: string,
  idempotencyKey: string | undefined,
  request: unknown,
  work: () => Promise<{ status: number; row: WebhookEndpointRow; secret: string }>,
) {
  // Per application: two applications of an organization may well make the same key.
  const scope = `webhook_endpoints:${operation}:${owner.applicationId}`;
  const outcome = await idempotent(tx, owner.organizationId, scope, idempotencyKey, request, async () => {
    const { status, row, secret } = await work();
    return { status, body: { ...webhookEndpointToWire(row), secret_sealed: deps.secrets.seal(secret) } };
  });
  const { secret_sealed: sealed, ...endpoint } = outcome.body;
  return {
    status: outcome.status,
    replayed: outcome.replayed,
    body: { ...endpoint, secret: deps.secrets.open(sealed) },
  };
}

export async function createWebhookEndpoint(
  db: Db,
  deps: WebhookDeps,
  owner: EndpointOwner,
  body: WebhookEndpointCreate,
  idempotencyKey?: string,
) {
  const eventTypes = checkedEventTypes(owner, body.event_types);
  const url = await checkWebhookUrl(body.url, deps.destinations);
  return withEvents(db, (tx) =>
    withSecretOnce(tx, deps, owner, "create", idempotencyKey, body, async () => {
      const installation = await findInstallation(tx, owner.organizationId, owner.applicationId);
      if (!installation) throw new AppError("not_installed", "The application is not installed in this organization");
      const existing = await listWebhookEndpoints(tx, owner.organizationId, owner.applicationId);
      if (existing.length >= MAX_ENDPOINTS_PER_INSTALLATION) {
        throw new AppError(
          "invalid_request",
          `An application may have at most ${MAX_ENDPOINTS_PER_INSTALLATION} webhook endpoints in an organization; delete one first`,
        );
      }
      const secret = newWebhookSecret();
      // Only what happens from now on: events before the endpoint existed are not sent (resend asks for them).
      const { lastSeq } = await findEventSequence(tx, owner.organizationId);
      const created = await insertWebhookEndpoint(tx, {
        organizationId: owner.organizationId,
        installationId: installation.id,
        applicationId: owner.applicationId,
        url,
        description: body.description ?? null,
        eventTypes,
        permissions: owner.permissions,
        secretSealed: deps.secrets.seal(secret),
        dispatchedSeq: lastSeq,
      });
      await recordEvent(tx, scopeOf(owner), "webhook_endpoint.created", created.id, webhookEndpointToWire(created));
      return { status: 201, row: created, secret };
    }),
  );
}

export async function listOwnWebhookEndpoints(db: Db, owner: EndpointOwner) {
  const rows = await listWebhookEndpoints(db, owner.organizationId, owner.applicationId);
  return { items: rows.map(webhookEndpointToWire) };
}

export async function getWebhookEndpoint(db: Db, owner: EndpointOwner, id: string) {
  return webhookEndpointToWire(await ownedEndpoint(db, owner, id));
}

export async function updateOwnWebhookEndpoint(
  db: Db,
  deps: WebhookDeps,
  owner: EndpointOwner,
  id: string,
  body: WebhookEndpointUpdate,
) {
  const eventTypes = body.event_types === undefined ? undefined : checkedEventTypes(owner, body.event_types);
  const url = body.url === undefined ? undefined : await checkWebhookUrl(body.url, deps.destinations);
  return withEvents(db, async (tx) => {
    const before = await ownedEndpoint(tx, owner, id, true);
    if (body.status !== undefined && before.status === "paused") {
      throw new AppError(
        "invalid_state_transition",
        "A member of the organization paused this endpoint: only a member resumes it (in the admin panel)",
      );
    }
    // What the saving token was granted bounds what the endpoint is sent.
    const values: Parameters<typeof updateWebhookEndpoint>[3] = { permissions: owner.permissions };
    if (url !== undefined) values.url = url;
    if (eventTypes !== undefined) values.eventTypes = eventTypes;
    if (body.description !== undefined) values.description = body.description;
    if (body.status === "disabled" && before.status !== "disabled") {
      values.status = "disabled";
      values.disabledReason = "Disabled by the application";
      await failPendingDeliveries(tx, owner.organizationId, before.id, "The endpoint was disabled");
    }
    if (body.status === "enabled" && before.status === "disabled") {
      // Enabled again from the next event: what happened meanwhile is asked for with resend.
      values.status = "enabled";
      values.disabledReason = null;
      values.failingSince = null;
      values.dispatchedSeq = (await findEventSequence(tx, owner.organizationId)).lastSeq;
    }
    const after = (await updateWebhookEndpoint(tx, owner.organizationId, before.id, values)) ?? before;
    const wire = webhookEndpointToWire(after);
    await recordEvent(tx, scopeOf(owner), "webhook_endpoint.updated", after.id, wire, {
      before: webhookEndpointToWire(before),
    });
    return wire;
  });
}

export async function deleteOwnWebhookEndpoint(db: Db, owner: EndpointOwner, id: string) {
  await withEvents(db, async (tx) => {
    const row = await ownedEndpoint(tx, owner, id, true);
    await deleteWebhookEndpoint(tx, owner.organizationId, row.id);
    await recordEvent(tx, scopeOf(owner), "webhook_endpoint.deleted", row.id, webhookEndpointToWire(row));
  });
}

/** A new signing secret, shown once; the one it replaces signs too for 24 hours. */
export async function rotateWebhookSecret(
  db: Db,
  deps: WebhookDeps,
  owner: EndpointOwner,
  id: string,
  idempotencyKey?: string,
) {
  return withEvents(db, (tx) =>
    withSecretOnce(tx, deps, owner, "rotate_secret", idempotencyKey, { id }, async () => {
      const secret = newWebhookSecret();
      const before = await ownedEndpoint(tx, owner, id, true);
      const after = await updateWebhookEndpoint(tx, owner.organizationId, before.id, {
        secretSealed: deps.secrets.seal(secret),
        previousSecretSealed: before.secretSealed,
        previousSecretExpireDate: new Date(Date.now() + PREVIOUS_SECRET_HOURS * 3_600_000),
      });
      if (!after) throw notFound("Webhook endpoint");
      await recordEvent(tx, scopeOf(owner), "webhook_endpoint.updated", after.id, webhookEndpointToWire(after), {
        before: webhookEndpointToWire(before),
        also: { secret: { before: "[redacted]", after: "[redacted, rotated]" } },
      });
      return { status: 200, row: after, secret };
    }),
  );
}

// --- The delivery log ---

export function deliveryToWire(row: WebhookDeliveryRow, attempts: readonly WebhookAttemptRow[]): WebhookDeliveryWire {
  const waiting = row.state === "pending" || row.state === "sending";
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    event: { id: row.eventId, type: row.eventType },
    state: row.state,
    attempts: row.attempts,
    next_attempt_date: waiting ? row.nextAttemptDate.toISOString() : null,
    last_status: row.lastStatus,
    last_error: row.lastError,
    delivered_date: row.deliveredDate?.toISOString() ?? null,
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      create_date: attempt.createDate.toISOString(),
      status: attempt.status,
      duration_ms: attempt.durationMs,
      response: attempt.response,
      error: attempt.error,
    })),
  };
}

/** A page of an endpoint's deliveries with their attempts, newest first. */
export async function endpointDeliveries(
  db: Executor,
  organizationId: number,
  endpointId: number,
  query: WebhookDeliveryListQuery,
) {
  const rows = await listDeliveries(db, organizationId, endpointId, {
    limit: query.limit + 1,
    before: query.before,
    state: query.state,
  });
  const page = rows.slice(0, query.limit);
  const attempts = await listAttempts(
    db,
    organizationId,
    page.map((row) => row.id),
  );
  const items = page.map((row) =>
    deliveryToWire(
      row,
      attempts.filter((attempt) => attempt.deliveryId === row.id),
    ),
  );
  const hasMore = rows.length > query.limit;
  return { items, has_more: hasMore, next_before: hasMore ? (page.at(-1)?.id ?? null) : null };
}

export async function listOwnDeliveries(db: Db, owner: EndpointOwner, id: string, query: WebhookDeliveryListQuery) {
  const endpoint = await ownedEndpoint(db, owner, id);
  return endpointDeliveries(db, owner.organizationId, endpoint.id, query);
}

/**
 * Sends one delivery again now (a failed one, a succeeded one, or one waiting for its next attempt):
 * the same event under the same webhook-id. One under way is a 409.
 */
export async function retryDelivery(
  db: Executor,
  organizationId: number,
  endpoint: WebhookEndpointRow,
  rawDeliveryId: string,
) {
  const deliveryId = parseId(rawDeliveryId, "Delivery");
  if (endpoint.status === "disabled") {
    throw new AppError(
      "invalid_state_transition",
      "This endpoint is disabled: nothing is sent to it until it is enabled",
    );
  }
  return db.transaction(async (tx) => {
    const row = await findDelivery(tx, organizationId, endpoint.id, deliveryId);
    if (!row) throw notFound("Delivery");
    if (row.state === "sending") {
      throw new AppError("invalid_state_transition", "This delivery is being sent now; wait for its outcome");
    }
    const after = await updateDelivery(tx, organizationId, row.id, {
      state: "pending",
      nextAttemptDate: new Date(),
      deliveredDate: row.state === "succeeded" ? row.deliveredDate : null,
    });
    if (!after) throw notFound("Delivery");
    return deliveryToWire(after, await listAttempts(tx, organizationId, [after.id]));
  });
}

export async function retryOwnDelivery(db: Db, owner: EndpointOwner, id: string, deliveryId: string) {
  const endpoint = await ownedEndpoint(db, owner, id);
  return retryDelivery(db, owner.organizationId, endpoint, deliveryId);
}

/** Every event of the endpoint's types recorded since a time is delivered again (in order, after what is queued). */
export async function resendSince(
  db: Executor,
  endpoint: WebhookEndpointRow,
  permissions: readonly string[],
  asked: Date,
) {
  let since = asked;
  if (Number.isNaN(since.getTime())) throw fieldError("since", "is not a date-time");
  if (since.getTime() > Date.now()) throw fieldError("since", "is in the future");
  // Nothing is older than the epoch: an earlier time (year 0, a negative year) asks for every event kept.
  if (since.getTime() < 0) since = new Date(0);
  const types = deliveredTypes(endpoint, permissions);
  let queued = 0;
  let after = 0;
  for (;;) {
    const batch = await db.transaction((tx) => requeueSince(tx, endpoint, types, since, after, 1000));
    queued += batch.queued;
    if (batch.last === null || batch.queued < 1000) return { queued };
    after = batch.last;
  }
}

export async function resendOwnSince(db: Db, owner: EndpointOwner, id: string, since: string) {
  const endpoint = await ownedEndpoint(db, owner, id);
  if (endpoint.status === "disabled") {
    throw new AppError("invalid_state_transition", "This endpoint is disabled: enable it first, then ask for a resend");
  }
  return resendSince(db, endpoint, await applicationPermissions(db, endpoint.applicationId), new Date(since));
}

// --- The organization's members (the panel): every application's endpoints, pause and resume ---

export interface MemberScope {
  organizationId: number;
  origin?: EventOrigin;
}

async function organizationEndpoint(tx: Executor, organizationId: number, rawId: string, lock = false) {
  const id = parseId(rawId, "Webhook endpoint");
  const row = lock
    ? await lockWebhookEndpoint(tx, organizationId, id)
    : await findWebhookEndpoint(tx, organizationId, id);
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

/** Every installed application's endpoints, with the application's name, oldest first. */
export async function listOrganizationWebhookEndpoints(db: Db, organizationId: number) {
  const rows = await listWebhookEndpoints(db, organizationId);
  const names = await applicationNames(
    db,
    rows.map((row) => row.applicationId),
  );
  return rows.map((row) => ({
    ...webhookEndpointToWire(row),
    application: { id: row.applicationId, name: names.get(row.applicationId) ?? "" },
  }));
}

/**
 * A member pauses an endpoint (its deliveries wait, none is lost) or resumes it (they go, in order).
 * Pausing a disabled endpoint is a 409: it receives nothing to hold.
 */
export async function setWebhookEndpointPaused(db: Db, scope: MemberScope, id: string, paused: boolean) {
  return withEvents(db, async (tx) => {
    const before = await organizationEndpoint(tx, scope.organizationId, id, true);
    if (before.status === "disabled") {
      throw new AppError(
        "invalid_state_transition",
        "This endpoint is disabled: the application enables it again once its receiver works",
      );
    }
    const status = paused ? "paused" : "enabled";
    if (before.status === status) return webhookEndpointToWire(before);
    const after = (await updateWebhookEndpoint(tx, scope.organizationId, before.id, { status })) ?? before;
    const wire = webhookEndpointToWire(after);
    await recordEvent(tx, scope, "webhook_endpoint.updated", after.id, wire, { before: webhookEndpointToWire(before) });
    return wire;
  });
}

export async function organizationDeliveries(
  db: Db,
  organizationId: number,
  endpointId: string,
  query: WebhookDeliveryListQuery,
) {
  const endpoint = await organizationEndpoint(db, organizationId, endpointId);
  return endpointDeliveries(db, organizationId, endpoint.id, query);
}

export async function retryOrganizationDelivery(
  db: Db,
  organizationId: number,
  endpointId: string,
  deliveryId: string,
) {
  const endpoint = await organizationEndpoint(db, organizationId, endpointId);
  return retryDelivery(db, organizationId, endpoint, deliveryId);
}

export async function resendOrganizationSince(db: Db, organizationId: number, endpointId: string, since: string) {
  const endpoint = await organizationEndpoint(db, organizationId, endpointId);
  if (endpoint.status === "disabled") {
    throw new AppError("invalid_state_transition", "This endpoint is disabled: nothing can be sent to it");
  }
  return resendSince(db, endpoint, await applicationPermissions(db, endpoint.applicationId), new Date(since));
}
