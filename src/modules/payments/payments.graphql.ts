import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { DonationType } from "../donations/donations.graphql.js";
import { PaymentMethodType } from "../payment-methods/payment-methods.graphql.js";
import { Payment, PaymentListQuery, type PaymentWire } from "./payments.schemas.js";
import { getPayment, listPayments } from "./payments.service.js";
import type { RefundRow } from "./refunds.repo.js";

interface DisputeShape {
  id: string;
  status: string;
  reason: string | null;
  amount: number | null;
  date: Date | null;
}

const DisputeType = builder.objectRef<DisputeShape>("PaymentDispute").implement({
  description: "A chargeback the donor's bank opened on the payment, as the processor reports it",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The processor's id of the dispute" }),
    status: t.exposeString("status", {
      description:
        "The processor's status (Stripe: warning_needs_response, needs_response, under_review, won, lost, …)",
    }),
    reason: t.exposeString("reason", { nullable: true }),
    amount: t.exposeFloat("amount", { nullable: true }),
    date: t.string({ nullable: true, resolve: (dispute) => dispute.date?.toISOString() ?? null }),
  }),
});

const RefundType = builder.objectRef<RefundRow>("Refund").implement({
  description: "Money given back on a payment, in full or in part",
  fields: (t) => ({
    id: t.exposeID("id"),
    state: t.exposeString("state", {
      description: "PENDING (the processor has not confirmed yet), SUCCEEDED or FAILED",
    }),
    amount: t.exposeFloat("amount"),
    currency: t.exposeString("currency"),
    origin: t.exposeString("origin", {
      description: "api: asked through Donata; processor: made in the processor's dashboard",
    }),
    processor_refund_id: t.exposeString("processorRefundId", { nullable: true }),
    failure_message: t.exposeString("failureMessage", { nullable: true }),
    create_date: t.string({ resolve: (refund) => refund.createDate.toISOString() }),
    settle_date: t.string({ nullable: true, resolve: (refund) => refund.settleDate?.toISOString() ?? null }),
  }),
});

export const PaymentType = builder.objectRef<PaymentWire>("Payment").implement({
  description: describe(Payment),
  fields: (t) => ({
    ...exposeWireFields(t, Payment, ["payment_method"]),
    payment_method: t.field({
      type: PaymentMethodType,
      nullable: true,
      resolve: (payment) => payment.payment_method,
    }),
    amount_refunded: t.float({
      description: "What confirmed refunds add up to (the payment is REFUNDED once it reaches the amount)",
      resolve: async (payment, _args, context) =>
        (await context.loaders.paymentRow.load(payment.id))?.amountRefunded ?? 0,
    }),
    refunds: t.field({
      type: [RefundType],
      description: "The payment's refunds, oldest first",
      resolve: (payment, _args, context) => context.loaders.paymentRefunds.load(payment.id),
    }),
    dispute: t.field({
      type: DisputeType,
      nullable: true,
      description: "The chargeback opened on the payment, if any",
      resolve: async (payment, _args, context) => {
        const row = await context.loaders.paymentRow.load(payment.id);
        if (!row?.disputeId) return null;
        return {
          id: row.disputeId,
          status: row.disputeStatus ?? "unknown",
          reason: row.disputeReason,
          amount: row.disputeAmount,
          date: row.disputeDate,
        };
      },
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
