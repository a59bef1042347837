import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { type AuditEntryWire, listAuditLog, MAX_AUDIT_PAGE } from "./audit.service.js";

const AuditChangeType = builder.objectRef<AuditEntryWire["changes"][number]>("AuditChange").implement({
  description: "One field an update changed, its values as JSON (a secret never: at most its last 4 characters)",
  fields: (t) => ({
    field: t.exposeString("field"),
    before: t.exposeString("before", { nullable: true }),
    after: t.exposeString("after", { nullable: true }),
  }),
});

const AuditEntryType = builder.objectRef<AuditEntryWire>("AuditEntry").implement({
  description: "One change in the audit log: what, who, when, from where",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The event's id (evt_…)" }),
    create_date: t.exposeString("create_date"),
    type: t.exposeString("type", { description: "The event type, e.g. payment.refunded" }),
    summary: t.exposeString("summary", { description: "The change in one sentence" }),
    resource_type: t.exposeString("resource_type"),
    resource_id: t.exposeInt("resource_id", { nullable: true }),
    actor_type: t.exposeString("actor_type", { description: "user, application, donor or system" }),
    actor_id: t.exposeInt("actor_id", { nullable: true }),
    actor_label: t.exposeString("actor_label", {
      description: "The member's email, `application <id>`, `donor`, or worker / cli / processor / platform",
    }),
    request_id: t.exposeString("request_id", { nullable: true }),
    ip: t.exposeString("ip", { nullable: true }),
    user_agent: t.exposeString("user_agent", { nullable: true }),
    changes: t.field({ type: [AuditChangeType], resolve: (entry) => entry.changes }),
  }),
});

const AuditLogPageType = builder
  .objectRef<{ items: AuditEntryWire[]; next_cursor: string | null; has_more: boolean }>("AuditLogPage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [AuditEntryType], resolve: (page) => page.items }),
      next_cursor: t.exposeString("next_cursor", {
        nullable: true,
        description: "Pass as `after` for the next, older page",
      }),
      has_more: t.exposeBoolean("has_more"),
    }),
  });

builder.queryFields((t) => ({
  auditLog: t.field({
    type: AuditLogPageType,
    description: "The organization's audit log, newest first: owners and admins only",
    args: {
      actor_type: t.arg.string({ description: "user, application, donor or system" }),
      actor_id: t.arg.int({ description: "The user's, application's or supporter's id" }),
      type: t.arg.stringList({ description: 'Event types, e.g. ["payment.refunded"]' }),
      resource_type: t.arg.string({ description: "supporter, campaign, donation, payment, …" }),
      resource_id: t.arg.int(),
      from: t.arg.string({ description: "From this date or date-time (ISO 8601), included" }),
      to: t.arg.string({ description: "Before this date or date-time (ISO 8601)" }),
      first: t.arg.int({ description: `1 to ${MAX_AUDIT_PAGE}; default 50` }),
      after: t.arg.string({ description: "The previous page's next_cursor" }),
    },
    resolve: (_root, args, context) => {
      authorize(context, "organization:audit");
      return listAuditLog(context.db, context.scope.organizationId, args, context.locale);
    },
  }),
}));
