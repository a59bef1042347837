import { type Static, Type } from "typebox";
import { EVENT_TYPES } from "../../events/catalog.js";
import { DateTime, Id, nullable, wireObject } from "../../http/schema-types.js";

const EventTypes = Type.Array(Type.String({ maxLength: 100 }), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  description:
    'Event types sent to the endpoint (see the event catalog), or ["*"]: every type the application may read',
});

export const WebhookEndpoint = wireObject(
  {
    id: Id,
    create_date: DateTime,
    update_date: DateTime,
    url: Type.String({ description: "Where deliveries are POSTed (https)" }),
    description: nullable(Type.String()),
    event_types: Type.Array(Type.String()),
    status: Type.String({
      enum: ["enabled", "paused", "disabled"],
      description:
        "enabled: delivered to; paused: a member of the organization paused it, deliveries wait; disabled: by the application, or after failing for 5 days (nothing is queued for it)",
    }),
    disabled_reason: nullable(Type.String()),
    previous_secret_expire_date: nullable(
      Type.String({ format: "date-time", description: "Until then the secret before the last rotation signs too" }),
    ),
  },
  "Where an installed application receives the organization's events",
);
export type WebhookEndpointWire = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = wireObject(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({ description: "The signing secret (whsec_…): shown this once, store it" }),
  },
  "A webhook endpoint with its new signing secret",
);

export const WebhookEndpointList = wireObject({ items: Type.Array(WebhookEndpoint) }, "The application's endpoints");

export const WebhookEndpointCreate = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    event_types: EventTypes,
    description: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);
export type WebhookEndpointCreate = Static<typeof WebhookEndpointCreate>;

export const WebhookEndpointUpdate = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
    status: Type.Optional(
      Type.String({
        enum: ["enabled", "disabled"],
        description:
          "disabled stops deliveries; enabled starts them again from the next event (a paused endpoint stays paused)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookEndpointUpdate = Static<typeof WebhookEndpointUpdate>;

export const WebhookAttempt = wireObject({
  attempt: Type.Integer({ minimum: 1 }),
  create_date: DateTime,
  status: nullable(Type.Integer({ description: "The HTTP status of the answer; null when none came" })),
  duration_ms: Type.Integer({ minimum: 0 }),
  response: nullable(Type.String({ description: "The first kilobyte of the answer's body" })),
  error: nullable(
    Type.String({ description: "Why the attempt failed without an answer, or why its answer did not count" }),
  ),
});

export const WebhookDelivery = wireObject(
  {
    id: Id,
    create_date: DateTime,
    event: wireObject({
      id: Type.String({ description: "The event's id: the delivery's webhook-id" }),
      type: Type.String(),
    }),
    state: Type.String({
      enum: ["pending", "sending", "succeeded", "failed"],
      description:
        "pending: waiting for its next attempt; sending: under way; succeeded: answered 2xx; failed: given up",
    }),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_date: nullable(DateTime),
    last_status: nullable(Type.Integer()),
    last_error: nullable(Type.String()),
    delivered_date: nullable(DateTime),
    attempt_log: Type.Array(WebhookAttempt),
  },
  "One event sent to one endpoint, and each attempt",
);
export type WebhookDeliveryWire = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = wireObject(
  {
    items: Type.Array(WebhookDelivery),
    has_more: Type.Boolean(),
    next_before: nullable(Type.Integer({ description: "Pass as `before` for the next (older) page" })),
  },
  "An endpoint's deliveries, newest first",
);

export const WebhookDeliveryListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    before: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Only deliveries older than this id" }),
    ),
    state: Type.Optional(Type.String({ enum: ["pending", "sending", "succeeded", "failed"] })),
  },
  { additionalProperties: false },
);
export type WebhookDeliveryListQuery = Static<typeof WebhookDeliveryListQuery>;

export const WebhookResend = Type.Object(
  {
    since: Type.String({
      format: "date-time",
      description: "Every event of the endpoint's types since then is sent again",
    }),
  },
  { additionalProperties: false },
);

export const WebhookResendResult = wireObject({ queued: Type.Integer({ minimum: 0 }) });
