import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Db } from "../db/client.js";
import { escapeHtml, languageSwitcher } from "../http/html-page.js";
import type { Locale } from "../i18n/locales.js";
import { t } from "../i18n/messages.js";
import { installedOriginsOfMember } from "../modules/applications/application-origins.js";
import { pageLocale } from "../oauth/locale.js";
import { messageHtml } from "../oauth/pages.js";
import { sessionUser } from "./admin-session.routes.js";

/** Where `npm run build:admin` puts the panel (web/admin/dist). */
export const ADMIN_DIST = fileURLToPath(new URL("../../web/admin/dist/", import.meta.url));

/**
 * The panel's Content-Security-Policy: its own assets only, and frames from exactly the
 * applications installed in the organization of the page (decisions.md §7), plus the
 * authorization server, which a framed application sends the user to when it connects.
 */
export function adminCsp(frameOrigins: string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${frameOrigins.length > 0 ? frameOrigins.join(" ") : "'none'"}`,
    "frame-ancestors 'none'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join("; ");
}

/** What /admin/ says while the panel has no build, in the reader's language, with a switcher back to the same path. */
function notBuilt(locale: Locale, path: string): string {
  const message = messageHtml(
    locale,
    "signin.panel_not_built.message",
    {},
    { build: "<code>npm run build:admin</code>", start: "<code>npm start</code>" },
  );
  return `<!doctype html><html lang="${locale}"><meta charset="utf-8"><title>${escapeHtml(t(locale, "signin.panel_not_built.title"))}</title>
<body style="font-family:system-ui;margin:3rem"><h1>${escapeHtml(t(locale, "signin.panel_not_built.heading"))}</h1>
<p>${message}</p>
${languageSwitcher(locale, path)}</body></html>`;
}

/** Serves the single-page admin panel at /admin/ from its built assets. */
export async function adminPageRoutes(app: FastifyInstance, db: Db, authUrl: string, dist = ADMIN_DIST) {
  const authorizationServer = new URL(authUrl).origin;
  await app.register(fastifyStatic, {
    root: `${dist}assets`,
    prefix: "/admin/assets/",
    decorateReply: false,
    immutable: true,
    maxAge: "365d",
    index: false,
  });

  // Re-read when a new build replaced it (its asset names change with every build).
  let cached: { html: string; mtimeMs: number } | undefined;
  const indexHtml = async () => {
    const file = `${dist}index.html`;
    const info = await stat(file).catch(() => undefined);
    if (!info) return undefined;
    if (cached?.mtimeMs !== info.mtimeMs) cached = { html: await readFile(file, "utf8"), mtimeMs: info.mtimeMs };
    return cached.html;
  };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const html = await indexHtml();
    reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "same-origin");
    if (!html) {
      // The panel speaks for itself once built; this page negotiates like the sign-in pages.
      const signedIn = await sessionUser(db, request);
      const locale = await pageLocale(db, request, reply, { publicUrl: authUrl, userId: signedIn?.userId });
      const path = request.url.split("?")[0] ?? "/admin/";
      return reply
        .code(503)
        .header("content-security-policy", adminCsp([]))
        .type("text/html; charset=utf-8")
        .send(notBuilt(locale, path));
    }
    const slug = /^\/admin\/o\/([^/?#]+)/.exec(request.url)?.[1];
    const session = slug ? await sessionUser(db, request) : undefined;
    const origins = session && slug ? await installedOriginsOfMember(db, session.userId, decodeURIComponent(slug)) : [];
    const framed = origins.length > 0 ? [...new Set([...origins, authorizationServer])].sort() : [];
    return reply.header("content-security-policy", adminCsp(framed)).type("text/html; charset=utf-8").send(html);
  };
  const schema = { hide: true };
  app.get("/admin/", { schema }, page);
  app.get("/admin/sign-in", { schema }, page);
  app.get("/admin/o/*", { schema }, page);
}
