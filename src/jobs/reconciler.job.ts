import type { Db } from "../db/client.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { reconcileCheckoutAttempts } from "../modules/giving/checkout-flow.service.js";
import type { ProcessorRegistry } from "../payments/processors/index.js";
import { type ReconcileResult, reconcilePayments } from "../payments/reconciliation.service.js";

/**
 * A charge or refund left unsettled longer than the timeout (a crash between steps, a processor
 * timeout): the processor is asked what became of its key and the answer is settled through the
 * same step as ever; checkout attempts first, then payments and refunds. One record that cannot be
 * settled is counted as an error and tried again next run; it never stops the others.
 */
export async function reconcilePending(
  db: Db,
  options: { now: Date; timeoutSeconds: number; links: DocumentLinks; processors: ProcessorRegistry; limit?: number },
): Promise<ReconcileResult> {
  const { now, links, processors } = options;
  // Staleness is measured on the real clock: a run with a moved clock (billing run --now) must not
  // take a charge still in flight for an abandoned one.
  const cutoff = new Date(Math.min(now.getTime(), Date.now()) - options.timeoutSeconds * 1000);
  const limit = options.limit ?? 1000;
  const attempts = await reconcileCheckoutAttempts({ db, links, processors }, { now, cutoff, limit });
  const payments = await reconcilePayments(db, { now, cutoff, links, processors, limit });
  return { reconciled: attempts.reconciled + payments.reconciled, errors: attempts.errors + payments.errors };
}
