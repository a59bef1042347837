import { type AnyColumn, and, count, eq, ilike, inArray, or, type SQL, sql } from "drizzle-orm";
import type { PgSelect } from "drizzle-orm/pg-core";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  collectionCountSql,
  constantSql,
  countAll,
  type DateBound,
  dateRangeConditions,
  escapeLike,
  instant,
  type Order,
  type OrderColumns,
  orderTerms,
  type Page,
  prepared,
  wireRowOf,
} from "../../db/list-query.js";
import {
  campaigns,
  checkouts,
  donations,
  organizations,
  paymentMethods,
  payments,
  supporters,
} from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";
import { type CampaignRow, campaignWireRow } from "../campaigns/campaigns.repo.js";
import type { CampaignWire } from "../campaigns/campaigns.schemas.js";
import { type DonationRow, donationWireRow } from "../donations/donations.repo.js";
import { type PaymentMethodRow, paymentMethodWireRow } from "../payment-methods/payment-methods.repo.js";
import { type PaymentRow, paymentWireRow } from "../payments/payments.repo.js";
import { type SupporterRow, supporterTextMatch, supporterWireRow } from "../supporters/supporters.repo.js";
import type { CheckoutWire } from "./checkouts.schemas.js";

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

// Each embedded record in its module's one wire mapping (campaignWireRow…), built here in SQL;
// the payment's payment_method is filled in from paymentMethodWireRow.
/** The checkout's own fields; the embedded records and the payment method mirror are set by toWire. */
const checkoutWire = wireRowOf<Omit<CheckoutWire, "campaign" | "supporter" | "donation" | "payment">>({
  id: checkouts.id,
  create_date: instant(checkouts.createDate),
  update_date: instant(checkouts.updateDate),
  state: checkouts.state,
  amount: checkouts.amount,
  completed_date: instant(checkouts.completedDate),
  frequency: checkouts.frequency,
  cost_example_quantity: checkouts.costExampleQuantity,
  payment_method_processor: null,
  payment_method_label: null,
  payment_method_id: null,
});

/** A joined row of a related table as a JSON array, null when the checkout has none. */
function joinedJson(table: typeof supporters | typeof donations | typeof payments, json: SQL) {
  return sql`case when ${table.id} is null then null else ${json} end`;
}

/**
 * Each record is one row of a few JSON values in wire form: few values to parse, nothing to
 * convert. A page's checkouts share few campaigns (a campaign has many checkouts), so a campaign
 * is sent once per statement, on the first of its rows (a window over the page's rows, which the
 * WHERE clause has already chosen); the other rows carry only its id. The related rows are joined
 * by (organization_id, id) (`withRelations`) rather than read by correlated subqueries: a join on
 * the organization stays on the organization's shard on a Citus cluster, a correlated subquery
 * would be sent to every shard. The selection is constant, rendered once.
 */
const recordSelection = {
  checkout: checkoutWire.sql,
  campaignId: checkouts.campaignId,
  campaign: constantSql<unknown[] | null>(
    sql`case when row_number() over (partition by ${checkouts.campaignId}) = 1 and ${campaigns.id} is not null then ${campaignWireRow.sql} end`,
  ),
  supporter: constantSql<unknown[] | null>(joinedJson(supporters, supporterWireRow.sql)),
  donation: constantSql<unknown[] | null>(joinedJson(donations, donationWireRow.sql)),
  /** [payment, its method or null], or null without a payment. */
  payment: constantSql<[unknown[], unknown[] | null] | null>(
    joinedJson(
      payments,
      sql`json_build_array(${paymentWireRow.sql}, case when ${paymentMethods.id} is null then null else ${paymentMethodWireRow.sql} end)`,
    ),
  ),
};

/** The checkout's campaign, supporter, donation, payment and its method, same organization, for the selection. */
function withRelations<T extends PgSelect>(query: T) {
  return joinPaymentMethod(
    query
      .leftJoin(campaigns, sameTenant(campaigns.organizationId, campaigns.id, checkouts.campaignId))
      .leftJoin(supporters, sameTenant(supporters.organizationId, supporters.id, checkouts.supporterId))
      .leftJoin(donations, sameTenant(donations.organizationId, donations.id, checkouts.donationId)),
  );
}

