import { type Static, Type } from "typebox";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Id, Money, nullable, Tags, wireObject } from "../../http/schema-types.js";
import { AskImpact, CampaignQuestion, QUESTION_LIMITS, QUESTION_TYPES } from "./campaign-questions.js";

export const CAMPAIGN_STATUSES = ["draft", "published"] as const;
export const STORY_MAX_LENGTH = 20_000;

export const Campaign = wireObject(
  {
    id: Id,
    create_date: DateTime,
    update_date: DateTime,
    title: Type.String(),
    slug: nullable(Type.String()),
    code: nullable(Type.String()),
    type: Type.String(),
    goal: nullable(Money),
    is_goal_enabled: Type.Boolean(),
    has_one_off: Type.Boolean(),
    has_subscription: Type.Boolean(),
    allow_custom_amount: Type.Boolean(),
    allow_custom_subscription_amount: Type.Boolean(),
    default_amount: nullable(Money),
    default_subscription_amount: nullable(Money),
    min_amount: nullable(Money),
    max_amount: nullable(Money),
    min_subscription_amount: nullable(Money),
    max_subscription_amount: nullable(Money),
    asks: nullable(Type.Array(Money)),
    asks_subscription: nullable(Type.Array(Money)),
    shown_fields: nullable(Type.Array(Type.String())),
    required_fields: nullable(Type.Array(Type.String())),
    privacy_note: nullable(Type.String()),
    tags: Tags,
    cost_example_amount: nullable(Money),
    cost_example_label: nullable(Type.String()),
    allow_cover_fee: Type.Boolean({
      description: "The donation page offers to add the organization's estimated processing fee to the gift",
    }),
    archive_date: nullable({ ...DateTime, description: "When the campaign was archived; null while active" }),
    story: nullable(Type.String({ description: "The campaign's story in Markdown, shown on its donation page" })),
    cover_image_url: nullable(
      Type.String({
        description: "The cover image's address (its largest width); set by PUT /admin/campaigns/{id}/cover",
      }),
    ),
    status: Type.String({
      enum: [...CAMPAIGN_STATUSES],
      description: "draft: its page and public API answer 404; published: live",
    }),
    start_date: nullable({
      ...DateTime,
      description: "Before it, the page says when the campaign opens, and takes no gifts",
    }),
    end_date: nullable({
      ...DateTime,
      description: "From it on, the page says the campaign has ended, and takes no gifts",
    }),
    ask_impacts: Type.Array(AskImpact, { description: "A line of impact for some suggested amounts" }),
    questions: Type.Array(CampaignQuestion, { description: "The campaign's own questions on the donation form" }),
    allow_tribute: Type.Boolean({ description: "The form offers to make the gift in honour or in memory of someone" }),
  },
  "A fundraising campaign",
);
export type CampaignWire = Static<typeof Campaign>;

export const CAMPAIGN_ORDER_FIELDS = [
  "id",
  "create_date",
  "update_date",
  "title",
  "slug",
  "code",
  "type",
  "goal",
  "is_goal_enabled",
  "has_one_off",
  "has_subscription",
  "allow_custom_amount",
  "allow_custom_subscription_amount",
  "default_amount",
  "default_subscription_amount",
  "min_amount",
  "max_amount",
  "min_subscription_amount",
  "max_subscription_amount",
  "privacy_note",
  "cost_example_amount",
  "cost_example_label",
  "archive_date",
] as const;

export const CampaignListQuery = listQuerySchema(CAMPAIGN_ORDER_FIELDS, {
  q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of title, slug or code" })),
  type: Type.Optional(Type.String({ maxLength: 100 })),
  tag: Type.Optional(Type.String({ maxLength: 100, description: "Campaigns carrying this tag" })),
  archived: Type.Optional(Type.Boolean({ description: "true: archived campaigns only; false: active ones only" })),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
});
export type CampaignListQuery = Static<typeof CampaignListQuery>;

export const CampaignList = listResponseSchema(Campaign, "campaigns");

/** Fields a donor can be asked for on a donation form. */
export const SUPPORTER_FORM_FIELDS = [
  "business_name",
  "first_name",
  "last_name",
  "email",
  "phone",
  "mobile",
  "job",
  "sex",
  "date_of_birth",
  "place_of_birth",
  "ssn",
  "vat",
  "address",
  "address2",
  "city",
  "locality",
  "country",
  "postal_code",
  "note",
] as const;

