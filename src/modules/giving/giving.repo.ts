import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { donations, jobs, paymentMethods, payments, supporters } from "../../db/schema.js";

/** The next id of a table's identity sequence, so a code can be derived from it in the same insert. */
export async function nextId(tx: Executor, table: "donations" | "supporters" | "checkout_attempts"): Promise<number> {
  const result = await tx.execute<{ id: string }>(sql`select nextval(pg_get_serial_sequence(${table}, 'id')) as id`);
  const rows = (result as unknown as { rows: { id: string }[] }).rows;
  return Number(rows[0]?.id);
}

export const donationCode = (id: number) => `DON-${String(id).padStart(8, "0")}`;
export const supporterCode = (id: number) => `SUP-${String(id).padStart(7, "0")}`;

export async function lockDonation(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select()
    .from(donations)
    .where(and(eq(donations.organizationId, organizationId), eq(donations.id, id)))
    .for("update");
  return row;
}

export async function lockPayment(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, organizationId), eq(payments.id, id)))
    .for("update");
  return row;
}

export async function findMethod(tx: Executor, organizationId: number, id: number | null) {
  if (id === null) return undefined;
  const [row] = await tx
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.organizationId, organizationId), eq(paymentMethods.id, id)));
  return row;
}

export async function insertPaymentMethod(
  tx: Executor,
  values: { organizationId: number; supporterId: number; processor: string; label: string; reference: string },
) {
  const [row] = await tx
    .insert(paymentMethods)
    .values({
      organizationId: values.organizationId,
      supporterId: values.supporterId,
      processor: values.processor,
      label: values.label,
      processorReference: values.reference,
    })
    .returning();
  if (!row) throw new Error("payment method insert returned nothing");
  return row;
}

export async function setCertificationUrl(tx: Executor, organizationId: number, supporterId: number, url: string) {
  await tx
    .update(supporters)
    .set({ certificationUrl: url })
    .where(
      and(
        eq(supporters.organizationId, organizationId),
        eq(supporters.id, supporterId),
        sql`${supporters.certificationUrl} is null`,
        sql`${supporters.eraseDate} is null`,
      ),
    );
}

/** Queues the renewal of a recurring donation's billing cycle (one queued renewal per donation). */
export async function queueRenewal(
  tx: Executor,
  values: { organizationId: number; donationId: number; cycle: number; runDate: Date },
) {
  await tx
    .insert(jobs)
    .values({
      organizationId: values.organizationId,
      kind: "renewal",
      subjectId: values.donationId,
      payload: { cycle: values.cycle },
      runDate: values.runDate,
    })
    .onConflictDoNothing();
}

export async function cancelRenewals(tx: Executor, organizationId: number, donationId: number) {
  await tx
    .update(jobs)
    .set({ state: "cancelled", updateDate: sql`now()` })
    .where(
      and(
        eq(jobs.organizationId, organizationId),
        eq(jobs.kind, "renewal"),
        eq(jobs.subjectId, donationId),
        eq(jobs.state, "queued"),
      ),
    );
}

export type PaymentRow = typeof payments.$inferSelect;

/** The one place a payment row is written: checkout, renewal, offline gift. */
export async function insertPayment(
  tx: Executor,
  values: {
    organizationId: number;
    donationId: number;
    state: "PENDING" | "PAID" | "FAILED";
    amount: number;
    currency: string;
    paymentDate?: Date | null;
    paymentMethodId: number | null;
    processorIntentId?: string | null;
    idempotencyKey?: string | null;
    billingCycle?: number | null;
    failureCode?: string | null;
    failureMessage?: string | null;
  },
): Promise<PaymentRow> {
  const [row] = await tx.insert(payments).values(values).returning();
  if (!row) throw new Error("payment insert returned nothing");
  return row;
}
