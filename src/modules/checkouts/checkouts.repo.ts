import { type AnyColumn, and, count, eq, ilike, inArray, or, type SQL, sql } from "drizzle-orm";
import type { PgSelect } from "drizzle-orm/pg-core";
import type { Executor } from "../../db/client.js";
import {
  collectionCountSql,
  constantSql,
  countAll,
  dateRangeConditions,
  escapeLike,
  jsonRowOf,
  type OrderColumns,
  orderTerms,
  prepared,
} from "../../db/list-query.js";
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

function joinPaymentMethod<T extends PgSelect>(query: T) {
  return query
    .leftJoin(payments, sameTenant(payments.organizationId, payments.id, checkouts.paymentId))
    .leftJoin(
      paymentMethods,
      and(eq(paymentMethods.organizationId, checkouts.organizationId), eq(paymentMethods.id, payments.paymentMethodId)),
    );
}

/**
 * Semi-joins: each related table is searched once (a hashed subplan), and checkouts are matched
 * by key, instead of joining every checkout to its supporter, campaign and donation and testing
 * them row by row. Same result, as (organization_id, id) is the key of each related table.
 * (A union of per-table key lookups is faster for rare terms but several times slower for
 * common ones, whose matches it would all look up one by one.)
 */
function textSearch(tx: Executor, organizationId: number, q: string): SQL | undefined {
  const pattern = `%${escapeLike(q)}%`;
  const exactId = /^[1-9]\d{0,15}$/.test(q) && Number.isSafeInteger(Number(q)) ? Number(q) : undefined;
  return or(
    inArray(
      checkouts.supporterId,
      tx
        .select({ id: supporters.id })
        .from(supporters)
        .where(and(eq(supporters.organizationId, organizationId), supporterTextMatch(pattern))),
    ),
    inArray(
      checkouts.campaignId,
      tx
        .select({ id: campaigns.id })
        .from(campaigns)
        .where(and(eq(campaigns.organizationId, organizationId), ilike(campaigns.title, pattern))),
    ),
    inArray(
      checkouts.donationId,
      tx
        .select({ id: donations.id })
        .from(donations)
        .where(and(eq(donations.organizationId, organizationId), ilike(donations.code, pattern))),
    ),
    exactId !== undefined ? eq(checkouts.id, exactId) : undefined,
  );
}

function conditionsFor(tx: Executor, scope: Scope, filters: CheckoutFilters): (SQL | undefined)[] {
  const tz = scope.timeZone;
  return [
    filters.q ? textSearch(tx, scope.organizationId, filters.q) : undefined,
    filters.state !== undefined ? eq(checkouts.state, filters.state) : undefined,
    filters.campaignId !== undefined ? eq(checkouts.campaignId, filters.campaignId) : undefined,
    filters.supporterId !== undefined ? eq(checkouts.supporterId, filters.supporterId) : undefined,
    filters.frequency !== undefined ? eq(checkouts.frequency, filters.frequency) : undefined,
    ...dateRangeConditions(checkouts.createDate, filters.createDateFrom, filters.createDateTo, tz),
    ...dateRangeConditions(checkouts.updateDate, filters.updateDateFrom, filters.updateDateTo, tz),
  ];
}

const checkoutJson = jsonRowOf(checkouts);
const campaignJson = jsonRowOf(campaigns);
const supporterJson = jsonRowOf(supporters);
const donationJson = jsonRowOf(donations);
const paymentJson = jsonRowOf(payments);
const paymentMethodJson = jsonRowOf(paymentMethods);

/** The checkout's row of a related table, same organization, as a JSON array (null when there is none). */
function relatedJson(table: typeof campaigns | typeof supporters | typeof donations, json: SQL, key: AnyColumn) {
  return constantSql<unknown[] | null>(
    sql`(select ${json} from ${table} where ${table.organizationId} = ${checkouts.organizationId} and ${table.id} = ${key})`,
  );
}

/**
 * Each record is one row of five JSON values: no join to plan, few values to parse, a cheap
 * mapping. The selection is constant, rendered once.
 */
const recordSelection = {
  checkout: checkoutJson.sql,
  campaign: relatedJson(campaigns, campaignJson.sql, checkouts.campaignId),
  supporter: relatedJson(supporters, supporterJson.sql, checkouts.supporterId),
  donation: relatedJson(donations, donationJson.sql, checkouts.donationId),
  /** [payment, its method or null], or null without a payment. */
  payment: constantSql<[unknown[], unknown[] | null] | null>(
    sql`(select json_build_array(${paymentJson.sql}, case when ${paymentMethods.id} is null then null else ${paymentMethodJson.sql} end)
      from ${payments} left join ${paymentMethods}
        on ${paymentMethods.organizationId} = ${payments.organizationId} and ${paymentMethods.id} = ${payments.paymentMethodId}
      where ${payments.organizationId} = ${checkouts.organizationId} and ${payments.id} = ${checkouts.paymentId})`,
  ),
};

