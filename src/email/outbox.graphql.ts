import { can } from "../auth/actor.js";
import { builder } from "../graphql/builder.js";
import { authorize, type GraphQLContext } from "../graphql/context.js";
import { issueStatementsWithoutEmail } from "../modules/receipts/receipts.service.js";
import { SupporterType } from "../modules/supporters/supporters.graphql.js";
import { EMAIL_KINDS } from "./outbox.repo.js";
import {
  cancelOutboxMessage,
  listOutbox,
  MAX_OUTBOX_PAGE,
  MAX_RECIPIENT_SEARCH,
  OUTBOX_STATES,
  type OutboxMessageWire,
  previewEmail,
  retrieveOutboxMessage,
  retryOutboxMessage,
} from "./outbox-admin.service.js";
import { renderDepsOf } from "./render.js";
import { checkStatementYear, type StatementCounts, sendStatements } from "./statements.service.js";

/** A captured message's sign-in link is for those who may manage the organization (owners, admins). */
const readerOf = (context: GraphQLContext) => ({ showsLinks: can(context.actor, "organization:manage") });

const EmailHeaderType = builder.objectRef<{ name: string; value: string }>("EmailHeader").implement({
  fields: (t) => ({ name: t.exposeString("name"), value: t.exposeString("value") }),
});

export const OutboxMessageType = builder.objectRef<OutboxMessageWire>("OutboxMessage").implement({
  description:
    "An email the platform sent, captured (no SMTP_URL) or will send; subject, bodies and headers are filled in when it is delivered",
  fields: (t) => ({
    id: t.exposeInt("id"),
    kind: t.exposeString("kind", { description: EMAIL_KINDS.join(", ") }),
    to: t.exposeString("to"),
    state: t.exposeString("state", { description: OUTBOX_STATES.join(", ") }),
    attempts: t.exposeInt("attempts", { description: "Delivery attempts so far" }),
    next_attempt_date: t.exposeString("next_attempt_date", {
      nullable: true,
      description: "When it is (next) tried; null once it left the queue",
    }),
    last_error: t.exposeString("last_error", {
      nullable: true,
      description: "The mail server's answer to the last failed attempt",
    }),
    subject: t.exposeString("subject", { nullable: true }),
    html: t.exposeString("html", {
      nullable: true,
      description:
        "The HTML part as sent (render it sandboxed); donor portal links read dnt_dl_redacted, except in a captured " +
        "message read by an owner or admin",
    }),
    text: t.exposeString("text", { nullable: true, description: "The plain text part (links as in html)" }),
    headers: t.field({ type: [EmailHeaderType], resolve: (message) => message.headers }),
    message_id: t.exposeString("message_id", { nullable: true }),
    sent_date: t.exposeString("sent_date", { nullable: true, description: "When it was sent or captured" }),
    create_date: t.exposeString("create_date"),
    update_date: t.exposeString("update_date"),
    supporter_id: t.exposeInt("supporter_id", { nullable: true }),
    donation_id: t.exposeInt("donation_id", { nullable: true }),
    supporter: t.field({
      type: SupporterType,
      nullable: true,
      resolve: (message, _args, context) =>
        message.supporter_id === null ? null : context.loaders.supporter.load(message.supporter_id),
    }),
  }),
});

const OutboxPageType = builder
  .objectRef<{ items: OutboxMessageWire[]; count: number; has_more: boolean; end_cursor: string | null }>(
    "OutboxMessagePage",
  )
  .implement({
    description: "A page of the Outbox, newest first",
    fields: (t) => ({
      items: t.field({ type: [OutboxMessageType], resolve: (page) => page.items }),
      count: t.exposeInt("count", { description: "Messages under the same filters, every page" }),
      has_more: t.exposeBoolean("has_more"),
      end_cursor: t.exposeString("end_cursor", {
        nullable: true,
        description: "Pass as `after` for the next page; null on the last",
      }),
    }),
  });

builder.queryFields((t) => ({
  outboxMessages: t.field({
    type: OutboxPageType,
    description: "The organization's emails, newest first (members only; applications are refused)",
    args: {
      first: t.arg.int({ description: `1 to ${MAX_OUTBOX_PAGE}; default 20` }),
      after: t.arg.string({ description: "The end_cursor of the previous page" }),
      state: t.arg.string({ description: OUTBOX_STATES.join(", ") }),
      kind: t.arg.string({ description: EMAIL_KINDS.join(", ") }),
      supporter_id: t.arg.int(),
      recipient: t.arg.string({
        description: `Part of the recipient's address, any case (1 to ${MAX_RECIPIENT_SEARCH} characters): ada@, @example.org`,
      }),
    },
    resolve: (_root, args, context) => {
      authorize(context, "organization:read");
      return listOutbox(context.db, context.scope.organizationId, args, readerOf(context));
    },
  }),
  outboxMessage: t.field({
    type: OutboxMessageType,
    nullable: true,
    description: "One email by id; null when the organization has none with that id (members only)",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:read");
      return retrieveOutboxMessage(context.db, context.scope.organizationId, String(args.id), readerOf(context));
    },
  }),
}));

