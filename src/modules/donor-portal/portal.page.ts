import { readFileSync } from "node:fs";
import type { FastifyReply } from "fastify";
import type { ValidationIssue } from "../../errors/app-error.js";
import {
  escapeHtml,
  htmlDocument,
  languageSwitcher,
  type PageSecurity,
  sendHtmlPage,
  TEST_MODE_STYLE,
} from "../../http/html-page.js";
import type { Locale } from "../../i18n/locales.js";
import { type MessageValues, t } from "../../i18n/messages.js";
import { type DonorSession, portalPath } from "./donor-session.js";
import { localeHeaders } from "./portal-i18n.js";

/**
 * The donor portal's page shell: server-rendered, no script, the organization's name at the top,
 * and (signed in) who is signed in with a sign-out button. Every page of the portal is built on it,
 * the recurring-gift pages included.
 */

export const PORTAL_SECURITY: PageSecurity = {
  frameAncestors: "'none'",
  allow: ["form-action 'self'", "img-src 'self' data:"],
};

const STYLE = readFileSync(new URL("../../../web/portal/portal.css", import.meta.url), "utf8") + TEST_MODE_STYLE;

export const html = escapeHtml;

/** A message of the catalog, escaped for HTML. */
export const say = (locale: Locale, key: string, values?: MessageValues) => escapeHtml(t(locale, key, values));

/**
 * A message with one argument rendered as HTML (a <strong> around the email): the argument's place is
 * found in the formatted text, the rest escaped.
 */
export function sayWith(locale: Locale, key: string, values: MessageValues, name: string, markup: string): string {
  const MARK = "\u0000";
  return say(locale, key, { ...values, [name]: MARK }).replace(MARK, markup);
}

/**
 * The language switcher of a portal page. `path` is the page's own path, with the query it needs
 * (`?next=gifts/12`), if any: the switcher's `lang` joins that query.
 */
export function portalSwitcher(locale: Locale, path: string): string {
  if (!path.includes("?")) return languageSwitcher(locale, path);
  return languageSwitcher(locale, path).replaceAll(`${html(path)}?lang=`, `${html(path)}&amp;lang=`);
}

export interface PortalPageOptions {
  title: string;
  /** The page's language: a signed-in donor's `session.locale`, else negotiated for the request. */
  locale: Locale;
  /** The page's own path (a GET address; a query it needs may follow), for the language switcher. */
  path: string;
  /** The signed-in donor; without one, the page names `organization` (or none, for an unknown one). */
  session?: DonorSession;
  organization?: { name: string; slug: string; testMode?: boolean };
  /** The inside of <main>: the page's own h1 and content, already escaped. */
  body: string;
  /** 200 unless given. */
  status?: number;
  headers?: Record<string, string>;
}

/** A hidden field carrying the session's CSRF token: every form of a signed-in page includes it. */
export function csrfField(session: DonorSession): string {
  return `<input type="hidden" name="csrf" value="${html(session.csrfToken)}">`;
}

/**
 * The bar at the top of every portal page: the organization (a link home), who is signed in with a
 * sign-out button, and the language switcher. `signOut: false` leaves the button out.
 */
export function topBar(options: {
  locale: Locale;
  path: string;
  session?: DonorSession;
  organization?: { name: string; slug: string };
  signOut?: boolean;
}): string {
  const { session, locale } = options;
  const name = session?.organizationName ?? options.organization?.name ?? t(locale, "portal.shell.portal_name");
  const slug = session?.organizationSlug ?? options.organization?.slug;
  const home = slug ? `<a href="${html(portalPath(slug))}">${html(name)}</a>` : html(name);
  const signOut =
    session && options.signOut !== false
      ? `
      <form method="post" action="${html(portalPath(session.organizationSlug, "sign-out"))}">
        ${csrfField(session)}
        <button type="submit" class="link">${say(locale, "portal.shell.sign_out")}</button>
      </form>`
      : "";
  const who = session
    ? `<div class="who">
      <span>${sayWith(locale, "portal.shell.signed_in_as", {}, "email", `<strong>${html(session.email)}</strong>`)}</span>${signOut}
    </div>`
    : "";
  return `<header class="top">
  <div class="wrap">
    <p class="org">${home}</p>
    ${who}
    ${portalSwitcher(locale, options.path)}
  </div>
</header>`;
}

/** The banner of an organization in test mode, first on each portal page. */
function testModeBanner(locale: Locale): string {
  return `<p class="test-mode-banner" id="test-mode-banner" role="note"><strong>${say(locale, "portal.test_mode.title")}</strong> ${say(locale, "portal.test_mode.detail")}</p>\n`;
}

