import { and, asc, eq, inArray, type SQL } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
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
import { payments } from "../../db/schema.js";
import { selectTenantRowsByIds } from "../../db/tenant-rows.js";
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
});

export interface PaymentFilters {
  state?: string;
  donationId?: number;
  paymentMethodId?: number;
  processorIntentId?: string;
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
