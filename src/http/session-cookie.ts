import type { FastifyRequest } from "fastify";
import { cookieAttributes } from "./cookies.js";

/** The cookie of a member's session (the admin panel and the authorization server's pages). */
export const SESSION_COOKIE = "donata_session";

/**
 * The admin session cookie's attributes as served from `publicUrl`: BASE_URL for the admin panel's
 * routes, AUTH_URL for the authorization server's pages. SameSite=Lax, not Strict: an application on
 * another site sends the browser to /oauth/authorize/, and the session must come along. Clearing it
 * takes the same attributes (without the lifetime), or the browser keeps it.
 */
export function sessionCookieOptions(publicUrl: string, maxAgeSeconds?: number) {
  return {
    ...cookieAttributes(publicUrl, { path: "/", sameSite: "lax" }),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

/** Where a session is opened from, as the sessions page shows it: the browser's User-Agent and the address. */
export function sessionContext(request: FastifyRequest) {
  return { userAgent: request.headers["user-agent"], ipAddress: request.ip };
}
