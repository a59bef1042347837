import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { cookieAttributes } from "../http/cookies.js";
import { escapeHtml, type PageSecurity, type RenderPage, sendHtmlPage } from "../http/html-page.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import type { Locale } from "../i18n/locales.js";
import { t } from "../i18n/messages.js";
import { forgotPasswordPath } from "../identity/password-reset.service.js";
import {
  raiseSession,
  type SecondFactorContext,
  type SecondFactorProof,
  secondFactorChoices,
  sessionStageFor,
  verifySecondFactor,
} from "../identity/second-factor.service.js";
import {
  createSession,
  destroySession,
  loadSession,
  loadSessionAnyStage,
  type SessionUser,
  tokensEqual,
} from "../identity/sessions.service.js";
import { signIn } from "../identity/sign-in.service.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import {
  AUTHORIZE_PARAMETERS,
  type AuthorizeErrorPage,
  type AuthorizeOutcome,
  type AuthorizeParameters,
  authorize,
} from "./authorize.service.js";
import { chosenLocale, pageLocale, rememberUserLocale } from "./locale.js";
import {
  consentPage,
  enrolRequiredPage,
  errorPage,
  type Hidden,
  languageLinks,
  loginPage,
  organizationChoicePage,
  type PageLanguage,
  page,
  secondFactorPage,
  signInErrorMessage,
} from "./pages.js";

export const LOGIN_CSRF_COOKIE = "donata_login_csrf";
const AUTHORIZE_PATH = "/oauth/authorize/";
const LOGIN_PATH = "/oauth/login/";
const SECOND_FACTOR_PATH = "/oauth/second-factor/";
const LOGOUT_PATH = "/oauth/logout/";
/** The passkey ceremonies of the login page and of the second step (src/oauth/passkey.routes.ts). */
export const PASSKEY_SIGN_IN_PATH = "/oauth/passkey";
export const PASSKEY_SECOND_FACTOR_PATH = "/oauth/second-factor/passkey";
/**
 * The login form's CSRF cookie: Strict, since only our own form posts it back (a same-site request);
 * it is set by the page itself, so a cross-site arrival at the login page does not need it sent.
 */
export const loginCsrfCookie = (config: Config, maxAgeSeconds?: number) => ({
  ...cookieAttributes(config.authUrl, { path: "/oauth/", sameSite: "strict" }),
  ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
});

type Source = Record<string, unknown>;

/** The title and message of each page that refuses an authorization request outright. */
const ERROR_PAGES: Record<AuthorizeErrorPage, { title: string; message: string }> = {
  client_id_missing: { title: "oauth.error.invalid_request_title", message: "oauth.error.client_id_missing" },
  unknown_application: { title: "oauth.error.unknown_application_title", message: "oauth.error.unknown_application" },
  redirect_uri_missing: { title: "oauth.error.invalid_request_title", message: "oauth.error.redirect_uri_missing" },
  invalid_redirect_uri: {
    title: "oauth.error.invalid_redirect_uri_title",
    message: "oauth.error.invalid_redirect_uri",
  },
};

/** Where a page's language switcher leads on the authorization endpoint: the same request, in another language. */
interface SwitcherLink {
  path: string;
  query?: URLSearchParams | Hidden;
}

/** The authorization request's own parameters; a repeated one is treated as missing. */
export function authorizeParameters(source: Source): { params: AuthorizeParameters; repeated: string[] } {
  const params: AuthorizeParameters = {};
  const repeated: string[] = [];
  for (const name of AUTHORIZE_PARAMETERS) {
    const value = source[name];
    if (typeof value === "string") params[name] = value;
    else if (value !== undefined) repeated.push(name);
  }
  return { params, repeated };
}

const field = (source: Source, name: string) =>
  typeof source[name] === "string" ? (source[name] as string) : undefined;

/** A query of the parameters that have a value. */
const queryOf = (values: Hidden) =>
  new URLSearchParams(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));

/** Where a finished sign-in goes: back to the authorization request it interrupted, else the site's root. */
export const afterSignIn = (params: AuthorizeParameters) =>
  params.client_id ? `${AUTHORIZE_PATH}?${queryOf(params as Hidden)}` : "/";

