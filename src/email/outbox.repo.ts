import { and, asc, desc, eq, ilike, inArray, lte, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { escapeLike } from "../db/list-query.js";
import { outboxMessages } from "../db/schema.js";

export type OutboxRow = typeof outboxMessages.$inferSelect;

/**
 * The messages the platform sends, one template each (src/email/templates/<kind>.mjml and .txt).
 * Transactional ones go to every donor whatever their marketing consent; none of these is marketing.
 */
export const EMAIL_KINDS = [
  "receipt",
  "recurring_welcome",
  "renewal_failed",
  "card_expiring",
  "recurring_cancelled",
  "bank_transfer",
  "statement",
  "donor_sign_in",
  "donor_change",
  "gift_notification",
  "gift_digest",
  "webhook_disabled",
  "tribute_notice",
  "gift_activation",
  "password_reset",
] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

export interface EmailToSend {
  organizationId: number;
  kind: EmailKind;
  to: string;
  supporterId?: number | null;
  donationId?: number | null;
  /** What the template needs that cannot be read again at delivery (ids, a link, a reason). */
  data?: Record<string, unknown>;
  /** One message per key and organization: enqueueing the same key again does nothing. */
  dedupeKey?: string;
}

/**
 * Records a message in the caller's transaction: it is delivered once that transaction commits, and
 * never if it rolls back. Returns the message id, or null when its dedupe key was already used.
 */
export async function enqueueEmail(tx: Executor, message: EmailToSend): Promise<number | null> {
  const [row] = await tx
    .insert(outboxMessages)
    .values({
      organizationId: message.organizationId,
      kind: message.kind,
      toAddress: message.to,
      supporterId: message.supporterId ?? null,
      donationId: message.donationId ?? null,
      data: message.data ?? {},
      dedupeKey: message.dedupeKey ?? null,
    })
    .onConflictDoNothing()
    .returning({ id: outboxMessages.id });
  return row?.id ?? null;
}

/**
 * Claims due messages for delivery: queued ones whose time has come, and "sending" ones whose lease
 * ran out (a process died mid-delivery). Each is leased until `leaseUntil` so that no other worker
 * takes it meanwhile. The due ones are read without a lock, then claimed by an update that checks
 * again that each is still due: of two workers that read the same message, the second's update
 * waits for the first's and then finds it leased. The read spans organizations (every shard on a
 * cluster, where a row lock cannot); each claim touches one organization's rows.
 */
export async function claimDueMessages(
  tx: Executor,
  now: Date,
  leaseUntil: Date,
  limit: number,
  organizationIds?: readonly number[],
) {
  const stillDue = and(inArray(outboxMessages.state, ["queued", "sending"]), lte(outboxMessages.nextAttemptDate, now));
  const due = await tx
    .select({ organizationId: outboxMessages.organizationId, id: outboxMessages.id })
    .from(outboxMessages)
    .where(and(stillDue, organizationIds ? inArray(outboxMessages.organizationId, [...organizationIds]) : undefined))
    .orderBy(asc(outboxMessages.nextAttemptDate), asc(outboxMessages.id))
    .limit(limit);
  const byOrganization = new Map<number, number[]>();
  for (const row of due)
    byOrganization.set(row.organizationId, [...(byOrganization.get(row.organizationId) ?? []), row.id]);
  const claimed: OutboxRow[] = [];
  for (const [organizationId, ids] of byOrganization) {
    claimed.push(
      ...(await tx
        .update(outboxMessages)
        .set({
          state: "sending",
          attempts: sql`${outboxMessages.attempts} + 1`,
          nextAttemptDate: leaseUntil,
          updateDate: sql`now()`,
        })
        .where(and(eq(outboxMessages.organizationId, organizationId), inArray(outboxMessages.id, ids), stillDue))
        .returning()),
    );
  }
  const order = new Map(due.map((row, index) => [`${row.organizationId}:${row.id}`, index]));
  return claimed.sort(
    (a, b) => (order.get(`${a.organizationId}:${a.id}`) ?? 0) - (order.get(`${b.organizationId}:${b.id}`) ?? 0),
  );
}

export type DeliveryUpdate = Partial<
  Pick<
    OutboxRow,
    | "state"
    | "nextAttemptDate"
    | "lastError"
    | "subject"
    | "html"
    | "text"
    | "headers"
    | "messageId"
    | "sentDate"
    | "attempts"
    | "data"
  >
>;

export async function updateMessage(tx: Executor, organizationId: number, id: number, values: DeliveryUpdate) {
  const [row] = await tx
    .update(outboxMessages)
    .set({ ...values, updateDate: sql`now()` })
    .where(and(eq(outboxMessages.organizationId, organizationId), eq(outboxMessages.id, id)))
    .returning();
  return row;
}

export async function findMessage(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select()
    .from(outboxMessages)
    .where(and(eq(outboxMessages.organizationId, organizationId), eq(outboxMessages.id, id)));
  return row;
}

export interface MessageFilters {
  state?: string;
  kind?: string;
  supporterId?: number;
  /** Part of the recipient's address, matched case-insensitively. */
  recipient?: string;
}

const filtersOf = (organizationId: number, filters: MessageFilters) =>
  and(
    eq(outboxMessages.organizationId, organizationId),
    filters.state ? eq(outboxMessages.state, filters.state) : undefined,
    filters.kind ? eq(outboxMessages.kind, filters.kind) : undefined,
    filters.supporterId !== undefined ? eq(outboxMessages.supporterId, filters.supporterId) : undefined,
    filters.recipient ? ilike(outboxMessages.toAddress, `%${escapeLike(filters.recipient)}%`) : undefined,
  );

/** An organization's messages, newest first (the admin panel's Outbox). */
export async function listMessages(
  tx: Executor,
  organizationId: number,
  filters: MessageFilters & { beforeId?: number },
  limit: number,
) {
  return tx
    .select()
    .from(outboxMessages)
    .where(
      and(
        filtersOf(organizationId, filters),
        filters.beforeId !== undefined ? sql`${outboxMessages.id} < ${filters.beforeId}` : undefined,
      ),
    )
    .orderBy(desc(outboxMessages.id))
    .limit(limit);
}

/** How many of the organization's messages match the filters (the Outbox's total). */
export async function countMessages(tx: Executor, organizationId: number, filters: MessageFilters) {
  const [row] = await tx
    .select({ count: sql<number>`count(*)::int` })
    .from(outboxMessages)
    .where(filtersOf(organizationId, filters));
  return Number(row?.count ?? 0);
}

/**
 * Moves a message from one state to another only if it is still in `from` (a worker may have
 * claimed it meanwhile): the updated row, or undefined when it was not in that state.
 */
export async function transitionMessage(
  tx: Executor,
  organizationId: number,
  id: number,
  from: string,
  values: DeliveryUpdate & { toAddress?: string },
) {
  const [row] = await tx
    .update(outboxMessages)
    .set({ ...values, updateDate: sql`now()` })
    .where(
      and(eq(outboxMessages.organizationId, organizationId), eq(outboxMessages.id, id), eq(outboxMessages.state, from)),
    )
    .returning();
  return row;
}

/**
 * Records several messages in one statement (a statement run's batch); those whose dedupe key was
 * already used are skipped. Returns the ids of the messages recorded.
 */
export async function enqueueEmails(tx: Executor, messages: EmailToSend[]): Promise<number[]> {
  if (messages.length === 0) return [];
  const rows = await tx
    .insert(outboxMessages)
    .values(
      messages.map((message) => ({
        organizationId: message.organizationId,
        kind: message.kind,
        toAddress: message.to,
        supporterId: message.supporterId ?? null,
        donationId: message.donationId ?? null,
        data: message.data ?? {},
        dedupeKey: message.dedupeKey ?? null,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: outboxMessages.id });
  return rows.map((row) => row.id);
}
