import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type Static, Type } from "typebox";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import {
  AssertionCredential,
  CeremonyOptions,
  dropPasskeyChallenge,
  holdPasskeyChallenge,
  PASSKEY_BODY_LIMIT,
  PASSKEY_CHALLENGE_COOKIE,
} from "../http/passkey-ceremony.js";
import { requireJson } from "../http/same-origin.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import { relyingParty, startPasskeyAssertion, verifyPasskeyAssertion } from "../identity/passkeys.service.js";
import { raiseSession } from "../identity/second-factor.service.js";
import { loadSessionAnyStage, tokensEqual } from "../identity/sessions.service.js";
import type { CredentialThrottle } from "../identity/sign-in.service.js";
import {
  afterSignIn,
  authorizeParameters,
  LOGIN_CSRF_COOKIE,
  loginCsrfCookie,
  PASSKEY_SECOND_FACTOR_PATH,
  PASSKEY_SIGN_IN_PATH,
} from "./authorize.routes.js";
import { chosenLocale, rememberUserLocale } from "./locale.js";

/** The page's hidden fields, as its form holds them: the authorization request, the CSRF token, a chosen language. */
const FormFields = Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 2048 }), { maxProperties: 30 });
const StartBody = Type.Object({ form: FormFields }, { additionalProperties: false });
const FinishBody = Type.Object({ credential: AssertionCredential, form: FormFields }, { additionalProperties: false });
const Continue = Type.Object({
  location: Type.String({ description: "Where the authorization goes on: a path of this site" }),
});
type Form = Static<typeof FormFields>;

const csrfRefused = () => new AppError("csrf_refused", "This form has expired. Reload the page and try again.");

/**
 * Passkeys on the authorization server's pages (docs/accounts.md), the JSON half of web/oauth/passkey.js:
 * "Sign in with a passkey" on the login page (purpose `sign_in`: no email, no password; counts as two
 * factors) and "Use a passkey" as the second step after a password (purpose `verify`: only the pending
 * session's user's passkeys answer). Either ends as the password's steps do, with a new active session,
 * and answers where the authorization goes on. JSON only, from our own origin (the guard of /oauth/),
 * and with the page's CSRF token: the login form's cookie, or the pending session's.
 */
export function oauthPasskeyRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const party = relyingParty(config);
  const json = async (request: FastifyRequest) => requireJson(request);
  const start = { preValidation: json, schema: { hide: true, body: StartBody, response: { 200: CeremonyOptions } } };
  const finish = {
    preValidation: json,
    bodyLimit: PASSKEY_BODY_LIMIT,
    schema: { hide: true, body: FinishBody, response: { 200: Continue } },
  };

  /** A sign-in starts from our own login page only: its form's token matches its cookie. */
  function fromLoginPage(request: FastifyRequest, form: Form) {
    if (!tokensEqual(form.csrf, request.cookies[LOGIN_CSRF_COOKIE])) throw csrfRefused();
  }

  /** The session whose password was right and whose second step this is, asked with its own CSRF token. */
  async function pendingSession(request: FastifyRequest, form: Form) {
    const session = await loadSessionAnyStage(db, request.cookies[SESSION_COOKIE], request.ip);
    if (session?.stage !== "second_factor") {
      throw new AppError("not_signed_in", "Sign in with your email and password first");
    }
    if (!tokensEqual(form.csrf, session.csrfToken)) throw csrfRefused();
    return session;
  }

  /** The step done: a new, active session (a new token), and where the authorization goes on. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, userId: number, form: Form) {
    const token = await raiseSession(db, config, request.cookies[SESSION_COOKIE], userId, sessionContext(request));
    reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.authUrl, config.sessionTtlSeconds));
    return { location: afterSignIn(authorizeParameters(form).params) };
  }

  app.post(
    `${PASSKEY_SIGN_IN_PATH}/options`,
    start,
    async (request, reply): Promise<PublicKeyCredentialRequestOptionsJSON> => {
      reply.header("cache-control", "no-store");
      fromLoginPage(request, (request.body as Static<typeof StartBody>).form);
      const { token, options } = await startPasskeyAssertion(db, party, { purpose: "sign_in" });
      holdPasskeyChallenge(reply, config.authUrl, PASSKEY_SIGN_IN_PATH, token);
      return options;
    },
  );

  app.post(PASSKEY_SIGN_IN_PATH, finish, async (request, reply) => {
    reply.header("cache-control", "no-store");
    const { credential, form } = request.body as { credential: AuthenticationResponseJSON; form: Form };
    fromLoginPage(request, form);
    dropPasskeyChallenge(reply, config.authUrl, PASSKEY_SIGN_IN_PATH);
    const { userId } = await verifyPasskeyAssertion(db, throttle, party, {
      purpose: "sign_in",
      token: request.cookies[PASSKEY_CHALLENGE_COOKIE],
      response: credential,
      address: request.ip,
    });
    // As after a password: the login form is done, and a language chosen on it is the user's from now on.
    reply.clearCookie(LOGIN_CSRF_COOKIE, loginCsrfCookie(config));
    const chosen = chosenLocale(request, form);
    if (chosen) await rememberUserLocale(db, userId, chosen);
    return signedIn(request, reply, userId, form);
  });

  app.post(
    `${PASSKEY_SECOND_FACTOR_PATH}/options`,
    start,
    async (request, reply): Promise<PublicKeyCredentialRequestOptionsJSON> => {
      reply.header("cache-control", "no-store");
      const session = await pendingSession(request, (request.body as Static<typeof StartBody>).form);
      const { token, options } = await startPasskeyAssertion(db, party, { purpose: "verify", userId: session.userId });
      holdPasskeyChallenge(reply, config.authUrl, PASSKEY_SECOND_FACTOR_PATH, token);
      return options;
    },
  );

  app.post(PASSKEY_SECOND_FACTOR_PATH, finish, async (request, reply) => {
    reply.header("cache-control", "no-store");
    const { credential, form } = request.body as { credential: AuthenticationResponseJSON; form: Form };
    const session = await pendingSession(request, form);
    dropPasskeyChallenge(reply, config.authUrl, PASSKEY_SECOND_FACTOR_PATH);
    await verifyPasskeyAssertion(db, throttle, party, {
      purpose: "verify",
      userId: session.userId,
      token: request.cookies[PASSKEY_CHALLENGE_COOKIE],
      response: credential,
      address: request.ip,
    });
    return signedIn(request, reply, session.userId, form);
  });
}
