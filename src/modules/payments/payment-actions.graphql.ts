import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { markPaymentPaid, refundPayment } from "./payment-actions.service.js";
import { PaymentType } from "./payments.graphql.js";

builder.mutationFields((t) => ({
  refundPayment: t.field({
    type: PaymentType,
    description:
      "Refunds a PAID payment in full or in part (amount, default: what is left); it becomes REFUNDED once the processor confirms its whole amount refunded, and a one-off donation fully refunded is revoked",
    args: {
      id: t.arg.id({ required: true }),
      amount: t.arg.float({ required: false, description: "What to refund; default: all that is not yet refunded" }),
    },
    resolve: (_root, { id, amount }, context) => {
      authorize(context, "payments:write");
      return refundPayment(context, context.scope, String(id), amount ?? undefined);
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
