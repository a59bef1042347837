import { type Static, Type } from "typebox";
import { DateTime, nullable, wireObject } from "../http/schema-types.js";
import { EVENT_TYPES } from "./catalog.js";

export const Event = wireObject(
  {
    id: Type.String({ description: "The event's id (evt_…); a webhook delivery's webhook-id" }),
    type: Type.String({ enum: EVENT_TYPES, description: "What happened: one of the event catalog's types" }),
    create_date: DateTime,
    resource: wireObject({
      type: Type.String({ description: "The kind of resource: supporter, campaign, donation, payment, …" }),
      id: nullable(Type.Integer({ minimum: 1 })),
    }),
    actor: wireObject(
      {
        type: Type.String({ enum: ["user", "application", "donor", "system"] }),
        id: nullable(Type.Integer({ minimum: 1, description: "The user's, application's or supporter's id" })),
      },
      "Who made the change: a member (user), an installed application, a donor, or the platform (system)",
    ),
    request: nullable(wireObject({ id: Type.String({ description: "The id of the request that made the change" }) })),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description: "The resource as GET returns it by id, when the event was recorded",
      },
    ),
    cursor: Type.String({ description: "This event's position: pass it as `after` to read what follows it" }),
  },
  "Something that changed in the organization",
);
export type EventWire = Static<typeof Event>;

export const EventList = wireObject(
  {
    items: Type.Array(Event),
    next_cursor: Type.String({
      description: "Where the next request starts (`after`): the last item's cursor, or the one given if none came",
    }),
    has_more: Type.Boolean({ description: "Whether more events follow now" }),
  },
  "Events in the order they were committed",
);

export const EventListQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        maxLength: 100,
        description: "A cursor from an earlier answer; without it, the oldest event kept (30 days by default)",
      }),
    ),
    type: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: "Only these types, comma-separated (e.g. payment.paid,payment.refunded)",
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: "Page size" }),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;
