import { readFileSync } from "node:fs";
import type { Permission } from "../auth/permissions.js";
import type { AppError } from "../errors/app-error.js";
import { escapeHtml, htmlDocument, type RenderPage } from "../http/html-page.js";
import { LOCALE_NAMES, LOCALES, type Locale } from "../i18n/locales.js";
import { hasMessage, t } from "../i18n/messages.js";

export type Hidden = Record<string, string | undefined>;

export function hiddenInputs(hidden: Hidden): string {
  return Object.entries(hidden)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n      ");
}

const SLOT = /\uE000(\d+)\uE001/g;

/**
 * A catalog message as HTML: its plain arguments escaped with the rest of the text, its `markup`
 * arguments (already HTML: a `<strong>` name, a `<code>` command) put in where the message says.
 */
export function messageHtml(
  locale: Locale,
  key: string,
  values: Record<string, string | number> = {},
  markup: Record<string, string> = {},
): string {
  const fragments: string[] = [];
  const slots: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(values)) {
    slots[name] = typeof value === "string" ? value.replace(/[\uE000\uE001]/g, "") : value;
  }
  for (const [name, fragment] of Object.entries(markup)) {
    slots[name] = `\uE000${fragments.length}\uE001`;
    fragments.push(fragment);
  }
  return escapeHtml(t(locale, key, slots)).replace(SLOT, (_, index: string) => fragments[Number(index)] as string);
}

/**
 * Links to the same page in each language, the current one marked: the markup of html-page.ts's
 * languageSwitcher, but keeping the page's own query (an authorization request's parameters, a
 * sign-in link's token) beside `lang`.
 */
export function languageLinks(
  locale: Locale,
  path: string,
  query: URLSearchParams | Record<string, string | undefined> = {},
): string {
  const pairs = query instanceof URLSearchParams ? [...query] : Object.entries(query);
  const links = LOCALES.map((code) => {
    const search = new URLSearchParams();
    for (const [name, value] of pairs) if (value !== undefined && name !== "lang") search.append(name, value);
    search.set("lang", code);
    const current = code === locale ? ' aria-current="true"' : "";
    return `<a href="${escapeHtml(`${path}?${search}`)}" hreflang="${code}" lang="${code}"${current}>${escapeHtml(LOCALE_NAMES[code])}</a>`;
  });
  return `<nav class="language-switcher" id="language-switcher" aria-label="${escapeHtml(t(locale, "common.language"))}">${links.join(" · ")}</nav>`;
}

const STYLE = `
  :root { color-scheme: light dark; --accent: #0f766e; }
  * { box-sizing: border-box; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; padding: 1rem;
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: Canvas; color: CanvasText; }
  main { width: 100%; max-width: 26rem; border: 1px solid color-mix(in srgb, CanvasText 15%, transparent);
    border-radius: 12px; padding: 2rem; }
  h1 { font-size: 1.35rem; margin: 0 0 .25rem; }
  .top { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: .5rem 1rem;
    margin-bottom: 1.25rem; }
  .brand { font-weight: 700; color: var(--accent); letter-spacing: .02em; }
  .language-switcher { font-size: .875rem; opacity: .85; }
  .language-switcher a { color: inherit; }
  .language-switcher a[aria-current] { font-weight: 700; text-decoration: none; }
  p.muted { opacity: .75; margin-top: 0; }
  label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
  input[type=email], input[type=password], input[type=text] { width: 100%; padding: .6rem .7rem; font: inherit;
    border: 1px solid color-mix(in srgb, CanvasText 30%, transparent); border-radius: 8px; }
  button { font: inherit; font-weight: 600; padding: .65rem 1rem; border-radius: 8px; cursor: pointer;
    border: 1px solid var(--accent); background: var(--accent); color: white; width: 100%; margin-top: 1.25rem; }
  button.secondary { background: transparent; color: inherit; border-color: color-mix(in srgb, CanvasText 30%, transparent); }
  .choices button { text-align: left; margin-top: .6rem; background: transparent; color: inherit;
    border-color: color-mix(in srgb, CanvasText 25%, transparent); }
  .error { background: color-mix(in srgb, #dc2626 15%, Canvas); border: 1px solid #dc2626; border-radius: 8px;
    padding: .6rem .8rem; margin: 1rem 0; }
  ul.permissions { padding-left: 1.2rem; } code { word-break: break-all; }
  .row { display: flex; gap: .75rem; } .row button { flex: 1; }
  .passkey + p { margin-top: 1.25rem; }
`;

