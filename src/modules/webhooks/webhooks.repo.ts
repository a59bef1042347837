import { and, asc, desc, eq, gt, inArray, lt, lte, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import {
  applications,
  eventSequences,
  events,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;

export async function insertWebhookEndpoint(tx: Executor, values: typeof webhookEndpoints.$inferInsert) {
  const [row] = await tx.insert(webhookEndpoints).values(values).returning();
  if (!row) throw new Error("webhook endpoint not inserted");
  return row;
}

/** One endpoint of an organization; with an application, only if it is that application's. */
export async function findWebhookEndpoint(tx: Executor, organizationId: number, id: number, applicationId?: number) {
  const [row] = await tx
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.organizationId, organizationId),
        eq(webhookEndpoints.id, id),
        applicationId === undefined ? undefined : eq(webhookEndpoints.applicationId, applicationId),
      ),
    );
  return row;
}

export const lockWebhookEndpoint = tenantRowLocker(webhookEndpoints);
export const updateWebhookEndpoint = tenantRowUpdater(webhookEndpoints);

/** An organization's endpoints (one application's, or all of them for its members), oldest first. */
export function listWebhookEndpoints(tx: Executor, organizationId: number, applicationId?: number) {
  return tx
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.organizationId, organizationId),
        applicationId === undefined ? undefined : eq(webhookEndpoints.applicationId, applicationId),
      ),
    )
    .orderBy(asc(webhookEndpoints.id));
}

export async function deleteWebhookEndpoint(tx: Executor, organizationId: number, id: number) {
  await tx
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.organizationId, organizationId), eq(webhookEndpoints.id, id)));
}

/** Pending deliveries of an endpoint fail at once (it was disabled): they are in its log as such. */
export async function failPendingDeliveries(tx: Executor, organizationId: number, endpointId: number, reason: string) {
  await tx
    .update(webhookDeliveries)
    .set({ state: "failed", lastError: reason, updateDate: sql`now()` })
    .where(
      and(
        eq(webhookDeliveries.organizationId, organizationId),
        eq(webhookDeliveries.endpointId, endpointId),
        inArray(webhookDeliveries.state, ["pending", "sending"]),
      ),
    );
}

// --- Dispatch: events become deliveries, in commit order ---

/** Endpoints that have events to be given (enabled or paused, behind their organization's last event). */
export function endpointsBehind(tx: Executor, organizationIds?: readonly number[]) {
  return tx
    .select({
      organizationId: webhookEndpoints.organizationId,
      id: webhookEndpoints.id,
    })
    .from(webhookEndpoints)
    .innerJoin(eventSequences, eq(eventSequences.organizationId, webhookEndpoints.organizationId))
    .where(
      and(
        inArray(webhookEndpoints.status, ["enabled", "paused"]),
        gt(eventSequences.lastSeq, webhookEndpoints.dispatchedSeq),
        organizationIds ? inArray(webhookEndpoints.organizationId, [...organizationIds]) : undefined,
        organizationIds ? inArray(eventSequences.organizationId, [...organizationIds]) : undefined,
      ),
    );
}

/** The permissions an installed application holds (what its installation consented to). */
export async function applicationPermissions(tx: Executor, applicationId: number) {
  return (await findApplicationOf(tx, applicationId))?.permissions ?? [];
}

/** The names of these applications, by id (one query). */
export async function applicationNames(tx: Executor, applicationIds: readonly number[]) {
  if (applicationIds.length === 0) return new Map<number, string>();
  const rows = await tx
    .select({ id: applications.id, name: applications.name })
    .from(applications)
    .where(inArray(applications.id, [...new Set(applicationIds)]));
  return new Map(rows.map((row) => [row.id, row.name]));
}

export async function findApplicationOf(tx: Executor, applicationId: number) {
  const [row] = await tx
    .select({ name: applications.name, permissions: applications.permissions })
    .from(applications)
    .where(eq(applications.id, applicationId));
  return row;
}

/** Events of an organization to queue for an endpoint, oldest first. */
function eventsToQueue(
  tx: Executor,
  organizationId: number,
  types: readonly string[],
  where: SQL | undefined,
  limit: number,
) {
  return tx
    .select({
      seq: events.seq,
      id: events.id,
      type: events.type,
      resourceType: events.resourceType,
      resourceId: events.resourceId,
    })
    .from(events)
    .where(and(eq(events.organizationId, organizationId), inArray(events.type, [...types]), where))
    .orderBy(asc(events.seq))
    .limit(limit);
}

/**
 * Gives an endpoint a delivery for each event of its types numbered in (after, through], oldest
 * first, at most `limit`; returns the last number it went through (events are numbered in commit
 * order, so nothing at or below `through` can still appear).
 */
