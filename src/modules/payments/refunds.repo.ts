import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { paymentMethods, payments, refunds } from "../../db/schema.js";
import { tenantRowLocker, tenantRowUpdater } from "../../db/tenant-rows.js";
import { methodOfPayment } from "./payments.repo.js";

export type RefundRow = typeof refunds.$inferSelect;
export type RefundOrigin = "api" | "processor";

/**
 * Records a refund PENDING before the processor is asked; its key is `refund:<its id>`, so asking
 * again (a retry, the reconciler) never refunds twice. A refund the processor reported on its own
 * brings its own key; recording it twice returns undefined the second time.
 */
export async function insertRefund(
  tx: Executor,
  values: {
    organizationId: number;
    paymentId: number;
    amount: number;
    currency: string;
    origin: RefundOrigin;
    idempotencyKey?: string;
    processorRefundId?: string | null;
  },
): Promise<RefundRow | undefined> {
  const placeholder = `refund:new:${randomUUID()}`;
  const [row] = await tx
    .insert(refunds)
    .values({ ...values, idempotencyKey: values.idempotencyKey ?? placeholder, state: "PENDING" })
    .onConflictDoNothing({ target: [refunds.organizationId, refunds.idempotencyKey] })
    .returning();
  if (!row || values.idempotencyKey) return row;
  const [keyed] = await tx
    .update(refunds)
    .set({ idempotencyKey: `refund:${row.id}` })
    .where(and(eq(refunds.organizationId, row.organizationId), eq(refunds.id, row.id)))
    .returning();
  return keyed;
}

export const lockRefund = tenantRowLocker(refunds);

/** Changes a refund's columns (state, processor id, settle date); its update date is now. */
export const updateRefund = tenantRowUpdater(refunds);

/** A refund of the organization by the processor's id or our key. */
export async function findRefundBy(
  tx: Executor,
  organizationId: number,
  field: "processorRefundId" | "idempotencyKey",
  value: string,
): Promise<RefundRow | undefined> {
  const [row] = await tx
    .select()
    .from(refunds)
    .where(and(eq(refunds.organizationId, organizationId), eq(refunds[field], value)));
  return row;
}

/** What the payment's PENDING refunds hold back (in cents): money asked for and not yet confirmed. */
export async function sumPendingRefundCents(tx: Executor, organizationId: number, paymentId: number) {
  const [row] = await tx
    .select({ cents: sql<string>`coalesce(sum(${refunds.amount} * 100), 0)` })
    .from(refunds)
    .where(
      and(eq(refunds.organizationId, organizationId), eq(refunds.paymentId, paymentId), eq(refunds.state, "PENDING")),
    );
  return Math.round(Number(row?.cents ?? 0));
}

/** The refunds of some payments of an organization, oldest first. */
export function listPaymentRefunds(tx: Executor, organizationId: number, paymentIds: readonly number[]) {
  if (paymentIds.length === 0) return Promise.resolve([] as RefundRow[]);
  return tx
    .select()
    .from(refunds)
    .where(and(eq(refunds.organizationId, organizationId), inArray(refunds.paymentId, [...paymentIds])))
    .orderBy(asc(refunds.createDate), asc(refunds.id));
}

/** Refunds still PENDING since before the cutoff, oldest first, with their payment and its processor. */
export function listStalePendingRefunds(db: Executor, cutoff: Date, limit: number) {
  return db
    .select({ refund: refunds, payment: payments, processor: paymentMethods.processor })
    .from(refunds)
    .innerJoin(payments, and(eq(payments.organizationId, refunds.organizationId), eq(payments.id, refunds.paymentId)))
    .leftJoin(paymentMethods, methodOfPayment)
    .where(and(eq(refunds.state, "PENDING"), lte(refunds.updateDate, cutoff)))
    .orderBy(asc(refunds.updateDate))
    .limit(limit);
}
