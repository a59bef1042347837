import type { PaymentRow } from "../modules/payments/payments.repo.js";
import type { RefundRow } from "../modules/payments/refunds.repo.js";
import { toMinorUnits } from "./money.js";
import type { ProcessorRegistry } from "./processors/index.js";
import type { RefundResult } from "./processors/processor.js";

function processorOf(processors: ProcessorRegistry, processorName: string, payment: PaymentRow) {
  return processors.connect(payment.organizationId, processorName).then((processor) => {
    if (!processor) throw new Error(`no processor "${processorName}" for payment ${payment.id}`);
    return processor;
  });
}

/** The processor call of a recorded refund; its key makes a repeated call (a retry, the reconciler) refund once. */
export async function askRefund(
  processors: ProcessorRegistry,
  processorName: string,
  payment: PaymentRow,
  refund: RefundRow,
): Promise<RefundResult> {
  const processor = await processorOf(processors, processorName, payment);
  return processor.refund({
    intentId: payment.processorIntentId ?? "",
    amountMinor: toMinorUnits(refund.amount, refund.currency),
    currency: refund.currency,
    idempotencyKey: refund.idempotencyKey,
  });
}

/**
 * What became of a refund left PENDING (a SEPA refund under way, or an answer lost): the processor
 * is asked about it, and one it never received is asked for again with the same key.
 */
export async function recheckRefund(
  processors: ProcessorRegistry,
  processorName: string,
  payment: PaymentRow,
  refund: RefundRow,
): Promise<RefundResult> {
  const processor = await processorOf(processors, processorName, payment);
  const found = await processor.retrieveRefund({
    refundId: refund.processorRefundId,
    intentId: payment.processorIntentId ?? "",
    idempotencyKey: refund.idempotencyKey,
  });
  return found ?? askRefund(processors, processorName, payment, refund);
}
