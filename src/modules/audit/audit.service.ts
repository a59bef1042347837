import type { Actor } from "../../auth/actor.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { type AuditEventRow, insertAuditEvent, listAuditEvents } from "./audit.repo.js";

/** Who made a change, as the audit log keeps it: the user (when one acted) and a label that outlives them. */
export interface AuditActor {
  userId: number | null;
  label: string;
}

/** The operator at the command line (`donata …`): no user, the label "cli". */
export const CLI_AUDIT_ACTOR: AuditActor = { userId: null, label: "cli" };

export function auditActorOf(actor: Actor): AuditActor {
  return actor.kind === "member"
    ? { userId: actor.userId, label: actor.email }
    : { userId: null, label: `application ${actor.applicationId}` };
}

/**
 * Records a change in the organization's audit log, in the caller's transaction so the change and its
 * record commit together. Details must never hold a secret (only what the settings may show).
 */
export function recordAuditEvent(
  tx: Executor,
  event: { organizationId: number; actor: AuditActor; action: string; details: Record<string, unknown> },
) {
  return insertAuditEvent(tx, {
    organizationId: event.organizationId,
    actorUserId: event.actor.userId,
    actor: event.actor.label,
    action: event.action,
    details: event.details,
  });
}

const MODE_WORDS: Record<string, string> = { test: "test mode", live: "live mode" };

/** One sentence a person reads in the change history, from the event's action and details. */
export function describeAuditEvent(action: string, details: Record<string, unknown>): string {
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

export function auditEventToWire(row: AuditEventRow) {
  const details = row.details as Record<string, unknown>;
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    actor: row.actor,
    actor_user_id: row.actorUserId,
    action: row.action,
    description: describeAuditEvent(row.action, details),
    details: Object.entries(details).map(([name, value]) => ({ name, value: String(value) })),
  };
}

export type AuditEventWire = ReturnType<typeof auditEventToWire>;

export const MAX_AUDIT_PAGE = 100;

/** The newest `first` events of the organization (1–100). */
export async function listAudit(db: Db, organizationId: number, first = 20) {
  if (!Number.isInteger(first) || first < 1 || first > MAX_AUDIT_PAGE) {
    throw new AppError("invalid_request", `Invalid first: use 1 to ${MAX_AUDIT_PAGE}`, {
      errors: [{ field: "first", message: `use 1 to ${MAX_AUDIT_PAGE}` }],
    });
  }
  return (await listAuditEvents(db, organizationId, first)).map(auditEventToWire);
}
