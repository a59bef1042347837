import { and, asc, eq, inArray, isNotNull, lte, type SQL, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import {
  type DateBound,
  dateRangeConditions,
  instant,
  listTenantPage,
  type Order,
  orderColumnsOf,
  orderTerms,
  type Page,
  selectTenantRow,
  wireRowOf,
} from "../../db/list-query.js";
import { paymentMethods, payments } from "../../db/schema.js";
import { selectTenantRowsByIds, tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";
import { type PaymentMethodRow, paymentMethodToWire } from "../payment-methods/payment-methods.repo.js";
import type { PaymentWire } from "./payments.schemas.js";
import { PAYMENT_ORDER_FIELDS } from "./payments.schemas.js";

export type PaymentRow = typeof payments.$inferSelect;

/** The one wire mapping of payments: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const paymentWireRow = wireRowOf<PaymentWire>({
  id: payments.id,
  donation_id: payments.donationId,
  state: payments.state,
  amount: payments.amount,
  currency: payments.currency,
  payment_date: instant(payments.paymentDate),
  payment_method: null,
  processor_intent_id: payments.processorIntentId,
  create_date: instant(payments.createDate),
  update_date: instant(payments.updateDate),
  test: payments.test,
  external_id: payments.externalId,
});

/** A payment as the API returns it by id, with its method. */
export function paymentToWire(row: PaymentRow, method: PaymentMethodRow | null | undefined): PaymentWire {
  return { ...paymentWireRow.fromRow(row), payment_method: method ? paymentMethodToWire(method) : null };
}

export interface PaymentFilters {
  state?: string;
  donationId?: number;
  paymentMethodId?: number;
  processorIntentId?: string;
  externalId?: string;
  test?: boolean;
  createDateFrom?: DateBound;
  createDateTo?: DateBound;
  updateDateFrom?: DateBound;
  updateDateTo?: DateBound;
  paymentDateFrom?: DateBound;
  paymentDateTo?: DateBound;
}

const orderColumns = orderColumnsOf(payments, PAYMENT_ORDER_FIELDS);

function conditionsFor(scope: Scope, filters: PaymentFilters): (SQL | undefined)[] {
  const tz = scope.timeZone;
  return [
    filters.state !== undefined ? eq(payments.state, filters.state) : undefined,
    filters.donationId !== undefined ? eq(payments.donationId, filters.donationId) : undefined,
    filters.paymentMethodId !== undefined ? eq(payments.paymentMethodId, filters.paymentMethodId) : undefined,
    filters.processorIntentId !== undefined ? eq(payments.processorIntentId, filters.processorIntentId) : undefined,
    filters.externalId !== undefined ? eq(payments.externalId, filters.externalId) : undefined,
    filters.test !== undefined ? eq(payments.test, filters.test) : undefined,
    ...dateRangeConditions(payments.createDate, filters.createDateFrom, filters.createDateTo, tz),
    ...dateRangeConditions(payments.updateDate, filters.updateDateFrom, filters.updateDateTo, tz),
    ...dateRangeConditions(payments.paymentDate, filters.paymentDateFrom, filters.paymentDateTo, tz),
  ];
}

export async function listPaymentRows(tx: Executor, scope: Scope, filters: PaymentFilters, order: Order, page: Page) {
  const query = {
    organizationId: scope.organizationId,
    conditions: conditionsFor(scope, filters),
    order: orderTerms(orderColumns, payments.id, order),
    page,
  };
  return listTenantPage(tx, payments, "payments", query);
}

export function findPaymentRow(tx: Executor, scope: Scope, id: number) {
  return selectTenantRow(tx, payments, scope.organizationId, id);
}

/** The payments of some donations, oldest first. */
export function listDonationPaymentRows(tx: Executor, scope: Scope, donationIds: number[]) {
  return tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, scope.organizationId), inArray(payments.donationId, donationIds)))
    .orderBy(asc(payments.createDate), asc(payments.id));
}

export function findPaymentRowsByIds(tx: Executor, organizationId: number, ids: readonly number[]) {
  return selectTenantRowsByIds(tx, payments, organizationId, ids);
}

export const lockPayment = tenantRowLocker(payments);

/** The one place a payment row is written: checkout, renewal, offline gift, imported history. */
export async function insertPayment(
  tx: Executor,
  values: {
    organizationId: number;
    donationId: number;
    /** REFUNDED only for imported history: a gift refunded on the platform it came from. */
    state: "PENDING" | "PAID" | "FAILED" | "REFUNDED";
    amount: number;
    currency: string;
    paymentDate?: Date | null;
    paymentMethodId: number | null;
    processorIntentId?: string | null;
    idempotencyKey?: string | null;
    billingCycle?: number | null;
    failureCode?: string | null;
    failureMessage?: string | null;
    /** A charge of a test donation (the sandbox in test mode). */
    test?: boolean;
    /** Imported history (docs/import.md): its id on the other platform, and what was refunded there. */
    externalId?: string | null;
    amountRefunded?: number;
    refundDate?: Date | null;
  },
): Promise<PaymentRow> {
  const [row] = await tx.insert(payments).values(values).returning();
  if (!row) throw new Error("payment insert returned nothing");
  await countInserted(tx, row.organizationId, "payments");
  return row;
}