/** How a page of these is written: its language, and its language switcher (languageLinks). */
export interface PageLanguage {
  locale: Locale;
  switcher: string;
}

/**
 * The authorization server's pages: one look, rendered around the response's nonce, in the page's
 * language; `script`, a page's own JavaScript (web/oauth/), inlined under the nonce.
 */
export function page(language: PageLanguage, title: string, body: string, script?: string): RenderPage {
  return (nonce) =>
    htmlDocument({
      title: `${title} · Donata`,
      nonce,
      style: STYLE,
      lang: language.locale,
      body: `<main>\n  <div class="top"><div class="brand">Donata</div>${language.switcher}</div>\n  ${body}\n</main>`,
      scripts: script ? `<script nonce="${nonce}">${script}</script>\n` : undefined,
    });
}

// The passkey button's script (web/oauth/passkey.js, type-checked), read once and inlined under the nonce.
const PASSKEY_SCRIPT = readFileSync(new URL("../../web/oauth/passkey.js", import.meta.url), "utf8");

/**
 * A passkey button (docs/accounts.md, Passkeys): hidden until web/oauth/passkey.js finds WebAuthn in
 * the browser, it then runs the ceremony of the JSON routes under `action` (src/oauth/passkey.routes.ts)
 * with the hidden fields (the authorization request, the CSRF token) and follows where the server says.
 * `unsupported`: a note shown where the button cannot be (the page's only way on).
 */
function passkeyForm(
  locale: Locale,
  options: { action: string; hidden: Hidden; label: string; primary: boolean; unsupported?: boolean },
): string {
  const words = {
    busy: t(locale, "oauth.passkey.busy"),
    "not-used": t(locale, "oauth.passkey.not_used"),
    failed: t(locale, "oauth.passkey.failed"),
  };
  const data = Object.entries(words)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join("");
  const unsupported = options.unsupported
    ? `\n    <p id="passkey-unsupported">${escapeHtml(t(locale, "oauth.passkey.unsupported"))}</p>`
    : "";
  return `<form id="passkey-form" class="passkey" action="${escapeHtml(options.action)}" hidden${data}>
      ${hiddenInputs(options.hidden)}
      <button type="button"${options.primary ? "" : ' class="secondary"'}>${escapeHtml(options.label)}</button>
      <div id="passkey-error" aria-live="assertive" aria-atomic="true"></div>
    </form>${unsupported}`;
}

/** A page that only says what went wrong; title and message are plain text (escaped here). */
export function errorPage(language: PageLanguage, title: string, message: string): RenderPage {
  return page(language, title, `<h1>${escapeHtml(title)}</h1>\n    <p>${escapeHtml(message)}</p>`);
}

