import type { Db } from "../../db/client.js";
import { AppError, invalidParameter } from "../../errors/app-error.js";
import { EVENT_CATALOG, isEventType } from "../../events/catalog.js";
import type { EventActor } from "../../events/origin.js";
import type { EventChanges } from "../../events/record-event.js";
import { type AuditFilters, type AuditRow, listAuditRows } from "./audit.repo.js";

/**
 * The audit log: the organization's record of changes (src/events/) as its owners and admins read it,
 * with who acted, from where (address, user agent, request), and what changed field by field. Read
 * from the events, so nothing is written twice and nothing that changed is missing from it.
 */

const MODE_WORDS: Record<string, string> = { test: "test mode", live: "live mode" };

/** The sentence of a change the old audit table recorded (kept as `audit.legacy`). */
function describeLegacy(action: string, details: Record<string, unknown>): string {
  const mode = MODE_WORDS[String(details.mode)] ?? "unknown mode";
  const key = details.secret_key_last4 ? `, secret key ending ${details.secret_key_last4}` : "";
  const webhook = details.webhook_secret_last4 ? `, webhook secret ending ${details.webhook_secret_last4}` : "";
  switch (action) {
    case "payments.stripe_connected":
      return `Connected Stripe (${mode}${key}${webhook})`;
    case "payments.stripe_updated":
      return `Replaced the Stripe keys (${mode}${key}${webhook})`;
    case "payments.stripe_disconnected":
      return details.card_processor_after === "none"
        ? `Disconnected Stripe (${mode}${key}); donors cannot pay by card until a processor is connected`
        : `Disconnected Stripe (${mode}${key}); donors pay with the sandbox again`;
    case "payments.test_mode_enabled":
      return "Switched test mode on: the sandbox takes gifts, no real money moves";
    case "payments.test_mode_disabled":
      return "Switched test mode off";
    case "email.settings_updated":
      return `Changed the email settings (${Object.entries(details)
        .map(([name, value]) => `${name}: ${value}`)
        .join(", ")})`;
    case "email.statements_sent":
      return `Sent the ${details.year} statements: ${details.queued} queued, ${details.already_sent} already sent, ${details.skipped_no_email} without an email`;
    default:
      return action;
  }
}

type Data = Record<string, unknown>;

const money = (data: Data) => `${data.amount} ${data.currency}`;
const text = (value: unknown) => (value === null || value === undefined || value === "" ? "none" : String(value));

/** What a change of the payment settings did, as the settings page's history says it. */
function paymentSettingsSentence(data: Data, changes: EventChanges): string {
  const key = data.secret_key_last4 ? `, secret key ending ${data.secret_key_last4}` : "";
  const mode = `${data.mode} mode`;
  const sentences: string[] = [];
  const processor = changes.processor;
  if (processor?.after === "stripe") sentences.push(`Connected Stripe (${mode}${key})`);
  else if (processor?.before === "stripe") {
    sentences.push(
      data.processor === "none"
        ? "Disconnected Stripe; donors cannot pay by card until a processor is connected"
        : "Disconnected Stripe; donors pay with the sandbox",
    );
  } else if (data.processor === "stripe" && !changes.test_mode) {
    sentences.push(`Replaced the Stripe keys (${mode}${key})`);
  }
  if (changes.test_mode) {
    sentences.push(
      changes.test_mode.after === true
        ? "Switched test mode on: the sandbox takes gifts, no real money moves"
        : "Switched test mode off",
    );
  }
  return sentences.join("; ") || "Changed the payment settings";
}

