import { escapeHtml, htmlDocument, type RenderPage } from "../http/html-page.js";

export type Hidden = Record<string, string | undefined>;

function hiddenInputs(hidden: Hidden): string {
  return Object.entries(hidden)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n      ");
}

const STYLE = `
  :root { color-scheme: light dark; --accent: #0f766e; }
  * { box-sizing: border-box; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; padding: 1rem;
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: Canvas; color: CanvasText; }
  main { width: 100%; max-width: 26rem; border: 1px solid color-mix(in srgb, CanvasText 15%, transparent);
    border-radius: 12px; padding: 2rem; }
  h1 { font-size: 1.35rem; margin: 0 0 .25rem; }
  .brand { font-weight: 700; color: var(--accent); letter-spacing: .02em; margin-bottom: 1.25rem; }
  p.muted { opacity: .75; margin-top: 0; }
  label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
  input[type=email], input[type=password] { width: 100%; padding: .6rem .7rem; font: inherit;
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
`;

/** The authorization server's pages: one look, rendered around the response's nonce. */
export function page(title: string, body: string): RenderPage {
  return (nonce) =>
    htmlDocument({
      title: `${title} · Donata`,
      nonce,
      style: STYLE,
      body: `<main>\n  <div class="brand">Donata</div>\n  ${body}\n</main>`,
    });
}

export function errorPage(title: string, message: string): RenderPage {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n    <p>${escapeHtml(message)}</p>`);
}

export function loginPage(options: {
  action: string;
  hidden: Hidden;
  applicationName?: string;
  error?: string;
  email?: string;
}) {
  const intro = options.applicationName
    ? `<p class="muted">to continue to <strong>${escapeHtml(options.applicationName)}</strong></p>`
    : "";
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : "";
  return page(
    "Sign in",
    `<h1>Sign in</h1>
    ${intro}
    ${error}
    <form method="post" action="${escapeHtml(options.action)}">
      ${hiddenInputs(options.hidden)}
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? "")}" autofocus>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit">Sign in</button>
    </form>`,
  );
}

export function organizationChoicePage(options: {
  action: string;
  hidden: Hidden;
  applicationName: string;
  organizations: { slug: string; name: string }[];
}) {
  const buttons = options.organizations
    .map(
      (organization) =>
        `<button type="submit" name="organization" value="${escapeHtml(organization.slug)}">${escapeHtml(organization.name)} <span class="muted">(${escapeHtml(organization.slug)})</span></button>`,
    )
    .join("\n      ");
  return page(
    "Choose an organization",
    `<h1>Choose an organization</h1>
    <p class="muted"><strong>${escapeHtml(options.applicationName)}</strong> will act on behalf of the organization you choose.</p>
    <form method="post" action="${escapeHtml(options.action)}" class="choices">
      ${hiddenInputs(options.hidden)}
      ${buttons}
    </form>`,
  );
}

export function consentPage(options: {
  action: string;
  hidden: Hidden;
  application: { name: string; url: string };
  organizationName: string;
  permissions: { name: string; description: string }[];
}) {
  const permissions = options.permissions
    .map((permission) => `<li>${escapeHtml(permission.description)} <code>${escapeHtml(permission.name)}</code></li>`)
    .join("\n        ");
  return page(
    "Install application",
    `<h1>Install ${escapeHtml(options.application.name)}?</h1>
    <p class="muted">in <strong>${escapeHtml(options.organizationName)}</strong></p>
    <p>Application URL: <code>${escapeHtml(options.application.url)}</code></p>
    <p>It asks for these permissions:</p>
    <ul class="permissions">
        ${permissions}
    </ul>
    <form method="post" action="${escapeHtml(options.action)}">
      ${hiddenInputs(options.hidden)}
      <div class="row">
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        <button type="submit" name="decision" value="allow">Allow and install</button>
      </div>
    </form>`,
  );
}
