import { arrayContains, eq, ilike, or, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import {
  type DateBound,
  dateRangeConditions,
  escapeLike,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
} from "../../db/list-query.js";
import { supporters } from "../../db/schema.js";
import { SUPPORTER_ORDER_FIELDS } from "./supporters.schemas.js";

export type SupporterRow = typeof supporters.$inferSelect;

export interface SupporterFilters {
  q?: string;
  email?: string;
  tag?: string;
  country?: string;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(supporters, SUPPORTER_ORDER_FIELDS);

/** Matches a supporter by name, business name or email; shared with the checkout search. */
export function supporterTextMatch(pattern: string): SQL | undefined {
  return or(
    ilike(supporters.firstName, pattern),
    ilike(supporters.lastName, pattern),
    ilike(supporters.businessName, pattern),
    ilike(supporters.email, pattern),
  );
}

function conditionsFor(scope: Scope, filters: SupporterFilters): (SQL | undefined)[] {
  return [
    filters.q ? supporterTextMatch(`%${escapeLike(filters.q)}%`) : undefined,
    filters.email !== undefined ? sql`lower(${supporters.email}) = lower(${filters.email})` : undefined,
    filters.tag !== undefined ? arrayContains(supporters.tags, [filters.tag]) : undefined,
    filters.country !== undefined ? eq(supporters.country, filters.country) : undefined,
    ...dateRangeConditions(supporters.createDate, filters.createDateFrom, filters.createDateTo, scope.timeZone),
    ...dateRangeConditions(supporters.updateDate, filters.updateDateFrom, filters.updateDateTo, scope.timeZone),
  ];
}

export async function listSupporterRows(
  tx: Executor,
  scope: Scope,
  filters: SupporterFilters,
  order: Order,
  page: Page,
) {
  const query = {
    organizationId: scope.organizationId,
    conditions: conditionsFor(scope, filters),
    order: orderTerms(orderColumns, supporters.id, order),
    page,
  };
  return listTenantPage(tx, supporters, "supporters", query);
}

export function findSupporterRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, supporters, scope.organizationId, id);
}
