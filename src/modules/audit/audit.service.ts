import type { Db } from "../../db/client.js";
import { AppError, invalidParameter } from "../../errors/app-error.js";
import { EVENT_CATALOG, isEventType } from "../../events/catalog.js";
import type { EventActor } from "../../events/origin.js";
import type { EventChanges } from "../../events/record-event.js";
import { DEFAULT_LOCALE, type Locale } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import { type AuditFilters, type AuditRow, listAuditRows } from "./audit.repo.js";

/**
 * The audit log: the organization's record of changes (src/events/) as its owners and admins read it,
 * with who acted, from where (address, user agent, request), and what changed field by field. Read
 * from the events, so nothing is written twice and nothing that changed is missing from it.
 */

type Data = Record<string, unknown>;

/** The Stripe mode and the last 4 characters of its secrets, as a legacy or settings sentence names them. */
function stripeDetails(locale: Locale, mode: unknown, keyLast4: unknown, webhookLast4?: unknown): string {
  const modeWord =
    mode === "test"
      ? t(locale, "audit.mode.test")
      : mode === "live"
        ? t(locale, "audit.mode.live")
        : t(locale, "audit.mode.unknown");
  return [
    modeWord,
    keyLast4 ? t(locale, "audit.secret_key_ending", { last4: String(keyLast4) }) : null,
    webhookLast4 ? t(locale, "audit.webhook_secret_ending", { last4: String(webhookLast4) }) : null,
  ]
    .filter(Boolean)
    .join(", ");
}

/** The sentence of a change the old audit table recorded (kept as `audit.legacy`). */
function describeLegacy(locale: Locale, action: string, details: Data): string {
  const stripe = () => stripeDetails(locale, details.mode, details.secret_key_last4, details.webhook_secret_last4);
  switch (action) {
    case "payments.stripe_connected":
      return t(locale, "audit.stripe_connected", { details: stripe() });
    case "payments.stripe_updated":
      return t(locale, "audit.stripe_replaced", { details: stripe() });
    case "payments.stripe_disconnected": {
      const withoutWebhook = stripeDetails(locale, details.mode, details.secret_key_last4);
      return details.card_processor_after === "none"
        ? t(locale, "audit.legacy_stripe_disconnected_no_card", { details: withoutWebhook })
        : t(locale, "audit.legacy_stripe_disconnected_sandbox", { details: withoutWebhook });
    }
    case "payments.test_mode_enabled":
      return t(locale, "audit.test_mode_on");
    case "payments.test_mode_disabled":
      return t(locale, "audit.test_mode_off");
    case "email.settings_updated":
      return t(locale, "audit.legacy_email_settings", {
        details: Object.entries(details)
          .map(([name, value]) => `${name}: ${value}`)
          .join(", "),
      });
    case "email.statements_sent":
      return statementsSentence(locale, details);
    default:
      return action;
  }
}

const statementsSentence = (locale: Locale, data: Data) =>
  t(locale, "audit.statements_sent", {
    year: String(data.year),
    queued: Number(data.queued),
    already: Number(data.already_sent),
    skipped: Number(data.skipped_no_email),
  });

/** What a change of the payment settings did, as the settings page's history says it. */
function paymentSettingsSentence(locale: Locale, data: Data, changes: EventChanges): string {
  const details = () => stripeDetails(locale, data.mode, data.secret_key_last4);
  const sentences: string[] = [];
  const processor = changes.processor;
  if (processor?.after === "stripe") sentences.push(t(locale, "audit.stripe_connected", { details: details() }));
  else if (processor?.before === "stripe") {
    sentences.push(
      data.processor === "none"
        ? t(locale, "audit.stripe_disconnected_no_card")
        : t(locale, "audit.stripe_disconnected_sandbox"),
    );
  } else if (data.processor === "stripe" && !changes.test_mode) {
    sentences.push(t(locale, "audit.stripe_replaced", { details: details() }));
  }
  if (changes.test_mode) {
    sentences.push(t(locale, changes.test_mode.after === true ? "audit.test_mode_on" : "audit.test_mode_off"));
  }
  return sentences.join("; ") || t(locale, "audit.payment_settings_updated");
}

