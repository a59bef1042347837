import type { FastifyInstance } from "fastify";

/** Whether the given application (or, without one, any registered application) declares the origin. */
export type OriginCheck = (origin: string, applicationId?: number) => Promise<boolean>;

/** Bearer-token surfaces; the public giving API and the cookie routes get no CORS at all. */
const CORS_ROUTES = /^\/(api\/v1\/(?!public\/)|admin\/graphql\/?$)/;
const ALLOWED_HEADERS = "authorization, content-type, accept, idempotency-key";
const ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

/**
 * CORS for applications' browser code, never for cookies (no Access-Control-Allow-Credentials, ever).
 * A preflight carries no token, so it is granted to any origin that some registered application
 * declares; the response itself names the origin only when it belongs to the token's application
 * (or, for a refusal (401, 403) that names no application, when any application declares it).
 */
export function registerCors(app: FastifyInstance, isDeclaredOrigin: OriginCheck) {
  app.addHook("onRequest", async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (!CORS_ROUTES.test(path)) return;
    reply.header("vary", "Origin");
    const origin = request.headers.origin;
    const isPreflight = request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined;
    if (!isPreflight) return;
    if (origin !== undefined && (await isDeclaredOrigin(origin))) {
      reply.headers({
        "access-control-allow-origin": origin,
        "access-control-allow-methods": ALLOWED_METHODS,
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
      });
    }
    return reply.code(204).send();
  });

  app.addHook("onSend", async (request, reply, payload) => {
    const origin = request.headers.origin;
    if (origin === undefined || request.headers.authorization === undefined || request.method === "OPTIONS") {
      return payload;
    }
    if (!CORS_ROUTES.test(request.url.split("?")[0] ?? "")) return payload;
    // A refused token (401, 403) names no application; the refusal may reach any declared origin (it shows nothing).
    const applicationId = request.auth?.applicationId;
    if (applicationId === undefined && reply.statusCode !== 401 && reply.statusCode !== 403) return payload;
    if (await isDeclaredOrigin(origin, applicationId)) {
      reply.header("access-control-allow-origin", origin);
      reply.header("access-control-expose-headers", "www-authenticate, retry-after, ratelimit, ratelimit-policy");
    }
    return payload;
  });
}
