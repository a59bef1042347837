import type { FastifyInstance } from "fastify";
import { actionRoute } from "../../http/action-route.js";
import type { GivingContext } from "../giving/giving.context.js";
import { markPaymentPaid, refundPayment } from "./payment-actions.service.js";
import { Payment } from "./payments.schemas.js";

/** Refund and mark-paid in the REST API; GraphQL has the same operations through the same services. */
export function paymentActionRoutes(app: FastifyInstance, context: GivingContext) {
  actionRoute(app, context.db, {
    path: "/api/v1/payments/:id/refund",
    permission: "payments:write",
    operationId: "refund_payment",
    summary: "Refund a PAID payment (a one-off donation fully refunded becomes revoked)",
    response: Payment,
    run: (scope, id) => refundPayment(context, scope, id),
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
