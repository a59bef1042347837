import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { describe, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { validateAgainst } from "../../http/validate.js";
import { PaymentType } from "../payments/payments.graphql.js";
import type { PaymentWire } from "../payments/payments.schemas.js";
import { OfflineDonationBody } from "./donation-actions.schemas.js";
import { cancelDonation, recordOfflineDonation } from "./donation-actions.service.js";
import { DonationType } from "./donations.graphql.js";
import type { DonationWire } from "./donations.schemas.js";
import { adminActor } from "./recurring-changes.service.js";

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
  cancelDonation: t.field({
    type: DonationType,
    description:
      "Cancels a recurring donation (active or past_due → revoked), keeping who cancelled it and the reason given",
    args: {
      id: t.arg.id({ required: true }),
      reason: t.arg.string({ required: false, description: "Why the gift stops (at most 500 characters)" }),
    },
    resolve: (_root, { id, reason }, context) => {
      authorize(context, "donations:write");
      return cancelDonation(context, context.scope, String(id), adminActor(context.scope.origin), reason);
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