/** One sentence a person reads in the audit log. */
export function summarize(row: Pick<AuditRow, "type" | "resourceId" | "data" | "changes">): string {
  const data = (row.data ?? {}) as Data;
  const changes = (row.changes ?? {}) as EventChanges;
  const fields = Object.keys(changes);
  const changed = fields.length > 0 ? `: ${fields.join(", ")}` : "";
  const id = row.resourceId;
  switch (row.type) {
    case "supporter.created":
      return `Created supporter #${id}`;
    case "supporter.updated":
      return `Changed supporter #${id}${changed}`;
    case "supporter.erased":
      return `Erased the personal data of supporter #${id}`;
    case "supporter.exported":
      return `Exported everything held about supporter #${id}`;
    case "campaign.created":
      return `Created campaign #${id} "${data.title}"`;
    case "campaign.updated":
      return changes.archive_date ? `Archived campaign #${id} "${data.title}"` : `Changed campaign #${id}${changed}`;
    case "checkout.completed":
      return `Checkout #${id} completed: donation #${(data.donation as Data | null)?.id ?? "?"}`;
    case "donation.created":
      return `Recorded donation #${id} of ${money(data)} (${data.state})`;
    case "donation.updated":
      return changes.state
        ? `Donation #${id} became ${data.state}${fields.length > 1 ? `${changed}` : ""}`
        : `Changed donation #${id}${changed}`;
    case "payment.created":
      return `Recorded payment #${id} of ${money(data)}`;
    case "payment.paid":
      return `Payment #${id} of ${money(data)} was paid`;
    case "payment.failed":
      return `Payment #${id} of ${money(data)} failed`;
    case "payment.refunded":
      return data.state === "REFUNDED" ? `Refunded payment #${id} in full` : `Refunded part of payment #${id}`;
    case "payment.disputed":
      return `The processor reported a dispute on payment #${id}`;
    case "payment_settings.updated":
      return paymentSettingsSentence(data, changes);
    case "email_settings.updated":
      return `Changed the email settings${changed}`;
    case "organization.updated":
      return `Changed the organization's settings${changed}`;
    case "legal_profile.updated":
      return `Changed the legal profile${changed}`;
    case "receipt.issued":
      return `Issued receipt ${data.number} of ${money(data)}`;
    case "receipt.voided":
      return `Voided receipt ${data.number}${data.void_reason ? ` (${data.void_reason})` : ""}`;
    case "statements.sent":
      return `Sent the ${data.year} statements: ${data.queued} queued, ${data.already_sent} already sent, ${data.skipped_no_email} without an email`;
    case "membership.created":
      return `Added ${data.email} as ${data.role}`;
    case "membership.updated":
      return `Changed the role of ${data.email}: ${text(changes.role?.before)} → ${text(changes.role?.after)}`;
    case "membership.deleted":
      return `Removed ${data.email} (${data.role})`;
    case "application.installed":
      return `Installed the application ${data.name}`;
    case "application.uninstalled":
      return `Uninstalled the application ${data.name}`;
    case "application.created":
      return `Registered the application ${data.name}`;
    case "application.updated":
      return `Changed the application ${data.name}${changed}`;
    case "webhook_endpoint.created":
      return `Added webhook endpoint #${id} (${data.url})`;
    case "webhook_endpoint.updated":
      return changes.status
        ? `Webhook endpoint #${id} became ${data.status}${data.disabled_reason ? `: ${data.disabled_reason}` : ""}`
        : changes.secret
          ? `Rotated the signing secret of webhook endpoint #${id}`
          : `Changed webhook endpoint #${id}${changed}`;
    case "webhook_endpoint.deleted":
      return `Removed webhook endpoint #${id} (${data.url})`;
    case "audit.legacy":
      return describeLegacy(String(data.action), (data.details ?? {}) as Data);
    default:
      return row.type;
  }
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

function actorOf(actor: EventActor) {
  switch (actor.type) {
    case "user":
      return { actor_type: "user", actor_id: actor.user_id, actor_label: actor.label };
    case "application":
      return { actor_type: "application", actor_id: actor.application_id, actor_label: actor.label };
    case "donor":
      return { actor_type: "donor", actor_id: actor.supporter_id, actor_label: "donor" };
    default:
      return { actor_type: "system", actor_id: null, actor_label: actor.label };
  }
}

export function auditEntryToWire(row: AuditRow) {
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    type: row.type,
    summary: summarize(row),
    resource_type: row.resourceType,
    resource_id: row.resourceId,
    ...actorOf(row.actor as EventActor),
    request_id: row.requestId,
    ip: row.ip,
    user_agent: row.userAgent,
    changes: Object.entries((row.changes ?? {}) as EventChanges).map(([field, change]) => ({
      field,
      before: json(change.before),
      after: json(change.after),
    })),
  };
}

export type AuditEntryWire = ReturnType<typeof auditEntryToWire>;

export const MAX_AUDIT_PAGE = 100;
const ACTOR_TYPES = ["user", "application", "donor", "system"] as const;
const RESOURCE_TYPES = [...new Set(Object.values(EVENT_CATALOG).map((entry) => entry.resource))];

