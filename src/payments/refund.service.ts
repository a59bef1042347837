import type { PaymentRow } from "../modules/payments/payments.repo.js";
import { toCents } from "./money.js";
import type { ProcessorRegistry } from "./processors/index.js";

/** The processor call of a refund; the key makes a repeated call (a retry, the reconciler) refund once. */
export async function askRefund(processors: ProcessorRegistry, processorName: string, payment: PaymentRow) {
  const processor = await processors.connect(payment.organizationId, processorName);
  if (!processor) throw new Error(`no processor "${processorName}" for payment ${payment.id}`);
  await processor.refund({
    intentId: payment.processorIntentId ?? "",
    amountCents: toCents(payment.amount),
    currency: payment.currency,
    idempotencyKey: `refund:${payment.id}`,
  });
}
