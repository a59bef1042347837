import type { FastifyInstance } from "fastify";
import { actionRoute } from "../../http/action-route.js";
import type { GivingContext } from "../giving/giving.context.js";
import { markPaymentPaid, refundPayment } from "./payment-actions.service.js";
import { Payment, RefundBody } from "./payments.schemas.js";

/** Refund and mark-paid in the REST API; GraphQL has the same operations through the same services. */
export function paymentActionRoutes(app: FastifyInstance, context: GivingContext) {
  actionRoute(app, context.db, {
    path: "/api/v1/payments/:id/refund",
    permission: "payments:write",
    operationId: "refund_payment",
    summary:
      "Refund a PAID payment in full or in part (`amount`, default: what is left). The payment becomes REFUNDED once the processor confirms refunds of its whole amount (a one-off donation is then revoked); a refund still under way (SEPA) leaves it PAID until confirmed",
    body: RefundBody,
    response: Payment,
    run: (scope, id, body) => refundPayment(context, scope, id, (body as RefundBody).amount),
  });
  actionRoute(app, context.db, {
    path: "/api/v1/payments/:id/mark_paid",
    permission: "payments:write",
    operationId: "mark_payment_paid",
    summary: "Mark a PENDING manual payment (bank transfer, cash) as PAID",
    response: Payment,
    run: (scope, id) => markPaymentPaid(context, scope, id),
  });
}
