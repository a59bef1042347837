import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { describe, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { validateAgainst } from "../../http/validate.js";
import { DonationType } from "../donations/donations.graphql.js";
import type { DonationWire } from "../donations/donations.schemas.js";
import { PaymentType } from "../payments/payments.graphql.js";
import type { PaymentWire } from "../payments/payments.schemas.js";
import { OfflineDonationBody } from "./giving.schemas.js";
import { cancelDonation, markPaymentPaid, recordOfflineDonation, refundPayment } from "./payment-actions.service.js";

const DonationWithPaymentType = builder
  .objectRef<{ donation: DonationWire; payment: PaymentWire }>("DonationWithPayment")
  .implement({
    description: "A donation with the payment just recorded for it",
    fields: (t) => ({
      donation: t.field({ type: DonationType, resolve: (parent) => parent.donation }),
      payment: t.field({ type: PaymentType, resolve: (parent) => parent.payment }),
    }),
  });

const OfflineDonationInputType = builder.inputType("OfflineDonationInput", {
  description: describe(OfflineDonationBody),
  fields: (t) => inputFieldsFrom(t, OfflineDonationBody),
});

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
  cancelDonation: t.field({
    type: DonationType,
    description: "Cancels a recurring donation (active or past_due → revoked)",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "donations:write");
      return cancelDonation(context, context.scope, String(id));
    },
  }),
  recordOfflineDonation: t.field({
    type: DonationWithPaymentType,
    description: "Records a gift received offline as a done donation with a PAID payment",
    args: { input: t.arg({ type: OfflineDonationInputType, required: true }) },
    resolve: async (_root, { input }, context) => {
      authorize(context, "donations:write");
      // GraphQL's optional means "may be null"; the REST body leaves such fields out.
      const given = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
      const values = validateAgainst<OfflineDonationBody>(OfflineDonationBody, given, "field");
      const outcome = await recordOfflineDonation(context, context.scope, values);
      return outcome.body as { donation: DonationWire; payment: PaymentWire };
    },
  }),
}));
