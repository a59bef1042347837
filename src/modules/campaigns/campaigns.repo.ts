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
  type WireRow,
  wireRowOf,
} from "../../db/list-query.js";
import { campaigns } from "../../db/schema.js";
import { selectTenantRowsByIds } from "../../db/tenant-rows.js";
import { askImpactsOf } from "./campaign-questions.js";
import { CAMPAIGN_ORDER_FIELDS, type CampaignWire } from "./campaigns.schemas.js";

export type CampaignRow = typeof campaigns.$inferSelect;

const campaignColumns = {
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
  story: campaigns.story,
  cover_image_url: campaigns.coverImageUrl,
  status: campaigns.status,
  start_date: instant(campaigns.startDate),
  end_date: instant(campaigns.endDate),
  questions: campaigns.questions,
  allow_tribute: campaigns.allowTribute,
};

// Impact amounts are kept as decimal strings ("30.00"), as money columns are; the wire shows numbers.
const askImpactsSql = sql`coalesce((select json_agg(json_build_object('amount', (impact.value->>'amount')::numeric, 'recurring', (impact.value->>'recurring')::boolean, 'text', impact.value->>'text') order by impact.position) from jsonb_array_elements(${campaigns.askImpacts}) with ordinality as impact(value, position)), '[]'::json)`;

const campaignInSql = wireRowOf<CampaignWire>({ ...campaignColumns, ask_impacts: askImpactsSql });
const campaignOfRow = wireRowOf<Omit<CampaignWire, "ask_impacts">>(campaignColumns);

/** The one wire mapping of campaigns: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const campaignWireRow: WireRow<CampaignWire> = {
  sql: campaignInSql.sql,
  decode: campaignInSql.decode,
  fromRow: (row) => ({ ...campaignOfRow.fromRow(row), ask_impacts: askImpactsOf(row as CampaignRow) }),
};

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

type CampaignValues = Omit<CampaignWire, "id" | "create_date" | "update_date" | "archive_date" | "cover_image_url">;

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
    story: values.story,
    status: values.status,
    startDate: values.start_date === null ? null : new Date(values.start_date),
    endDate: values.end_date === null ? null : new Date(values.end_date),
    askImpacts: values.ask_impacts.map((impact) => ({
      amount: impact.amount.toFixed(2),
      recurring: impact.recurring,
      text: impact.text,
    })),
    questions: values.questions,
    allowTribute: values.allow_tribute,
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

/** The slugs of the organization's campaigns that start with `base` (a new campaign's slug is made unique among them). */
export async function findSlugsLike(tx: Executor, scope: Scope, base: string): Promise<string[]> {
  const rows = await tx
    .select({ slug: campaigns.slug })
    .from(campaigns)
    .where(and(eq(campaigns.organizationId, scope.organizationId), ilike(campaigns.slug, `${escapeLike(base)}%`)));
  return rows.map((row) => row.slug).filter((slug): slug is string => slug !== null);
}

/** Sets (or clears) the cover image's address of a campaign. */
export async function updateCampaignCover(tx: Executor, scope: Scope, id: number, coverImageUrl: string | null) {
  const [row] = await tx
    .update(campaigns)
    .set({ coverImageUrl, updateDate: sql`now()` })
    .where(and(eq(campaigns.organizationId, scope.organizationId), eq(campaigns.id, id)))
    .returning();
  if (!row) throw new Error("campaign update matched nothing");
  return row;
}