function selectWithRelations(tx: Executor) {
  return tx.select(recordSelection).from(checkouts).$dynamic();
}

export interface CheckoutRecord {
  checkout: typeof checkouts.$inferSelect;
  campaign: typeof campaigns.$inferSelect | null;
  supporter: typeof supporters.$inferSelect | null;
  donation: typeof donations.$inferSelect | null;
  payment: typeof payments.$inferSelect | null;
  paymentMethod: typeof paymentMethods.$inferSelect | null;
}

type RecordRow = Awaited<ReturnType<typeof selectWithRelations>>[number];

function toRecord(row: RecordRow): CheckoutRecord {
  const payment = row.payment;
  return {
    checkout: checkoutJson.decode(row.checkout),
    campaign: row.campaign ? campaignJson.decode(row.campaign) : null,
    supporter: row.supporter ? supporterJson.decode(row.supporter) : null,
    donation: row.donation ? donationJson.decode(row.donation) : null,
    payment: payment ? paymentJson.decode(payment[0]) : null,
    paymentMethod: payment?.[1] ? paymentMethodJson.decode(payment[1]) : null,
  };
}

/**
 * The page's ids come first, from the (organization_id, create_date, id) index alone unless
 * the order needs the payment method; the records are read for those ids only.
 *
 * The total rides on the page's rows when one statement can give it: unfiltered, the counter
 * maintained by triggers; with a text search, a window count over the matches, in the pass that
 * picks the page (the search reads every related row, so it runs once). Other filters are
 * counted by a parallel query, which an index answers while the page stops early. Past the last
 * page there is no row to carry the total, and only then is it counted apart.
 */
export async function listCheckoutRecords(
  tx: Executor,
  scope: Scope,
  filters: CheckoutFilters,
  order: Order,
  page: Page,
): Promise<{ rows: CheckoutRecord[]; count: number }> {
  const conditions = conditionsFor(tx, scope, filters);
  const unfiltered = conditions.every((condition) => condition === undefined);
  const where = and(eq(checkouts.organizationId, scope.organizationId), ...conditions);
  const terms = orderTerms(orderColumns, checkouts.id, order);
  const byPaymentMethod = PAYMENT_METHOD_ORDER.has(order.field);
  const countApart = () =>
    unfiltered
      ? countAll(tx, scope.organizationId, "checkouts")
      : prepared("checkouts_count", tx.select({ count: count() }).from(checkouts).where(where))
          .execute()
          .then(([row]) => row?.count ?? 0);

  if (filters.q) {
    let ids = tx
      .select({ id: checkouts.id, total: sql<number>`count(*) over ()`.mapWith(Number).as("total") })
      .from(checkouts)
      .$dynamic();
    if (byPaymentMethod) ids = joinPaymentMethod(ids);
    const pageIds = ids
      .where(where)
      .orderBy(...terms)
      .limit(page.limit)
      .offset(page.offset)
      .as("page_ids");
    let records = tx
      .select({ ...recordSelection, total: pageIds.total })
      .from(checkouts)
      .innerJoin(pageIds, eq(pageIds.id, checkouts.id))
      .$dynamic();
    if (byPaymentMethod) records = joinPaymentMethod(records);
    const rows = await prepared(
      "checkouts_search",
      records.where(eq(checkouts.organizationId, scope.organizationId)).orderBy(...terms),
    ).execute();
    const total = rows[0]?.total ?? (page.offset > 0 ? await countApart() : 0);
    return { rows: rows.map(toRecord), count: total };
  }

  let ids = tx.select({ id: checkouts.id }).from(checkouts).$dynamic();
  if (byPaymentMethod) ids = joinPaymentMethod(ids);
  const pageIds = ids
    .where(where)
    .orderBy(...terms)
    .limit(page.limit)
    .offset(page.offset);
  let records = tx
    .select({
      ...recordSelection,
      total: unfiltered ? collectionCountSql(scope.organizationId, "checkouts") : sql<null>`null`,
    })
    .from(checkouts)
    .$dynamic();
  if (byPaymentMethod) records = joinPaymentMethod(records);
  const rowsPromise = prepared(
    "checkouts_page",
    records
      .where(and(eq(checkouts.organizationId, scope.organizationId), inArray(checkouts.id, pageIds)))
      .orderBy(...terms),
  ).execute();
  if (unfiltered) {
    const rows = await rowsPromise;
    const total = rows[0]?.total ?? (await countApart());
    return { rows: rows.map(toRecord), count: total };
  }
  const [rows, total] = await Promise.all([rowsPromise, countApart()]);
  return { rows: rows.map(toRecord), count: total };
}

export async function findCheckoutRecord(tx: Executor, scope: Scope, id: number): Promise<CheckoutRecord | undefined> {
  const [row] = await prepared(
    "checkouts_one",
    selectWithRelations(tx).where(and(eq(checkouts.organizationId, scope.organizationId), eq(checkouts.id, id))),
  ).execute();
  return row ? toRecord(row) : undefined;
}
