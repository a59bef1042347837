import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { actionRoute } from "../../http/action-route.js";
import { requireToken } from "../../http/auth.js";
import { parseIdempotencyKey } from "../../http/idempotency.js";
import { ProblemResponses } from "../../http/problem-schema.js";
import type { GivingContext } from "../giving/giving.context.js";
import { DonationWithPayment, OfflineDonationBody } from "./donation-actions.schemas.js";
import { cancelDonation, recordOfflineDonation } from "./donation-actions.service.js";
import { Donation } from "./donations.schemas.js";
import { adminActor } from "./recurring-changes.service.js";

/** Cancel and offline gift in the REST API; GraphQL has the same operations through the same services. */
export function donationActionRoutes(app: FastifyInstance, context: GivingContext) {
  actionRoute(app, context.db, {
    path: "/api/v1/donations/:id/cancel",
    permission: "donations:write",
    operationId: "cancel_donation",
    summary: "Cancel a recurring donation (active or past_due → revoked); no further renewal is charged",
    response: Donation,
    run: (scope, id) => cancelDonation(context, scope, id, adminActor(scope.origin)),
  });

  app.post(
    "/api/v1/donations/",
    {
      preHandler: requireToken(context.db, "donations:write"),
      schema: {
        operationId: "record_offline_donation",
        tags: ["donations"],
        summary: "Record a gift received offline (cash, cheque, bank transfer) as a done donation with a PAID payment",
        description: "Send an `Idempotency-Key` header so that a retry never records the gift twice.",
        security: [{ oauth2: ["donations:write"] }],
        headers: Type.Object({ "idempotency-key": Type.Optional(Type.String()) }),
        body: OfflineDonationBody,
        response: {
          201: DonationWithPayment,
          ...ProblemResponses,
          422: {
            description: "The supporter or campaign does not exist in this organization",
            content: { "application/problem+json": { schema: Type.Ref("Problem") } },
          },
        },
      },
    },
    async (request, reply) => {
      const outcome = await recordOfflineDonation(
        context,
        request.auth,
        request.body as OfflineDonationBody,
        parseIdempotencyKey(request.headers["idempotency-key"]),
      );
      if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
      return reply.code(outcome.status).send(outcome.body);
    },
  );
}
