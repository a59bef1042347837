import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { requireToken } from "../../http/auth.js";
import { ProblemResponses } from "../../http/problem-schema.js";
import { Donation } from "../donations/donations.schemas.js";
import { Payment } from "../payments/payments.schemas.js";
import type { GivingContext } from "./giving.context.js";
import { DonationWithPayment, OfflineDonationBody } from "./giving.schemas.js";
import { parseIdempotencyKey } from "./idempotency.js";
import { cancelDonation, markPaymentPaid, recordOfflineDonation, refundPayment } from "./payment-actions.service.js";

const conflict = {
  409: {
    description: "The record's state does not allow this transition; nothing changed",
    content: { "application/problem+json": { schema: Type.Ref("Problem") } },
  },
};
const IdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });

/** The giving writes of the REST API; GraphQL has the same operations through the same services. */
export function givingRoutes(app: FastifyInstance, context: GivingContext) {
  const action = (
    path: string,
    permission: string,
    operationId: string,
    summary: string,
    response: typeof Payment | typeof Donation,
    run: (scope: Parameters<typeof refundPayment>[1], id: string) => Promise<unknown>,
  ) =>
    app.post(
      path,
      {
        preHandler: requireToken(context.db, permission),
        schema: {
          operationId,
          tags: [path.split("/")[3] as string],
          summary,
          security: [{ oauth2: [permission] }],
          params: IdParams,
          response: { 200: response, ...ProblemResponses, ...conflict },
        },
      },
      (request) => run(request.auth, (request.params as { id: string }).id),
    );

  action(
    "/api/v1/payments/:id/refund",
    "payments:write",
    "refund_payment",
    "Refund a PAID payment (a one-off donation fully refunded becomes revoked)",
    Payment,
    (scope, id) => refundPayment(context, scope, id),
  );
  action(
    "/api/v1/payments/:id/mark_paid",
    "payments:write",
    "mark_payment_paid",
    "Mark a PENDING manual payment (bank transfer, cash) as PAID",
    Payment,
    (scope, id) => markPaymentPaid(context, scope, id),
  );
  action(
    "/api/v1/donations/:id/cancel",
    "donations:write",
    "cancel_donation",
    "Cancel a recurring donation (active or past_due → revoked); no further renewal is charged",
    Donation,
    (scope, id) => cancelDonation(context, scope, id),
  );

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
