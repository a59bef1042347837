import type { FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import { applicationActor, requirePermission } from "../auth/actor.js";
import type { Permission } from "../auth/permissions.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { type EventOrigin, requestOrigin } from "../events/origin.js";
import { authenticateAccessToken, type TokenContext } from "../oauth/tokens.service.js";

declare module "fastify" {
  interface FastifyRequest {
    auth: TokenContext & { origin?: EventOrigin };
  }
}

/** The origin of what an application's request changes: the application, and the request. */
export const applicationOrigin = (request: FastifyRequest, context: TokenContext): EventOrigin =>
  requestOrigin(request, {
    type: "application",
    application_id: context.applicationId,
    label: `application ${context.applicationId}`,
  });

/** The token of an RFC 6750 `Authorization: Bearer <token>` header; shared by REST and GraphQL. */
export function readBearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  return match?.[1];
}

function invalidToken(detail: string) {
  return new AppError("invalid_token", detail, {
    headers: { "www-authenticate": `Bearer realm="api", error="invalid_token", error_description="${detail}"` },
  });
}

/**
 * RFC 6750 bearer authentication; the token fixes the organization of the whole request. A null
 * permission: any valid token (the route decides what its permissions let it see).
 */
export function requireToken(db: Db, permission: Permission | null): preHandlerAsyncHookHandler {
  return async (request) => {
    const token = readBearer(request);
    if (!token) {
      throw invalidToken(request.headers.authorization ? "Malformed Authorization header" : "Missing bearer token");
    }
    const context = await authenticateAccessToken(db, token);
    if (!context) throw invalidToken("The access token is invalid, expired or revoked");
    if (permission) requirePermission(applicationActor(context), permission);
    request.auth = { ...context, origin: applicationOrigin(request, context) };
  };
}
