import type { FastifyInstance, FastifyRequest } from "fastify";
import { type TSchema, Type } from "typebox";
import type { Permission } from "../auth/permissions.js";
import type { Db } from "../db/client.js";
import { requireToken } from "./auth.js";
import { type Outcome, parseIdempotencyKey } from "./idempotency.js";
import { ProblemResponses } from "./problem-schema.js";

export interface WriteRoutes {
  /** Path segment under /api/v1/, e.g. "supporters". */
  collection: string;
  singular: string;
  permission: Permission;
  item: TSchema;
  createBody: TSchema;
  updateBody: TSchema;
  create(
    scope: FastifyRequest["auth"],
    body: unknown,
    idempotencyKey?: string,
  ): Promise<Outcome & { replayed: boolean }>;
  update(scope: FastifyRequest["auth"], id: string, body: unknown): Promise<unknown>;
}

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: Type.Ref("Problem") } },
});

/**
 * The writes of a collection over REST, through the same services as the GraphQL mutations:
 * `POST /api/v1/<collection>/` (201, `Idempotency-Key` replays the first answer: same key and body,
 * the same record; another body, 422) and `PATCH /api/v1/<collection>/{id}` (omitted fields stay).
 */
export function registerWriteRoutes(app: FastifyInstance, db: Db, routes: WriteRoutes) {
  const preHandler = requireToken(db, routes.permission);
  const security = [{ oauth2: [routes.permission] }];
  app.post(
    `/api/v1/${routes.collection}/`,
    {
      preHandler,
      schema: {
        operationId: `create_${routes.singular}`,
        tags: [routes.collection],
        summary: `Create a ${routes.singular}`,
        description:
          "Send an `Idempotency-Key` header (1 to 255 printable characters, e.g. a UUID per attempt): a retry " +
          "with the same key and body answers the first outcome (header `Idempotent-Replayed: true`) and " +
          "creates nothing; the same key with another body is a 422.",
        security,
        headers: Type.Object({ "idempotency-key": Type.Optional(Type.String()) }),
        body: routes.createBody,
        response: {
          201: routes.item,
          ...ProblemResponses,
          422: problem("The Idempotency-Key was used with another body"),
        },
      },
    },
    async (request, reply) => {
      const outcome = await routes.create(
        request.auth,
        request.body,
        parseIdempotencyKey(request.headers["idempotency-key"]),
      );
      if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
      return reply.code(outcome.status).send(outcome.body);
    },
  );
  app.patch(
    `/api/v1/${routes.collection}/:id`,
    {
      preHandler,
      schema: {
        operationId: `update_${routes.singular}`,
        tags: [routes.collection],
        summary: `Update a ${routes.singular}`,
        description: "Only the fields sent change; null clears a field that may be empty.",
        security,
        params: Type.Object({ id: Type.String({ maxLength: 40, description: `Id of the ${routes.singular}` }) }),
        body: routes.updateBody,
        response: { 200: routes.item, ...ProblemResponses },
      },
    },
    (request) => routes.update(request.auth, (request.params as { id: string }).id, request.body),
  );
}