/**
 * Sends a portal page (no-store, nonce CSP, no framing) in its language (`<html lang>`,
 * Content-Language). Returns the reply, for `return portalPage(…)`.
 */
export function portalPage(reply: FastifyReply, options: PortalPageOptions): FastifyReply {
  const { locale } = options;
  const organizationName = options.session?.organizationName ?? options.organization?.name;
  const title = organizationName ? `${options.title} · ${organizationName}` : options.title;
  const testMode = options.session?.testMode ?? options.organization?.testMode ?? false;
  const banner = testMode ? testModeBanner(locale) : "";
  const headers = { ...localeHeaders(locale), ...options.headers };
  return sendHtmlPage(reply, options.status ?? 200, { ...PORTAL_SECURITY, headers }, (nonce) =>
    htmlDocument({
      title,
      nonce,
      style: STYLE,
      lang: locale,
      head: '<meta name="robots" content="noindex">\n',
      body: `<a class="skip" href="#main">${say(locale, "portal.shell.skip")}</a>
${topBar(options)}
<main id="main" class="wrap">
${banner}${options.body}
</main>`,
    }),
  );
}

/**
 * The list of a form's errors at its top, each linking to its field (ids `field-<name>`); it takes
 * the focus when the page loads so a screen reader announces it first.
 */
export function errorSummary(errors: readonly ValidationIssue[], locale: Locale): string {
  if (errors.length === 0) return "";
  const items = errors
    .map((error) =>
      error.field
        ? `<li><a href="#field-${html(error.field)}">${html(error.message)}</a></li>`
        : `<li>${html(error.message)}</li>`,
    )
    .join("\n      ");
  return `<div class="error-summary" role="alert" tabindex="-1" autofocus aria-labelledby="error-summary-title">
    <h2 id="error-summary-title">${say(locale, "portal.error_summary.title")}</h2>
    <ul class="plain">
      ${items}
    </ul>
  </div>`;
}

/** A labelled text input with its hint and its error (described-by both), as every portal form shows it. */
export function textField(options: {
  name: string;
  label: string;
  value: string;
  type?: string;
  autocomplete?: string;
  maxLength?: number;
  hint?: string;
  error?: string;
  required?: boolean;
  wide?: boolean;
}): string {
  const id = `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : "", options.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const attributes = [
    `type="${options.type ?? "text"}"`,
    `id="${id}"`,
    `name="${html(options.name)}"`,
    `value="${html(options.value)}"`,
    options.autocomplete ? `autocomplete="${options.autocomplete}"` : "",
    options.maxLength ? `maxlength="${options.maxLength}"` : "",
    options.required ? "required" : "",
    described ? `aria-describedby="${described}"` : "",
    options.error ? 'aria-invalid="true"' : "",
  ].filter(Boolean);
  return `<div class="field${options.wide ? " wide" : ""}">
        <label for="${id}">${html(options.label)}</label>
        <input ${attributes.join(" ")}>
        ${options.hint ? `<p class="hint" id="${id}-hint">${html(options.hint)}</p>` : ""}
        ${options.error ? `<p class="field-error" id="${id}-error">${html(options.error)}</p>` : ""}
      </div>`;
}

/** The first error of each field, by field name. */
export function errorsByField(errors: readonly ValidationIssue[]): Map<string, string> {
  const byField = new Map<string, string>();
  for (const error of errors) if (error.field && !byField.has(error.field)) byField.set(error.field, error.message);
  return byField;
}

const ERROR_TITLES: Record<number, string> = {
  400: "portal.error_page.title_400",
  403: "portal.error_page.title_403",
  404: "portal.error_page.title_404",
  409: "portal.error_page.title_refused",
  422: "portal.error_page.title_refused",
  429: "portal.error_page.title_429",
  503: "portal.error_page.title_503",
};

/** A page that explains what went wrong (status and message), with a way back to the portal. */
export function portalErrorPage(
  reply: FastifyReply,
  options: {
    status: number;
    message: string;
    locale: Locale;
    path: string;
    organization?: { name: string; slug: string; testMode?: boolean };
  },
): FastifyReply {
  const { locale } = options;
  const title = t(
    locale,
    ERROR_TITLES[options.status] ??
      (options.status >= 500 ? "portal.error_page.title_server" : "portal.error_page.title_other"),
  );
  const back = options.organization
    ? `<p><a href="${html(portalPath(options.organization.slug))}">${say(locale, "portal.error_page.back")}</a></p>`
    : "";
  return portalPage(reply, {
    title,
    locale,
    path: options.path,
    organization: options.organization,
    status: options.status,
    body: `<h1>${html(title)}</h1>
  <p>${html(options.message)}</p>
  ${back}`,
  });
}
