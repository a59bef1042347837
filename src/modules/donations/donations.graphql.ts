import { builder } from "../../graphql/builder.js";
import { defineCollection } from "../../graphql/collection.js";
import { authorize } from "../../graphql/context.js";
import { describe, exposeWireFields } from "../../graphql/wire-fields.js";
import {
  answerText,
  DonationAnswer,
  type DonationAnswerWire,
  Tribute,
  type TributeWire,
} from "../campaigns/campaign-questions.js";
import { CampaignType } from "../campaigns/campaigns.graphql.js";
import { SupporterType } from "../supporters/supporters.graphql.js";
import { Donation, DonationListQuery, type DonationWire } from "./donations.schemas.js";
import { getDonation, listDonations } from "./donations.service.js";

const TributeType = builder.objectRef<TributeWire>("Tribute").implement({
  description: describe(Tribute),
  fields: (t) => exposeWireFields(t, Tribute),
});

/** REST's `value` is text, a list or a boolean: GraphQL gives each form its own typed field, and the line of text. */
const DonationAnswerType = builder.objectRef<DonationAnswerWire>("DonationAnswer").implement({
  description: describe(DonationAnswer),
  fields: (t) => ({
    ...exposeWireFields(t, DonationAnswer, ["value"]),
    text: t.string({
      nullable: true,
      description: "The answer of a short_text, long_text or single_choice question",
      resolve: (answer) => (typeof answer.value === "string" ? answer.value : null),
    }),
    choices: t.stringList({
      nullable: true,
      description: "The options chosen for a multiple_choice question",
      resolve: (answer) => (Array.isArray(answer.value) ? answer.value : null),
    }),
    checked: t.boolean({
      nullable: true,
      description: "A checkbox question: whether it was ticked",
      resolve: (answer) => (typeof answer.value === "boolean" ? answer.value : null),
    }),
    display: t.string({
      description: 'The answer as one line of text ("M", "Radio, A friend", "yes")',
      resolve: (answer) => answerText(answer.value),
    }),
  }),
});

export const DonationType = builder.objectRef<DonationWire>("Donation").implement({
  description: describe(Donation),
  fields: (t) => ({
    ...exposeWireFields(t, Donation, ["answers"]),
    tribute: t.expose("tribute", {
      type: TributeType,
      nullable: true,
      description: "A gift in honour or in memory of someone",
    }),
    answers: t.expose("answers", { type: [DonationAnswerType], description: describe(Donation.properties.answers) }),
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
