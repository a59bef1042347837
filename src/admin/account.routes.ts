import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { parseId } from "../http/ids.js";
import { requireJson } from "../http/same-origin.js";
import { SESSION_COOKIE, sessionCookieOptions } from "../http/session-cookie.js";
import {
  type AccountSession,
  changePassword,
  endAccountSession,
  endOtherAccountSessions,
  listAccountSessions,
} from "../identity/account.service.js";
import type { CredentialThrottle } from "../identity/sign-in.service.js";
import { sessionUser } from "./admin-session.routes.js";

const Nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);

const AccountSessionBody = Type.Object({
  id: Type.Integer(),
  current: Type.Boolean(),
  stage: Type.String({ enum: ["active", "second_factor", "enrol"] }),
  browser: Nullable(Type.String()),
  os: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  ip_address: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  last_seen_date: Type.String(),
  create_date: Type.String(),
});

/** The signed-in member of a panel request (an active session), with where its events come from. */
async function accountOf(db: Db, request: FastifyRequest, reply: FastifyReply) {
  reply.header("cache-control", "no-store");
  const session = await sessionUser(db, request);
  if (!session) throw new AppError("not_signed_in", "Sign in to the admin panel first");
  const who: AccountSession = { userId: session.userId, sessionId: session.sessionId, email: session.email };
  const origin = requestOrigin(request, { type: "user", user_id: session.userId, label: session.email });
  return { who, origin };
}

/**
 * The panel's "Your account" page: the signed-in user's sessions and password, as JSON for the
 * single-page app, with the cookie session. Writes come from our own origin only (the same-origin
 * guard of every /admin/ route); the password change also takes JSON only, which a form from another
 * site cannot send, and the DELETEs are methods no form sends and no CORS preflight here allows.
 */
export function accountRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const tags = ["admin panel"];

  app.get(
    "/admin/api/account/sessions",
    {
      schema: {
        hide: true,
        tags,
        response: { 200: Type.Object({ items: Type.Array(AccountSessionBody) }) },
      },
    },
    async (request, reply) => {
      const { who } = await accountOf(db, request, reply);
      return { items: await listAccountSessions(db, who) };
    },
  );

  // Ends every session of the user but this one ("Sign out everywhere else").
  app.delete(
    "/admin/api/account/sessions",
    { schema: { hide: true, tags, response: { 200: Type.Object({ ended: Type.Integer() }) } } },
    async (request, reply) => {
      const { who, origin } = await accountOf(db, request, reply);
      return { ended: await endOtherAccountSessions(db, who, origin) };
    },
  );

  app.delete(
    "/admin/api/account/sessions/:id",
    { schema: { hide: true, tags, params: Type.Object({ id: Type.String({ maxLength: 30 }) }) } },
    async (request, reply) => {
      const { who, origin } = await accountOf(db, request, reply);
      const id = parseId((request.params as { id: string }).id, "Session");
      const { signedOut } = await endAccountSession(db, who, id, origin);
      if (signedOut) reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(config.baseUrl));
      return reply.code(204).send();
    },
  );

  app.post(
    "/admin/api/account/password",
    {
      preValidation: async (request) => requireJson(request),
      schema: {
        hide: true,
        tags,
        body: Type.Object(
          {
            current_password: Type.String({ minLength: 1, maxLength: 1000 }),
            new_password: Type.String({ minLength: 1, maxLength: 1000 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ sessions_ended: Type.Integer() }) },
      },
    },
    async (request, reply) => {
      const { who, origin } = await accountOf(db, request, reply);
      const body = request.body as { current_password: string; new_password: string };
      const { sessionsEnded } = await changePassword(
        db,
        throttle,
        who,
        { currentPassword: body.current_password, newPassword: body.new_password, address: request.ip },
        origin,
      );
      return { sessions_ended: sessionsEnded };
    },
  );
}
