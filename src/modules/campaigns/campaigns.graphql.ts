import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { validateAgainst } from "../../http/validate.js";
import { Campaign, CampaignInput, CampaignListQuery, CampaignPatch, type CampaignWire } from "./campaigns.schemas.js";
import { archiveCampaign, createCampaign, getCampaign, listCampaigns, updateCampaign } from "./campaigns.service.js";

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

const CampaignInputType = builder.inputType("CampaignInput", {
  description: describe(CampaignInput),
  fields: (t) => inputFieldsFrom(t, CampaignInput),
});

const CampaignPatchType = builder.inputType("CampaignPatch", {
  description: describe(CampaignPatch),
  fields: (t) => inputFieldsFrom(t, CampaignPatch),
});

builder.mutationFields((t) => ({
  createCampaign: t.field({
    type: CampaignType,
    args: { input: t.arg({ type: CampaignInputType, required: true }) },
    resolve: async (_root, { input }, context) => {
      authorize(context, "campaigns:write");
      return (
        await createCampaign(context.db, context.scope, validateAgainst<CampaignInput>(CampaignInput, input, "field"))
      ).body;
    },
  }),
  updateCampaign: t.field({
    type: CampaignType,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: CampaignPatchType, required: true }) },
    resolve: (_root, { id, input }, context) => {
      authorize(context, "campaigns:write");
      const patch = validateAgainst<CampaignPatch>(CampaignPatch, input, "field");
      return updateCampaign(context.db, context.scope, String(id), patch);
    },
  }),
  archiveCampaign: t.field({
    type: CampaignType,
    description: "Stops the campaign from taking gifts; its history stays",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, context) => {
      authorize(context, "campaigns:write");
      return archiveCampaign(context.db, context.scope, String(id));
    },
  }),
}));
