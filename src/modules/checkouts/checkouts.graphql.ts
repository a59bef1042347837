import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { CampaignType } from "../campaigns/campaigns.graphql.js";
import { DonationType } from "../donations/donations.graphql.js";
import { PaymentType } from "../payments/payments.graphql.js";
import { SupporterType } from "../supporters/supporters.graphql.js";
import { Checkout, CheckoutListQuery, type CheckoutWire } from "./checkouts.schemas.js";
import { getCheckout, listCheckouts } from "./checkouts.service.js";

const EMBEDDED = ["campaign", "supporter", "donation", "payment"] as const;

// The relations arrive embedded from the same query as the checkout, as on REST: no extra queries.
export const CheckoutType = builder.objectRef<CheckoutWire>("Checkout").implement({
  description: describe(Checkout),
  fields: (t) => ({
    ...exposeWireFields(t, Checkout, EMBEDDED),
    campaign: t.field({
      type: CampaignType,
      nullable: true,
      resolve: (checkout, _args, context) => {
        authorize(context, "campaigns:read");
        return checkout.campaign;
      },
    }),
    supporter: t.field({
      type: SupporterType,
      nullable: true,
      resolve: (checkout, _args, context) => {
        authorize(context, "supporters:read");
        return checkout.supporter;
      },
    }),
    donation: t.field({
      type: DonationType,
      nullable: true,
      resolve: (checkout, _args, context) => {
        authorize(context, "donations:read");
        return checkout.donation;
      },
    }),
    payment: t.field({
      type: PaymentType,
      nullable: true,
      resolve: (checkout, _args, context) => {
        authorize(context, "payments:read");
        return checkout.payment;
      },
    }),
  }),
});

defineCollection({
  collection: "checkouts",
  singular: "checkout",
  type: CheckoutType,
  listQuery: CheckoutListQuery,
  permission: "checkouts:read",
  list: listCheckouts,
  retrieve: getCheckout,
});
