import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { createUpdateBounds, optionalDateBound, pageOf, parseOrder } from "../../db/list-query.js";
import { notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { findPaymentMethodsByIds } from "../payment-methods/payment-methods.repo.js";
import { findPaymentRow, listPaymentRows, paymentToWire } from "./payments.repo.js";
import type { PaymentListQuery, PaymentWire } from "./payments.schemas.js";

export { paymentToWire };

/** A payment kept in a stored answer (an Idempotency-Key's outcome), in today's shape: later fields empty. */
export function storedPaymentToWire(stored: PaymentWire): PaymentWire {
  return { ...stored, external_id: stored.external_id ?? null };
}

export async function listPayments(db: Db, scope: Scope, query: PaymentListQuery) {
  const { rows, count } = await listPaymentRows(
    db,
    scope,
    {
      state: query.state,
      donationId: query.donation_id,
      paymentMethodId: query.payment_method_id,
      processorIntentId: query.processor_intent_id,
      externalId: query.external_id,
      test: query.test,
      ...createUpdateBounds(query),
      paymentDateFrom: optionalDateBound("payment_date_from", query.payment_date_from),
      paymentDateTo: optionalDateBound("payment_date_to", query.payment_date_to),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  const methods = await findPaymentMethodsByIds(
    db,
    scope.organizationId,
    rows.map((row) => row.paymentMethodId),
  );
  return { items: rows.map((row) => paymentToWire(row, methods.get(row.paymentMethodId ?? 0))), count };
}

export async function getPayment(db: Db, scope: Scope, rawId: string) {
  const row = await findPaymentRow(db, scope, parseId(rawId, "Payment"));
  if (!row) throw notFound("Payment");
  const methods = await findPaymentMethodsByIds(db, scope.organizationId, [row.paymentMethodId]);
  return paymentToWire(row, methods.get(row.paymentMethodId ?? 0));
}
