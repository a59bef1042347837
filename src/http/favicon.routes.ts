import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";

/**
 * The site's icon. Browsers ask every origin for /favicon.ico whatever the page says; without it each
 * page view logged a 404. The same icon as SVG for pages that link it. Cached for a day by anyone.
 */
const ICONS = [
  { url: "/favicon.ico", file: "favicon.ico", type: "image/x-icon" },
  { url: "/favicon.svg", file: "favicon.svg", type: "image/svg+xml" },
] as const;

const CACHE_CONTROL = "public, max-age=86400";

export function faviconRoutes(app: FastifyInstance) {
  for (const icon of ICONS) {
    const body = readFileSync(new URL(`../../web/favicon/${icon.file}`, import.meta.url));
    app.get(icon.url, { schema: { hide: true } }, (_request, reply) =>
      reply
        .headers({
          "content-type": icon.type,
          "cache-control": CACHE_CONTROL,
          "x-content-type-options": "nosniff",
          // An SVG opened on its own is a document: it runs nothing and loads nothing.
          "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
        })
        .send(body),
    );
  }
}