function selectWithRelations(tx: Executor) {
  return withRelations(tx.select(recordSelection).from(checkouts).$dynamic());
}

type RecordRow = Awaited<ReturnType<typeof selectWithRelations>>[number];

/** The statement's rows as wire checkouts, in order; a campaign object is shared by its checkouts. */
function toWire(rows: RecordRow[]): CheckoutWire[] {
  const campaignsById = new Map<number, CampaignWire>();
  for (const row of rows) {
    if (row.campaign && row.campaignId !== null)
      campaignsById.set(row.campaignId, campaignWireRow.decode(row.campaign));
  }
  return rows.map((row) => {
    const checkout = checkoutWire.decode(row.checkout) as CheckoutWire;
    const payment = row.payment ? paymentWireRow.decode(row.payment[0]) : null;
    const method = row.payment?.[1] ? paymentMethodWireRow.decode(row.payment[1]) : null;
    if (payment) payment.payment_method = method;
    if (method) {
      checkout.payment_method_processor = method.processor;
      checkout.payment_method_label = method.label;
      checkout.payment_method_id = method.id;
    }
    checkout.campaign = row.campaignId === null ? null : (campaignsById.get(row.campaignId) ?? null);
    checkout.supporter = row.supporter ? supporterWireRow.decode(row.supporter) : null;
    checkout.donation = row.donation ? donationWireRow.decode(row.donation) : null;
    checkout.payment = payment;
    return checkout;
  });
}

/**
 * A checkout as the API returns it by id, from rows the caller holds (a completion has them all):
 * the same fields, from the same wire mappings, as the statement above builds.
 */
export function checkoutToWire(rows: {
  checkout: CheckoutRow;
  campaign: CampaignRow | null;
  supporter: SupporterRow | null;
  donation: DonationRow | null;
  payment: PaymentRow | null;
  method: PaymentMethodRow | null;
}): CheckoutWire {
  const checkout = checkoutWire.fromRow(rows.checkout) as CheckoutWire;
  const method = rows.payment && rows.method ? paymentMethodWireRow.fromRow(rows.method) : null;
  if (method) {
    checkout.payment_method_processor = method.processor;
    checkout.payment_method_label = method.label;
    checkout.payment_method_id = method.id;
  }
  checkout.campaign = rows.campaign ? campaignWireRow.fromRow(rows.campaign) : null;
  checkout.supporter = rows.supporter ? supporterWireRow.fromRow(rows.supporter) : null;
  checkout.donation = rows.donation ? donationWireRow.fromRow(rows.donation) : null;
  checkout.payment = rows.payment ? { ...paymentWireRow.fromRow(rows.payment), payment_method: method } : null;
  return checkout;
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
): Promise<{ rows: CheckoutWire[]; count: number }> {
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
    const records = withRelations(
      tx
        .select({ ...recordSelection, total: pageIds.total })
        .from(checkouts)
        .innerJoin(pageIds, eq(pageIds.id, checkouts.id))
        .$dynamic(),
    );
    const rows = await prepared(
      "checkouts_search",
      records.where(eq(checkouts.organizationId, scope.organizationId)).orderBy(...terms),
    ).execute();
    const total = rows[0]?.total ?? (page.offset > 0 ? await countApart() : 0);
    return { rows: toWire(rows), count: total };
  }

  const statement = unfiltered
    ? unfilteredPageStatement(tx, order)
    : pageStatement(tx, order, and(...conditions), false);
  const rowsPromise = statement.execute({
    organizationId: scope.organizationId,
    limit: page.limit,
    offset: page.offset,
  });
  if (unfiltered) {
    const rows = await rowsPromise;
    const total = rows[0]?.total ?? (await countApart());
    return { rows: toWire(rows), count: total };
  }
  const [rows, total] = await Promise.all([rowsPromise, countApart()]);
  return { rows: toWire(rows), count: total };
}