/** The one session an account event ended, as a sentence names it: its browser, system and address. */
function endedDevice(locale: Locale, data: Data): string {
  const [session] = Array.isArray(data.sessions) ? (data.sessions as Data[]) : [];
  const parts = [session?.browser, session?.os, session?.ip_address].filter((part) => typeof part === "string" && part);
  return parts.length > 0 ? parts.join(", ") : t(locale, "audit.none");
}

/**
 * One sentence a person reads in the audit log, in their language (src/i18n/catalogs/<locale>/audit.json).
 * Field names, states and roles stay as the API names them.
 */
export function summarize(
  row: Pick<AuditRow, "type" | "resourceId" | "data" | "changes">,
  locale: Locale = DEFAULT_LOCALE,
): string {
  const data = (row.data ?? {}) as Data;
  const changes = (row.changes ?? {}) as EventChanges;
  const fields = Object.keys(changes);
  const changed = fields.length > 0 ? `: ${fields.join(", ")}` : "";
  const id = String(row.resourceId ?? "?");
  const amount = `${data.amount} ${data.currency}`;
  const text = (value: unknown) =>
    value === null || value === undefined || value === "" ? t(locale, "audit.none") : String(value);
  const w = (key: string, values: Record<string, string | number> = {}) => t(locale, key, { id, changed, ...values });
  switch (row.type) {
    case "supporter.created":
      return w("audit.supporter_created");
    case "supporter.updated":
      return w("audit.supporter_updated");
    case "supporter.erased":
      return w("audit.supporter_erased");
    case "supporter.merged":
      return w("audit.supporter_merged", { merged: String(changes.merged_id?.after ?? "?") });
    case "supporter.exported":
      return w("audit.supporter_exported");
    case "supporter_note.created":
      // An erased supporter's events keep the erased record as their data: the note's number is gone with it.
      return w("audit.supporter_note_created", { note: String(data.note_id ?? "?") });
    case "supporter_note.deleted":
      return w("audit.supporter_note_deleted", { note: String(data.note_id ?? "?") });
    case "segment.created":
      return w("audit.segment_created", { name: String(data.name), collection: String(data.collection) });
    case "segment.updated":
      return w("audit.segment_updated", { name: String(data.name) });
    case "segment.deleted":
      return w("audit.segment_deleted", { name: String(data.name), collection: String(data.collection) });
    case "user.password_changed":
      return w(data.method === "reset" ? "audit.user_password_reset" : "audit.user_password_changed", {
        email: String(data.email),
        count: Number(data.sessions_ended ?? 0),
      });
    case "user.session_ended":
      return data.ended === "others"
        ? w("audit.user_sessions_ended_others", { email: String(data.email), count: Number(data.count) })
        : w(data.ended === "current" ? "audit.user_session_ended_current" : "audit.user_session_ended", {
            email: String(data.email),
            device: endedDevice(locale, data),
          });
    case "user.second_factor_added":
      return data.kind === "passkey"
        ? w("audit.user_passkey_added", { email: String(data.email), name: String(data.name) })
        : w("audit.user_second_factor_added", { email: String(data.email), kind: String(data.kind) });
    case "user.second_factor_removed":
      return data.kind === "passkey"
        ? w("audit.user_passkey_removed", { email: String(data.email), name: String(data.name) })
        : w("audit.user_second_factor_removed", { email: String(data.email), kind: String(data.kind) });
    case "user.recovery_codes_regenerated":
      return w("audit.user_recovery_codes_regenerated", { email: String(data.email) });
    case "campaign.created":
      return w("audit.campaign_created", { title: String(data.title) });
    case "campaign.updated":
      return changes.archive_date
        ? w("audit.campaign_archived", { title: String(data.title) })
        : w("audit.campaign_updated");
    case "checkout.completed":
      return w("audit.checkout_completed", { donation: String((data.donation as Data | null)?.id ?? "?") });
    case "donation.created":
      return w("audit.donation_created", { amount, state: String(data.state) });
    case "donation.updated":
      return changes.state
        ? w("audit.donation_state", { state: String(data.state), changed: fields.length > 1 ? changed : "" })
        : w("audit.donation_updated");
    case "payment.created":
      return w("audit.payment_created", { amount });
    case "payment.paid":
      return w("audit.payment_paid", { amount });
    case "payment.failed":
      return w("audit.payment_failed", { amount });
    case "payment.refunded":
      return w(data.state === "REFUNDED" ? "audit.payment_refunded_full" : "audit.payment_refunded_part");
    case "payment.disputed":
      return w("audit.payment_disputed");
    case "payment_settings.updated":
      return paymentSettingsSentence(locale, data, changes);
    case "email_settings.updated":
      return w("audit.email_settings_updated");
    case "organization.updated":
      return w("audit.organization_updated");
    case "legal_profile.updated":
      return w("audit.legal_profile_updated");
    case "receipt.issued":
      return w("audit.receipt_issued", { number: String(data.number), amount });
    case "receipt.voided":
      return w("audit.receipt_voided", {
        number: String(data.number),
        reason: data.void_reason ? ` (${data.void_reason})` : "",
      });
    case "statements.sent":
      return statementsSentence(locale, data);
    case "supporters.imported":
      return w("audit.supporters_imported", {
        file: String(data.file),
        created: Number(data.created),
        updated: Number(data.updated),
        unchanged: Number(data.unchanged),
        refused: Number(data.refused),
      });
    case "donations.imported":
      return w("audit.donations_imported", {
        file: String(data.file),
        created: Number(data.created),
        updated: Number(data.updated),
        unchanged: Number(data.unchanged),
        refused: Number(data.refused),
      });
    case "membership.created":
      return w("audit.membership_created", { email: String(data.email), role: String(data.role) });
    case "membership.updated":
      return w("audit.membership_updated", {
        email: String(data.email),
        before: text(changes.role?.before),
        after: text(changes.role?.after),
      });
    case "membership.deleted":
      return w("audit.membership_deleted", { email: String(data.email), role: String(data.role) });
    case "application.installed":
      return w("audit.application_installed", { name: String(data.name) });
    case "application.uninstalled":
      return w("audit.application_uninstalled", { name: String(data.name) });
    case "application.created":
      return w("audit.application_created", { name: String(data.name) });
    case "application.updated":
      return w("audit.application_updated", { name: String(data.name) });
    case "webhook_endpoint.created":
      return w("audit.webhook_created", { url: String(data.url) });
    case "webhook_endpoint.updated":
      return changes.status
        ? w("audit.webhook_status", {
            status: String(data.status),
            reason: data.disabled_reason ? `: ${data.disabled_reason}` : "",
          })
        : changes.secret
          ? w("audit.webhook_rotated")
          : w("audit.webhook_updated");
    case "webhook_endpoint.deleted":
      return w("audit.webhook_deleted", { url: String(data.url) });
    case "audit.legacy":
      return describeLegacy(locale, String(data.action), (data.details ?? {}) as Data);
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

export function auditEntryToWire(row: AuditRow, locale: Locale = DEFAULT_LOCALE) {
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    type: row.type,
    summary: summarize(row, locale),
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
  locale: Locale = DEFAULT_LOCALE,
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
    items: page.map((row) => auditEntryToWire(row, locale)),
    next_cursor: rows.length > first && last ? encodeCursor(organizationId, last) : null,
    has_more: rows.length > first,
  };
}

/** Every entry the filters select, newest first, a page at a time (the CSV export). */
export async function* auditLogPages(
  db: Db,
  organizationId: number,
  filters: AuditFilters,
  locale: Locale = DEFAULT_LOCALE,
  pageSize = 1000,
) {
  let before: AuditFilters["before"];
  for (;;) {
    const rows = await listAuditRows(db, organizationId, { ...filters, before }, pageSize);
    if (rows.length > 0) yield rows.map((row) => auditEntryToWire(row, locale));
    const last = rows.at(-1);
    if (rows.length < pageSize || !last) return;
    before = { date: last.createDate, seq: last.seq };
  }
}
