import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import { describe, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { parseId } from "../../http/ids.js";
import { validateAgainst } from "../../http/validate.js";
import { PaymentType } from "../payments/payments.graphql.js";
import type { PaymentWire } from "../payments/payments.schemas.js";
import { OfflineDonationBody } from "./donation-actions.schemas.js";
import { cancelDonation, recordOfflineDonation } from "./donation-actions.service.js";
import { DonationType } from "./donations.graphql.js";
import type { DonationWire } from "./donations.schemas.js";
import { type ActivationOutcome, activateImportedDonation, adminActor } from "./recurring-changes.service.js";

const ActivationOutcomeType = builder.enumType("ActivationOutcome", {
  description: "What turning an imported recurring gift on did",
  values: {
    activated: { description: "It runs now, on the Stripe method the import named (Stripe confirmed it)" },
    card_requested: { description: "Its donor was emailed a link to set up a card; it runs once they have" },
  } as const,
});

const ActivationType = builder
  .objectRef<{ donation: DonationWire; outcome: ActivationOutcome }>("DonationActivation")
  .implement({
    description: "An imported recurring gift turned on, and how",
    fields: (t) => ({
      donation: t.field({ type: DonationType, resolve: (parent) => parent.donation }),
      outcome: t.field({ type: ActivationOutcomeType, resolve: (parent) => parent.outcome }),
    }),
  });

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
  activateImportedDonation: t.field({
    type: ActivationType,
    description:
      "Turns on an imported recurring gift, which charges nobody until then: at once on the Stripe customer and payment method the import named, once Stripe confirms them; otherwise its donor is emailed a link to set up a card",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "donations:write");
      return activateImportedDonation(
        context,
        context.scope.organizationId,
        parseId(String(id), "Donation"),
        adminActor(context.scope.origin),
      );
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
