import type { Db } from "../db/client.js";
import { systemOrigin } from "../events/origin.js";
import { withEvents } from "../events/record-event.js";
import { findDonation } from "../modules/donations/donations.repo.js";
import { listStalePendingCharges } from "../modules/payments/payments.repo.js";
import { listStalePendingRefunds, updateRefund } from "../modules/payments/refunds.repo.js";
import { toMinorUnits } from "./money.js";
import type { ProcessorRegistry } from "./processors/index.js";
import { recheckRefund } from "./refund.service.js";
import { renewalContextOf } from "./renewal.service.js";
import { type SettlementLinks, settlePayment, settleRefund } from "./settlement.service.js";

/** What the worker settles on its own is recorded as the worker's doing. */
const workerScope = (row: { organizationId: number }) => ({
  organizationId: row.organizationId,
  origin: systemOrigin("worker"),
});

export interface ReconcileResult {
  reconciled: number;
  /** Records that could not be settled this time (tried again next run). */
  errors: number;
}

/** One record's reconciliation, counted; its failure never stops the others. */
export async function reconcileOne(result: ReconcileResult, work: () => Promise<boolean>) {
  try {
    if (await work()) result.reconciled += 1;
  } catch {
    result.errors += 1;
  }
}

/**
 * Payments (with a key) and refunds left PENDING since before the cutoff: the processor is asked
 * what became of the key and the answer is settled. A renewal the processor never received is
 * charged with the same key; a refund is looked up, or asked again with its key (neither happens twice).
 */
export async function reconcilePayments(
  db: Db,
  options: { now: Date; cutoff: Date; links: SettlementLinks; processors: ProcessorRegistry; limit: number },
): Promise<ReconcileResult> {
  const { now, cutoff, links, processors, limit } = options;
  const result: ReconcileResult = { reconciled: 0, errors: 0 };
  const charges = await listStalePendingCharges(db, cutoff, limit);
  for (const { payment, processor: name, reference } of charges) {
    await reconcileOne(result, async () => {
      const processor = name ? await processors.connect(payment.organizationId, name) : undefined;
      // A processor the organization disconnected may still hold the charge: it stays PENDING (and
      // counts as an error) until the organization connects it again, never settled as not charged.
      if (name && !processor) throw new Error(`processor "${name}" of payment ${payment.id} is not connected`);
      const key = payment.idempotencyKey as string;
      let found = processor ? await processor.retrieve(key) : null;
      // A renewal the processor never received is charged now, with the same key: the worker's own work.
      if (!found && processor && reference && payment.billingCycle !== null) {
        const donation = await findDonation(db, payment.organizationId, payment.donationId);
        found = await processor.charge({
          amountMinor: toMinorUnits(payment.amount, payment.currency),
          currency: payment.currency,
          reference,
          kind: "renewal",
          idempotencyKey: key,
          ...(donation ? { context: await renewalContextOf(db, donation) } : {}),
        });
      }
      if (found?.state === "PENDING") return false;
      const outcome = found ?? {
        state: "FAILED" as const,
        intentId: null,
        code: "not_charged",
        message: "The processor never received the charge",
      };
      await withEvents(db, (tx) => settlePayment(tx, links, workerScope(payment), payment.id, outcome, now));
      return true;
    });
  }
  const refunds = await listStalePendingRefunds(db, cutoff, limit);
  for (const { refund, payment, processor } of refunds) {
    await reconcileOne(result, async () => {
      const answer = await recheckRefund(processors, processor ?? "manual", payment, refund);
      const settled = await withEvents(db, async (tx) => {
        const done = await settleRefund(tx, workerScope(payment), refund.id, answer, now);
        // Still under way (a SEPA refund): asked again after another timeout, not at every run.
        if (done.settled === "pending") await updateRefund(tx, payment.organizationId, refund.id, {});
        return done.settled;
      });
      return settled !== "pending";
    });
  }
  return result;
}
