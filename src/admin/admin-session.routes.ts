import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requireJson } from "../http/same-origin.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import { secondFactorChoices, sessionStageFor } from "../identity/second-factor.service.js";
import {
  createSession,
  destroySession,
  loadSession,
  loadSessionAnyStage,
  type SessionStage,
} from "../identity/sessions.service.js";
import { type CredentialThrottle, INVALID_CREDENTIALS, signIn } from "../identity/sign-in.service.js";
import { userWithOrganizations } from "../modules/users/users.service.js";

export const SessionBody = Type.Object(
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
  {
    signed_in: Type.Literal(false),
    stage: Type.Optional(
      Type.String({
        enum: ["second_factor", "enrol"],
        description:
          "The password was right and sign-in goes on: second_factor (a code is asked), enrol (the organization requires two-step verification, to set up first)",
      }),
    ),
    factors: Type.Optional(
      Type.Array(Type.String(), {
        description: "At stage second_factor: what may be given (totp, passkey, recovery_code)",
      }),
    ),
  },
  { description: "Nobody is signed in (yet): a normal state of the panel, not an error" },
);
const SIGNED_OUT = { signed_in: false } as const;

/** A session still at a step of sign-in, as the panel is told it: the step, and what it may give. */
async function pendingSignIn(db: Db, userId: number, stage: SessionStage) {
  if (stage === "active") return SIGNED_OUT;
  return {
    signed_in: false as const,
    stage,
    factors: stage === "second_factor" ? await secondFactorChoices(db, userId) : [],
  };
}

/** The signed-in user of a request (the admin panel's cookie session), or undefined. */
export async function sessionUser(db: Db, request: FastifyRequest) {
  return loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
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
      const session = await loadSessionAnyStage(db, request.cookies[SESSION_COOKIE], request.ip);
      if (session && session.stage !== "active") return pendingSignIn(db, session.userId, session.stage);
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
        response: { 200: Type.Union([SessionBody, SignedOut]) },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body as { email: string; password: string };
      const user = await signIn(db, throttle, { email, password, address: request.ip });
      // A new session on every sign-in: a token planted before it is worth nothing after it.
      await destroySession(db, request.cookies[SESSION_COOKIE]);
      // A second factor, or the enrolment an organization requires, may still be to come (docs/accounts.md).
      const stage = await sessionStageFor(db, user.id);
      const token = await createSession(db, config, user.id, { ...sessionContext(request), stage });
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
      reply.header("cache-control", "no-store");
      if (stage !== "active") return pendingSignIn(db, user.id, stage);
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
