import type { FastifyInstance, onSendHookHandler } from "fastify";
import { type TSchema, Type } from "typebox";
import type { Permission } from "../auth/permissions.js";
import type { Scope } from "../auth/scope.js";
import type { Db } from "../db/client.js";
import { requireToken } from "./auth.js";
import { ProblemResponses } from "./problem-schema.js";

export interface CollectionRoutes<Q> {
  /** Path segment under /api/v1/, e.g. "checkouts". */
  collection: string;
  singular: string;
  /** The single read's operationId when `retrieve_<singular>` is taken by another route. */
  retrieveOperationId?: string;
  permission: Permission;
  item: TSchema;
  listQuery: TSchema;
  listResponse: TSchema;
  list(db: Db, scope: Scope, query: Q): Promise<unknown>;
  retrieve(db: Db, scope: Scope, id: string): Promise<unknown>;
}

/**
 * A serialized page goes to the socket as bytes: encoded to UTF-8 once, where a string is
 * measured for Content-Length and then encoded again by the socket. Pages are large (100
 * embedded records are about 250 kB), so this is a fair share of a list's CPU time.
 */
const pageAsBytes: onSendHookHandler<unknown> = (_request, _reply, payload, done) => {
  done(null, typeof payload === "string" && payload.length > 16_384 ? Buffer.from(payload) : payload);
};

/** The two reads every collection has: a paginated list and a single record by id. */
export function registerCollectionRoutes<Q>(app: FastifyInstance, db: Db, routes: CollectionRoutes<Q>) {
  const preHandler = requireToken(db, routes.permission);
  const security = [{ oauth2: [routes.permission] }];
  app.get(
    `/api/v1/${routes.collection}/`,
    {
      preHandler,
      onSend: pageAsBytes,
      schema: {
        operationId: `list_${routes.collection}`,
        tags: [routes.collection],
        summary: `List ${routes.collection}`,
        security,
        querystring: routes.listQuery,
        response: { 200: routes.listResponse, ...ProblemResponses },
      },
    },
    (request) => routes.list(db, request.auth, request.query as Q),
  );
  app.get(
    `/api/v1/${routes.collection}/:id`,
    {
      preHandler,
      schema: {
        operationId: routes.retrieveOperationId ?? `retrieve_${routes.singular}`,
        tags: [routes.collection],
        summary: `Retrieve a ${routes.singular}`,
        security,
        params: Type.Object({ id: Type.String({ description: `Id of the ${routes.singular}` }) }),
        response: { 200: routes.item, ...ProblemResponses },
      },
    },
    (request) => routes.retrieve(db, request.auth, (request.params as { id: string }).id),
  );
}
