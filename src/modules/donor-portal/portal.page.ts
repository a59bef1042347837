import { readFileSync } from "node:fs";
import type { FastifyReply } from "fastify";
import type { ValidationIssue } from "../../errors/app-error.js";
import {
  escapeHtml,
  htmlDocument,
  type PageSecurity,
  sendHtmlPage,
  TEST_MODE_STYLE,
  testModeBanner,
} from "../../http/html-page.js";
import { type DonorSession, portalPath } from "./donor-session.js";

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

export interface PortalPageOptions {
  title: string;
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

function topBar(options: PortalPageOptions): string {
  const { session } = options;
  const name = session?.organizationName ?? options.organization?.name ?? "Donor portal";
  const slug = session?.organizationSlug ?? options.organization?.slug;
  const home = slug ? `<a href="${html(portalPath(slug))}">${html(name)}</a>` : html(name);
  const who = session
    ? `<div class="who">
      <span>Signed in as <strong>${html(session.email)}</strong></span>
      <form method="post" action="${html(portalPath(session.organizationSlug, "sign-out"))}">
        ${csrfField(session)}
        <button type="submit" class="link">Sign out</button>
      </form>
    </div>`
    : "";
  return `<header class="top">
  <div class="wrap">
    <p class="org">${home}</p>
    ${who}
  </div>
</header>`;
}

/** Sends a portal page (no-store, nonce CSP, no framing). Returns the reply, for `return portalPage(…)`. */
export function portalPage(reply: FastifyReply, options: PortalPageOptions): FastifyReply {
  const organizationName = options.session?.organizationName ?? options.organization?.name;
  const title = organizationName ? `${options.title} · ${organizationName}` : options.title;
  const testMode = options.session?.testMode ?? options.organization?.testMode ?? false;
  const banner = testMode
    ? testModeBanner("This organization is trying its pages: gifts made now are test data and nothing is charged.")
    : "";
  return sendHtmlPage(reply, options.status ?? 200, { ...PORTAL_SECURITY, headers: options.headers }, (nonce) =>
    htmlDocument({
      title,
      nonce,
      style: STYLE,
      head: '<meta name="robots" content="noindex">\n',
      body: `<a class="skip" href="#main">Skip to content</a>
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
export function errorSummary(errors: readonly ValidationIssue[]): string {
  if (errors.length === 0) return "";
  const items = errors
    .map((error) =>
      error.field
        ? `<li><a href="#field-${html(error.field)}">${html(error.message)}</a></li>`
        : `<li>${html(error.message)}</li>`,
    )
    .join("\n      ");
  return `<div class="error-summary" role="alert" tabindex="-1" autofocus aria-labelledby="error-summary-title">
    <h2 id="error-summary-title">There is a problem</h2>
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

/** A page that explains what went wrong (status and message), with a way back to the portal. */
export function portalErrorPage(
  reply: FastifyReply,
  options: { status: number; message: string; organization?: { name: string; slug: string } },
): FastifyReply {
  const titles: Record<number, string> = {
    400: "This request could not be understood",
    403: "This form could not be accepted",
    404: "Page not found",
    409: "This change is not possible",
    422: "This change is not possible",
    429: "Too many requests",
    503: "Try again in a moment",
  };
  const title =
    titles[options.status] ??
    (options.status >= 500 ? "Something went wrong on our side" : "This request could not be completed");
  const back = options.organization
    ? `<p><a href="${html(portalPath(options.organization.slug))}">Go to your donor page</a></p>`
    : "";
  return portalPage(reply, {
    title,
    organization: options.organization,
    status: options.status,
    body: `<h1>${html(title)}</h1>
  <p>${html(options.message)}</p>
  ${back}`,
  });
}
