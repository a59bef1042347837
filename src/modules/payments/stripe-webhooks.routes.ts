import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { ProblemResponses } from "../../http/problem-schema.js";
import { receiveStripeEvent, type WebhookContext } from "./stripe-webhooks.service.js";

const Params = Type.Object({ organization: Type.String({ maxLength: 100, description: "The organization's slug" }) });
const Received = Type.Object(
  {
    received: Type.Boolean(),
    outcome: Type.String({
      description: "settled, ignored, ignored_mode (the other test/live mode), duplicate or refused:<code>",
    }),
  },
  { additionalProperties: false },
);

/**
 * Stripe's webhook endpoint of each organization. Stripe signs the exact bytes it sent, so this
 * plugin keeps its own body parser (the raw buffer, whatever the media type); the rest of the app
 * keeps parsing JSON.
 */
export async function stripeWebhookRoutes(app: FastifyInstance, context: WebhookContext) {
  await app.register(async (webhooks) => {
    webhooks.removeAllContentTypeParsers();
    webhooks.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    webhooks.post(
      "/webhooks/stripe/:organization",
      {
        // Stripe's to call, not API clients' (no SDK method): documented in docs/payments.md, not in OpenAPI.
        schema: {
          hide: true,
          operationId: "receive_stripe_event",
          tags: ["webhooks"],
          summary:
            "Stripe's events for the organization (payments settled later, refunds, disputes, card updates), signed with its webhook secret",
          params: Params,
          response: { 200: Received, ...ProblemResponses },
        },
      },
      async (request) => {
        const { organization } = request.params as { organization: string };
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return receiveStripeEvent(
          context,
          organization,
          body,
          request.headers["stripe-signature"] as string | undefined,
        );
      },
    );
  });
}
