import type { Permission } from "../auth/permissions.js";

/**
 * The closed catalog of what can happen to an organization's data: every event the platform records
 * has one of these types, like the error codes. Each names the kind of resource it is about and the
 * permission an application needs to read it (null: members only, never an application). The
 * catalog is the contract of the events feed and of webhooks: a type is added here or nowhere.
 */
export const EVENT_CATALOG = {
  "checkout.completed": {
    resource: "checkout",
    permission: "checkouts:read",
    description: "A donor completed a checkout: its donation and first payment exist",
  },
  "donation.created": { resource: "donation", permission: "donations:read", description: "A donation was created" },
  "donation.updated": {
    resource: "donation",
    permission: "donations:read",
    description: "A donation changed: its state (active, past_due, revoked, …), amount, frequency or pause",
  },
  "payment.created": { resource: "payment", permission: "payments:read", description: "A payment was created" },
  "payment.paid": { resource: "payment", permission: "payments:read", description: "A payment was paid" },
  "payment.failed": { resource: "payment", permission: "payments:read", description: "A payment failed" },
  "payment.refunded": {
    resource: "payment",
    permission: "payments:read",
    description: "A payment was refunded, in full or in part",
  },
  "payment.disputed": {
    resource: "payment",
    permission: "payments:read",
    description: "A payment's donor disputed it with their bank, or the dispute was decided",
  },
  "supporter.created": { resource: "supporter", permission: "supporters:read", description: "A supporter was created" },
  "supporter.updated": {
    resource: "supporter",
    permission: "supporters:read",
    description: "A supporter's details changed",
  },
  "supporter.merged": {
    resource: "supporter",
    permission: "supporters:read",
    description:
      "Another supporter was merged into this one (changes.merged_id: its id, which now answers 404): their gifts, consents and notes are this one's",
  },
  "supporter.erased": {
    resource: "supporter",
    permission: "supporters:read",
    description: "A supporter's personal data was erased (the event carries none of it)",
  },
  "campaign.created": { resource: "campaign", permission: "campaigns:read", description: "A campaign was created" },
  "campaign.updated": {
    resource: "campaign",
    permission: "campaigns:read",
    description: "A campaign changed, or was archived",
  },
  "application.installed": {
    resource: "installation",
    permission: null,
    description: "An application was installed in the organization",
  },
  "application.uninstalled": {
    resource: "installation",
    permission: null,
    description: "An application was uninstalled from the organization",
  },
  "membership.created": { resource: "membership", permission: null, description: "A person joined the organization" },
  "membership.updated": { resource: "membership", permission: null, description: "A member's role changed" },
  "membership.deleted": { resource: "membership", permission: null, description: "A member left the organization" },
  "organization.updated": {
    resource: "organization",
    permission: null,
    description: "The organization's settings changed (the fields before and after)",
  },
  "payment_settings.updated": {
    resource: "organization",
    permission: null,
    description: "The payment settings changed: a processor connected, replaced or disconnected, test mode",
  },
  "legal_profile.updated": {
    resource: "organization",
    permission: null,
    description: "The organization's legal profile changed (the fields before and after): what its receipts print",
  },
  "receipt.issued": {
    resource: "receipt",
    permission: "donations:read",
    description: "A receipt was issued: numbered, for a paid payment or a donor's year",
  },
  "receipt.voided": {
    resource: "receipt",
    permission: "donations:read",
    description:
      "A receipt was voided: its payment was refunded (a new one follows for what is left of a partial refund)",
  },
  "email_settings.updated": {
    resource: "organization",
    permission: null,
    description: "The email settings changed (the fields before and after)",
  },
  "statements.sent": {
    resource: "organization",
    permission: null,
    description: "A member sent the yearly statements (how many were queued, already sent, without an email)",
  },
  "supporters.imported": {
    resource: "organization",
    permission: null,
    description:
      "A member imported supporters from a file (its name, the preset, how many rows were created, updated, unchanged and refused)",
  },
  "donations.imported": {
    resource: "organization",
    permission: null,
    description:
      "A member imported gift history from a file (its name, the preset, how many rows were created, updated, unchanged and refused, the campaigns it created)",
  },
  "supporter_note.created": {
    resource: "supporter",
    permission: null,
    description: "A note about a supporter was written (who wrote it; never its words)",
  },
  "supporter_note.deleted": {
    resource: "supporter",
    permission: null,
    description: "A note about a supporter was deleted (who had written it; never its words)",
  },
  "segment.created": {
    resource: "segment",
    permission: null,
    description: "A member saved a segment: a named set of a table's filters",
  },
  "segment.updated": {
    resource: "segment",
    permission: null,
    description: "A saved segment was renamed or its filters changed (the fields before and after)",
  },
  "segment.deleted": {
    resource: "segment",
    permission: null,
    description: "A saved segment was deleted",
  },
  "user.password_changed": {
    resource: "user",
    permission: null,
    description:
      "A member's password changed (method: change, on their account page with the current one; reset, by a one-time link); recorded in each of their organizations",
  },
  "user.session_ended": {
    resource: "user",
    permission: null,
    description:
      "A member ended sessions of theirs on their account page (ended: one, current or others; each session's device and address, never its token); recorded in each of their organizations",
  },
  "user.second_factor_added": {
    resource: "user",
    permission: null,
    description:
      "A member added a second factor (kind: totp, or passkey with its id and name; never a secret); recorded in each of their organizations",
  },
  "user.second_factor_removed": {
    resource: "user",
    permission: null,
    description:
      "A member removed a second factor (kind: totp, or passkey with its id and name), or an operator removed them all (`donata user reset-second-factor`, actor cli); recorded in each of their organizations",
  },
  "user.recovery_codes_regenerated": {
    resource: "user",
    permission: null,
    description:
      "A member made ten new recovery codes (never the codes themselves): the old ones stopped working; recorded in each of their organizations",
  },
  "supporter.exported": {
    resource: "supporter",
    permission: null,
    description: "A supporter's data was exported (a data subject access request)",
  },
  "application.created": {
    resource: "application",
    permission: null,
    description: "The organization registered an application of its own",
  },
  "application.updated": {
    resource: "application",
    permission: null,
    description: "An application of the organization's changed, or its client secret was rotated",
  },
  "webhook_endpoint.created": {
    resource: "webhook_endpoint",
    permission: null,
    description: "An application added a webhook endpoint",
  },
  "webhook_endpoint.updated": {
    resource: "webhook_endpoint",
    permission: null,
    description:
      "A webhook endpoint changed: its address or event types, paused or resumed by a member, disabled after failing, or its secret rotated",
  },
  "webhook_endpoint.deleted": {
    resource: "webhook_endpoint",
    permission: null,
    description: "An application removed a webhook endpoint",
  },
  "audit.legacy": {
    resource: "organization",
    permission: null,
    description: "A change the audit log recorded before the events record existed, kept as it was",
  },
} as const satisfies Record<string, { resource: string; permission: Permission | null; description: string }>;

export type EventType = keyof typeof EVENT_CATALOG;
export type EventResource = (typeof EVENT_CATALOG)[EventType]["resource"];

export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

export const isEventType = (value: string): value is EventType => Object.hasOwn(EVENT_CATALOG, value);

/** The event types a holder of these permissions may read (applications: never the members-only ones). */
export function readableEventTypes(permissions: readonly string[]): EventType[] {
  return EVENT_TYPES.filter((type) => {
    const needed: Permission | null = EVENT_CATALOG[type].permission;
    return needed !== null && permissions.includes(needed);
  });
}
