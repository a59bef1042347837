import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireRecentVerification } from "../auth/step-up.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { parseId } from "../http/ids.js";
import {
  AssertionCredential,
  base64url,
  CeremonyOptions,
  credentialFields,
  dropPasskeyChallenge,
  holdPasskeyChallenge,
  PASSKEY_BODY_LIMIT,
  PASSKEY_CHALLENGE_COOKIE,
} from "../http/passkey-ceremony.js";
import { requireJson } from "../http/same-origin.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import {
  finishPasskeyEnrolment,
  listPasskeys,
  MAX_PASSKEY_NAME_LENGTH,
  PASSKEY_REFUSED,
  relyingParty,
  removePasskey,
  renamePasskey,
  startPasskeyAssertion,
  startPasskeyEnrolment,
  verifyPasskeyAssertion,
} from "../identity/passkeys.service.js";
import { raiseSession } from "../identity/second-factor.service.js";
import type { CredentialThrottle } from "../identity/sign-in.service.js";
import { markChecked } from "../identity/step-up.service.js";
import { userWithOrganizations } from "../modules/users/users.service.js";
import { SessionBody, sessionUser } from "./admin-session.routes.js";

const SIGN_IN_PATH = "/admin/api/session/passkey";
const ENROL_PATH = "/admin/api/account/passkeys";
const VERIFY_PATH = "/admin/api/session/verify/passkey";

/** What navigator.credentials.create() answered. */
const RegistrationCredential = Type.Object({
  ...credentialFields,
  response: Type.Object(
    {
      clientDataJSON: base64url(4096),
      attestationObject: base64url(16384),
      transports: Type.Optional(Type.Array(Type.String({ maxLength: 30 }), { maxItems: 10 })),
    },
    { additionalProperties: true },
  ),
});
const PasskeyBody = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  create_date: Type.String(),
  last_used_date: Type.Union([Type.String(), Type.Null()]),
});
const PasskeyName = Type.String({ minLength: 1, maxLength: MAX_PASSKEY_NAME_LENGTH });
const IdParams = Type.Object({ id: Type.String({ maxLength: 30 }) });
const EmptyBody = Type.Object({}, { additionalProperties: false });

/**
 * Passkeys (WebAuthn, docs/accounts.md): a signed-in member adds, lists, renames and removes theirs;
 * anyone signs in with one without an email or password (a discoverable credential), which opens an
 * active session that counts as two factors. JSON only, hidden from the API reference like the
 * panel's session routes; writes come from our own origins (the same-origin guard of /admin/).
 */
