import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../http/errors.js";
import { getPublicCampaign } from "./checkout-flow.service.js";
import { donateErrorPage, donatePage } from "./donate-page.js";
import type { GivingContext } from "./giving.context.js";

const Slug = Type.String({ maxLength: 100 });

/** A nonce per response: only this page's own inline style and script may run. */
function sendPage(reply: FastifyReply, status: number, render: (nonce: string) => string) {
  const nonce = randomBytes(16).toString("base64");
  return reply
    .code(status)
    .headers({
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        "img-src 'self' data:",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    })
    .send(render(nonce));
}

/** The hosted donation page; it completes gifts through the public checkout API. */
export function donatePageRoutes(app: FastifyInstance, context: GivingContext) {
  app.get(
    "/donate/:organization/:campaign",
    {
      schema: {
        hide: true,
        params: Type.Object({ organization: Slug, campaign: Slug }),
        response: { 200: { content: { "text/html": { schema: Type.String() } } } },
      },
      // A page, not an API: unknown and ended campaigns get a friendly HTML page with the right status.
      errorHandler: (error, request, reply) => {
        const clientStatus = error instanceof AppError ? error.status : (error as { statusCode?: number }).statusCode;
        const invalidSlug = (error as { validation?: unknown }).validation !== undefined;
        // A slug no campaign can have (too long, a NUL character…) is simply not found; 410: ended.
        const refused = clientStatus !== undefined && clientStatus >= 400 && clientStatus < 500;
        const status = clientStatus === 410 ? 410 : invalidSlug || refused ? 404 : 500;
        if (status === 500) request.log.error({ err: error }, "donation page failed");
        return sendPage(reply, status, (nonce) => donateErrorPage(status, { nonce }));
      },
    },
    async (request, reply) => {
      const { organization, campaign } = request.params as { organization: string; campaign: string };
      const publicCampaign = await getPublicCampaign(context, organization, campaign);
      return sendPage(reply, 200, (nonce) => donatePage(publicCampaign, { nonce }));
    },
  );
}
