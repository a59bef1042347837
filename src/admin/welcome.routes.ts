import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { requestOrigin } from "../events/origin.js";
import { escapeHtml, type PageSecurity, type RenderPage, sendHtmlPage } from "../http/html-page.js";
import { sameOriginReturnPath } from "../http/return-path.js";
import { SESSION_COOKIE, sessionContext, sessionCookieOptions } from "../http/session-cookie.js";
import type { Locale } from "../i18n/locales.js";
import { t } from "../i18n/messages.js";
import {
  passwordProblem,
  redeemSignInLink,
  requireLiveSignInLink,
  WELCOME_PATH,
} from "../identity/one-time-links.service.js";
import { forgotPasswordPath } from "../identity/password-reset.service.js";
import { sessionStageFor } from "../identity/second-factor.service.js";
import { createSession, destroySession } from "../identity/sessions.service.js";
import { type CredentialThrottle, countCredentialAttempt } from "../identity/sign-in.service.js";
import { MIN_PASSWORD_LENGTH } from "../identity/users.service.js";
import { chosenLocale, pageLocale, rememberUserLocale } from "../oauth/locale.js";
import { errorPage, languageLinks, type PageLanguage, page, signInErrorMessage } from "../oauth/pages.js";

const SECURITY: PageSecurity = { frameAncestors: "'none'", allow: ["form-action 'self'"] };
const MAX_PASSWORD_LENGTH = 1000;

