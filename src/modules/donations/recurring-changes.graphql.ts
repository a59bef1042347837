import DataLoader from "dataloader";
import { builder } from "../../graphql/builder.js";
import { authorize, type GraphQLContext } from "../../graphql/context.js";
import { parseId } from "../../http/ids.js";
import { PaymentMethodType } from "../payment-methods/payment-methods.graphql.js";
import { DonationType } from "./donations.graphql.js";
import { type DonationRow, findDonationRowsByIds } from "./donations.repo.js";
import {
  adminActor,
  changeRecurringAmount,
  changeRecurringFrequency,
  MAX_PAUSE_CYCLES,
  pauseRecurring,
  resumeRecurring,
} from "./recurring-changes.service.js";

// The recurring-gift fields the REST wire shape leaves out, read once per request for a page of donations.
const rowLoaders = new WeakMap<GraphQLContext, DataLoader<number, DonationRow | null>>();
function donationRow(context: GraphQLContext, id: number) {
  let loader = rowLoaders.get(context);
  if (!loader) {
    loader = new DataLoader(async (ids) => {
      const rows = new Map(
        (await findDonationRowsByIds(context.db, context.scope.organizationId, ids)).map((row) => [row.id, row]),
      );
      return ids.map((id) => rows.get(id) ?? null);
    });
    rowLoaders.set(context, loader);
  }
  return loader.load(id);
}

builder.objectFields(DonationType, (t) => ({
  next_charge_date: t.string({
    nullable: true,
    description: "When the next renewal of a recurring gift is due",
    resolve: async (donation, _args, context) =>
      (await donationRow(context, donation.id))?.nextChargeDate?.toISOString() ?? null,
  }),
  paused_until: t.string({
    nullable: true,
    description: "A pause of a recurring gift: no renewal is charged before this date",
    resolve: async (donation, _args, context) =>
      (await donationRow(context, donation.id))?.pausedUntil?.toISOString() ?? null,
  }),
  cancelled_by: t.string({
    nullable: true,
    description: 'Who stopped a recurring gift: "donor", "admin" or "failed_payments"',
    resolve: async (donation, _args, context) => (await donationRow(context, donation.id))?.cancelledBy ?? null,
  }),
  cancel_reason: t.string({
    nullable: true,
    description: "The reason given when the gift was cancelled",
    resolve: async (donation, _args, context) => (await donationRow(context, donation.id))?.cancelReason ?? null,
  }),
  payment_method: t.field({
    type: PaymentMethodType,
    nullable: true,
    description: "The payment method the renewals of a recurring gift are charged to (a donor may replace it)",
    resolve: async (donation, _args, context) => {
      const id = (await donationRow(context, donation.id))?.paymentMethodId;
      return id ? context.loaders.paymentMethod.load(id) : null;
    },
  }),
}));

const donationId = (id: string | number) => parseId(String(id), "Donation");

builder.mutationFields((t) => ({
  changeDonationAmount: t.field({
    type: DonationType,
    description: "Changes the amount of a recurring donation (from the next renewal on), within the campaign's rules",
    args: { id: t.arg.id({ required: true }), amount: t.arg.float({ required: true }) },
    resolve: (_root, { id, amount }, context) => {
      authorize(context, "donations:write");
      return changeRecurringAmount(
        context,
        context.scope.organizationId,
        donationId(id),
        amount,
        adminActor(context.scope.origin),
      );
    },
  }),
  changeDonationFrequency: t.field({
    type: DonationType,
    description: "Switches a recurring donation between monthly (12) and yearly (1); the next renewal is re-planned",
    args: { id: t.arg.id({ required: true }), frequency: t.arg.int({ required: true }) },
    resolve: (_root, { id, frequency }, context) => {
      authorize(context, "donations:write");
      return changeRecurringFrequency(
        context,
        context.scope.organizationId,
        donationId(id),
        frequency,
        adminActor(context.scope.origin),
      );
    },
  }),
  pauseDonation: t.field({
    type: DonationType,
    description: `Skips the next 1 to ${MAX_PAUSE_CYCLES} renewals of a recurring donation`,
    args: { id: t.arg.id({ required: true }), cycles: t.arg.int({ required: true }) },
    resolve: (_root, { id, cycles }, context) => {
      authorize(context, "donations:write");
      return pauseRecurring(
        context,
        context.scope.organizationId,
        donationId(id),
        cycles,
        adminActor(context.scope.origin),
      );
    },
  }),
  resumeDonation: t.field({
    type: DonationType,
    description: "Ends the pause of a recurring donation: the next renewal is its schedule's next date",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "donations:write");
      return resumeRecurring(context, context.scope.organizationId, donationId(id), adminActor(context.scope.origin));
    },
  }),
}));
