import type { Db } from "../db/client.js";
import { AppError, notFound } from "../errors/app-error.js";
import { findSupporter } from "../modules/supporters/supporters.repo.js";
import { MESSAGES } from "./messages/index.js";
import {
  countMessages,
  EMAIL_KINDS,
  type EmailKind,
  findMessage,
  listMessages,
  type MessageFilters,
  type OutboxRow,
  transitionMessage,
} from "./outbox.repo.js";
import { type DeliveryLink, EMAIL_LOCALES, type EmailLocale, type RenderDeps, renderSample } from "./render.js";

export const OUTBOX_STATES = ["queued", "sending", "sent", "captured", "failed", "cancelled"] as const;
export const MAX_OUTBOX_PAGE = 100;
/** The longest recipient search: an email address is at most 320 characters. */
export const MAX_RECIPIENT_SEARCH = 320;

/** Who reads the Outbox: owners and admins see a captured message's portal sign-in link, other members do not. */
export interface OutboxReader {
  showsLinks: boolean;
}

/** Every kind of one-time link messages carry, once each (one placeholder, one kind). */
const DELIVERY_LINKS: DeliveryLink[] = [
  ...new Map(
    Object.values(MESSAGES).flatMap((message): [string, DeliveryLink][] =>
      message.link ? [[message.link.placeholder, message.link]] : [],
    ),
  ).values(),
];

/**
 * A body with the tokens of every one-time link replaced by their placeholder, which opens nothing;
 * a reader who sees links keeps those a captured copy may keep (a donor portal link), never others
 * (a password reset link is never kept, and never shown even if it were).
 */
function withoutTokens(body: string | null, reader: OutboxReader): string | null {
  if (body === null) return null;
  return DELIVERY_LINKS.reduce(
    (text, link) =>
      reader.showsLinks && link.capturedCopyKeepsLink ? text : text.replace(link.tokens, link.placeholder),
    body,
  );
}

/**
 * What the Outbox shows of a message: the envelope, its delivery and what was (or would be) sent.
 * Only a captured message (no SMTP_URL) keeps a usable portal link; it is shown to owners and admins alone.
 */
export function outboxMessageToWire(row: OutboxRow, reader: OutboxReader) {
  const headers = row.headers && typeof row.headers === "object" ? (row.headers as Record<string, unknown>) : {};
  return {
    id: row.id,
    kind: row.kind,
    to: row.toAddress,
    state: row.state,
    attempts: row.attempts,
    next_attempt_date: row.state === "queued" || row.state === "sending" ? row.nextAttemptDate.toISOString() : null,
    last_error: row.lastError,
    subject: row.subject,
    html: withoutTokens(row.html, reader),
    text: withoutTokens(row.text, reader),
    headers: Object.entries(headers).map(([name, value]) => ({ name, value: String(value) })),
    message_id: row.messageId,
    sent_date: row.sentDate?.toISOString() ?? null,
    create_date: row.createDate.toISOString(),
    update_date: row.updateDate.toISOString(),
    supporter_id: row.supporterId,
    donation_id: row.donationId,
  };
}

export type OutboxMessageWire = ReturnType<typeof outboxMessageToWire>;

export interface OutboxPageQuery {
  first?: number | null;
  after?: string | null;
  state?: string | null;
  kind?: string | null;
  supporter_id?: number | null;
  recipient?: string | null;
}

const invalidParameter = (parameter: string, message: string) =>
  new AppError("invalid_request", `Invalid ${parameter}: ${message}`, { errors: [{ parameter, message }] });

