import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { CampaignType } from "../campaigns/campaigns.graphql.js";
import { SupporterType } from "../supporters/supporters.graphql.js";
import { Donation, DonationListQuery, type DonationWire } from "./donations.schemas.js";
import { getDonation, listDonations } from "./donations.service.js";

export const DonationType = builder.objectRef<DonationWire>("Donation").implement({
  description: describe(Donation),
  fields: (t) => ({
    ...exposeWireFields(t, Donation),
    supporter: t.field({
      type: SupporterType,
      nullable: true,
      resolve: (donation, _args, context) => {
        authorize(context, "supporters:read");
        return context.loaders.supporter.load(donation.supporter_id);
      },
    }),
    campaign: t.field({
      type: CampaignType,
      nullable: true,
      resolve: (donation, _args, context) => {
        authorize(context, "campaigns:read");
        return context.loaders.campaign.load(donation.campaign_id);
      },
    }),
  }),
});

defineCollection({
  collection: "donations",
  singular: "donation",
  type: DonationType,
  listQuery: DonationListQuery,
  permission: "donations:read",
  list: listDonations,
  retrieve: getDonation,
});