const InputMoney = Type.Number({ minimum: 0.01, maximum: 1_000_000_000, description: "At most 2 decimals" });
const optionalNullable = <T extends Parameters<typeof nullable>[0]>(schema: T) => Type.Optional(nullable(schema));
const FormField = Type.String({ enum: [...SUPPORTER_FORM_FIELDS] });

const AskImpactInput = Type.Object(
  {
    amount: InputMoney,
    recurring: Type.Boolean(),
    text: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false, description: "What a suggested amount makes possible" },
);
export type AskImpactInput = Static<typeof AskImpactInput>;

/** A question as a client sends it: without a key, one is made from the label. */
const CampaignQuestionInput = Type.Object(
  {
    key: Type.Optional(CampaignQuestion.properties.key),
    type: Type.String({ enum: [...QUESTION_TYPES] }),
    label: Type.String({ minLength: 1, maxLength: QUESTION_LIMITS.label }),
    required: Type.Optional(Type.Boolean({ description: "Default false" })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: QUESTION_LIMITS.option }), {
        maxItems: QUESTION_LIMITS.options,
        description: "single_choice and multiple_choice: 2 to 30 different choices; other types: none",
      }),
    ),
  },
  { additionalProperties: false, description: "A question the donation form asks" },
);
export type CampaignQuestionInput = Static<typeof CampaignQuestionInput>;

const editableCampaignFields = {
  slug: optionalNullable(
    Type.String({
      pattern: "^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$",
      description: "Lowercase letters, digits, hyphens",
    }),
  ),
  code: optionalNullable(Type.String({ maxLength: 100 })),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  goal: optionalNullable(InputMoney),
  is_goal_enabled: Type.Optional(Type.Boolean()),
  has_one_off: Type.Optional(Type.Boolean()),
  has_subscription: Type.Optional(Type.Boolean()),
  allow_custom_amount: Type.Optional(Type.Boolean()),
  allow_custom_subscription_amount: Type.Optional(Type.Boolean()),
  default_amount: optionalNullable(InputMoney),
  default_subscription_amount: optionalNullable(InputMoney),
  min_amount: optionalNullable(InputMoney),
  max_amount: optionalNullable(InputMoney),
  min_subscription_amount: optionalNullable(InputMoney),
  max_subscription_amount: optionalNullable(InputMoney),
  asks: optionalNullable(Type.Array(InputMoney, { maxItems: 12 })),
  asks_subscription: optionalNullable(Type.Array(InputMoney, { maxItems: 12 })),
  shown_fields: optionalNullable(Type.Array(FormField, { uniqueItems: true })),
  required_fields: optionalNullable(Type.Array(FormField, { uniqueItems: true })),
  privacy_note: optionalNullable(Type.String({ maxLength: 5000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, uniqueItems: true })),
  cost_example_amount: optionalNullable(InputMoney),
  cost_example_label: optionalNullable(Type.String({ minLength: 1, maxLength: 200 })),
  allow_cover_fee: Type.Optional(Type.Boolean()),
  story: optionalNullable(
    Type.String({ maxLength: STORY_MAX_LENGTH, description: "Markdown; raw HTML is not rendered" }),
  ),
  status: Type.Optional(Type.String({ enum: [...CAMPAIGN_STATUSES], description: "Default published" })),
  start_date: optionalNullable(DateTime),
  end_date: optionalNullable({ ...DateTime, description: "After start_date" }),
  ask_impacts: Type.Optional(
    Type.Array(AskImpactInput, {
      maxItems: 24,
      description: "Replaces the lines; each amount one of asks (recurring: asks_subscription), once",
    }),
  ),
  questions: Type.Optional(
    Type.Array(CampaignQuestionInput, {
      maxItems: QUESTION_LIMITS.questions,
      description: "Replaces the questions; keep a question's key to keep its answers together",
    }),
  ),
  allow_tribute: Type.Optional(Type.Boolean()),
};

export const CampaignInput = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: 200 }), ...editableCampaignFields },
  { additionalProperties: false, description: "A new campaign; omitted fields take their defaults" },
);
export type CampaignInput = Static<typeof CampaignInput>;

export const CampaignPatch = Type.Object(
  { title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...editableCampaignFields },
  { additionalProperties: false, description: "Changes to a campaign; omitted fields stay, null clears" },
);
export type CampaignPatch = Static<typeof CampaignPatch>;
