import { arrayContains, eq, ilike, or, type SQL } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import {
  countTenantRows,
  dateRangeConditions,
  escapeLike,
  orderColumnsOf,
  orderTerms,
  selectTenantPage,
  selectTenantRow,
} from "../../db/list-query.js";
import { campaigns } from "../../db/schema.js";
import type { DateBound, Order, Page } from "../../http/pagination.js";
import type { Scope } from "../scope.js";
import { CAMPAIGN_ORDER_FIELDS } from "./campaigns.schemas.js";

export type CampaignRow = typeof campaigns.$inferSelect;

export interface CampaignFilters {
  q?: string;
  type?: string;
  tag?: string;
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
  const [rows, count] = await Promise.all([
    selectTenantPage(tx, campaigns, query),
    countTenantRows(tx, campaigns, "campaigns", query),
  ]);
  return { rows, count };
}

export function findCampaignRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, campaigns, scope.organizationId, id);
}