/** A message id from the wire: a positive integer, anything else names no message. */
export function parseMessageId(raw: string | number): number | null {
  const text = String(raw);
  if (!/^[1-9]\d{0,15}$/.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

function parseFilters(query: OutboxPageQuery): MessageFilters {
  const filters: MessageFilters = {};
  if (query.state != null) {
    if (!(OUTBOX_STATES as readonly string[]).includes(query.state)) {
      throw invalidParameter("state", `use one of ${OUTBOX_STATES.join(", ")}`);
    }
    filters.state = query.state;
  }
  if (query.kind != null) {
    if (!(EMAIL_KINDS as readonly string[]).includes(query.kind)) {
      throw invalidParameter("kind", `use one of ${EMAIL_KINDS.join(", ")}`);
    }
    filters.kind = query.kind;
  }
  if (query.supporter_id != null) {
    if (!Number.isSafeInteger(query.supporter_id) || query.supporter_id < 1) {
      throw invalidParameter("supporter_id", "use a supporter id (a positive integer)");
    }
    filters.supporterId = query.supporter_id;
  }
  if (query.recipient != null) {
    const recipient = query.recipient.trim();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
    if (recipient.length === 0 || recipient.length > MAX_RECIPIENT_SEARCH || /[\u0000-\u001f\u007f]/.test(recipient)) {
      throw invalidParameter("recipient", `use 1 to ${MAX_RECIPIENT_SEARCH} characters of an email address`);
    }
    filters.recipient = recipient;
  }
  return filters;
}

/**
 * One page of the organization's messages, newest first. `after` is the `end_cursor` of the
 * previous page (keyset on the id, so new messages never shift the pages being walked).
 */
export async function listOutbox(db: Db, organizationId: number, query: OutboxPageQuery, reader: OutboxReader) {
  const first = query.first ?? 20;
  if (!Number.isInteger(first) || first < 1 || first > MAX_OUTBOX_PAGE) {
    throw invalidParameter("first", `use 1 to ${MAX_OUTBOX_PAGE}`);
  }
  let beforeId: number | undefined;
  if (query.after != null) {
    const cursor = parseMessageId(query.after);
    if (cursor === null) throw invalidParameter("after", "use the end_cursor of the previous page");
    beforeId = cursor;
  }
  const filters = parseFilters(query);
  const [rows, count] = await Promise.all([
    listMessages(db, organizationId, { ...filters, beforeId }, first + 1),
    countMessages(db, organizationId, filters),
  ]);
  const items = rows.slice(0, first).map((row) => outboxMessageToWire(row, reader));
  const hasMore = rows.length > first;
  return { items, count, has_more: hasMore, end_cursor: hasMore ? String(items.at(-1)?.id) : null };
}

/** One message of the organization; null for an id it has none with (another organization's included). */
export async function retrieveOutboxMessage(db: Db, organizationId: number, rawId: string, reader: OutboxReader) {
  const id = parseMessageId(rawId);
  if (id === null) return null;
  const row = await findMessage(db, organizationId, id);
  return row ? outboxMessageToWire(row, reader) : null;
}

/**
 * A state action on a message: from exactly one state, checked and changed in one statement (the
 * delivery worker may claim the message at the same moment); a refusal names the state it is in.
 */
async function moveMessage(
  db: Db,
  organizationId: number,
  rawId: string,
  action: { from: string; refusal: string; values: Parameters<typeof transitionMessage>[4] },
) {
  const id = parseMessageId(rawId);
  if (id === null) throw notFound("Message");
  const moved = await transitionMessage(db, organizationId, id, action.from, action.values);
  // Retrying and cancelling are owners' and admins' (organization:manage): they see links.
  if (moved) return outboxMessageToWire(moved, { showsLinks: true });
  const current = await findMessage(db, organizationId, id);
  if (!current) throw notFound("Message");
  throw new AppError("invalid_state_transition", `Message ${id} is ${current.state}; ${action.refusal}`);
}

/**
 * A failed message goes back to the queue, due now; its attempts are kept (the worker counts on).
 * It goes to the supporter's current address: the usual fix of a refused address is to correct it.
 */
export async function retryOutboxMessage(db: Db, organizationId: number, rawId: string) {
  const id = parseMessageId(rawId);
  const current = id === null ? undefined : await findMessage(db, organizationId, id);
  const supporter = current?.supporterId ? await findSupporter(db, organizationId, current.supporterId) : undefined;
  const address = supporter?.email?.trim();
  return moveMessage(db, organizationId, rawId, {
    from: "failed",
    refusal: "only a failed message can be retried",
    values: { state: "queued", nextAttemptDate: new Date(), ...(address ? { toAddress: address } : {}) },
  });
}

/** A message still waiting in the queue is never sent. */
export function cancelOutboxMessage(db: Db, organizationId: number, rawId: string) {
  return moveMessage(db, organizationId, rawId, {
    from: "queued",
    refusal: "only a queued message can be cancelled",
    values: { state: "cancelled" },
  });
}

/**
 * A kind rendered over its sample data, with the organization's name, logo and reply-to, in its
 * language or the one asked for: what donors would get (the panel's template preview).
 */
export async function previewEmail(
  db: Db,
  organizationId: number,
  query: { kind: string; locale?: string | null },
  deps: RenderDeps,
) {
  if (!(EMAIL_KINDS as readonly string[]).includes(query.kind)) {
    throw invalidParameter("kind", `use one of ${EMAIL_KINDS.join(", ")}`);
  }
  if (query.locale != null && !(EMAIL_LOCALES as readonly string[]).includes(query.locale)) {
    throw invalidParameter("locale", `use one of ${EMAIL_LOCALES.join(", ")}`);
  }
  const kind = query.kind as EmailKind;
  if (!MESSAGES[kind]) throw new AppError("not_found", `The ${kind} email has no template yet`);
  const rendered = await renderSample(db, organizationId, kind, (query.locale ?? undefined) as EmailLocale, deps);
  if (!rendered) throw new Error("organization of the request vanished");
  return { kind, subject: rendered.subject, html: rendered.html, text: rendered.text };
}