const EmailDeliveryType = builder.objectRef<{ delivered: boolean; production: boolean }>("EmailDelivery").implement({
  description: "Whether this server sends email (the panel warns when a production server does not)",
  fields: (t) => ({
    delivered: t.exposeBoolean("delivered", {
      description: "SMTP_URL is set: messages are sent. Otherwise they are only captured in the Outbox",
    }),
    production: t.exposeBoolean("production", { description: "The server runs with NODE_ENV=production" }),
  }),
});

builder.queryField("emailDelivery", (t) =>
  t.field({
    type: EmailDeliveryType,
    description: "Whether donors get the emails in the Outbox, or they are only captured (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:read");
      return { delivered: Boolean(context.config.smtpUrl), production: context.config.production };
    },
  }),
);

const EmailPreviewType = builder
  .objectRef<{ kind: string; subject: string; html: string; text: string }>("EmailPreview")
  .implement({
    description: "A message rendered over sample data with the organization's name, logo and reply-to",
    fields: (t) => ({
      kind: t.exposeString("kind"),
      subject: t.exposeString("subject"),
      html: t.exposeString("html", { description: "Render it sandboxed" }),
      text: t.exposeString("text"),
    }),
  });

builder.queryField("emailPreview", (t) =>
  t.field({
    type: EmailPreviewType,
    description: "How a kind of email looks with sample data (members only)",
    args: {
      kind: t.arg.string({ required: true, description: EMAIL_KINDS.join(", ") }),
      locale: t.arg.string({ description: "en or it; default the organization's language" }),
    },
    resolve: (_root, args, context) => {
      authorize(context, "organization:read");
      return previewEmail(context.db, context.scope.organizationId, args, renderDepsOf(context.config));
    },
  }),
);

builder.mutationFields((t) => ({
  retryOutboxMessage: t.field({
    type: OutboxMessageType,
    description: "Puts a failed email back in the queue, due now (its attempts are kept). Owners and admins only.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return retryOutboxMessage(context.db, context.scope.organizationId, String(args.id));
    },
  }),
  cancelOutboxMessage: t.field({
    type: OutboxMessageType,
    description: "Cancels an email still queued: it is never sent. Owners and admins only.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return cancelOutboxMessage(context.db, context.scope.organizationId, String(args.id));
    },
  }),
}));

const StatementRunType = builder.objectRef<StatementCounts>("StatementRun").implement({
  description: "What a yearly statement run did; running it again queues nothing twice",
  fields: (t) => ({
    year: t.exposeInt("year"),
    supporters: t.exposeInt("supporters", { description: "Supporters with a payment received in the year" }),
    queued: t.exposeInt("queued", { description: "Statements this run put in the outbox" }),
    already_sent: t.exposeInt("already_sent", { description: "Statements an earlier run already queued" }),
    skipped_no_email: t.exposeInt("skipped_no_email", { description: "Supporters without an email (or erased)" }),
  }),
});

/** The walks issuing statements after an answer, by organization and year (this process's). */
const issuingStatements = new Set<string>();

builder.mutationField("sendStatements", (t) =>
  t.field({
    type: StatementRunType,
    description:
      "Queues the yearly statement of every supporter who gave in the year (organization's time zone), in batches; " +
      "resumable and never twice per supporter and year; once answered, it issues the statements of the donors without " +
      "an email (same as `donata statements send`; use that command past " +
      "about 20,000 supporters, which one request cannot walk). Owners and admins only.",
    args: { year: t.arg.int({ required: true, description: "2000 to the current year" }) },
    resolve: async (_root, args, context) => {
      authorize(context, "organization:manage");
      checkStatementYear(args.year, context.scope.timeZone);
      // Each donor's statement is issued when its email is delivered (the worker; see statement.ts); the
      // statements of donors without an email once this answer is sent: issuing them within the request
      // would not fit its statement budget. The CLI issues them all first.
      const counts = await sendStatements(context.db, {
        organizationId: context.scope.organizationId,
        year: args.year,
        // Few, large batches: a request may run GRAPHQL_MAX_STATEMENTS (100) statements, ~4 per batch.
        batchSize: 1000,
        origin: context.scope.origin,
      });
      const { db, scope } = context;
      const run = `${scope.organizationId}:${args.year}`;
      // One walk per organization and year at a time: a second click while it runs adds nothing.
      if (!issuingStatements.has(run)) {
        issuingStatements.add(run);
        context.afterResponse(async () => {
          try {
            await issueStatementsWithoutEmail(db, scope.organizationId, args.year, scope.origin);
          } finally {
            issuingStatements.delete(run);
          }
        });
      }
      return counts;
    },
  }),
);
