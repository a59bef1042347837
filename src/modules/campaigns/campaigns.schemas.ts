import { type Static, Type } from "typebox";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { DateTime, Id, Money, nullable, Tags, wireObject } from "../../http/schema-types.js";

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
] as const;

export const CampaignListQuery = listQuerySchema(CAMPAIGN_ORDER_FIELDS, {
  q: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive substring of title, slug or code" })),
  type: Type.Optional(Type.String({ maxLength: 100 })),
  tag: Type.Optional(Type.String({ maxLength: 100, description: "Campaigns carrying this tag" })),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
});
export type CampaignListQuery = Static<typeof CampaignListQuery>;

export const CampaignList = listResponseSchema(Campaign, "campaigns");