/** Changes a payment's columns (state, intent, failure, refund dates); its update date is now. */
export const updatePayment = tenantRowUpdater(payments);

/**
 * Adds a confirmed refund to the payment's refunded amount (never past the amount); when it reaches
 * the amount the payment is REFUNDED, its refund date now.
 */
export async function addRefundedAmount(tx: Executor, organizationId: number, id: number, cents: number) {
  const refunded = sql`least(${payments.amount}, ${payments.amountRefunded} + ${cents}::numeric / 100)`;
  const [row] = await tx
    .update(payments)
    .set({
      amountRefunded: refunded,
      state: sql`case when ${refunded} >= ${payments.amount} then 'REFUNDED' else ${payments.state} end`,
      // The time as a value, not now(): Citus runs no volatile function inside CASE on a shard.
      refundDate: sql`case when ${refunded} >= ${payments.amount} then ${new Date().toISOString()}::timestamptz else ${payments.refundDate} end`,
      updateDate: sql`now()`,
    })
    .where(and(eq(payments.organizationId, organizationId), eq(payments.id, id)))
    .returning();
  return row;
}

/** Records a chargeback the processor reports (opened, updated, closed) on the payment. */
export function updatePaymentDispute(
  tx: Executor,
  organizationId: number,
  id: number,
  dispute: { id: string; status: string; reason: string; amount: number; date: Date },
) {
  return updatePayment(tx, organizationId, id, {
    disputeId: dispute.id,
    disputeStatus: dispute.status,
    disputeReason: dispute.reason,
    disputeAmount: dispute.amount,
    disputeDate: dispute.date,
  });
}

export async function countPaidPayments(tx: Executor, organizationId: number, donationId: number) {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(payments)
    .where(
      and(eq(payments.organizationId, organizationId), eq(payments.donationId, donationId), eq(payments.state, "PAID")),
    );
  return row?.n ?? 0;
}

/** Money paid to a campaign and not refunded (test payments moved no money: left out). */
/**
 * The one definition of "raised" (docs/campaigns.md#raised), for a payment `p`: the money a PAID
 * payment kept, less what was refunded and what a lost dispute took back; test payments never count.
 * The donation page, the thank-you view, the panel's campaign page and the dashboard all sum it.
 */
export const RAISED = sql.raw(
  "greatest(p.amount - p.amount_refunded - case when p.dispute_status = 'lost' then coalesce(p.dispute_amount, p.amount) else 0 end, 0)",
);
export const COUNTS_AS_RAISED = sql.raw("p.state = 'PAID' and not p.test");

/** What a campaign raised, all time (RAISED): its donation page's goal bar and the thank-you view. */
export async function sumPaidForCampaign(db: Executor, organizationId: number, campaignId: number): Promise<number> {
  const result = await db.execute(sql`
    select coalesce(sum(${RAISED}), 0)::text as raised
    from payments p
    join donations d on d.organization_id = p.organization_id and d.id = p.donation_id
    where p.organization_id = ${organizationId} and d.campaign_id = ${campaignId} and ${COUNTS_AS_RAISED}`);
  return Number((result as unknown as { rows: { raised: string }[] }).rows[0]?.raised ?? 0);
}

/** A payment by its processor key or the processor's charge id (every organization, or one). */
export async function findPaymentBy(
  db: Executor,
  field: "idempotencyKey" | "processorIntentId",
  value: string,
  organizationId?: number,
) {
  const [row] = await db
    .select({ organizationId: payments.organizationId, id: payments.id })
    .from(payments)
    .where(
      and(
        eq(payments[field], value),
        organizationId === undefined ? undefined : eq(payments.organizationId, organizationId),
      ),
    );
  return row;
}

/** Joins a payment's method (same organization). */
export const methodOfPayment = and(
  eq(paymentMethods.organizationId, payments.organizationId),
  eq(paymentMethods.id, payments.paymentMethodId),
);

/** Charges (with a key) left PENDING since before the cutoff, oldest first, with their method. */
export function listStalePendingCharges(db: Executor, cutoff: Date, limit: number) {
  return db
    .select({ payment: payments, processor: paymentMethods.processor, reference: paymentMethods.processorReference })
    .from(payments)
    .leftJoin(paymentMethods, methodOfPayment)
    .where(and(eq(payments.state, "PENDING"), isNotNull(payments.idempotencyKey), lte(payments.updateDate, cutoff)))
    .orderBy(asc(payments.updateDate))
    .limit(limit);
}
