/**
 * The audit log's "What" filter: the kinds of record a change is about (the URL's `action`, English
 * and stable), their label's key, and the event types of each (what the filter asks for). Every type
 * of the events catalog (src/events/catalog.ts) is in a group: test/audit-actions.test.ts checks it.
 */
export const AUDIT_ACTIONS: [string, string, string[]][] = [
  [
    "Supporters",
    "panel.audit.action.supporters",
    [
      "supporter.created",
      "supporter.updated",
      "supporter.merged",
      "supporter.erased",
      "supporter.exported",
      "supporters.imported",
      "supporter_note.created",
      "supporter_note.deleted",
    ],
  ],
  ["Segments", "panel.audit.action.segments", ["segment.created", "segment.updated", "segment.deleted"]],
  ["Campaigns", "panel.audit.action.campaigns", ["campaign.created", "campaign.updated"]],
  ["Checkouts", "panel.audit.action.checkouts", ["checkout.completed"]],
  ["Donations", "panel.audit.action.donations", ["donation.created", "donation.updated", "donations.imported"]],
  ["Refunds", "panel.audit.action.refunds", ["payment.refunded"]],
  [
    "Payments",
    "panel.audit.action.payments",
    ["payment.created", "payment.paid", "payment.failed", "payment.refunded", "payment.disputed"],
  ],
  ["Receipts", "panel.audit.action.receipts", ["receipt.issued", "receipt.voided", "statements.sent"]],
  ["Members", "panel.audit.action.members", ["membership.created", "membership.updated", "membership.deleted"]],
  [
    "Accounts",
    "panel.audit.action.accounts",
    [
      "user.password_changed",
      "user.session_ended",
      "user.second_factor_added",
      "user.second_factor_removed",
      "user.recovery_codes_regenerated",
    ],
  ],
  [
    "Applications",
    "panel.audit.action.applications",
    [
      "application.installed",
      "application.uninstalled",
      "application.created",
      "application.updated",
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.deleted",
    ],
  ],
  [
    "Settings",
    "panel.audit.action.settings",
    [
      "organization.updated",
      "payment_settings.updated",
      "email_settings.updated",
      "legal_profile.updated",
      "audit.legacy",
    ],
  ],
];