export function passkeyRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const tags = ["admin panel"];
  const party = relyingParty(config);
  const bodyLimit = PASSKEY_BODY_LIMIT;
  const json = async (request: FastifyRequest) => requireJson(request);
  const holdChallenge = (reply: FastifyReply, path: string, token: string) =>
    holdPasskeyChallenge(reply, config.baseUrl, path, token);
  const dropChallenge = (reply: FastifyReply, path: string) => dropPasskeyChallenge(reply, config.baseUrl, path);

  async function signedIn(request: FastifyRequest, reply: FastifyReply) {
    reply.header("cache-control", "no-store");
    const session = await sessionUser(db, request);
    if (!session) throw new AppError("not_signed_in", "Sign in to the admin panel first");
    return session;
  }

  app.post(
    `${SIGN_IN_PATH}/options`,
    { preValidation: json, schema: { hide: true, tags, body: EmptyBody, response: { 200: CeremonyOptions } } },
    async (_request, reply): Promise<PublicKeyCredentialRequestOptionsJSON> => {
      reply.header("cache-control", "no-store");
      const { token, options } = await startPasskeyAssertion(db, party, { purpose: "sign_in" });
      holdChallenge(reply, SIGN_IN_PATH, token);
      return options;
    },
  );

  app.post(
    SIGN_IN_PATH,
    {
      preValidation: json,
      bodyLimit,
      schema: {
        hide: true,
        tags,
        body: Type.Object({ credential: AssertionCredential }, { additionalProperties: false }),
        response: { 200: SessionBody },
      },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      dropChallenge(reply, SIGN_IN_PATH);
      const { credential } = request.body as { credential: AuthenticationResponseJSON };
      const { userId } = await verifyPasskeyAssertion(db, throttle, party, {
        purpose: "sign_in",
        token: request.cookies[PASSKEY_CHALLENGE_COOKIE],
        response: credential,
        address: request.ip,
      });
      // A new session on every sign-in, already past every step: the passkey is two factors in one.
      const token = await raiseSession(db, config, request.cookies[SESSION_COOKIE], userId, sessionContext(request));
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
      const body = await userWithOrganizations(db, userId);
      // Only if the account was deleted between the check and here.
      if (!body) throw new AppError("passkey_refused", PASSKEY_REFUSED);
      return body;
    },
  );

  app.get(
    ENROL_PATH,
    { schema: { hide: true, tags, response: { 200: Type.Object({ items: Type.Array(PasskeyBody) }) } } },
    async (request, reply) => {
      const session = await signedIn(request, reply);
      return { items: await listPasskeys(db, session.userId) };
    },
  );

  app.post(
    `${ENROL_PATH}/options`,
    { preValidation: json, schema: { hide: true, tags, body: EmptyBody, response: { 200: CeremonyOptions } } },
    async (request, reply): Promise<PublicKeyCredentialCreationOptionsJSON> => {
      const session = await signedIn(request, reply);
      requireRecentVerification(session.verifiedDate);
      const { token, options } = await startPasskeyEnrolment(db, party, session.userId);
      holdChallenge(reply, ENROL_PATH, token);
      return options;
    },
  );

  app.post(
    ENROL_PATH,
    {
      preValidation: json,
      bodyLimit,
      schema: {
        hide: true,
        tags,
        body: Type.Object({ credential: RegistrationCredential, name: PasskeyName }, { additionalProperties: false }),
        response: {
          201: Type.Object({
            ...PasskeyBody.properties,
            // The first second factor's recovery codes, shown once; null when the user already has some.
            recovery_codes: Type.Union([Type.Array(Type.String()), Type.Null()]),
          }),
        },
      },
    },
    async (request, reply) => {
      const session = await signedIn(request, reply);
      dropChallenge(reply, ENROL_PATH);
      const { credential, name } = request.body as { credential: RegistrationResponseJSON; name: string };
      const passkey = await finishPasskeyEnrolment(db, throttle, party, {
        userId: session.userId,
        token: request.cookies[PASSKEY_CHALLENGE_COOKIE],
        response: credential,
        name,
        address: request.ip,
        origin: requestOrigin(request, { type: "user", user_id: session.userId, label: session.email }),
      });
      return reply.code(201).send(passkey);
    },
  );

  app.patch(
    `${ENROL_PATH}/:id`,
    {
      preValidation: json,
      schema: {
        hide: true,
        tags,
        params: IdParams,
        body: Type.Object({ name: PasskeyName }, { additionalProperties: false }),
        response: { 200: PasskeyBody },
      },
    },
    async (request, reply) => {
      const session = await signedIn(request, reply);
      const id = parseId((request.params as { id: string }).id, "Passkey");
      return renamePasskey(db, session.userId, id, (request.body as { name: string }).name);
    },
  );

  app.delete(`${ENROL_PATH}/:id`, { schema: { hide: true, tags, params: IdParams } }, async (request, reply) => {
    const session = await signedIn(request, reply);
    const id = parseId((request.params as { id: string }).id, "Passkey");
    await removePasskey(
      db,
      session.userId,
      id,
      requestOrigin(request, { type: "user", user_id: session.userId, label: session.email }),
    );
    return reply.code(204).send();
  });

  // Step-up with a passkey (src/auth/step-up.ts): the signed-in user's own passkeys answer; the session's last check is now.
  app.post(
    `${VERIFY_PATH}/options`,
    { preValidation: json, schema: { hide: true, tags, body: EmptyBody, response: { 200: CeremonyOptions } } },
    async (request, reply): Promise<PublicKeyCredentialRequestOptionsJSON> => {
      const session = await signedIn(request, reply);
      const { token, options } = await startPasskeyAssertion(db, party, { purpose: "verify", userId: session.userId });
      holdChallenge(reply, VERIFY_PATH, token);
      return options;
    },
  );

  app.post(
    VERIFY_PATH,
    {
      preValidation: json,
      bodyLimit,
      schema: {
        hide: true,
        tags,
        body: Type.Object({ credential: AssertionCredential }, { additionalProperties: false }),
      },
    },
    async (request, reply) => {
      const session = await signedIn(request, reply);
      dropChallenge(reply, VERIFY_PATH);
      const { credential } = request.body as { credential: AuthenticationResponseJSON };
      await verifyPasskeyAssertion(db, throttle, party, {
        purpose: "verify",
        userId: session.userId,
        token: request.cookies[PASSKEY_CHALLENGE_COOKIE],
        response: credential,
        address: request.ip,
      });
      await markChecked(db, session.sessionId, true);
      return reply.code(204).send();
    },
  );
}
