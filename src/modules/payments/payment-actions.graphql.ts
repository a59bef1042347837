import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { markPaymentPaid, refundPayment } from "./payment-actions.service.js";
import { PaymentType } from "./payments.graphql.js";

builder.mutationFields((t) => ({
  refundPayment: t.field({
    type: PaymentType,
    description: "Refunds a PAID payment; a one-off donation fully refunded becomes revoked",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "payments:write");
      return refundPayment(context, context.scope, String(id));
    },
  }),
  markPaymentPaid: t.field({
    type: PaymentType,
    description: "Marks a PENDING manual payment (bank transfer, cash) as PAID",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "payments:write");
      return markPaymentPaid(context, context.scope, String(id));
    },
  }),
}));