function choosePasswordPage(
  language: PageLanguage,
  options: { token: string; email: string; purpose: string; error?: string; chosen?: Locale; next?: string },
): RenderPage {
  const { locale } = language;
  const intro = t(locale, options.purpose === "setup" ? "signin.welcome.intro_setup" : "signin.welcome.intro_reset");
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : "";
  const title = t(locale, "signin.welcome.title");
  // A language chosen on this page becomes the user's when the form signs them in.
  const lang = options.chosen ? `\n      <input type="hidden" name="lang" value="${options.chosen}">` : "";
  // Where the user goes once signed in (the OAuth authorization they had asked a new password from).
  const next = options.next ? `\n      <input type="hidden" name="next" value="${escapeHtml(options.next)}">` : "";
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p class="muted">${escapeHtml(intro)}</p>
    ${error}
    <form method="post" action="${WELCOME_PATH}">
      <input type="hidden" name="token" value="${escapeHtml(options.token)}">${lang}${next}
      <label for="email">${escapeHtml(t(locale, "signin.welcome.email"))}</label>
      <input id="email" name="email" type="email" autocomplete="username" value="${escapeHtml(options.email)}" readonly>
      <label for="password">${escapeHtml(t(locale, "signin.welcome.password", { min: MIN_PASSWORD_LENGTH }))}</label>
      <input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH}" required autofocus>
      <label for="repeat">${escapeHtml(t(locale, "signin.welcome.repeat"))}</label>
      <input id="repeat" name="repeat" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH}" required>
      <button type="submit">${escapeHtml(t(locale, "signin.welcome.submit"))}</button>
    </form>`,
  );
}

/** What is wrong with a new password, in the page's language (the rules are passwordProblem's). */
function passwordMessage(locale: Locale, password: string, repeat: string): string | undefined {
  if (passwordProblem(password)) {
    return password.length < MIN_PASSWORD_LENGTH
      ? t(locale, "signin.welcome.too_short", { min: MIN_PASSWORD_LENGTH })
      : t(locale, "signin.welcome.too_long", { max: String(MAX_PASSWORD_LENGTH) });
  }
  return password === repeat ? undefined : t(locale, "signin.welcome.differ");
}

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * The page a one-time sign-in link opens (`donata setup`, `donata user link`): a GET shows the form
 * and changes nothing (mail scanners follow links); the POST uses the link up, sets the password and
 * signs the user in to the admin panel, or to `next` (a same-origin path: an emailed reset link asked
 * for from an OAuth sign-in leads back to that authorization). The page speaks the user's language (?lang=, theirs, the
 * switcher's cookie, Accept-Language); one chosen on it is saved as theirs by the POST.
 */
export function welcomeRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const send = (reply: FastifyReply, status: number, render: RenderPage) =>
    sendHtmlPage(reply, status, SECURITY, render);

  /** The page's language; the link's user is read, never written (a GET changes nothing). */
  async function language(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string | undefined,
    options: { userId?: number; chosen?: Locale; next?: string } = {},
  ): Promise<PageLanguage> {
    const locale = await pageLocale(db, request, reply, {
      publicUrl: config.authUrl,
      userId: options.userId,
      saveForUser: false,
      chosen: options.chosen,
    });
    return { locale, switcher: languageLinks(locale, WELCOME_PATH, { token, next: options.next }) };
  }

  async function deadLinkPage(
    request: FastifyRequest,
    reply: FastifyReply,
    error: AppError,
    token: string | undefined,
    chosen: Locale | undefined,
    next: string | undefined,
  ) {
    const pageLanguage = await language(request, reply, token, { chosen, next });
    const { locale } = pageLanguage;
    const expired = error.status === 410;
    const title = t(locale, expired ? "signin.welcome.link_expired_title" : "signin.welcome.link_invalid_title");
    const message = t(locale, expired ? "signin.welcome.link_expired" : "signin.welcome.link_invalid");
    return send(
      reply,
      error.status,
      page(
        pageLanguage,
        title,
        `<h1>${escapeHtml(title)}</h1>
    <p>${escapeHtml(`${message} ${t(locale, "signin.welcome.dead_link_help")}`)}</p>
    <p><a href="${escapeHtml(forgotPasswordPath(next))}">${escapeHtml(t(locale, "signin.welcome.new_link"))}</a></p>`,
      ),
    );
  }

  app.get(WELCOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { token, next: rawNext } = request.query as Record<string, unknown>;
    const chosen = chosenLocale(request);
    const next = sameOriginReturnPath(rawNext);
    const shown = typeof token === "string" ? token : undefined;
    try {
      const link = await requireLiveSignInLink(db, token);
      const pageLanguage = await language(request, reply, shown, { userId: link.userId, chosen, next });
      return send(reply, 200, choosePasswordPage(pageLanguage, { token: token as string, ...link, chosen, next }));
    } catch (error) {
      if (error instanceof AppError && (error.status === 404 || error.status === 410))
        return deadLinkPage(request, reply, error, shown, chosen, next);
      throw error;
    }
  });

  app.post(WELCOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = field(request.body, "token") ?? "";
    const password = field(request.body, "password") ?? "";
    const repeat = field(request.body, "repeat") ?? "";
    const chosen = chosenLocale(request, request.body);
    const next = sameOriginReturnPath(field(request.body, "next"));
    try {
      const link = await requireLiveSignInLink(db, token).catch(async (error: unknown) => {
        // Counted as well, so nobody tries tokens at leisure.
        await countCredentialAttempt(throttle, { account: { email: "sign-in link" }, address: request.ip });
        throw error;
      });
      const attempt = await countCredentialAttempt(throttle, { account: { userId: link.userId }, address: request.ip });
      const pageLanguage = await language(request, reply, token, { userId: link.userId, chosen, next });
      const problem = passwordMessage(pageLanguage.locale, password, repeat);
      if (problem) {
        return send(reply, 400, choosePasswordPage(pageLanguage, { token, ...link, error: problem, chosen, next }));
      }
      const origin = requestOrigin(request, { type: "user", user_id: link.userId, label: link.email });
      const userId = await redeemSignInLink(db, token, password, origin);
      await attempt.succeeded();
      if (chosen) await rememberUserLocale(db, userId, chosen);
      await destroySession(db, request.cookies[SESSION_COOKIE]);
      // A link replaces the password, never the second factor: that step (or the required enrolment) still comes.
      const stage = await sessionStageFor(db, userId);
      const session = await createSession(db, config, userId, { ...sessionContext(request), stage });
      reply.setCookie(SESSION_COOKIE, session, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
      // An authorization still asks for the second step first, on its own page (the panel asks on its sign-in page).
      const then =
        stage !== "active" && next?.startsWith("/oauth/authorize/")
          ? next.replace("/oauth/authorize/", "/oauth/second-factor/")
          : next;
      return reply
        .code(303)
        .header("cache-control", "no-store")
        .redirect(then ?? "/admin/");
    } catch (error) {
      if (error instanceof AppError && (error.status === 404 || error.status === 410))
        return deadLinkPage(request, reply, error, token, chosen, next);
      if (error instanceof AppError && (error.status === 429 || error.status === 503)) {
        if (error.headers) reply.headers(error.headers);
        const pageLanguage = await language(request, reply, token, { chosen, next });
        const { locale } = pageLanguage;
        return send(
          reply,
          error.status,
          errorPage(pageLanguage, t(locale, "signin.welcome.try_later_title"), signInErrorMessage(locale, error)),
        );
      }
      throw error;
    }
  });
}
