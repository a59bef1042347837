import { and, arrayContains, eq, ilike, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  type DateBound,
  dateRangeConditions,
  escapeLike,
  instant,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
  wireRowOf,
} from "../../db/list-query.js";
import { campaigns } from "../../db/schema.js";
import { selectTenantRowsByIds } from "../../db/tenant-rows.js";
import { CAMPAIGN_ORDER_FIELDS, type CampaignWire } from "./campaigns.schemas.js";

export type CampaignRow = typeof campaigns.$inferSelect;

/** The one wire mapping of campaigns: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const campaignWireRow = wireRowOf<CampaignWire>({
  id: campaigns.id,
  create_date: instant(campaigns.createDate),
  update_date: instant(campaigns.updateDate),
  title: campaigns.title,
  slug: campaigns.slug,
  code: campaigns.code,
  type: campaigns.type,
  goal: campaigns.goal,
  is_goal_enabled: campaigns.isGoalEnabled,
  has_one_off: campaigns.hasOneOff,
  has_subscription: campaigns.hasSubscription,
  allow_custom_amount: campaigns.allowCustomAmount,
  allow_custom_subscription_amount: campaigns.allowCustomSubscriptionAmount,
  default_amount: campaigns.defaultAmount,
  default_subscription_amount: campaigns.defaultSubscriptionAmount,
  min_amount: campaigns.minAmount,
  max_amount: campaigns.maxAmount,
  min_subscription_amount: campaigns.minSubscriptionAmount,
  max_subscription_amount: campaigns.maxSubscriptionAmount,
  asks: campaigns.asks,
  asks_subscription: campaigns.asksSubscription,
  shown_fields: campaigns.shownFields,
  required_fields: campaigns.requiredFields,
  privacy_note: campaigns.privacyNote,
  tags: campaigns.tags,
  cost_example_amount: campaigns.costExampleAmount,
  cost_example_label: campaigns.costExampleLabel,
  allow_cover_fee: campaigns.allowCoverFee,
  archive_date: instant(campaigns.archiveDate),
});

export interface CampaignFilters {
  q?: string;
  type?: string;
  tag?: string;
  archived?: boolean;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(campaigns, CAMPAIGN_ORDER_FIELDS);

function conditionsFor(scope: Scope, filters: CampaignFilters): (SQL | undefined)[] {
  const pattern = filters.q ? `%${escapeLike(filters.q)}%` : undefined;
  return [
    pattern
      ? or(ilike(campaigns.title, pattern), ilike(campaigns.slug, pattern), ilike(campaigns.code, pattern))
      : undefined,
    filters.type !== undefined ? eq(campaigns.type, filters.type) : undefined,
    filters.tag !== undefined ? arrayContains(campaigns.tags, [filters.tag]) : undefined,
    filters.archived === undefined
      ? undefined
      : filters.archived
        ? isNotNull(campaigns.archiveDate)
        : isNull(campaigns.archiveDate),
    ...dateRangeConditions(campaigns.createDate, filters.createDateFrom, filters.createDateTo, scope.timeZone),
    ...dateRangeConditions(campaigns.updateDate, filters.updateDateFrom, filters.updateDateTo, scope.timeZone),
  ];
}

export async function listCampaignRows(tx: Executor, scope: Scope, filters: CampaignFilters, order: Order, page: Page) {
  const query = {
    organizationId: scope.organizationId,
    conditions: conditionsFor(scope, filters),
    order: orderTerms(orderColumns, campaigns.id, order),
    page,
  };
  return listTenantPage(tx, campaigns, "campaigns", query);
}

export function findCampaignRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, campaigns, scope.organizationId, id);
}

export function findCampaignRowsByIds(tx: Executor, organizationId: number, ids: readonly number[]) {
  return selectTenantRowsByIds(tx, campaigns, organizationId, ids);
}

type CampaignValues = Omit<CampaignWire, "id" | "create_date" | "update_date" | "archive_date">;

const decimals = (values: number[] | null) => (values === null ? null : values.map((value) => value.toFixed(2)));

function columnsOf(values: CampaignValues) {
  return {
    title: values.title,
    slug: values.slug,
    code: values.code,
    type: values.type,
    goal: values.goal,
    isGoalEnabled: values.is_goal_enabled,
    hasOneOff: values.has_one_off,
    hasSubscription: values.has_subscription,
    allowCustomAmount: values.allow_custom_amount,
    allowCustomSubscriptionAmount: values.allow_custom_subscription_amount,
    defaultAmount: values.default_amount,
    defaultSubscriptionAmount: values.default_subscription_amount,
    minAmount: values.min_amount,
    maxAmount: values.max_amount,
    minSubscriptionAmount: values.min_subscription_amount,
    maxSubscriptionAmount: values.max_subscription_amount,
    asks: decimals(values.asks),
    asksSubscription: decimals(values.asks_subscription),
    shownFields: values.shown_fields,
    requiredFields: values.required_fields,
    privacyNote: values.privacy_note,
    tags: values.tags,
    costExampleAmount: values.cost_example_amount,
    costExampleLabel: values.cost_example_label,
    allowCoverFee: values.allow_cover_fee,
  };
}

export async function insertCampaignRow(tx: Executor, scope: Scope, values: CampaignValues) {
  const [row] = await tx
    .insert(campaigns)
    .values({ organizationId: scope.organizationId, ...columnsOf(values) })
    .returning();
  if (!row) throw new Error("campaign insert returned nothing");
  await countInserted(tx, scope.organizationId, "campaigns");
  return row;
}

export async function updateCampaignRow(
  tx: Executor,
  scope: Scope,
  id: number,
  values: CampaignValues,
  archiveDate?: Date,
) {
  const [row] = await tx
    .update(campaigns)
    .set({ ...columnsOf(values), updateDate: sql`now()`, ...(archiveDate ? { archiveDate } : {}) })
    .where(and(eq(campaigns.organizationId, scope.organizationId), eq(campaigns.id, id)))
    .returning();
  if (!row) throw new Error("campaign update matched nothing");
  return row;
}
