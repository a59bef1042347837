import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import type { Db } from "../db/client.js";
import { requireToken } from "../http/auth.js";
import { ProblemResponses } from "../http/problem-schema.js";
import { Event, EventList, EventListQuery } from "./events.schemas.js";
import { getEvent, listEvents } from "./events.service.js";

/** The events feed: what changed, in commit order, for the types the token's permissions read. */
export function eventRoutes(app: FastifyInstance, db: Db) {
  const preHandler = requireToken(db, null);
  app.get(
    "/api/v1/events/",
    {
      preHandler,
      schema: {
        operationId: "list_events",
        tags: ["events"],
        summary: "List events after a cursor",
        description:
          "The organization's events in the order they were committed, of the types the token may read " +
          "(each type needs the read permission of its resource). Keep `next_cursor` and pass it as `after`: " +
          "every event comes exactly once. Events are kept 30 days by default; an older cursor answers 410.",
        security: [{ oauth2: [] }],
        querystring: EventListQuery,
        response: { 200: EventList, ...ProblemResponses },
      },
    },
    (request) => listEvents(db, request.auth, request.query as EventListQuery),
  );
  app.get(
    "/api/v1/events/:id",
    {
      preHandler,
      schema: {
        operationId: "retrieve_event",
        tags: ["events"],
        summary: "Retrieve an event",
        security: [{ oauth2: [] }],
        params: Type.Object({ id: Type.String({ description: "Id of the event (evt_…)" }) }),
        response: { 200: Event, ...ProblemResponses },
      },
    },
    (request) => getEvent(db, request.auth, (request.params as { id: string }).id),
  );
}
