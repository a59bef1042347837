import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireRecentVerification } from "../auth/step-up.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { requireJson } from "../http/same-origin.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import {
  confirmTotpEnrolment,
  raiseSession,
  regenerateRecoveryCodes,
  removeTotp,
  type SecondFactorContext,
  type SecondFactorProof,
  secondFactorStatus,
  startTotpEnrolment,
  verifySecondFactor,
} from "../identity/second-factor.service.js";
import { loadSessionAnyStage, type SessionStage, type SessionUser } from "../identity/sessions.service.js";
import { userWithOrganizations } from "../modules/users/users.service.js";
import { SessionBody } from "./admin-session.routes.js";

const NOT_SIGNED_IN = () => new AppError("not_signed_in", "Sign in to the admin panel first");

const Code = Type.String({ minLength: 1, maxLength: 20 });
const RecoveryCode = Type.String({ minLength: 1, maxLength: 40 });
const ProofBody = Type.Union([
  Type.Object({ code: Code }, { additionalProperties: false }),
  Type.Object({ recovery_code: RecoveryCode }, { additionalProperties: false }),
]);
const RecoveryCodesBody = Type.Object({
  recovery_codes: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "Shown once: only their hashes are kept. Null: the codes the user already has still work",
  }),
});

/** The session of a panel request when it is at one of these stages (the sign-in steps read it), else 401. */
async function sessionAt(db: Db, request: FastifyRequest, reply: FastifyReply, stages: SessionStage[]) {
  reply.header("cache-control", "no-store");
  const session = await loadSessionAnyStage(db, request.cookies[SESSION_COOKIE], request.ip);
  if (!session || !stages.includes(session.stage)) throw NOT_SIGNED_IN();
  return session;
}

const originOf = (request: FastifyRequest, session: SessionUser) =>
  requestOrigin(request, { type: "user", user_id: session.userId, label: session.email });

/**
 * Two-step verification in the panel (docs/accounts.md): the second step of sign-in, and the account's
 * authenticator app and recovery codes. JSON only, so a form from another site cannot send them; a
 * session at stage "enrol" may set up its app here and nothing else.
 */
export function secondFactorRoutes(app: FastifyInstance, context: SecondFactorContext & { config: Config }) {
  const { db, config } = context;
  const tags = ["admin panel"];
  const json = { preValidation: async (request: FastifyRequest) => requireJson(request) };

  /** The step done: a new, active session (a new cookie), and the panel's signed-in body. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, userId: number) {
    const token = await raiseSession(db, config, request.cookies[SESSION_COOKIE], userId, sessionContext(request));
    reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
    const body = await userWithOrganizations(db, userId);
    if (!body) throw NOT_SIGNED_IN();
    return body;
  }

  app.post(
    "/admin/api/session/second-factor",
    { ...json, schema: { hide: true, tags, body: ProofBody, response: { 200: SessionBody } } },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["second_factor"]);
      await verifySecondFactor(context, {
        userId: session.userId,
        proof: request.body as SecondFactorProof,
        address: request.ip,
      });
      return signedIn(request, reply, session.userId);
    },
  );

  app.get(
    "/admin/api/account/second-factor",
    {
      schema: {
        hide: true,
        tags,
        response: {
          200: Type.Object({
            totp: Type.Union([
              Type.Object({
                confirmed_date: Type.String(),
                last_used_date: Type.Union([Type.String(), Type.Null()]),
              }),
              Type.Null(),
            ]),
            recovery_codes_left: Type.Integer(),
            required_by: Type.Array(Type.String(), {
              description: "The organizations whose rule asks this user (an owner or admin there) for a second factor",
            }),
          }),
        },
      },
    },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["active", "enrol"]);
      return secondFactorStatus(db, session.userId);
    },
  );

  app.post(
    "/admin/api/account/second-factor/totp",
    {
      ...json,
      schema: {
        hide: true,
        tags,
        response: {
          200: Type.Object({
            secret: Type.String({ description: "Base32, for typing into the app by hand" }),
            uri: Type.String({ description: "otpauth:// URI, as the QR code holds it" }),
            qr_svg: Type.String({ description: "The URI as a QR code, an SVG document" }),
          }),
        },
      },
    },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["active", "enrol"]);
      // A signed-in session proves it is them again first; one at "enrol" has just given its password.
      if (session.stage === "active") requireRecentVerification(session.verifiedDate);
      return startTotpEnrolment(context, session.userId);
    },
  );

  app.post(
    "/admin/api/account/second-factor/totp/confirm",
    {
      ...json,
      schema: {
        hide: true,
        tags,
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: { 200: RecoveryCodesBody },
      },
    },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["active", "enrol"]);
      const { code } = request.body as { code: string };
      const result = await confirmTotpEnrolment(context, session.userId, code, originOf(request, session));
      // The enrolment the organization asked for is done: the session is signed in (a new cookie).
      if (session.stage === "enrol") await signedIn(request, reply, session.userId);
      return result;
    },
  );

  app.post(
    "/admin/api/account/second-factor/recovery-codes",
    { ...json, schema: { hide: true, tags, response: { 200: RecoveryCodesBody } } },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["active"]);
      requireRecentVerification(session.verifiedDate);
      return regenerateRecoveryCodes(context, session.userId, originOf(request, session));
    },
  );

  app.post(
    "/admin/api/account/second-factor/totp/remove",
    {
      ...json,
      schema: {
        hide: true,
        tags,
        body: Type.Union([
          ...ProofBody.anyOf,
          Type.Object({ password: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false }),
        ]),
      },
    },
    async (request, reply) => {
      const session = await sessionAt(db, request, reply, ["active"]);
      await removeTotp(
        context,
        {
          userId: session.userId,
          proof: request.body as SecondFactorProof | { password: string },
          address: request.ip,
        },
        originOf(request, session),
      );
      return reply.code(204).send();
    },
  );
}
