import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../errors/app-error.js";
import { localeCookieAttributes } from "../../http/cookies.js";
import { type PageSecurity, sendHtmlPage } from "../../http/html-page.js";
import { isLocale } from "../../i18n/locales.js";
import { LOCALE_COOKIE, negotiateLocale, requestLocaleSources } from "../../i18n/negotiate.js";
import { parseImageUrl } from "../../images/images.service.js";
import { frameAncestorsOf } from "../organizations/embed-origins.js";
import { embedOriginsBySlug } from "../organizations/organizations.service.js";
import { getPublicCampaign } from "./checkout-flow.service.js";
import { CHALLENGE_ASSETS, donateErrorPage, donatePage } from "./donate-page.js";
import type { GivingContext } from "./giving.context.js";

const Slug = Type.String({ maxLength: 100 });

const PAGE_SECURITY: PageSecurity = {
  frameAncestors: "'none'",
  allow: [
    "connect-src 'self'",
    // The ALTCHA widget solves its proof of work in a web worker served from this origin (no wasm).
    "worker-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
  ],
};

/**
 * The page of an organization that takes payments with Stripe also allows what Stripe documents
 * for Stripe.js and the Payment Element (https://docs.stripe.com/security/guide#content-security-policy):
 * its script, its iframes (the element's fields, wallets, the 3-D Secure challenge) and its API.
 * Stripe's list adds https://maps.googleapis.com for the Address Element's autocomplete, which
 * this page does not use. Nothing else is loosened, and pages of other organizations keep PAGE_SECURITY.
 */
export const STRIPE_PAGE_SECURITY: PageSecurity = {
  frameAncestors: "'none'",
  scriptSources: ["https://js.stripe.com", "https://*.js.stripe.com"],
  allow: [
    "connect-src 'self' https://api.stripe.com",
    "frame-src https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com",
    "worker-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
  ],
};

/** The ALTCHA widget's strict-CSP build (no inline style or worker), its stylesheet and its PBKDF2 worker. */
function challengeAssets() {
  const external = fileURLToPath(import.meta.resolve("altcha/external"));
  const dist = path.dirname(path.dirname(external));
  const read = (file: string) => readFileSync(path.join(dist, file));
  return [
    { url: CHALLENGE_ASSETS.script, type: "text/javascript; charset=utf-8", body: read("external/altcha.js") },
    { url: CHALLENGE_ASSETS.style, type: "text/css; charset=utf-8", body: read("external/altcha.css") },
    { url: CHALLENGE_ASSETS.worker, type: "text/javascript; charset=utf-8", body: read("workers/pbkdf2.js") },
  ];
}

/** The hosted donation page; it completes gifts through the public checkout API. */
export function donatePageRoutes(app: FastifyInstance, context: GivingContext) {
  for (const asset of challengeAssets()) {
    app.get(asset.url, { schema: { hide: true } }, (_request, reply) =>
      reply
        .headers({
          "content-type": asset.type,
          "cache-control": "public, max-age=86400",
          "x-content-type-options": "nosniff",
          "cross-origin-resource-policy": "same-origin",
        })
        .send(asset.body),
    );
  }

  app.get(
    "/donate/:organization/:campaign",
    {
      schema: {
        hide: true,
        params: Type.Object({ organization: Slug, campaign: Slug }),
        // ?lang=: the page in that language (an unknown one is ignored, as browsers send anything).
        // ?embed=overlay|inline: opened by embed.js (the page looks the same; its script tells the host page its height).
        querystring: Type.Object({
          lang: Type.Optional(Type.String({ maxLength: 35 })),
          embed: Type.Optional(Type.String({ maxLength: 20 })),
        }),
        response: { 200: { content: { "text/html": { schema: Type.String() } } } },
      },
      // A page, not an API: unknown and ended campaigns get a friendly HTML page with the right status.
      errorHandler: async (error, request, reply) => {
        const clientStatus = error instanceof AppError ? error.status : (error as { statusCode?: number }).statusCode;
        const invalidSlug = (error as { validation?: unknown }).validation !== undefined;
        // A slug no campaign can have (too long, a NUL character…) is simply not found; 410: ended.
        const refused = clientStatus !== undefined && clientStatus >= 400 && clientStatus < 500;
        const status = clientStatus === 410 ? 410 : invalidSlug || refused ? 404 : 500;
        if (status === 500) request.log.error({ err: error }, "donation page failed");
        const locale = negotiateLocale(requestLocaleSources(request));
        reply.header("content-language", locale).header("vary", "Accept-Language, Cookie");
        // An ended or unknown campaign of an organization that embeds its pages says so inside the host's frame too.
        const slug = (request.params as { organization?: unknown }).organization;
        const origins =
          status !== 500 && typeof slug === "string" && !invalidSlug
            ? await embedOriginsBySlug(context.db, slug).catch(() => [])
            : [];
        const security = { ...PAGE_SECURITY, frameAncestors: frameAncestorsOf(origins) };
        return sendHtmlPage(reply, status, security, (nonce) => donateErrorPage(status, { nonce, locale }));
      },
    },
    async (request, reply) => {
      const { organization, campaign } = request.params as { organization: string; campaign: string };
      const publicCampaign = await getPublicCampaign(context, organization, campaign);
      // Framed only by the sites the organization lists (CSP frame-ancestors; X-Frame-Options only when none).
      const embedOrigins = await embedOriginsBySlug(context.db, organization);
      const security = {
        ...(publicCampaign.stripe ? STRIPE_PAGE_SECURITY : PAGE_SECURITY),
        frameAncestors: frameAncestorsOf(embedOrigins),
      };
      const logo = publicCampaign.organization.logo_url;
      // One of our images, by its path on this server: the page loads images from its own origin only.
      const logoUrl = (logo && parseImageUrl(logo)?.path) || null;
      const sources = requestLocaleSources(request);
      const locale = negotiateLocale({ ...sources, fallback: publicCampaign.organization.locale });
      // A language chosen with the switcher is remembered for the visitor's next pages.
      if (isLocale(sources.query)) {
        reply.setCookie(LOCALE_COOKIE, sources.query, localeCookieAttributes(context.links.baseUrl));
      }
      reply.header("content-language", locale).header("vary", "Accept-Language, Cookie");
      const path = `/donate/${encodeURIComponent(organization)}/${encodeURIComponent(campaign)}`;
      return sendHtmlPage(reply, 200, security, (nonce) =>
        donatePage(publicCampaign, { nonce, locale, path, logoUrl, embedOrigins }),
      );
    },
  );
}