export function loginPage(
  language: PageLanguage,
  options: {
    action: string;
    hidden: Hidden;
    applicationName?: string;
    error?: string;
    email?: string;
    /** The "Forgot your password?" page, with the way back to this authorization. */
    forgotPasswordHref: string;
    /** Where "Sign in with a passkey" runs its ceremony (the same hidden fields go with it). */
    passkeyAction: string;
  },
) {
  const { locale } = language;
  const intro = options.applicationName
    ? `<p class="muted">${messageHtml(locale, "oauth.sign_in.intro", {}, { application: `<strong>${escapeHtml(options.applicationName)}</strong>` })}</p>`
    : "";
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : "";
  const title = t(locale, "oauth.sign_in.title");
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    ${intro}
    ${error}
    <form method="post" action="${escapeHtml(options.action)}">
      ${hiddenInputs(options.hidden)}
      <label for="email">${escapeHtml(t(locale, "oauth.sign_in.email"))}</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? "")}" autofocus>
      <label for="password">${escapeHtml(t(locale, "oauth.sign_in.password"))}</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit">${escapeHtml(t(locale, "oauth.sign_in.submit"))}</button>
    </form>
    ${passkeyForm(locale, { action: options.passkeyAction, hidden: options.hidden, label: t(locale, "oauth.sign_in.passkey"), primary: false })}
    <p><a href="${escapeHtml(options.forgotPasswordHref)}">${escapeHtml(t(locale, "oauth.sign_in.forgot"))}</a></p>`,
    PASSKEY_SCRIPT,
  );
}

/** What the second step of sign-in asks for: a code of the app, a recovery code, or a passkey. */
export type SecondFactorAsk = "code" | "recovery_code" | "passkey";

const SECOND_FACTOR_INTROS: Record<SecondFactorAsk, string> = {
  code: "oauth.second_factor.intro",
  recovery_code: "oauth.second_factor.recovery_intro",
  passkey: "oauth.second_factor.passkey_intro",
};
const SECOND_FACTOR_SWITCHES: Record<Exclude<SecondFactorAsk, "passkey">, string> = {
  code: "oauth.second_factor.use_app",
  recovery_code: "oauth.second_factor.use_recovery",
};

/**
 * The second step of sign-in (docs/accounts.md): a 6-digit code of the authenticator app or one of
 * the recovery codes, on a form carrying the session's CSRF token in `hidden`; and, when the user has
 * passkeys (`passkeyAction`), "Use a passkey", the page's one action when the app is not set up.
 * `switchTo` links to the page asking for another (`?method=`).
 */
export function secondFactorPage(
  language: PageLanguage,
  options: {
    action: string;
    hidden: Hidden;
    ask: SecondFactorAsk;
    switchTo?: { href: string; ask: Exclude<SecondFactorAsk, "passkey"> };
    passkeyAction?: string;
    error?: string;
  },
) {
  const { locale } = language;
  const title = t(locale, "oauth.second_factor.title");
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : "";
  const input =
    options.ask === "recovery_code"
      ? `<label for="recovery_code">${escapeHtml(t(locale, "oauth.second_factor.recovery_code"))}</label>
      <input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" required autofocus>`
      : `<label for="code">${escapeHtml(t(locale, "oauth.second_factor.code"))}</label>
      <input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 ]*" maxlength="8" autocomplete="one-time-code" required autofocus>`;
  const codeForm =
    options.ask === "passkey"
      ? ""
      : `<form method="post" action="${escapeHtml(options.action)}">
      ${hiddenInputs(options.hidden)}
      ${input}
      <button type="submit">${escapeHtml(t(locale, "oauth.second_factor.submit"))}</button>
    </form>`;
  const passkey = options.passkeyAction
    ? passkeyForm(locale, {
        action: options.passkeyAction,
        hidden: options.hidden,
        label: t(
          locale,
          options.ask === "passkey" ? "oauth.second_factor.passkey_submit" : "oauth.second_factor.use_passkey",
        ),
        primary: options.ask === "passkey",
        unsupported: options.ask === "passkey",
      })
    : "";
  const switchTo = options.switchTo
    ? `<p><a href="${escapeHtml(options.switchTo.href)}">${escapeHtml(t(locale, SECOND_FACTOR_SWITCHES[options.switchTo.ask]))}</a></p>`
    : "";
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p class="muted">${escapeHtml(t(locale, SECOND_FACTOR_INTROS[options.ask]))}</p>
    ${error}
    ${codeForm}
    ${passkey}
    ${switchTo}`,
    options.passkeyAction ? PASSKEY_SCRIPT : undefined,
  );
}

/** A session that must set up two-step verification first: that happens in the admin panel. */
export function enrolRequiredPage(language: PageLanguage, panelHref: string) {
  const { locale } = language;
  const title = t(locale, "oauth.enrol.title");
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p>${escapeHtml(t(locale, "oauth.enrol.message"))}</p>
    <p><a href="${escapeHtml(panelHref)}">${escapeHtml(t(locale, "oauth.enrol.link"))}</a></p>`,
  );
}