export async function queueDeliveries(
  tx: Executor,
  endpoint: WebhookEndpointRow,
  types: readonly string[],
  through: number,
  limit: number,
  now: Date,
): Promise<{ queued: number; reached: number }> {
  if (types.length === 0) return { queued: 0, reached: through };
  const rows = await eventsToQueue(
    tx,
    endpoint.organizationId,
    types,
    and(gt(events.seq, endpoint.dispatchedSeq), lte(events.seq, through)),
    limit,
  );
  await insertDeliveries(tx, endpoint, rows, now);
  const reached = rows.length === limit ? (rows.at(-1)?.seq ?? through) : through;
  return { queued: rows.length, reached };
}

/**
 * Deliveries again of the endpoint's events recorded since a time (those already dispatched to it),
 * a batch of `limit` after number `afterSeq`; returns how many and the last number queued.
 */
export async function requeueSince(
  tx: Executor,
  endpoint: WebhookEndpointRow,
  types: readonly string[],
  since: Date,
  afterSeq: number,
  limit: number,
): Promise<{ queued: number; last: number | null }> {
  if (types.length === 0) return { queued: 0, last: null };
  const rows = await eventsToQueue(
    tx,
    endpoint.organizationId,
    types,
    and(
      gt(events.seq, afterSeq),
      lte(events.seq, endpoint.dispatchedSeq),
      sql`${events.createDate} >= ${since.toISOString()}::timestamptz`,
    ),
    limit,
  );
  await insertDeliveries(tx, endpoint, rows, new Date());
  return { queued: rows.length, last: rows.at(-1)?.seq ?? null };
}

async function insertDeliveries(
  tx: Executor,
  endpoint: WebhookEndpointRow,
  rows: { seq: number; id: string; type: string; resourceType: string; resourceId: number | null }[],
  due: Date,
) {
  if (rows.length === 0) return;
  await tx.insert(webhookDeliveries).values(
    rows.map((event) => ({
      organizationId: endpoint.organizationId,
      endpointId: endpoint.id,
      eventSeq: event.seq,
      eventId: event.id,
      eventType: event.type,
      resourceType: event.resourceType,
      resourceId: event.resourceId,
      nextAttemptDate: due,
    })),
  );
}

// --- Delivery: claim, record ---

const due = (now: Date) =>
  and(inArray(webhookDeliveries.state, ["pending", "sending"]), lte(webhookDeliveries.nextAttemptDate, now));

const endpointEnabled = sql`exists (
  select 1 from ${webhookEndpoints} as endpoint
  where endpoint.organization_id = ${webhookDeliveries.organizationId}
    and endpoint.id = ${webhookDeliveries.endpointId}
    and endpoint.status = 'enabled'
)`;

/**
 * Claims due deliveries: each leased to this worker until `leaseUntil` and its attempt counted (a
 * worker that dies mid-delivery leaves it due again then, under the same webhook-id). Candidates
 * are read across organizations, then each organization's are taken in one statement that checks
 * again that they are due, so two workers never take the same one.
 */
export async function claimDueDeliveries(
  tx: Executor,
  now: Date,
  leaseUntil: Date,
  limit: number,
  organizationIds?: readonly number[],
) {
  // The first delivery still to be made of each resource to each endpoint (order per resource), of
  // those the ones due, oldest first: one sort of the waiting deliveries, whatever the statistics say.
  // Each table filtered on the organizations by itself: on a cluster the statement then stays on their shards.
  const among = (column: string) =>
    organizationIds
      ? sql`and ${sql.raw(column)} in (${sql.join(
          organizationIds.map((id) => sql`${id}`),
          sql`, `,
        )})`
      : sql``;
  const result = await tx.execute(sql`
    select first.organization_id as "organizationId", first.id as "id"
    from (
      select distinct on (waiting.organization_id, waiting.endpoint_id, waiting.resource_type, coalesce(waiting.resource_id, 0))
        waiting.organization_id, waiting.id, waiting.endpoint_id, waiting.next_attempt_date
      from ${webhookDeliveries} as waiting
      where waiting.state in ('pending', 'sending') ${among("waiting.organization_id")}
      -- One under way holds its resource (a delivery sent again by hand is older than it, and waits).
      order by waiting.organization_id, waiting.endpoint_id, waiting.resource_type, coalesce(waiting.resource_id, 0),
        waiting.state = 'sending' desc, waiting.event_seq, waiting.id
    ) as first
    where first.next_attempt_date <= ${now.toISOString()}::timestamptz
      and exists (
        select 1 from ${webhookEndpoints} as endpoint
        where endpoint.organization_id = first.organization_id and endpoint.id = first.endpoint_id
          and endpoint.status = 'enabled' ${among("endpoint.organization_id")}
      )
    order by first.next_attempt_date, first.id
    limit ${limit}`);
  const candidates = (
    result as unknown as { rows: { organizationId: string | number; id: string | number }[] }
  ).rows.map((row) => ({ organizationId: Number(row.organizationId), id: Number(row.id) }));
  const byOrganization = new Map<number, number[]>();
  for (const row of candidates) {
    byOrganization.set(row.organizationId, [...(byOrganization.get(row.organizationId) ?? []), row.id]);
  }
  const claimed: WebhookDeliveryRow[] = [];
  for (const [organizationId, ids] of byOrganization) {
    claimed.push(
      ...(await tx
        .update(webhookDeliveries)
        .set({
          state: "sending",
          attempts: sql`${webhookDeliveries.attempts} + 1`,
          nextAttemptDate: leaseUntil,
          updateDate: sql`now()`,
        })
        .where(
          and(
            eq(webhookDeliveries.organizationId, organizationId),
            inArray(webhookDeliveries.id, ids),
            due(now),
            endpointEnabled,
          ),
        )
        .returning()),
    );
  }
  return claimed.sort((a, b) => a.eventSeq - b.eventSeq || a.id - b.id);
}

