import type { FastifyInstance, FastifyRequest } from "fastify";
import { type TSchema, Type } from "typebox";
import type { Permission } from "../auth/permissions.js";
import type { Db } from "../db/client.js";
import { requireToken } from "./auth.js";
import { ProblemResponses } from "./problem-schema.js";

const conflict = {
  409: {
    description: "The record's state does not allow this transition; nothing changed",
    content: { "application/problem+json": { schema: Type.Ref("Problem") } },
  },
};
const IdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });

/**
 * A state transition on one record (`POST /api/v1/<resource>/:id/<action>`): no body unless the
 * action declares an optional JSON one, the record back, 409 when refused.
 */
export function actionRoute(
  app: FastifyInstance,
  db: Db,
  action: {
    path: string;
    permission: Permission;
    operationId: string;
    summary: string;
    response: TSchema;
    /** An optional JSON body (its fields optional): no body at all is the same as `{}`. */
    body?: TSchema;
    run: (scope: FastifyRequest["auth"], id: string, body: unknown) => Promise<unknown>;
  },
) {
  const { path, permission, run } = action;
  app.post(
    path,
    {
      preHandler: requireToken(db, permission),
      ...(action.body
        ? {
            preValidation: async (request: FastifyRequest) => {
              request.body ??= {};
            },
          }
        : {}),
      schema: {
        ...(action.body ? { body: action.body } : {}),
        operationId: action.operationId,
        tags: [path.split("/")[3] as string],
        summary: action.summary,
        security: [{ oauth2: [permission] }],
        params: IdParams,
        response: { 200: action.response, ...ProblemResponses, ...conflict },
      },
    },
    (request) => run(request.auth, (request.params as { id: string }).id, request.body),
  );
}
