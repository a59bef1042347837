import type { Db } from "../../db/client.js";
import { notFound } from "../../http/errors.js";
import { parseId } from "../../http/ids.js";
import { optionalDateBound, parseOrder } from "../../http/pagination.js";
import type { Scope } from "../scope.js";
import { type CampaignRow, findCampaignRow, listCampaignRows } from "./campaigns.repo.js";
import type { CampaignListQuery, CampaignWire } from "./campaigns.schemas.js";

const numbers = (values: string[] | null) => (values === null ? null : values.map(Number));

export function campaignToWire(row: CampaignRow): CampaignWire {
  return {
    id: row.id,
    create_date: row.createDate.toISOString(),
    update_date: row.updateDate.toISOString(),
    title: row.title,
    slug: row.slug,
    code: row.code,
    type: row.type,
    goal: row.goal,
    is_goal_enabled: row.isGoalEnabled,
    has_one_off: row.hasOneOff,
    has_subscription: row.hasSubscription,
    allow_custom_amount: row.allowCustomAmount,
    allow_custom_subscription_amount: row.allowCustomSubscriptionAmount,
    default_amount: row.defaultAmount,
    default_subscription_amount: row.defaultSubscriptionAmount,
    min_amount: row.minAmount,
    max_amount: row.maxAmount,
    min_subscription_amount: row.minSubscriptionAmount,
    max_subscription_amount: row.maxSubscriptionAmount,
    asks: numbers(row.asks),
    asks_subscription: numbers(row.asksSubscription),
    shown_fields: row.shownFields,
    required_fields: row.requiredFields,
    privacy_note: row.privacyNote,
    tags: row.tags,
    cost_example_amount: row.costExampleAmount,
    cost_example_label: row.costExampleLabel,
  };
}

export async function listCampaigns(db: Db, scope: Scope, query: CampaignListQuery) {
  const { rows, count } = await listCampaignRows(
    db,
    scope,
    {
      q: query.q,
      type: query.type,
      tag: query.tag,
      createDateFrom: optionalDateBound("create_date_from", query.create_date_from),
      createDateTo: optionalDateBound("create_date_to", query.create_date_to),
      updateDateFrom: optionalDateBound("update_date_from", query.update_date_from),
      updateDateTo: optionalDateBound("update_date_to", query.update_date_to),
    },
    parseOrder(query.order),
    { limit: query.limit, offset: query.offset },
  );
  return { items: rows.map(campaignToWire), count };
}

export async function getCampaign(db: Db, scope: Scope, rawId: string) {
  const row = await findCampaignRow(db, scope, parseId(rawId, "Campaign"));
  if (!row) throw notFound("Campaign");
  return campaignToWire(row);
}
