import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import type { Db } from "../db/client.js";
import { authenticateAccessToken, type TokenContext } from "../oauth/tokens.service.js";
import { problemOf, sendProblem } from "./problem.js";

declare module "fastify" {
  interface FastifyRequest {
    auth: TokenContext;
  }
}

const REALM = 'Bearer realm="api"';

/** The token of an RFC 6750 `Authorization: Bearer <token>` header; shared by REST and GraphQL. */
export function readBearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  return match?.[1];
}

function unauthorized(reply: FastifyReply, detail: string) {
  reply.header("WWW-Authenticate", `${REALM}, error="invalid_token", error_description="${detail}"`);
  return sendProblem(reply, problemOf(401, "invalid_token", detail));
}

/** RFC 6750 bearer authentication; the token fixes the organization of the whole request. */
export function requireToken(db: Db, permission: string): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const token = readBearer(request);
    if (!token) {
      return unauthorized(
        reply,
        request.headers.authorization ? "Malformed Authorization header" : "Missing bearer token",
      );
    }
    const context = await authenticateAccessToken(db, token);
    if (!context) return unauthorized(reply, "The access token is invalid, expired or revoked");
    if (!context.permissions.includes(permission)) {
      reply.header("WWW-Authenticate", `${REALM}, error="insufficient_scope", scope="${permission}"`);
      return sendProblem(
        reply,
        problemOf(403, "insufficient_scope", `This application was not granted the "${permission}" permission`),
      );
    }
    request.auth = context;
  };
}
