import { type AnyColumn, and, count, eq, ilike, inArray, or, type SQL } from "drizzle-orm";
import type { PgSelect } from "drizzle-orm/pg-core";
import type { Executor } from "../../db/client.js";
import { countAll, dateRangeConditions, escapeLike, type OrderColumns, orderTerms } from "../../db/list-query.js";
import { campaigns, checkouts, donations, paymentMethods, payments, supporters } from "../../db/schema.js";
import type { DateBound, Order, Page } from "../../http/pagination.js";
import type { Scope } from "../scope.js";
import { supporterTextMatch } from "../supporters/supporters.repo.js";

export interface CheckoutFilters {
  q?: string;
  state?: string;
  campaignId?: number;
  supporterId?: number;
  frequency?: number;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
}

const orderColumns: OrderColumns = {
  id: checkouts.id,
  create_date: checkouts.createDate,
  update_date: checkouts.updateDate,
  state: checkouts.state,
  amount: checkouts.amount,
  completed_date: checkouts.completedDate,
  frequency: checkouts.frequency,
  cost_example_quantity: checkouts.costExampleQuantity,
  payment_method_processor: paymentMethods.processor,
  payment_method_label: paymentMethods.label,
  payment_method_id: paymentMethods.id,
};
const PAYMENT_METHOD_ORDER = new Set(["payment_method_processor", "payment_method_label", "payment_method_id"]);

const sameTenant = (column: AnyColumn, idColumn: AnyColumn, fkColumn: AnyColumn) =>
  and(eq(column, checkouts.organizationId), eq(idColumn, fkColumn));

function joinPeople<T extends PgSelect>(query: T) {
  return query
    .leftJoin(supporters, sameTenant(supporters.organizationId, supporters.id, checkouts.supporterId))
    .leftJoin(campaigns, sameTenant(campaigns.organizationId, campaigns.id, checkouts.campaignId))
    .leftJoin(donations, sameTenant(donations.organizationId, donations.id, checkouts.donationId));
}

function joinPaymentMethod<T extends PgSelect>(query: T) {
  return query
    .leftJoin(payments, sameTenant(payments.organizationId, payments.id, checkouts.paymentId))
    .leftJoin(
      paymentMethods,
      and(eq(paymentMethods.organizationId, checkouts.organizationId), eq(paymentMethods.id, payments.paymentMethodId)),
    );
}

function textSearch(q: string): SQL | undefined {
  const pattern = `%${escapeLike(q)}%`;
  const exactId = /^[1-9]\d{0,15}$/.test(q) && Number.isSafeInteger(Number(q)) ? Number(q) : undefined;
  return or(
    supporterTextMatch(pattern),
    ilike(campaigns.title, pattern),
    ilike(donations.code, pattern),
    exactId !== undefined ? eq(checkouts.id, exactId) : undefined,
  );
}

function conditionsFor(scope: Scope, filters: CheckoutFilters): (SQL | undefined)[] {
  const tz = scope.timeZone;
  return [
    filters.q ? textSearch(filters.q) : undefined,
    filters.state !== undefined ? eq(checkouts.state, filters.state) : undefined,
    filters.campaignId !== undefined ? eq(checkouts.campaignId, filters.campaignId) : undefined,
    filters.supporterId !== undefined ? eq(checkouts.supporterId, filters.supporterId) : undefined,
    filters.frequency !== undefined ? eq(checkouts.frequency, filters.frequency) : undefined,
    ...dateRangeConditions(checkouts.createDate, filters.createDateFrom, filters.createDateTo, tz),
    ...dateRangeConditions(checkouts.updateDate, filters.updateDateFrom, filters.updateDateTo, tz),
  ];
}

function selectWithRelations(tx: Executor) {
  const query = tx
    .select({
      checkout: checkouts,
      campaign: campaigns,
      supporter: supporters,
      donation: donations,
      payment: payments,
      paymentMethod: paymentMethods,
    })
    .from(checkouts)
    .$dynamic();
  return joinPaymentMethod(joinPeople(query));
}

export type CheckoutRecord = Awaited<ReturnType<typeof selectWithRelations>>[number];

/**
 * The page's ids come first, from the (organization_id, create_date, id) index alone unless
 * the search or the order needs a related table; the full rows are joined for those ids only.
 */
export async function listCheckoutRecords(
  tx: Executor,
  scope: Scope,
  filters: CheckoutFilters,
  order: Order,
  page: Page,
) {
  const conditions = conditionsFor(scope, filters);
  const where = and(eq(checkouts.organizationId, scope.organizationId), ...conditions);
  const terms = orderTerms(orderColumns, checkouts.id, order);
  let ids = tx.select({ id: checkouts.id }).from(checkouts).$dynamic();
  if (filters.q) ids = joinPeople(ids);
  if (PAYMENT_METHOD_ORDER.has(order.field)) ids = joinPaymentMethod(ids);
  const pageIds = ids
    .where(where)
    .orderBy(...terms)
    .limit(page.limit)
    .offset(page.offset);

  const rowsPromise = selectWithRelations(tx)
    .where(and(eq(checkouts.organizationId, scope.organizationId), inArray(checkouts.id, pageIds)))
    .orderBy(...terms);
  const countPromise = conditions.every((condition) => condition === undefined)
    ? countAll(tx, scope.organizationId, "checkouts")
    : (filters.q
        ? joinPeople(tx.select({ count: count() }).from(checkouts).$dynamic())
        : tx.select({ count: count() }).from(checkouts).$dynamic()
      )
        .where(where)
        .then(([row]) => row?.count ?? 0);
  const [rows, total] = await Promise.all([rowsPromise, countPromise]);
  return { rows, count: total };
}

export async function findCheckoutRecord(tx: Executor, scope: Scope, id: number) {
  const [row] = await selectWithRelations(tx).where(
    and(eq(checkouts.organizationId, scope.organizationId), eq(checkouts.id, id)),
  );
  return row;
}
