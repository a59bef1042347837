import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { parseIdempotencyKey } from "../../http/idempotency.js";
import { ProblemResponses } from "../../http/problem-schema.js";
import { acceptedLocale } from "../../i18n/negotiate.js";
import { completeCheckout, getChallenge, getPublicCampaign, startCheckout } from "./checkout-flow.service.js";
import type { GivingContext } from "./giving.context.js";
import {
  CheckoutCompleteBody,
  CheckoutCompleted,
  type CheckoutCompleteInput,
  CheckoutRequiresAction,
  CheckoutStartBody,
  CheckoutStarted,
  PublicCampaign,
} from "./giving.schemas.js";

const Slug = Type.String({ maxLength: 100 });
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: Type.Ref("Problem") } },
});
const GivingProblems = {
  400: ProblemResponses[400],
  404: problem("No such organization, campaign or checkout"),
  409: problem("The checkout is closed or expired"),
  410: problem("The campaign has ended"),
  422: problem("A campaign rule, the card (or Stripe confirmation token) or the privacy consent refused the gift"),
};
const TooMany = {
  429: problem("A card-testing cap was reached (see Retry-After); nothing was charged"),
};

/**
 * The public giving API: what the hosted donation page uses, open to any organization's own form.
 * No token: a checkout is completed with the client secret returned when it was started.
 */
export function publicCheckoutRoutes(app: FastifyInstance, context: GivingContext) {
  const tags = ["public giving"];
  app.get(
    "/api/v1/public/organizations/:organization/campaigns/:campaign",
    {
      schema: {
        operationId: "retrieve_public_campaign",
        tags,
        summary: "What a donation form needs to show a campaign",
        params: Type.Object({ organization: Slug, campaign: Slug }),
        response: { 200: PublicCampaign, ...GivingProblems },
      },
    },
    (request) => {
      const { organization, campaign } = request.params as { organization: string; campaign: string };
      return getPublicCampaign(context, organization, campaign);
    },
  );

  app.post(
    "/api/v1/public/organizations/:organization/campaigns/:campaign/checkouts/",
    {
      schema: {
        operationId: "start_checkout",
        tags,
        summary: "Start a checkout (the donor opened the form and chose an amount)",
        params: Type.Object({ organization: Slug, campaign: Slug }),
        body: CheckoutStartBody,
        response: { 201: CheckoutStarted, ...GivingProblems, ...TooMany },
      },
    },
    async (request, reply) => {
      const { organization, campaign } = request.params as { organization: string; campaign: string };
      const body = (request.body ?? {}) as CheckoutStartBody;
      const started = await startCheckout(context, organization, campaign, body, request.ip);
      return reply.code(201).send(started);
    },
  );

  app.get(
    "/api/v1/public/organizations/:organization/challenge",
    {
      schema: {
        operationId: "create_challenge",
        tags,
        summary: "A proof-of-work challenge (ALTCHA) for the donation form, when challenge_required",
        description:
          "The `altcha` widget fetches it, solves it in a web worker and puts the payload in its hidden field; " +
          "send that payload as `altcha` when completing. Each solution is accepted once.",
        params: Type.Object({ organization: Slug }),
        response: {
          200: Type.Object(
            {
              parameters: Type.Object({}, { additionalProperties: true }),
              signature: Type.Optional(Type.String()),
            },
            { additionalProperties: true },
          ),
          404: GivingProblems[404],
        },
      },
    },
    async (request, reply) => {
      const { organization } = request.params as { organization: string };
      reply.header("cache-control", "no-store");
      return getChallenge(context, organization);
    },
  );

  app.post(
    "/api/v1/public/organizations/:organization/checkouts/:id/complete",
    {
      schema: {
        operationId: "complete_checkout",
        tags,
        summary: "Complete a checkout: supporter, donation and payment in one step",
        description:
          "Send an `Idempotency-Key` header (e.g. a UUID per submission): a retry with the same key replays the " +
          "first outcome and never charges twice. A declined card answers 402 and leaves the checkout OPEN.\n\n" +
          "With processor `stripe`, send `confirmation_token` (Stripe.js `createConfirmationToken`) instead of `card`. " +
          "A payment that needs 3-D Secure answers 202 `requires_action` with the intent's `client_secret`: run " +
          "`stripe.handleNextAction({ clientSecret })`, then send the same body with the same Idempotency-Key again " +
          "for the outcome (200, 402, or 202 while still waiting). A SEPA Direct Debit answers 200 `pending` with " +
          "`processing: true`: it settles days later.",
        params: Type.Object({ organization: Slug, id: Type.String({ maxLength: 40 }) }),
        headers: Type.Object({ "idempotency-key": Type.Optional(Type.String()) }),
        body: CheckoutCompleteBody,
        response: {
          200: CheckoutCompleted,
          202: CheckoutRequiresAction,
          402: problem("The processor refused the payment; the checkout stays OPEN for another try"),
          403: problem("challenge_required / challenge_invalid: the form is protected, send `altcha`"),
          ...GivingProblems,
          ...TooMany,
        },
      },
    },
    async (request, reply) => {
      const { organization, id } = request.params as { organization: string; id: string };
      const outcome = await completeCheckout(context, organization, id, request.body as CheckoutCompleteInput, {
        userAgent: request.headers["user-agent"],
        idempotencyKey: parseIdempotencyKey(request.headers["idempotency-key"]),
        clientIp: request.ip,
        locale: acceptedLocale(request.headers["accept-language"]),
      });
      if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
      if (outcome.status === 202) return reply.code(202).send(outcome.body);
      if (outcome.status !== 200) {
        return reply
          .code(outcome.status)
          .type("application/problem+json")
          .serializer(JSON.stringify)
          .send(outcome.body);
      }
      return reply.code(200).send(outcome.body);
    },
  );
}
