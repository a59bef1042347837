import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { LOCALE_NAMES, LOCALES, type Locale } from "../i18n/locales.js";
import { t } from "../i18n/messages.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

/**
 * The banner of an organization in test mode, first on each of its pages (donation page, receipt,
 * donor portal): the sandbox takes its gifts and no real money moves. Pages add TEST_MODE_STYLE.
 */
export function testModeBanner(detail = "Gifts made now are test data: nothing is charged or counted."): string {
  return `<p class="test-mode-banner" id="test-mode-banner" role="note"><strong>Test mode — no real money moves.</strong> ${escapeHtml(detail)}</p>\n`;
}

export const TEST_MODE_STYLE = `
  .test-mode-banner { margin: 0 0 1rem; padding: .6rem .9rem; border: 2px dashed #b45309; border-radius: .4rem;
    background: #fffbeb; color: #78350f; font-size: .95rem; }
`;

/** A page rendered around the response's CSP nonce, which its inline style and scripts must carry. */
export type RenderPage = (nonce: string) => string;

/** The standalone HTML document every server-rendered page shares; only nonce'd inline code runs in it. */
export function htmlDocument(options: {
  title: string;
  nonce: string;
  style: string;
  body: string;
  /** Extra head elements (a robots meta, an icon). */
  head?: string;
  /** Inline scripts after the body; each must carry the nonce. */
  scripts?: string;
  /** The language the page is written in (negotiated: src/i18n/negotiate.ts). */
  lang?: Locale;
}): string {
  return `<!doctype html>
<html lang="${options.lang ?? "en"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.head ?? ""}<title>${escapeHtml(options.title)}</title>
<style nonce="${options.nonce}">${options.style}</style>
</head>
<body>
${options.body}
${options.scripts ?? ""}</body>
</html>
`;
}

/**
 * Links to the same page in each language (`?lang=`; the page remembers the choice in a cookie),
 * the current one marked. `path` is the page's own path, without a query.
 */
export function languageSwitcher(locale: Locale, path: string): string {
  const links = LOCALES.map((code) =>
    code === locale
      ? `<a href="${escapeHtml(`${path}?lang=${code}`)}" hreflang="${code}" lang="${code}" aria-current="true">${escapeHtml(LOCALE_NAMES[code])}</a>`
      : `<a href="${escapeHtml(`${path}?lang=${code}`)}" hreflang="${code}" lang="${code}">${escapeHtml(LOCALE_NAMES[code])}</a>`,
  );
  return `<nav class="language-switcher" id="language-switcher" aria-label="${escapeHtml(t(locale, "common.language"))}">${links.join(" · ")}</nav>`;
}

export interface PageSecurity {
  /** Who may frame the page: 'none', 'self' or an origin (the admin panel frames the OAuth pages). */
  frameAncestors: string;
  /** CSP directives beyond default-src 'none' and the nonce'd script and style (connect-src, form-action…). */
  allow?: readonly string[];
  /** Script origins allowed beside the nonce (the donation page of a Stripe organization: https://js.stripe.com). */
  scriptSources?: readonly string[];
  cacheControl?: string;
  headers?: Record<string, string>;
}

const FRAME_OPTIONS: Record<string, string> = { "'none'": "DENY", "'self'": "SAMEORIGIN" };

/** Sends a page with a fresh nonce: its own inline style and script run, nothing else is loaded or framed. */
export function sendHtmlPage(reply: FastifyReply, status: number, security: PageSecurity, render: RenderPage) {
  const nonce = randomBytes(16).toString("base64");
  const csp = [
    "default-src 'none'",
    ["script-src", `'nonce-${nonce}'`, ...(security.scriptSources ?? [])].join(" "),
    `style-src 'nonce-${nonce}'`,
    ...(security.allow ?? []),
    "base-uri 'none'",
    `frame-ancestors ${security.frameAncestors}`,
  ];
  const frameOptions = FRAME_OPTIONS[security.frameAncestors];
  return reply
    .code(status)
    .headers({
      "content-type": "text/html; charset=utf-8",
      "cache-control": security.cacheControl ?? "no-store",
      "content-security-policy": csp.join("; "),
      "x-content-type-options": "nosniff",
      ...(frameOptions ? { "x-frame-options": frameOptions } : {}),
      "referrer-policy": "no-referrer",
      ...security.headers,
    })
    .send(render(nonce));
}
