import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { LOCALES } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";

const WORDS_SLOT = "({ en: {} })";

/** web/embed/embed.js with the words of every language filled in from the catalogs. */
function embedScript(): string {
  const source = readFileSync(new URL("../../../web/embed/embed.js", import.meta.url), "utf8");
  const words = Object.fromEntries(
    LOCALES.map((locale) => [
      locale,
      { button: t(locale, "embed.button"), form: t(locale, "embed.form"), close: t(locale, "embed.close") },
    ]),
  );
  if (!source.includes(WORDS_SLOT)) throw new Error("web/embed/embed.js lost its words slot");
  // A function replacer: the catalog's words are taken as they are ("$&" in them means nothing).
  return source.replace(WORDS_SLOT, () => `(${JSON.stringify(words)})`);
}

/**
 * `/embed.js`, the script charities put on their own sites (docs/embed.md). Any site may load it
 * (CORP cross-origin, CORS *: it carries nothing private); which sites may frame the donation page
 * is the page's own frame-ancestors. Cached five minutes, revalidated by its ETag, so a new version
 * reaches every site soon after a deploy.
 */
export function embedRoutes(app: FastifyInstance) {
  const body = embedScript();
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  app.get("/embed.js", { schema: { hide: true } }, (request, reply) => {
    reply.headers({
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=300",
      etag,
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "cross-origin",
      "access-control-allow-origin": "*",
    });
    if (request.headers["if-none-match"] === etag) return reply.code(304).send();
    return reply.send(body);
  });
}
