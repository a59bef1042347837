import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { type AuditEventWire, listAudit, MAX_AUDIT_PAGE } from "./audit.service.js";

const AuditDetailType = builder.objectRef<{ name: string; value: string }>("AuditDetail").implement({
  fields: (t) => ({ name: t.exposeString("name"), value: t.exposeString("value") }),
});

const AuditEventType = builder.objectRef<AuditEventWire>("AuditEvent").implement({
  description: "A change to the organization's settings: who made it, when, and what (never a secret)",
  fields: (t) => ({
    id: t.exposeInt("id"),
    create_date: t.exposeString("create_date"),
    actor: t.exposeString("actor", { description: "The member's email, `application <id>`, or `cli`" }),
    actor_user_id: t.exposeInt("actor_user_id", { nullable: true }),
    action: t.exposeString("action", { description: "e.g. payments.stripe_connected" }),
    description: t.exposeString("description", { description: "The change in one sentence" }),
    details: t.field({ type: [AuditDetailType], resolve: (event) => event.details }),
  }),
});

builder.queryFields((t) => ({
  auditEvents: t.field({
    type: [AuditEventType],
    description: "The organization's audit log, newest first (members only)",
    args: { first: t.arg.int({ description: `1 to ${MAX_AUDIT_PAGE}; default 20` }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:read");
      return listAudit(context.db, context.scope.organizationId, args.first ?? 20);
    },
  }),
}));