export function authorizeRoutes(app: FastifyInstance, db: Db, config: Config, factors: SecondFactorContext) {
  const { throttle } = factors;
  const adminOrigin = new URL(config.baseUrl).origin;

  // The sign-in pages' passkey button calls this origin's JSON routes (web/oauth/passkey.js).
  const pageSecurity: PageSecurity = { frameAncestors: adminOrigin, allow: ["connect-src 'self'"] };
  const sendPage = (reply: FastifyReply, status: number, render: RenderPage) =>
    sendHtmlPage(reply, status, pageSecurity, render);

  /**
   * The page's language (src/oauth/locale.ts: ?lang=, the user's, the cookie, Accept-Language, the
   * organization's once it is known) and its switcher.
   */
  async function language(
    request: FastifyRequest,
    reply: FastifyReply,
    link: SwitcherLink,
    options: { session?: SessionUser; organizationId?: number; chosen?: unknown } = {},
  ): Promise<PageLanguage> {
    const organization =
      options.organizationId === undefined ? undefined : await findOrganizationById(db, options.organizationId);
    const locale = await pageLocale(db, request, reply, {
      publicUrl: config.authUrl,
      userId: options.session?.userId,
      chosen: options.chosen,
      fallback: organization?.locale,
    });
    return { locale, switcher: languageLinks(locale, link.path, link.query) };
  }

  /**
   * The authorization request a page belongs to, to link it in another language: a GET's own query
   * (every parameter as sent), or a form's parameters (plus the organization already chosen).
   */
  const authorizeLink = (request: FastifyRequest, params: AuthorizeParameters, extra: Hidden = {}): SwitcherLink => ({
    path: AUTHORIZE_PATH,
    query: request.method === "GET" ? new URLSearchParams(request.url.split("?")[1] ?? "") : { ...params, ...extra },
  });

  /** A form that came back without its CSRF token (or with another one): 403, and nothing done. */
  async function formExpired(
    request: FastifyRequest,
    reply: FastifyReply,
    link: SwitcherLink,
    messageKey: string,
    options: { session?: SessionUser; chosen?: unknown },
  ) {
    const pageLanguage = await language(request, reply, link, options);
    const { locale } = pageLanguage;
    return sendPage(
      reply,
      403,
      errorPage(pageLanguage, t(locale, "oauth.error.form_expired_title"), t(locale, messageKey)),
    );
  }

  async function renderLogin(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    params: AuthorizeParameters,
    options: { applicationName?: string; error?: AppError; email?: string; chosen?: Locale } = {},
  ) {
    const csrf = randomBytes(24).toString("base64url");
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, loginCsrfCookie(config, 3600));
    const pageLanguage = await language(request, reply, authorizeLink(request, params), { chosen: options.chosen });
    return sendPage(
      reply,
      status,
      loginPage(pageLanguage, {
        action: LOGIN_PATH,
        // A language chosen on this page is the user's once they are signed in.
        hidden: { ...params, csrf, lang: options.chosen },
        applicationName: options.applicationName,
        email: options.email,
        error: options.error ? signInErrorMessage(pageLanguage.locale, options.error) : undefined,
        // Back to this authorization once a new password is chosen (the parameters a form carries on).
        forgotPasswordHref: forgotPasswordPath(
          params.client_id ? `${AUTHORIZE_PATH}?${new URLSearchParams(params as Record<string, string>)}` : undefined,
        ),
        passkeyAction: PASSKEY_SIGN_IN_PATH,
      }),
    );
  }

  async function respond(
    request: FastifyRequest,
    reply: FastifyReply,
    outcome: AuthorizeOutcome,
    params: AuthorizeParameters,
    session: SessionUser | undefined,
  ) {
    const hidden: Hidden = { ...params, csrf: session?.csrfToken };
    switch (outcome.kind) {
      case "error_page": {
        const { locale, switcher } = await language(request, reply, authorizeLink(request, params), { session });
        const { title, message } = ERROR_PAGES[outcome.error];
        return sendPage(reply, 400, errorPage({ locale, switcher }, t(locale, title), t(locale, message)));
      }
      case "redirect":
        return reply
          .code(reply.request.method === "GET" ? 302 : 303)
          .header("cache-control", "no-store")
          .redirect(outcome.location);
      case "login":
        return renderLogin(request, reply, 200, params, {
          applicationName: outcome.application.name,
          chosen: chosenLocale(request),
        });
      case "choose":
        return sendPage(
          reply,
          200,
          organizationChoicePage(await language(request, reply, authorizeLink(request, params), { session }), {
            action: AUTHORIZE_PATH,
            hidden,
            applicationName: outcome.application.name,
            organizations: outcome.organizations,
          }),
        );
      case "consent": {
        const link = authorizeLink(request, params, { __organization: outcome.organization.slug });
        const pageLanguage = await language(request, reply, link, {
          session,
          organizationId: outcome.organization.id,
        });
        return sendPage(
          reply,
          200,
          consentPage(pageLanguage, {
            action: AUTHORIZE_PATH,
            hidden: { ...hidden, organization: outcome.organization.slug },
            application: { name: outcome.application.name, url: outcome.application.applicationUrl },
            organizationName: outcome.organization.name,
            permissions: outcome.application.permissions,
          }),
        );
      }
      case "ask_admin": {
        const link = authorizeLink(request, params, { __organization: outcome.organization.slug });
        const pageLanguage = await language(request, reply, link, {
          session,
          organizationId: outcome.organization.id,
        });
        const { locale } = pageLanguage;
        return sendPage(
          reply,
          403,
          errorPage(
            pageLanguage,
            t(locale, "oauth.ask_admin.title"),
            t(locale, "oauth.ask_admin.message", {
              application: outcome.application.name,
              organization: outcome.organization.name,
            }),
          ),
        );
      }
    }
  }

  async function run(request: FastifyRequest, reply: FastifyReply, source: Source, session: SessionUser | undefined) {
    const { params, repeated } = authorizeParameters(source);
    if (repeated.includes("client_id") || repeated.includes("redirect_uri")) {
      const pageLanguage = await language(request, reply, authorizeLink(request, params), { session });
      const { locale } = pageLanguage;
      return sendPage(
        reply,
        400,
        errorPage(
          pageLanguage,
          t(locale, "oauth.error.invalid_request_title"),
          t(locale, "oauth.error.repeated", { parameters: repeated.join(", ") }),
        ),
      );
    }
    const decision =
      request.method === "POST"
        ? { organization: field(source, "organization"), decision: field(source, "decision") }
        : {};
    const outcome = await authorize(db, config, params, session, decision, repeated);
    return respond(request, reply, outcome, params, session);
  }

  app.get(AUTHORIZE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
    return run(request, reply, request.query as Source, session);
  });

  // Choices made on the flow's pages come back here; they count only with the session's CSRF token.
  app.post(AUTHORIZE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
    if (session && !tokensEqual(field(body, "csrf"), session.csrfToken)) {
      const link = authorizeLink(request, authorizeParameters(body).params);
      return formExpired(request, reply, link, "oauth.error.form_expired_authorize", { session });
    }
    return run(request, reply, body, session);
  });

  app.post(LOGIN_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const { params } = authorizeParameters(body);
    const chosen = chosenLocale(request, body);
    if (!tokensEqual(field(body, "csrf"), request.cookies[LOGIN_CSRF_COOKIE])) {
      return formExpired(request, reply, authorizeLink(request, params), "oauth.error.form_expired_login", { chosen });
    }
    const email = field(body, "email") ?? "";
    const password = field(body, "password") ?? "";
    try {
      const user = await signIn(db, throttle, { email, password, address: request.ip });
      // A new session on every sign-in: the browser's earlier one (say, still waiting for its code) ends.
      await destroySession(db, request.cookies[SESSION_COOKIE]);
      // A second factor, or the enrolment an organization requires, may still be to come (docs/accounts.md).
      const stage = await sessionStageFor(db, user.id);
      const token = await createSession(db, config, user.id, { ...sessionContext(request), stage });
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.authUrl, config.sessionTtlSeconds));
      reply.clearCookie(LOGIN_CSRF_COOKIE, loginCsrfCookie(config));
      // A language chosen on the sign-in page is the user's from now on.
      if (chosen) await rememberUserLocale(db, user.id, chosen);
      const next = stage === "active" ? afterSignIn(params) : `${SECOND_FACTOR_PATH}?${queryOf(params)}`;
      return reply.code(303).header("cache-control", "no-store").redirect(next);
    } catch (error) {
      if (error instanceof AppError && [401, 429, 503].includes(error.status)) {
        if (error.headers) reply.headers(error.headers);
        return renderLogin(request, reply, error.status, params, { error, email, chosen });
      }
      throw error;
    }
  });

  /**
   * The second step of sign-in: the code page of a session at stage "second_factor" (`method=recovery_code`:
   * a recovery code instead; with passkeys, "Use a passkey", the only action without an authenticator
   * app), or, at stage "enrol", where to set up two-step verification. Any other session goes on with
   * the authorization request.
   */
  async function renderSecondFactor(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    session: SessionUser,
    params: AuthorizeParameters,
    options: { recovery: boolean; error?: AppError },
  ) {
    const method = options.recovery ? "recovery_code" : undefined;
    const pageLanguage = await language(
      request,
      reply,
      { path: SECOND_FACTOR_PATH, query: { ...params, method } },
      { session },
    );
    if (session.stage === "enrol") {
      return sendPage(
        reply,
        status,
        enrolRequiredPage(pageLanguage, `${config.baseUrl.replace(/\/+$/, "")}/admin/sign-in`),
      );
    }
    const choices = await secondFactorChoices(db, session.userId);
    const passkeys = choices.includes("passkey");
    const ask = options.recovery ? "recovery_code" : passkeys && !choices.includes("totp") ? "passkey" : "code";
    // The other way, by a link: recovery codes while some are left; from them, back to the app if it is set up.
    const otherWay = ask === "recovery_code" ? "code" : "recovery_code";
    const switchTo = choices.includes(otherWay === "code" ? "totp" : "recovery_code") ? otherWay : undefined;
    const other = queryOf({ ...params, method: switchTo === "recovery_code" ? "recovery_code" : undefined });
    return sendPage(
      reply,
      status,
      secondFactorPage(pageLanguage, {
        action: SECOND_FACTOR_PATH,
        hidden: { ...params, csrf: session.csrfToken, method },
        ask,
        switchTo: switchTo && { href: `${SECOND_FACTOR_PATH}?${other}`, ask: switchTo },
        passkeyAction: passkeys ? PASSKEY_SECOND_FACTOR_PATH : undefined,
        error: options.error ? signInErrorMessage(pageLanguage.locale, options.error) : undefined,
      }),
    );
  }

  /** The session of a sign-in still at a step (second factor, enrolment), or undefined. */
  async function pendingSession(request: FastifyRequest) {
    const session = await loadSessionAnyStage(db, request.cookies[SESSION_COOKIE], request.ip);
    return session && session.stage !== "active" ? session : undefined;
  }

  app.get(SECOND_FACTOR_PATH, { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Source;
    const { params } = authorizeParameters(query);
    const session = await pendingSession(request);
    if (!session) return reply.code(303).header("cache-control", "no-store").redirect(afterSignIn(params));
    return renderSecondFactor(request, reply, 200, session, params, {
      recovery: field(query, "method") === "recovery_code",
    });
  });

  // Counts only with the session's CSRF token (the session exists from the password on, so its token stands in for the login form's).
  app.post(SECOND_FACTOR_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const { params } = authorizeParameters(body);
    const session = await pendingSession(request);
    if (!session) return reply.code(303).header("cache-control", "no-store").redirect(afterSignIn(params));
    if (!tokensEqual(field(body, "csrf"), session.csrfToken)) {
      const link = { path: SECOND_FACTOR_PATH, query: params };
      return formExpired(request, reply, link, "oauth.error.form_expired_login", { session });
    }
    const recovery = field(body, "method") === "recovery_code";
    if (session.stage !== "second_factor")
      return renderSecondFactor(request, reply, 200, session, params, { recovery });
    const proof: SecondFactorProof = recovery
      ? { recovery_code: (field(body, "recovery_code") ?? "").slice(0, 40) }
      : { code: (field(body, "code") ?? "").slice(0, 20) };
    try {
      await verifySecondFactor(factors, { userId: session.userId, proof, address: request.ip });
    } catch (error) {
      if (error instanceof AppError && [401, 429, 503].includes(error.status)) {
        if (error.headers) reply.headers(error.headers);
        return renderSecondFactor(request, reply, error.status, session, params, { recovery, error });
      }
      throw error;
    }
    // The step done: a new, active session (a new token), then the authorization goes on.
    const token = await raiseSession(
      db,
      config,
      request.cookies[SESSION_COOKIE],
      session.userId,
      sessionContext(request),
    );
    reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.authUrl, config.sessionTtlSeconds));
    return reply.code(303).header("cache-control", "no-store").redirect(afterSignIn(params));
  });

  app.get(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const session = await loadSession(db, request.cookies[SESSION_COOKIE], request.ip);
    const pageLanguage = await language(request, reply, { path: LOGOUT_PATH }, { session });
    const { locale } = pageLanguage;
    if (!session) {
      return sendPage(
        reply,
        200,
        errorPage(
          pageLanguage,
          t(locale, "oauth.sign_out.signed_out_title"),
          t(locale, "oauth.sign_out.not_signed_in"),
        ),
      );
    }
    const title = t(locale, "oauth.sign_out.title");
    const signedInAs = t(locale, "oauth.sign_out.signed_in_as", { email: session.email });
    return sendPage(
      reply,
      200,
      page(
        pageLanguage,
        title,
        `<h1>${escapeHtml(title)}</h1>\n    <p class="muted">${escapeHtml(signedInAs)}</p>\n    <form method="post" action="${LOGOUT_PATH}"><input type="hidden" name="csrf" value="${session.csrfToken}"><button type="submit">${escapeHtml(t(locale, "oauth.sign_out.submit"))}</button></form>`,
      ),
    );
  });

  app.post(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    const session = await loadSession(db, token, request.ip);
    const pageLanguage = await language(request, reply, { path: LOGOUT_PATH }, { session });
    const { locale } = pageLanguage;
    if (session && !tokensEqual(field((request.body ?? {}) as Source, "csrf"), session.csrfToken)) {
      return sendPage(
        reply,
        403,
        errorPage(
          pageLanguage,
          t(locale, "oauth.error.form_expired_title"),
          t(locale, "oauth.error.form_expired_logout"),
        ),
      );
    }
    await destroySession(db, token);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(config.authUrl));
    return sendPage(
      reply,
      200,
      errorPage(pageLanguage, t(locale, "oauth.sign_out.signed_out_title"), t(locale, "oauth.sign_out.signed_out")),
    );
  });
}
