import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import { createSession, destroySession, loadSession } from "../identity/sessions.service.js";
import { type CredentialThrottle, INVALID_CREDENTIALS, signIn } from "../identity/sign-in.service.js";
import { userWithOrganizations } from "../modules/users/users.service.js";

const SessionBody = Type.Object(
  {
    user: Type.Object({ id: Type.Integer(), email: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }),
    organizations: Type.Array(
      Type.Object({
        slug: Type.String(),
        name: Type.String(),
        role: Type.String({ enum: ["owner", "admin", "member"] }),
        currency: Type.String(),
        time_zone: Type.String(),
      }),
    ),
  },
  { description: "The signed-in user and the organizations they belong to" },
);

const SignedOut = Type.Object(
  { signed_in: Type.Literal(false) },
  { description: "Nobody is signed in: a normal state of the panel, not an error" },
);
const SIGNED_OUT = { signed_in: false } as const;

/** The signed-in user of a request (the admin panel's cookie session), or undefined. */
export async function sessionUser(db: Db, request: FastifyRequest) {
  return loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
}

function requireJson(request: FastifyRequest) {
  // A form from another site cannot send JSON without a CORS preflight, which this server never grants.
  if (!/^application\/json/i.test(request.headers["content-type"] ?? "")) {
    throw new AppError("unsupported_media_type", "Send the credentials as application/json");
  }
}

/**
 * The admin panel's sign-in: the same accounts, throttling and session cookie as the
 * authorization server's login page, as JSON for the single-page app.
 */
export function adminSessionRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const tags = ["admin panel"];
  app.get(
    "/admin/api/session",
    { schema: { hide: true, tags, response: { 200: Type.Union([SessionBody, SignedOut]) } } },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const session = await sessionUser(db, request);
      return (session && (await userWithOrganizations(db, session.userId))) ?? SIGNED_OUT;
    },
  );

  app.post(
    "/admin/api/session",
    {
      preValidation: async (request) => requireJson(request),
      schema: {
        hide: true,
        tags,
        body: Type.Object(
          {
            email: Type.String({ minLength: 1, maxLength: 320 }),
            password: Type.String({ minLength: 1, maxLength: 1000 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionBody },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body as { email: string; password: string };
      const user = await signIn(db, throttle, { email, password, address: request.ip });
      // A new session on every sign-in: a token planted before it is worth nothing after it.
      await destroySession(db, request.cookies[SESSION_COOKIE]);
      const token = await createSession(db, config, user.id, sessionContext(request));
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
      reply.header("cache-control", "no-store");
      const body = await userWithOrganizations(db, user.id);
      // Only if the account was deleted between the password check and here.
      if (!body) throw new AppError("invalid_credentials", INVALID_CREDENTIALS);
      return body;
    },
  );

  app.delete("/admin/api/session", { schema: { hide: true, tags } }, async (request, reply) => {
    await destroySession(db, request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(config.baseUrl));
    return reply.code(204).send();
  });
}
