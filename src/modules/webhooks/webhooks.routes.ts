import type { FastifyInstance, FastifyReply } from "fastify";
import { Type } from "typebox";
import type { Db } from "../../db/client.js";
import { requireToken } from "../../http/auth.js";
import { parseIdempotencyKey } from "../../http/idempotency.js";
import { ProblemResponses } from "../../http/problem-schema.js";
import {
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointList,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
  WebhookResend,
  WebhookResendResult,
} from "./webhooks.schemas.js";
import {
  createWebhookEndpoint,
  deleteOwnWebhookEndpoint,
  getWebhookEndpoint,
  listOwnDeliveries,
  listOwnWebhookEndpoints,
  resendOwnSince,
  retryOwnDelivery,
  rotateWebhookSecret,
  updateOwnWebhookEndpoint,
  type WebhookDeps,
} from "./webhooks.service.js";

const EndpointId = Type.Object({ id: Type.String({ maxLength: 40, description: "Id of the webhook endpoint" }) });
const tags = ["webhook_endpoints"];
const IdempotencyHeader = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description:
        "1 to 255 printable characters, e.g. a UUID per attempt: a retry with the same key answers the first outcome " +
        "(the same secret, header Idempotent-Replayed: true) and changes nothing; the same key with another body is a 422",
    }),
  ),
});

function sendOutcome(reply: FastifyReply, outcome: { status: number; replayed: boolean; body: unknown }) {
  if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
  return reply.code(outcome.status).send(outcome.body);
}
const security = [{ oauth2: [] }];

/**
 * An installed application's webhook endpoints, managed with its own token: each application sees
 * and changes only its own. The event types it asks for need the read permission of their resource.
 */
export function webhookRoutes(app: FastifyInstance, db: Db, deps: WebhookDeps) {
  const preHandler = requireToken(db, null);
  app.post(
    "/api/v1/webhook_endpoints/",
    {
      preHandler,
      schema: {
        operationId: "create_webhook_endpoint",
        tags,
        summary: "Create a webhook endpoint",
        description:
          "Events of the types named are POSTed to the URL from now on, signed (Standard Webhooks) with the " +
          "secret in the answer: it is shown this once. The URL must be https and resolve to a public address.",
        security,
        headers: IdempotencyHeader,
        body: WebhookEndpointCreate,
        response: { 201: WebhookEndpointWithSecret, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      sendOutcome(
        reply,
        await createWebhookEndpoint(
          db,
          deps,
          request.auth,
          request.body as WebhookEndpointCreate,
          parseIdempotencyKey(request.headers["idempotency-key"]),
        ),
      ),
  );
  app.get(
    "/api/v1/webhook_endpoints/",
    {
      preHandler,
      schema: {
        operationId: "list_webhook_endpoints",
        tags,
        summary: "List the application's webhook endpoints",
        security,
        response: { 200: WebhookEndpointList, ...ProblemResponses },
      },
    },
    (request) => listOwnWebhookEndpoints(db, request.auth),
  );
  app.get(
    "/api/v1/webhook_endpoints/:id",
    {
      preHandler,
      schema: {
        operationId: "retrieve_webhook_endpoint",
        tags,
        summary: "Retrieve a webhook endpoint",
        security,
        params: EndpointId,
        response: { 200: WebhookEndpoint, ...ProblemResponses },
      },
    },
    (request) => getWebhookEndpoint(db, request.auth, (request.params as { id: string }).id),
  );
  app.patch(
    "/api/v1/webhook_endpoints/:id",
    {
      preHandler,
      schema: {
        operationId: "update_webhook_endpoint",
        tags,
        summary: "Update a webhook endpoint",
        description:
          "Only the fields sent change. `status: disabled` stops deliveries (waiting ones fail); `enabled` starts " +
          "them again from the next event. A member's pause is lifted by a member only.",
        security,
        params: EndpointId,
        body: WebhookEndpointUpdate,
        response: { 200: WebhookEndpoint, ...ProblemResponses },
      },
    },
    (request) =>
      updateOwnWebhookEndpoint(
        db,
        deps,
        request.auth,
        (request.params as { id: string }).id,
        request.body as WebhookEndpointUpdate,
      ),
  );
  app.delete(
    "/api/v1/webhook_endpoints/:id",
    {
      preHandler,
      schema: {
        operationId: "delete_webhook_endpoint",
        tags,
        summary: "Delete a webhook endpoint",
        description: "Its deliveries and their log go with it.",
        security,
        params: EndpointId,
        response: { 204: Type.Null({ description: "Deleted" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      await deleteOwnWebhookEndpoint(db, request.auth, (request.params as { id: string }).id);
      return reply.code(204).send();
    },
  );
  app.post(
    "/api/v1/webhook_endpoints/:id/rotate_secret",
    {
      preHandler,
      schema: {
        operationId: "rotate_webhook_endpoint_secret",
        tags,
        summary: "Rotate a webhook endpoint's signing secret",
        description:
          "A new secret, shown this once. For 24 hours deliveries carry two signatures, one with each secret, " +
          "so a receiver verifies with either while it switches.",
        security,
        headers: IdempotencyHeader,
        params: EndpointId,
        response: { 200: WebhookEndpointWithSecret, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      sendOutcome(
        reply,
        await rotateWebhookSecret(
          db,
          deps,
          request.auth,
          (request.params as { id: string }).id,
          parseIdempotencyKey(request.headers["idempotency-key"]),
        ),
      ),
  );
  app.get(
    "/api/v1/webhook_endpoints/:id/deliveries",
    {
      preHandler,
      schema: {
        operationId: "list_webhook_deliveries",
        tags,
        summary: "List an endpoint's deliveries",
        description: "Newest first, each with its attempts: status, duration and the first kilobyte of the answer.",
        security,
        params: EndpointId,
        querystring: WebhookDeliveryListQuery,
        response: { 200: WebhookDeliveryList, ...ProblemResponses },
      },
    },
    (request) =>
      listOwnDeliveries(
        db,
        request.auth,
        (request.params as { id: string }).id,
        request.query as WebhookDeliveryListQuery,
      ),
  );
  app.post(
    "/api/v1/webhook_endpoints/:id/deliveries/:delivery_id/retry",
    {
      preHandler,
      schema: {
        operationId: "retry_webhook_delivery",
        tags,
        summary: "Send a delivery again now",
        description: "The same event under the same webhook-id; a delivery under way is a 409.",
        security,
        params: Type.Object({
          id: Type.String({ maxLength: 40, description: "Id of the webhook endpoint" }),
          delivery_id: Type.String({ maxLength: 40, description: "Id of the delivery" }),
        }),
        response: { 200: WebhookDelivery, ...ProblemResponses },
      },
    },
    (request) => {
      const params = request.params as { id: string; delivery_id: string };
      return retryOwnDelivery(db, request.auth, params.id, params.delivery_id);
    },
  );
  app.post(
    "/api/v1/webhook_endpoints/:id/resend",
    {
      preHandler,
      schema: {
        operationId: "resend_webhook_events",
        tags,
        summary: "Send every event since a time again",
        description:
          "Each event of the endpoint's types recorded since `since` (and still kept) is queued again, in order; " +
          "receivers tell repeats by their webhook-id.",
        security,
        params: EndpointId,
        body: WebhookResend,
        response: { 200: WebhookResendResult, ...ProblemResponses },
      },
    },
    (request) =>
      resendOwnSince(
        db,
        request.auth,
        (request.params as { id: string }).id,
        (request.body as { since: string }).since,
      ),
  );
}
