import { and, eq, inArray, like, or } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { countInserted } from "../../db/collection-counts.js";
import { instant, selectTenantRow, wireRowOf } from "../../db/list-query.js";
import { paymentMethods } from "../../db/schema.js";
import type { PaymentMethodWire } from "./payment-methods.schemas.js";

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;

/** The one wire mapping of payment methods: the SQL that builds it (checkouts embed it) and *ToWire alike. */
export const paymentMethodWireRow = wireRowOf<PaymentMethodWire>({
  id: paymentMethods.id,
  create_date: instant(paymentMethods.createDate),
  update_date: instant(paymentMethods.updateDate),
  processor: paymentMethods.processor,
  label: paymentMethods.label,
});

export function paymentMethodToWire(row: PaymentMethodRow): PaymentMethodWire {
  return paymentMethodWireRow.fromRow(row);
}

/** One query for all the payment methods of a page, keyed by id. */
export async function findPaymentMethodsByIds(
  tx: Executor,
  organizationId: number,
  ids: (number | null)[],
): Promise<Map<number, PaymentMethodRow>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await tx
    .select()
    .from(paymentMethods)
    .where(and(eq(paymentMethods.organizationId, organizationId), inArray(paymentMethods.id, wanted)));
  return new Map(rows.map((row) => [row.id, row]));
}

export async function findPaymentMethod(tx: Executor, organizationId: number, id: number | null) {
  if (id === null) return undefined;
  return selectTenantRow(tx, paymentMethods, organizationId, id);
}

export async function insertPaymentMethod(
  tx: Executor,
  values: {
    organizationId: number;
    supporterId: number;
    processor: string;
    label: string;
    reference: string;
    expiryMonth?: number | null;
    expiryYear?: number | null;
  },
) {
  const [row] = await tx
    .insert(paymentMethods)
    .values({
      organizationId: values.organizationId,
      supporterId: values.supporterId,
      processor: values.processor,
      label: values.label,
      processorReference: values.reference,
      expiryMonth: values.expiryMonth ?? null,
      expiryYear: values.expiryYear ?? null,
    })
    .returning();
  if (!row) throw new Error("payment method insert returned nothing");
  await countInserted(tx, values.organizationId, "payment_methods");
  return row;
}

/**
 * The method a charge was made with, learnt after its payment was settled without it (a processor
 * event came before the processor's own answer): only a row still holding the placeholder is changed.
 */
export async function replacePlaceholderMethod(
  tx: Executor,
  organizationId: number,
  id: number,
  placeholderReference: string,
  method: { label: string; reference: string; expiryMonth?: number | null; expiryYear?: number | null },
) {
  await tx
    .update(paymentMethods)
    .set({
      label: method.label,
      processorReference: method.reference,
      expiryMonth: method.expiryMonth ?? null,
      expiryYear: method.expiryYear ?? null,
      updateDate: new Date(),
    })
    .where(
      and(
        eq(paymentMethods.organizationId, organizationId),
        eq(paymentMethods.id, id),
        eq(paymentMethods.processorReference, placeholderReference),
      ),
    );
}

/**
 * What the processor now says of a method (a card's new expiry or number after its bank updated it):
 * every method of the organization with that processor reference (`pm_…`, or `cus_…/pm_…` when saved
 * on a customer). Returns how many were updated.
 */
export async function updatePaymentMethodsByReference(
  tx: Executor,
  organizationId: number,
  processor: string,
  methodId: string,
  details: { label: string; expiryMonth: number | null; expiryYear: number | null },
): Promise<PaymentMethodRow[]> {
  const escaped = methodId.replace(/[\\%_]/g, "\\$&");
  return tx
    .update(paymentMethods)
    .set({ ...details, updateDate: new Date() })
    .where(
      and(
        eq(paymentMethods.organizationId, organizationId),
        eq(paymentMethods.processor, processor),
        or(eq(paymentMethods.processorReference, methodId), like(paymentMethods.processorReference, `%/${escaped}`)),
      ),
    )
    .returning();
}
