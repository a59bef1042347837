import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { DonationType } from "../donations/donations.graphql.js";
import { PaymentMethodType } from "../payment-methods/payment-methods.graphql.js";
import { Payment, PaymentListQuery, type PaymentWire } from "./payments.schemas.js";
import { getPayment, listPayments } from "./payments.service.js";

export const PaymentType = builder.objectRef<PaymentWire>("Payment").implement({
  description: describe(Payment),
  fields: (t) => ({
    ...exposeWireFields(t, Payment, ["payment_method"]),
    payment_method: t.field({
      type: PaymentMethodType,
      nullable: true,
      resolve: (payment) => payment.payment_method,
    }),
    donation: t.field({
      type: DonationType,
      nullable: true,
      resolve: (payment, _args, context) => {
        authorize(context, "donations:read");
        return context.loaders.donation.load(payment.donation_id);
      },
    }),
  }),
});

defineCollection({
  collection: "payments",
  singular: "payment",
  type: PaymentType,
  listQuery: PaymentListQuery,
  permission: "payments:read",
  list: listPayments,
  retrieve: getPayment,
});
