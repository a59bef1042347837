import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PERMISSION_DESCRIPTIONS } from "../auth/permissions.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { cookieAttributes } from "../http/cookies.js";
import { escapeHtml, type PageSecurity, type RenderPage, sendHtmlPage } from "../http/html-page.js";
import {
  createSession,
  destroySession,
  loadSession,
  SESSION_COOKIE,
  type SessionUser,
  sessionCookieOptions,
  tokensEqual,
} from "../sessions/sessions.service.js";
import { type CredentialThrottle, signIn } from "../sessions/sign-in.service.js";
import {
  AUTHORIZE_PARAMETERS,
  type AuthorizeOutcome,
  type AuthorizeParameters,
  authorize,
} from "./authorize.service.js";
import { consentPage, errorPage, type Hidden, loginPage, organizationChoicePage, page } from "./pages.js";

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

  function renderLogin(
    reply: FastifyReply,
    status: number,
    params: AuthorizeParameters,
    options: { applicationName?: string; error?: string; email?: string } = {},
  ) {
    const csrf = randomBytes(24).toString("base64url");
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, loginCsrfCookie(config, 3600));
    return sendPage(reply, status, loginPage({ action: LOGIN_PATH, hidden: { ...params, csrf }, ...options }));
  }

  async function respond(
    reply: FastifyReply,
    outcome: AuthorizeOutcome,
    params: AuthorizeParameters,
    session: SessionUser | undefined,
  ) {
    const hidden: Hidden = { ...params, csrf: session?.csrfToken };
    switch (outcome.kind) {
      case "error_page":
        return sendPage(reply, 400, errorPage(outcome.title, outcome.message));
      case "redirect":
        return reply
          .code(reply.request.method === "GET" ? 302 : 303)
          .header("cache-control", "no-store")
          .redirect(outcome.location);
      case "login":
        return renderLogin(reply, 200, params, { applicationName: outcome.application.name });
      case "choose":
        return sendPage(
          reply,
          200,
          organizationChoicePage({
            action: AUTHORIZE_PATH,
            hidden,
            applicationName: outcome.application.name,
            organizations: outcome.organizations,
          }),
        );
      case "consent":
        return sendPage(
          reply,
          200,
          consentPage({
            action: AUTHORIZE_PATH,
            hidden: { ...hidden, organization: outcome.organization.slug },
            application: { name: outcome.application.name, url: outcome.application.applicationUrl },
            organizationName: outcome.organization.name,
            permissions: outcome.application.permissions.map((name) => ({
              name,
              description: PERMISSION_DESCRIPTIONS[name as keyof typeof PERMISSION_DESCRIPTIONS] ?? name,
            })),
          }),
        );
      case "ask_admin":
        return sendPage(
          reply,
          403,
          errorPage(
            "Ask an administrator",
            `${outcome.application.name} is not installed in ${outcome.organization.name}. Only an owner or an admin of the organization can install it; ask one of them, then try again.`,
          ),
        );
    }
  }

  async function run(request: FastifyRequest, reply: FastifyReply, source: Source, session: SessionUser | undefined) {
    const { params, repeated } = authorizeParameters(source);
    if (repeated.includes("client_id") || repeated.includes("redirect_uri")) {
      return sendPage(reply, 400, errorPage("Invalid request", `${repeated.join(", ")} must appear once.`));
    }
    const decision =
      request.method === "POST"
        ? { organization: field(source, "organization"), decision: field(source, "decision") }
        : {};
    const outcome = await authorize(db, config, params, session, decision, repeated);
    return respond(reply, outcome, params, session);
  }

  app.get(AUTHORIZE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const session = await loadSession(db, request.cookies[SESSION_COOKIE]);
    return run(request, reply, request.query as Source, session);
  });

  // Choices made on the flow's pages come back here; they count only with the session's CSRF token.
  app.post(AUTHORIZE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const session = await loadSession(db, request.cookies[SESSION_COOKIE]);
    if (session && !tokensEqual(field(body, "csrf"), session.csrfToken)) {
      return sendPage(
        reply,
        403,
        errorPage("Form expired", "This form is no longer valid. Go back to the application and start again."),
      );
    }
    return run(request, reply, body, session);
  });

  app.post(LOGIN_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Source;
    const { params } = authorizeParameters(body);
    if (!tokensEqual(field(body, "csrf"), request.cookies[LOGIN_CSRF_COOKIE])) {
      return sendPage(
        reply,
        403,
        errorPage(
          "Form expired",
          "The sign-in form expired or was not sent from this site. Reload the page and try again.",
        ),
      );
    }
    const email = field(body, "email") ?? "";
    const password = field(body, "password") ?? "";
    try {
      const user = await signIn(db, throttle, { email, password, address: request.ip });
      const token = await createSession(db, config, user.id);
      reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(config.authUrl, config.sessionTtlSeconds));
      reply.clearCookie(LOGIN_CSRF_COOKIE, loginCsrfCookie(config));
      const next = params.client_id
        ? `${AUTHORIZE_PATH}?${new URLSearchParams(params as Record<string, string>)}`
        : "/";
      return reply.code(303).header("cache-control", "no-store").redirect(next);
    } catch (error) {
      if (error instanceof AppError && [401, 429, 503].includes(error.status)) {
        if (error.headers) reply.headers(error.headers);
        return renderLogin(reply, error.status, params, { error: error.message, email });
      }
      throw error;
    }
  });

  app.get(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const session = await loadSession(db, request.cookies[SESSION_COOKIE]);
    if (!session) return sendPage(reply, 200, errorPage("Signed out", "You are not signed in."));
    return sendPage(
      reply,
      200,
      page(
        "Sign out",
        `<h1>Sign out</h1>\n    <p class="muted">Signed in as ${escapeHtml(session.email)}</p>\n    <form method="post" action="${LOGOUT_PATH}"><input type="hidden" name="csrf" value="${session.csrfToken}"><button type="submit">Sign out</button></form>`,
      ),
    );
  });

  app.post(LOGOUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    const session = await loadSession(db, token);
    if (session && !tokensEqual(field((request.body ?? {}) as Source, "csrf"), session.csrfToken)) {
      return sendPage(reply, 403, errorPage("Form expired", "Reload the page and try again."));
    }
    await destroySession(db, token);
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(config.authUrl));
    return sendPage(reply, 200, errorPage("Signed out", "You are signed out."));
  });
}
