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
import {
  createSession,
  destroySession,
  loadSession,
  type SessionUser,
  tokensEqual,
} from "../identity/sessions.service.js";
import { type CredentialThrottle, signIn } from "../identity/sign-in.service.js";
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
  errorPage,
  type Hidden,
  languageLinks,
  loginPage,
  organizationChoicePage,
  type PageLanguage,
  page,
  signInErrorMessage,
} from "./pages.js";

const LOGIN_CSRF_COOKIE = "donata_login_csrf";
const AUTHORIZE_PATH = "/oauth/authorize/";
const LOGIN_PATH = "/oauth/login/";
const LOGOUT_PATH = "/oauth/logout/";
/**
 * The login form's CSRF cookie: Strict, since only our own form posts it back (a same-site request);
 * it is set by the page itself, so a cross-site arrival at the login page does not need it sent.
 */
const loginCsrfCookie = (config: Config, maxAgeSeconds?: number) => ({
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
function authorizeParameters(source: Source): { params: AuthorizeParameters; repeated: string[] } {
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

export function authorizeRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const adminOrigin = new URL(config.baseUrl).origin;

  const pageSecurity: PageSecurity = { frameAncestors: adminOrigin };
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
      const pageLanguage = await language(request, reply, authorizeLink(request, authorizeParameters(body).params), {
        session,
      });
      const { locale } = pageLanguage;
      return sendPage(
        reply,
        403,
        errorPage(
          pageLanguage,
          t(locale, "oauth.error.form_expired_title"),
          t(locale, "oauth.error.form_expired_authorize"),
        ),
      );
    }
    return run(request, reply, body, session);
  });

  app.post(LOGIN_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const { params } = authorizeParameters(body);
    const chosen = chosenLocale(request, body);
    if (!tokensEqual(field(body, "csrf"), request.cookies[LOGIN_CSRF_COOKIE])) {
      const pageLanguage = await language(request, reply, authorizeLink(request, params), { chosen });
      const { locale } = pageLanguage;
      return sendPage(
        reply,
        403,
        errorPage(
          pageLanguage,
          t(locale, "oauth.error.form_expired_title"),
          t(locale, "oauth.error.form_expired_login"),
        ),
      );
    }
    const email = field(body, "email") ?? "";
    const password = field(body, "password") ?? "";
    try {
      const user = await signIn(db, throttle, { email, password, address: request.ip });
      const token = await createSession(db, config, user.id, sessionContext(request));
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.authUrl, config.sessionTtlSeconds));
      reply.clearCookie(LOGIN_CSRF_COOKIE, loginCsrfCookie(config));
      // A language chosen on the sign-in page is the user's from now on.
      if (chosen) await rememberUserLocale(db, user.id, chosen);
      const next = params.client_id
        ? `${AUTHORIZE_PATH}?${new URLSearchParams(params as Record<string, string>)}`
        : "/";
      return reply.code(303).header("cache-control", "no-store").redirect(next);
    } catch (error) {
      if (error instanceof AppError && [401, 429, 503].includes(error.status)) {
        if (error.headers) reply.headers(error.headers);
        return renderLogin(request, reply, error.status, params, { error, email, chosen });
      }
      throw error;
    }
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