export function organizationChoicePage(
  language: PageLanguage,
  options: {
    action: string;
    hidden: Hidden;
    applicationName: string;
    organizations: { slug: string; name: string }[];
  },
) {
  const { locale } = language;
  const buttons = options.organizations
    .map(
      (organization) =>
        `<button type="submit" name="organization" value="${escapeHtml(organization.slug)}">${escapeHtml(organization.name)} <span class="muted">(${escapeHtml(organization.slug)})</span></button>`,
    )
    .join("\n      ");
  const title = t(locale, "oauth.choose.title");
  return page(
    language,
    title,
    `<h1>${escapeHtml(title)}</h1>
    <p class="muted">${messageHtml(locale, "oauth.choose.intro", {}, { application: `<strong>${escapeHtml(options.applicationName)}</strong>` })}</p>
    <form method="post" action="${escapeHtml(options.action)}" class="choices">
      ${hiddenInputs(options.hidden)}
      ${buttons}
    </form>`,
  );
}

/** What each permission lets an application do, as the consent page says it (src/auth/permissions.ts). */
const PERMISSION_MESSAGES: Record<Permission, string> = {
  "campaigns:read": "oauth.permissions.campaigns_read",
  "campaigns:write": "oauth.permissions.campaigns_write",
  "supporters:read": "oauth.permissions.supporters_read",
  "supporters:write": "oauth.permissions.supporters_write",
  "donations:read": "oauth.permissions.donations_read",
  "donations:write": "oauth.permissions.donations_write",
  "payments:read": "oauth.permissions.payments_read",
  "payments:write": "oauth.permissions.payments_write",
  "checkouts:read": "oauth.permissions.checkouts_read",
};

/** A permission's description in a language; a name the catalog does not know reads as itself. */
export function permissionDescription(locale: Locale, permission: string): string {
  const key = PERMISSION_MESSAGES[permission as Permission];
  return key ? t(locale, key) : permission;
}

export function consentPage(
  language: PageLanguage,
  options: {
    action: string;
    hidden: Hidden;
    application: { name: string; url: string };
    organizationName: string;
    permissions: string[];
  },
) {
  const { locale } = language;
  const permissions = options.permissions
    .map(
      (permission) =>
        `<li>${escapeHtml(permissionDescription(locale, permission))} <code>${escapeHtml(permission)}</code></li>`,
    )
    .join("\n        ");
  return page(
    language,
    t(locale, "oauth.consent.title"),
    `<h1>${escapeHtml(t(locale, "oauth.consent.heading", { application: options.application.name }))}</h1>
    <p class="muted">${messageHtml(locale, "oauth.consent.organization", {}, { organization: `<strong>${escapeHtml(options.organizationName)}</strong>` })}</p>
    <p>${messageHtml(locale, "oauth.consent.application_url", {}, { url: `<code>${escapeHtml(options.application.url)}</code>` })}</p>
    <p>${escapeHtml(t(locale, "oauth.consent.permissions_intro"))}</p>
    <ul class="permissions">
        ${permissions}
    </ul>
    <form method="post" action="${escapeHtml(options.action)}">
      ${hiddenInputs(options.hidden)}
      <div class="row">
        <button type="submit" name="decision" value="deny" class="secondary">${escapeHtml(t(locale, "oauth.consent.deny"))}</button>
        <button type="submit" name="decision" value="allow">${escapeHtml(t(locale, "oauth.consent.allow"))}</button>
      </div>
    </form>`,
  );
}

/** What a sign-in form says of a refused attempt, by the refusal's code. */
const SIGN_IN_ERRORS: Partial<Record<string, string>> = {
  invalid_credentials: "oauth.sign_in.errors.invalid_credentials",
  too_many_attempts: "oauth.sign_in.errors.too_many_attempts",
  sign_in_unavailable: "oauth.sign_in.errors.sign_in_unavailable",
};

/** A refused sign-in in the page's language: the sign-in words, else the error catalog's, else the server's. */
export function signInErrorMessage(locale: Locale, error: AppError): string {
  const key = SIGN_IN_ERRORS[error.code];
  if (key) return t(locale, key);
  return hasMessage(`errors.${error.code}`) ? t(locale, `errors.${error.code}`) : error.message;
}
