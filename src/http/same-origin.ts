import type { FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import type { Config } from "../config.js";
import { AppError } from "../errors/app-error.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/**
 * Routes a browser reaches with the session cookie (or the login form's cookie): the admin panel's
 * and the authorization server's pages, present and future. The client-authenticated OAuth
 * endpoints (RFC 6749 token, RFC 7009 revocation, RFC 7662 introspection) take no cookie.
 */
const COOKIE_ROUTES = [/^\/admin\//, /^\/donor\//, /^\/oauth\/(?!(token|revoke|introspect)\/?$)/];

/** The origins this server is served from: the admin panel's and the authorization server's. */
export function ownOrigins(config: Config): Set<string> {
  return new Set([new URL(config.authUrl).origin, new URL(config.baseUrl).origin]);
}

function usesCookie(request: FastifyRequest, path: string): boolean {
  if (!COOKIE_ROUTES.some((route) => route.test(path))) return false;
  // The GraphQL endpoint ignores the cookie when a bearer token is sent; that request is CORS's business.
  return !(path.startsWith("/admin/graphql") && request.headers.authorization !== undefined);
}

/**
 * Second line of defence after "no CORS for cookies": a state-changing request that the session
 * cookie authenticates must come from one of our own origins. Another port or subdomain of the same
 * site is another origin (the browser still sends SameSite cookies to it), so Sec-Fetch-Site only
 * decides when a browser sent no Origin, or "null". Clients that send neither are not browsers.
 */
export function sameOriginGuard(config: Config): onRequestAsyncHookHandler {
  const allowed = ownOrigins(config);
  return async (request) => {
    if (SAFE_METHODS.has(request.method)) return;
    // The matched route, not the raw URL: a percent-encoded path reaches the same handler.
    if (!usesCookie(request, request.routeOptions.url ?? "")) return;
    const origin = request.headers.origin;
    const site = request.headers["sec-fetch-site"];
    // Pages with Referrer-Policy: no-referrer (ours) post forms with "Origin: null"; Sec-Fetch-Site decides those.
    const foreign =
      origin !== undefined && origin !== "null"
        ? !allowed.has(origin)
        : site === undefined
          ? origin === "null"
          : site !== "same-origin" && site !== "none";
    if (foreign) {
      throw new AppError(
        "cross_origin_refused",
        `This request came from another origin (${origin ?? `Sec-Fetch-Site: ${site}`}); requests made with the session cookie are accepted only from ${[...allowed].join(" or ")}`,
      );
    }
  };
}

/**
 * The guard of a JSON-only route that a session cookie reaches: a form from another site cannot send
 * JSON without a CORS preflight, which this server never grants. 415 `unsupported_media_type` otherwise.
 */
export function requireJson(request: FastifyRequest) {
  if (!/^application\/json/i.test(request.headers["content-type"] ?? "")) {
    throw new AppError("unsupported_media_type", "Send the credentials as application/json");
  }
}