/**
 * A page's statement, with the organization, limit and offset as placeholders; `total` is the
 * trigger-maintained counter when `withCounter` (unfiltered), else null.
 */
function pageStatement(tx: Executor, order: Order, conditions: SQL | undefined, withCounter: boolean) {
  const organizationId = sql.placeholder("organizationId");
  const terms = orderTerms(orderColumns, checkouts.id, order);
  const byPaymentMethod = PAYMENT_METHOD_ORDER.has(order.field);
  let ids = tx.select({ id: checkouts.id }).from(checkouts).$dynamic();
  if (byPaymentMethod) ids = joinPaymentMethod(ids);
  const pageIds = ids
    .where(and(eq(checkouts.organizationId, organizationId), conditions))
    .orderBy(...terms)
    .limit(sql.placeholder("limit"))
    .offset(sql.placeholder("offset"));
  const records = withRelations(
    tx
      .select({
        ...recordSelection,
        total: withCounter ? collectionCountSql(organizationId, "checkouts") : sql<number | null>`null`,
      })
      .from(checkouts)
      .$dynamic(),
  );
  return prepared(
    "checkouts_page",
    records.where(and(eq(checkouts.organizationId, organizationId), inArray(checkouts.id, pageIds))).orderBy(...terms),
  );
}

type PageStatement = ReturnType<typeof pageStatement>;
const unfilteredPages = new WeakMap<Executor, Map<string, PageStatement>>();

/**
 * The unfiltered page (the default listing) has one statement per order: built and rendered
 * once per database handle, then only executed.
 */
function unfilteredPageStatement(tx: Executor, order: Order): PageStatement {
  let statements = unfilteredPages.get(tx);
  if (!statements) {
    statements = new Map();
    unfilteredPages.set(tx, statements);
  }
  const key = `${order.descending ? "-" : ""}${order.field}`;
  let statement = statements.get(key);
  if (!statement) {
    statement = pageStatement(tx, order, undefined, true);
    statements.set(key, statement);
  }
  return statement;
}

export async function findCheckoutWire(tx: Executor, scope: Scope, id: number): Promise<CheckoutWire | undefined> {
  const rows = await prepared(
    "checkouts_one",
    selectWithRelations(tx).where(and(eq(checkouts.organizationId, scope.organizationId), eq(checkouts.id, id))),
  ).execute();
  return toWire(rows)[0];
}

export type CheckoutRow = typeof checkouts.$inferSelect;

export async function insertCheckout(db: Executor, values: Omit<typeof checkouts.$inferInsert, "id">) {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(checkouts).values(values).returning();
    if (!row) throw new Error("checkout insert returned nothing");
    await countInserted(tx, row.organizationId, "checkouts");
    return row;
  });
}

/** Only the secret's hash: checked before any defence counts an attempt on the checkout. */
export async function findCheckoutSecretHash(db: Executor, organizationId: number, id: number) {
  const [row] = await db
    .select({ clientSecretHash: checkouts.clientSecretHash })
    .from(checkouts)
    .where(and(eq(checkouts.organizationId, organizationId), eq(checkouts.id, id)));
  return row;
}

export const lockCheckout = tenantRowLocker(checkouts);

/** Changes a checkout's columns (closing it with its gift); its update date is now. */
export const updateCheckout = tenantRowUpdater(checkouts);

/** Closes every organization's OPEN checkouts created at or before the cutoff; returns how many. */
export async function closeOpenCheckoutsBefore(db: Executor, cutoff: Date): Promise<number> {
  // One statement for every organization, each row matched by its organization, so the planner
  // reaches checkouts_state_idx (organization_id, state, create_date) per organization.
  const result = await db.execute(sql`
    update ${checkouts} set state = 'CLOSED', update_date = now()
    from ${organizations}
    where ${checkouts.organizationId} = ${organizations.id}
      and ${checkouts.state} = 'OPEN' and ${checkouts.createDate} <= ${cutoff.toISOString()}::timestamptz`);
  return (
    (result as unknown as { rowCount?: number; affectedRows?: number }).rowCount ??
    (result as unknown as { affectedRows?: number }).affectedRows ??
    0
  );
}
