import { invalidParameter } from "../../errors/app-error.js";
import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import type { WebhookDeliveryWire, WebhookEndpointWire } from "./webhooks.schemas.js";
import {
  listOrganizationWebhookEndpoints,
  organizationDeliveries,
  resendOrganizationSince,
  retryOrganizationDelivery,
  setWebhookEndpointPaused,
} from "./webhooks.service.js";

type EndpointOfApplication = WebhookEndpointWire & { application?: { id: number; name: string } };

const WebhookAttemptType = builder.objectRef<WebhookDeliveryWire["attempt_log"][number]>("WebhookAttempt").implement({
  description: "One attempt of a delivery",
  fields: (t) => ({
    attempt: t.exposeInt("attempt"),
    create_date: t.exposeString("create_date"),
    status: t.exposeInt("status", { nullable: true, description: "The answer's HTTP status; null when none came" }),
    duration_ms: t.exposeInt("duration_ms"),
    response: t.exposeString("response", { nullable: true, description: "The first kilobyte of the answer" }),
    error: t.exposeString("error", { nullable: true }),
  }),
});

const WebhookDeliveryType = builder.objectRef<WebhookDeliveryWire>("WebhookDelivery").implement({
  description: "One event sent to one endpoint, with each attempt",
  fields: (t) => ({
    id: t.exposeInt("id"),
    create_date: t.exposeString("create_date"),
    event_id: t.string({ description: "The event's id: the webhook-id", resolve: (delivery) => delivery.event.id }),
    event_type: t.string({ resolve: (delivery) => delivery.event.type }),
    state: t.exposeString("state", { description: "pending, sending, succeeded or failed" }),
    attempts: t.exposeInt("attempts"),
    next_attempt_date: t.exposeString("next_attempt_date", { nullable: true }),
    last_status: t.exposeInt("last_status", { nullable: true }),
    last_error: t.exposeString("last_error", { nullable: true }),
    delivered_date: t.exposeString("delivered_date", { nullable: true }),
    attempt_log: t.field({ type: [WebhookAttemptType], resolve: (delivery) => delivery.attempt_log }),
  }),
});

const WebhookDeliveryPageType = builder
  .objectRef<{ items: WebhookDeliveryWire[]; has_more: boolean; next_before: number | null }>("WebhookDeliveryPage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [WebhookDeliveryType], resolve: (page) => page.items }),
      has_more: t.exposeBoolean("has_more"),
      next_before: t.exposeInt("next_before", { nullable: true, description: "Pass as `before` for older ones" }),
    }),
  });

const WebhookEndpointType = builder.objectRef<EndpointOfApplication>("WebhookEndpoint").implement({
  description: "Where an installed application receives the organization's events",
  fields: (t) => ({
    id: t.exposeInt("id"),
    create_date: t.exposeString("create_date"),
    update_date: t.exposeString("update_date"),
    url: t.exposeString("url"),
    description: t.exposeString("description", { nullable: true }),
    event_types: t.exposeStringList("event_types"),
    status: t.exposeString("status", { description: "enabled, paused (by a member) or disabled" }),
    disabled_reason: t.exposeString("disabled_reason", { nullable: true }),
    application_id: t.int({ nullable: true, resolve: (endpoint) => endpoint.application?.id ?? null }),
    application_name: t.string({ nullable: true, resolve: (endpoint) => endpoint.application?.name ?? null }),
    deliveries: t.field({
      type: WebhookDeliveryPageType,
      description: "Its deliveries, newest first",
      args: {
        first: t.arg.int({ description: "1 to 100; default 20" }),
        before: t.arg.int({ description: "The previous page's next_before" }),
        state: t.arg.string({ description: "pending, sending, succeeded or failed" }),
      },
      resolve: (endpoint, args, context) => {
        const first = args.first ?? 20;
        if (!Number.isInteger(first) || first < 1 || first > 100) throw invalidParameter("first", "must be 1 to 100");
        return organizationDeliveries(context.db, context.scope.organizationId, String(endpoint.id), {
          limit: first,
          before: args.before ?? undefined,
          state: args.state ?? undefined,
        });
      },
    }),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    type: [WebhookEndpointType],
    description: "Every installed application's webhook endpoints (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:read");
      return listOrganizationWebhookEndpoints(context.db, context.scope.organizationId);
    },
  }),
}));

builder.mutationFields((t) => ({
  pauseWebhookEndpoint: t.field({
    type: WebhookEndpointType,
    description: "Holds an endpoint's deliveries (none is lost) until it is resumed. Owners and admins only.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return setWebhookEndpointPaused(context.db, context.scope, String(args.id), true);
    },
  }),
  resumeWebhookEndpoint: t.field({
    type: WebhookEndpointType,
    description:
      "Sends a paused endpoint's held deliveries, in order, and the ones that follow. Owners and admins only.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return setWebhookEndpointPaused(context.db, context.scope, String(args.id), false);
    },
  }),
  retryWebhookDelivery: t.field({
    type: WebhookDeliveryType,
    description: "Sends one delivery again now, under the same webhook-id. Owners and admins only.",
    args: { endpoint_id: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => {
      authorize(context, "organization:manage");
      return retryOrganizationDelivery(
        context.db,
        context.scope.organizationId,
        String(args.endpoint_id),
        String(args.id),
      );
    },
  }),
  resendWebhookEvents: t.field({
    type: "Int",
    description:
      "Queues again every event of the endpoint's types since a date-time; how many. Owners and admins only.",
    args: { endpoint_id: t.arg.id({ required: true }), since: t.arg.string({ required: true }) },
    resolve: async (_root, args, context) => {
      authorize(context, "organization:manage");
      const result = await resendOrganizationSince(
        context.db,
        context.scope.organizationId,
        String(args.endpoint_id),
        args.since,
      );
      return result.queued;
    },
  }),
}));
