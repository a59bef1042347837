import type { TSchema } from "typebox";
import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields, inputFieldsFrom } from "../../graphql/wire-fields.js";
import { validateAgainst } from "../../http/validate.js";
import { AskImpact, type AskImpactWire, CampaignQuestion, type CampaignQuestionWire } from "./campaign-questions.js";
import { Campaign, CampaignInput, CampaignListQuery, CampaignPatch, type CampaignWire } from "./campaigns.schemas.js";
import { archiveCampaign, createCampaign, getCampaign, listCampaigns, updateCampaign } from "./campaigns.service.js";

const AskImpactType = builder.objectRef<AskImpactWire>("AskImpact").implement({
  description: describe(AskImpact),
  fields: (t) => exposeWireFields(t, AskImpact),
});

const CampaignQuestionType = builder.objectRef<CampaignQuestionWire>("CampaignQuestion").implement({
  description: describe(CampaignQuestion),
  fields: (t) => ({
    ...exposeWireFields(t, CampaignQuestion, ["options"]),
    // Absent on questions without choices: null here, not a non-null field's error.
    options: t.exposeStringList("options", {
      nullable: true,
      description: "The choices of single_choice and multiple_choice questions (at least two); null otherwise",
    }),
  }),
});

/** Fields whose values are lists of objects: typed here, the scalar rest derived from the REST schema. */
const OBJECT_LISTS = ["ask_impacts", "questions"] as const;

export const CampaignType = builder.objectRef<CampaignWire>("Campaign").implement({
  description: describe(Campaign),
  fields: (t) => ({
    ...exposeWireFields(t, Campaign, OBJECT_LISTS),
    ask_impacts: t.expose("ask_impacts", {
      type: [AskImpactType],
      description: "A line of impact for some suggested amounts",
    }),
    questions: t.expose("questions", { type: [CampaignQuestionType], description: "The campaign's own questions" }),
  }),
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

const AskImpactInputType = builder.inputType("AskImpactInput", {
  description: "What a suggested amount makes possible",
  fields: (t) => inputFieldsFrom(t, CampaignInput.properties.ask_impacts.items),
});

const CampaignQuestionInputType = builder.inputType("CampaignQuestionInput", {
  description: "A question the donation form asks; without a key, one is made from the label",
  fields: (t) => inputFieldsFrom(t, CampaignInput.properties.questions.items),
});

/** The REST request schema's fields, the lists of objects typed with their input types. */
function campaignInputFields(t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0], schema: TSchema) {
  const { properties, required = [] } = schema as unknown as {
    properties: Record<string, TSchema>;
    required?: string[];
  };
  const scalar = Object.fromEntries(
    Object.entries(properties).filter(([name]) => !(OBJECT_LISTS as readonly string[]).includes(name)),
  );
  return {
    ...inputFieldsFrom(t, { ...schema, properties: scalar, required } as TSchema),
    ask_impacts: t.field({ type: [AskImpactInputType], description: "Replaces the impact lines" }),
    questions: t.field({ type: [CampaignQuestionInputType], description: "Replaces the questions" }),
  };
}

const CampaignInputType = builder.inputType("CampaignInput", {
  description: describe(CampaignInput),
  fields: (t) => campaignInputFields(t, CampaignInput),
});

const CampaignPatchType = builder.inputType("CampaignPatch", {
  description: describe(CampaignPatch),
  fields: (t) => campaignInputFields(t, CampaignPatch),
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
