import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import { Campaign, CampaignListQuery, type CampaignWire } from "./campaigns.schemas.js";
import { getCampaign, listCampaigns } from "./campaigns.service.js";

export const CampaignType = builder.objectRef<CampaignWire>("Campaign").implement({
  description: describe(Campaign),
  fields: (t) => exposeWireFields(t, Campaign),
});

defineCollection({
  collection: "campaigns",
  singular: "campaign",
  type: CampaignType,
  listQuery: CampaignListQuery,
  permission: "campaigns:read",
  list: listCampaigns,
  retrieve: getCampaign,
});