/** What the audit log may be asked for, as GraphQL and the CSV export take it. */
export interface AuditQuery {
  actor_type?: string | null;
  actor_id?: number | null;
  type?: readonly string[] | null;
  resource_type?: string | null;
  resource_id?: number | null;
  from?: string | null;
  to?: string | null;
}

/** A position in the log: the last entry's time and number, for this organization only. */
const encodeCursor = (organizationId: number, row: { createDate: Date; seq: number }) =>
  Buffer.from(`au2.${organizationId}.${row.createDate.getTime()}.${row.seq}`).toString("base64url");

function decodeCursor(organizationId: number, cursor: string): { date: Date; seq: number } {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  const match = /^au2\.([1-9][0-9]{0,15})\.([0-9]{1,15})\.([1-9][0-9]{0,15})$/.exec(text);
  if (!match || Number(match[1]) !== organizationId) {
    throw invalidParameter("after", "is not a cursor this audit log gave for this organization");
  }
  return { date: new Date(Number(match[2])), seq: Number(match[3]) };
}

function dateOf(field: string, value: string | null | undefined): Date | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) {
    throw invalidParameter(field, "must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T09:00:00Z");
  }
  return date;
}

/** The filters, checked: a bad one is a 400 that names it, and changes nothing. */
export function auditFiltersOf(query: AuditQuery): AuditFilters {
  const filters: AuditFilters = {};
  if (query.actor_type) {
    if (!(ACTOR_TYPES as readonly string[]).includes(query.actor_type)) {
      throw invalidParameter("actor_type", `must be one of ${ACTOR_TYPES.join(", ")}`);
    }
    filters.actorType = query.actor_type as AuditFilters["actorType"];
  }
  if (query.actor_id !== null && query.actor_id !== undefined) {
    if (!Number.isSafeInteger(query.actor_id) || query.actor_id < 1)
      throw invalidParameter("actor_id", "must be an id");
    filters.actorId = query.actor_id;
  }
  if (query.type && query.type.length > 0) {
    const unknown = query.type.filter((type) => !isEventType(type));
    if (unknown.length > 0) throw invalidParameter("type", `has unknown types: ${unknown.join(", ")}`);
    filters.types = query.type;
  }
  if (query.resource_type) {
    if (!RESOURCE_TYPES.includes(query.resource_type as never)) {
      throw invalidParameter("resource_type", `must be one of ${RESOURCE_TYPES.join(", ")}`);
    }
    filters.resourceType = query.resource_type;
  }
  if (query.resource_id !== null && query.resource_id !== undefined) {
    if (!Number.isSafeInteger(query.resource_id) || query.resource_id < 1) {
      throw invalidParameter("resource_id", "must be an id");
    }
    filters.resourceId = query.resource_id;
  }
  filters.from = dateOf("from", query.from);
  filters.to = dateOf("to", query.to);
  if (filters.from && filters.to && filters.from >= filters.to) throw invalidParameter("to", "must be after from");
  return filters;
}

/** One page of the audit log, newest first, and the cursor of the next (older) page. */
export async function listAuditLog(
  db: Db,
  organizationId: number,
  query: AuditQuery & { first?: number | null; after?: string | null },
) {
  const first = query.first ?? 50;
  if (!Number.isInteger(first) || first < 1 || first > MAX_AUDIT_PAGE) {
    throw new AppError("invalid_request", `Invalid first: use 1 to ${MAX_AUDIT_PAGE}`, {
      errors: [{ field: "first", message: `use 1 to ${MAX_AUDIT_PAGE}` }],
    });
  }
  const filters = auditFiltersOf(query);
  if (query.after) filters.before = decodeCursor(organizationId, query.after);
  const rows = await listAuditRows(db, organizationId, filters, first + 1);
  const page = rows.slice(0, first);
  const last = page.at(-1);
  return {
    items: page.map(auditEntryToWire),
    next_cursor: rows.length > first && last ? encodeCursor(organizationId, last) : null,
    has_more: rows.length > first,
  };
}

/** Every entry the filters select, newest first, a page at a time (the CSV export). */
export async function* auditLogPages(db: Db, organizationId: number, filters: AuditFilters, pageSize = 1000) {
  let before: AuditFilters["before"];
  for (;;) {
    const rows = await listAuditRows(db, organizationId, { ...filters, before }, pageSize);
    if (rows.length > 0) yield rows.map(auditEntryToWire);
    const last = rows.at(-1);
    if (rows.length < pageSize || !last) return;
    before = { date: last.createDate, seq: last.seq };
  }
}
