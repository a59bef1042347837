import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { AppError } from "../errors/app-error.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import type { SecondFactorContext } from "../identity/second-factor.service.js";
import { loadSession } from "../identity/sessions.service.js";
import { type StepUpProof, stepUpMethods, verifyStepUp } from "../identity/step-up.service.js";

const NOT_SIGNED_IN = () => new AppError("not_signed_in", "Sign in first");

/**
 * Step-up (src/auth/step-up.ts): the panel asks which proofs the user can give, then sends one; the session's
 * last check becomes now. JSON only (a form from another site cannot send it).
 */
export function stepUpRoutes(app: FastifyInstance, context: SecondFactorContext) {
  const { db } = context;
  const tags = ["admin panel"];
  app.get(
    "/admin/api/session/verify",
    {
      schema: {
        hide: true,
        tags,
        response: {
          200: Type.Object({
            methods: Type.Array(Type.String({ enum: ["totp", "recovery_code", "passkey", "password"] })),
          }),
        },
      },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
      if (!session) throw NOT_SIGNED_IN();
      return { methods: await stepUpMethods(db, session.userId) };
    },
  );

  app.post(
    "/admin/api/session/verify",
    {
      preValidation: async (request) => {
        if (!/^application\/json/i.test(request.headers["content-type"] ?? "")) {
          throw new AppError("unsupported_media_type", "Send the proof as application/json");
        }
      },
      schema: {
        hide: true,
        tags,
        body: Type.Union([
          Type.Object({ password: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false }),
          Type.Object({ code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false }),
          Type.Object({ recovery_code: Type.String({ minLength: 1, maxLength: 40 }) }, { additionalProperties: false }),
        ]),
      },
    },
    async (request, reply) => {
      const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
      if (!session) throw NOT_SIGNED_IN();
      await verifyStepUp(context, session, request.body as StepUpProof, request.ip);
      reply.header("cache-control", "no-store");
      return reply.code(204).send();
    },
  );
}
