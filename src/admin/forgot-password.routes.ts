import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { createAfterResponse } from "../http/after-response.js";
import { cookieAttributes } from "../http/cookies.js";
import { escapeHtml, type PageSecurity, type RenderPage, sendHtmlPage } from "../http/html-page.js";
import { sameOriginReturnPath } from "../http/return-path.js";
import type { Locale } from "../i18n/locales.js";
import { t } from "../i18n/messages.js";
import {
  countPasswordResetRequest,
  FORGOT_PASSWORD_PATH,
  forgotPasswordPath,
  PASSWORD_RESET_LINK_LIFETIME_SECONDS,
  type PasswordResetThrottle,
  queuePasswordReset,
} from "../identity/password-reset.service.js";
import { tokensEqual } from "../identity/sessions.service.js";
import { chosenLocale, pageLocale } from "../oauth/locale.js";
import { hiddenInputs, languageLinks, type PageLanguage, page } from "../oauth/pages.js";

const SECURITY: PageSecurity = { frameAncestors: "'none'", allow: ["form-action 'self'"] };
/** The form's CSRF cookie (a double submit, as the OAuth login form's): Strict, for this page alone. */
const CSRF_COOKIE = "donata_reset_csrf";
/** Where "Back to sign-in" leads without a `next`: the admin panel's sign-in page. */
const PANEL_SIGN_IN = "/admin/sign-in";
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_EMAIL_LENGTH = 320;

interface FormState {
  next?: string;
  chosen?: Locale;
  email?: string;
  /** What went wrong, in the page's language. */
  error?: (locale: Locale) => string;
}

const backLink = (locale: Locale, next: string | undefined) =>
  `<p><a href="${escapeHtml(next ?? PANEL_SIGN_IN)}">${escapeHtml(t(locale, "signin.forgot.back"))}</a></p>`;

function requestPage(language: PageLanguage, csrf: string, state: FormState): RenderPage {
  const { locale } = language;
  const title = t(locale, "signin.forgot.title");
  const error = state.error ? `<div class="error" role="alert">${escapeHtml(state.error(locale))}</div>` : "";
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p class="muted">${escapeHtml(t(locale, "signin.forgot.intro"))}</p>
    ${error}
    <form method="post" action="${FORGOT_PASSWORD_PATH}">
      ${hiddenInputs({ csrf, next: state.next, lang: state.chosen })}
      <label for="email">${escapeHtml(t(locale, "signin.forgot.email"))}</label>
      <input id="email" name="email" type="email" autocomplete="username" maxlength="${MAX_EMAIL_LENGTH}" required value="${escapeHtml(state.email ?? "")}" autofocus>
      <button type="submit">${escapeHtml(t(locale, "signin.forgot.submit"))}</button>
    </form>
    ${backLink(locale, state.next)}`,
  );
}

/** The one answer to a counted request, whether or not an account uses the address. */
function sentPage(language: PageLanguage, next: string | undefined): RenderPage {
  const { locale } = language;
  const title = t(locale, "signin.forgot.sent_title");
  const sent = t(locale, "signin.forgot.sent", { minutes: PASSWORD_RESET_LINK_LIFETIME_SECONDS / 60 });
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p role="status">${escapeHtml(sent)}</p>
    <p class="muted">${escapeHtml(t(locale, "signin.forgot.sent_help"))} <a href="${escapeHtml(forgotPasswordPath(next))}">${escapeHtml(t(locale, "signin.forgot.ask_again"))}</a></p>
    ${backLink(locale, next)}`,
  );
}

/** What a refused request's page says: too many requests (with when to try again), or the counters unreachable. */
function refusalMessage(error: AppError): (locale: Locale) => string {
  if (error.status === 503) return (locale) => t(locale, "signin.forgot.unavailable");
  const seconds = Number(error.headers?.["retry-after"] ?? 60);
  return (locale) => t(locale, "signin.forgot.too_many", { minutes: Math.max(1, Math.ceil(seconds / 60)) });
}

/**
 * "Forgot your password?" (`/admin/forgot-password`, under AUTH_URL): a GET shows a form that asks
 * for the email; its POST is counted (per email and per address: 429 with Retry-After past either)
 * and always gets the same answer, whether or not an account uses the address: the account is
 * looked up, and its email queued, only once that answer has been sent. `next`, a same-origin path
 * (the OAuth authorization being signed in to), is where "Back to sign-in" and the emailed link lead.
 * The page speaks the language of the sign-in pages (?lang=, the switcher's cookie, Accept-Language).
 */
export function forgotPasswordRoutes(app: FastifyInstance, db: Db, config: Config, throttle: PasswordResetThrottle) {
  const afterResponse = createAfterResponse(app);
  const csrfCookie = (maxAgeSeconds?: number) => ({
    ...cookieAttributes(config.authUrl, { path: FORGOT_PASSWORD_PATH, sameSite: "strict" }),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  });

  async function language(request: FastifyRequest, reply: FastifyReply, state: FormState): Promise<PageLanguage> {
    const locale = await pageLocale(db, request, reply, { publicUrl: config.authUrl, chosen: state.chosen });
    return { locale, switcher: languageLinks(locale, FORGOT_PASSWORD_PATH, { next: state.next }) };
  }

  async function sendForm(request: FastifyRequest, reply: FastifyReply, status: number, state: FormState) {
    const csrf = randomBytes(24).toString("base64url");
    reply.setCookie(CSRF_COOKIE, csrf, csrfCookie(3600));
    const pageLanguage = await language(request, reply, state);
    return sendHtmlPage(reply, status, SECURITY, requestPage(pageLanguage, csrf, state));
  }

  app.get(FORGOT_PASSWORD_PATH, { schema: { hide: true } }, async (request, reply) => {
    const next = sameOriginReturnPath((request.query as Record<string, unknown>).next);
    return sendForm(request, reply, 200, { next, chosen: chosenLocale(request) });
  });

  app.post(FORGOT_PASSWORD_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const csrf = typeof body.csrf === "string" ? body.csrf : undefined;
    const email = typeof body.email === "string" ? body.email.trim() : "";
    const state: FormState = { next: sameOriginReturnPath(body.next), chosen: chosenLocale(request, body), email };
    if (!tokensEqual(csrf, request.cookies[CSRF_COOKIE])) {
      return sendForm(request, reply, 403, { ...state, error: (locale) => t(locale, "signin.forgot.form_expired") });
    }
    if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) {
      return sendForm(request, reply, 400, { ...state, error: (locale) => t(locale, "signin.forgot.invalid_email") });
    }
    try {
      await countPasswordResetRequest(throttle, { email, address: request.ip });
    } catch (error) {
      if (error instanceof AppError && (error.status === 429 || error.status === 503)) {
        if (error.headers) reply.headers(error.headers);
        return sendForm(request, reply, error.status, { ...state, error: refusalMessage(error) });
      }
      throw error;
    }
    // Known or not, the answer is the same and leaves at the same moment: the lookup comes after it.
    afterResponse(request, reply, () => queuePasswordReset(db, { email, next: state.next }));
    return sendHtmlPage(reply, 200, SECURITY, sentPage(await language(request, reply, state), state.next));
  });
}