/** The events of these numbers, one organization's. */
export function findEventsBySeq(tx: Executor, organizationId: number, seqs: readonly number[]) {
  return tx
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId), inArray(events.seq, [...new Set(seqs)])));
}

/** These endpoints of one organization. */
export function findWebhookEndpoints(tx: Executor, organizationId: number, ids: readonly number[]) {
  return tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.organizationId, organizationId), inArray(webhookEndpoints.id, [...new Set(ids)])));
}

export async function insertAttempts(tx: Executor, values: (typeof webhookAttempts.$inferInsert)[]) {
  if (values.length > 0) await tx.insert(webhookAttempts).values(values);
}

export interface DeliveryOutcome {
  id: number;
  /** The attempt this outcome is of: a delivery claimed again since (its lease ran out) is not overwritten. */
  attempts: number;
  state: "pending" | "succeeded" | "failed";
  lastStatus: number | null;
  lastError: string | null;
  deliveredDate: Date | null;
  nextAttemptDate: Date;
}

/**
 * Records the outcomes of one organization's attempts in one statement, each only if its delivery is
 * still under this attempt (not claimed again, retried, deleted meanwhile); the ids it recorded.
 */
export async function settleDeliveries(
  tx: Executor,
  organizationId: number,
  outcomes: readonly DeliveryOutcome[],
): Promise<Set<number>> {
  if (outcomes.length === 0) return new Set();
  const rows = sql.join(
    outcomes.map(
      (outcome) =>
        sql`(${outcome.id}::bigint, ${outcome.attempts}::integer, ${outcome.state}::text, ${outcome.lastStatus}::integer, ${outcome.lastError}::text, ${outcome.deliveredDate?.toISOString() ?? null}::timestamptz, ${outcome.nextAttemptDate.toISOString()}::timestamptz)`,
    ),
    sql`, `,
  );
  const result = await tx.execute(sql`
    update ${webhookDeliveries} set
      state = outcome.state,
      last_status = outcome.last_status,
      last_error = outcome.last_error,
      delivered_date = outcome.delivered_date,
      next_attempt_date = outcome.next_attempt_date,
      update_date = now()
    from (values ${rows}) as outcome(id, attempts, state, last_status, last_error, delivered_date, next_attempt_date)
    where ${webhookDeliveries.organizationId} = ${organizationId} and ${webhookDeliveries.id} = outcome.id
      and ${webhookDeliveries.state} = 'sending' and ${webhookDeliveries.attempts} = outcome.attempts
    returning ${webhookDeliveries.id} as id`);
  return new Set((result as unknown as { rows: { id: string | number }[] }).rows.map((row) => Number(row.id)));
}

export const updateDelivery = tenantRowUpdater(webhookDeliveries);

// --- The delivery log ---

/** An endpoint's deliveries, newest first, before an id (a page of the log). */
export function listDeliveries(
  tx: Executor,
  organizationId: number,
  endpointId: number,
  options: { limit: number; before?: number; state?: string },
) {
  return tx
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.organizationId, organizationId),
        eq(webhookDeliveries.endpointId, endpointId),
        options.before === undefined ? undefined : lt(webhookDeliveries.id, options.before),
        options.state === undefined ? undefined : eq(webhookDeliveries.state, options.state),
      ),
    )
    .orderBy(desc(webhookDeliveries.id))
    .limit(options.limit);
}

export async function findDelivery(tx: Executor, organizationId: number, endpointId: number, id: number) {
  const [row] = await tx
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.organizationId, organizationId),
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.id, id),
      ),
    );
  return row;
}

/** The attempts of these deliveries, in order. */
export function listAttempts(tx: Executor, organizationId: number, deliveryIds: readonly number[]) {
  if (deliveryIds.length === 0) return Promise.resolve([] as WebhookAttemptRow[]);
  return tx
    .select()
    .from(webhookAttempts)
    .where(
      and(eq(webhookAttempts.organizationId, organizationId), inArray(webhookAttempts.deliveryId, [...deliveryIds])),
    )
    .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt), asc(webhookAttempts.id));
}
