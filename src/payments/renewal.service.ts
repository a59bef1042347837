import type { Db, Executor } from "../db/client.js";
import { systemOrigin } from "../events/origin.js";
import { recordEvent, withEvents } from "../events/record-event.js";
import { lockDonation } from "../modules/donations/donations.repo.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import { findPaymentMethod } from "../modules/payment-methods/payment-methods.repo.js";
import { insertPayment, paymentToWire } from "../modules/payments/payments.repo.js";
import { chargeContextOf } from "./charge-context.js";
import { fromCents, toCents, toMinorUnits } from "./money.js";
import { findProcessor, type ProcessorRegistry } from "./processors/index.js";
import type { ChargeRequest } from "./processors/processor.js";
import { type PaymentOutcome, type Settled, type SettlementLinks, settlePayment } from "./settlement.service.js";

export type RenewalOutcome = "renewed" | "failed" | "revoked" | "skipped";

/** A renewal recorded as a PENDING payment, to be charged with this request, then settled. */
export interface RecordedRenewal {
  organizationId: number;
  paymentId: number;
  processor: string;
  charge: ChargeRequest;
}

/** The billing cycle of a recurring donation to charge (from its queued renewal job). */
export interface RenewalDue {
  organizationId: number;
  donationId: number;
  /** Parsed lazily: a donation that cannot renew is skipped before its cycle is looked at. */
  cycle: () => number;
}

/**
 * Renewal step 1, in the job's transaction: checks the donation can be charged and records the
 * cycle's PENDING payment with its processor key (committed before the processor is called). A
 * donation with no method that can be charged again fails at once.
 */
export async function recordRenewal(
  tx: Executor,
  links: SettlementLinks,
  due: RenewalDue,
  now: Date,
): Promise<RecordedRenewal | RenewalOutcome> {
  const { organizationId } = due;
  const donation = await lockDonation(tx, organizationId, due.donationId);
  if (!donation || (donation.state !== "active" && donation.state !== "past_due")) return "skipped";
  const frequency = donation.frequency ?? 0;
  if ((frequency !== 1 && frequency !== 12) || !donation.completedDate) return "skipped";
  const cycle = due.cycle();
  const method = await findPaymentMethod(tx, organizationId, donation.paymentMethodId);
  const processor = method ? findProcessor(method.processor) : undefined;
  // Yearly cycles are counted apart ("y"): a gift switched from monthly to yearly never reuses a month's key.
  const idempotencyKey = `renewal:${donation.id}:${frequency === 1 ? "y" : ""}${cycle}:${donation.failureCount}`;
  const amount = fromCents(toCents(donation.amount) + toCents(donation.coveredFee));
  const workerScope = { organizationId, origin: systemOrigin("worker") };
  const payment = await insertPayment(tx, {
    organizationId,
    donationId: donation.id,
    state: "PENDING",
    amount,
    currency: donation.currency,
    paymentMethodId: method?.id ?? null,
    idempotencyKey,
    billingCycle: cycle,
    // A renewal of a test gift is test data too, and so is whatever the sandbox takes in test mode.
    test: donation.test || (method?.processor === "sandbox" && (await organizationInTestMode(tx, organizationId))),
  });
  await recordEvent(tx, workerScope, "payment.created", payment.id, paymentToWire(payment, method));
  if (!processor?.capabilities.recurring || !method?.processorReference) {
    const outcome = {
      state: "FAILED",
      intentId: null,
      code: "no_payment_method",
      message: "The donation has no payment method that can be charged again",
    } as const;
    const { settled } = await settlePayment(tx, links, workerScope, payment.id, outcome, now);
    return settled === "revoked" ? "revoked" : "failed";
  }
  return {
    organizationId,
    paymentId: payment.id,
    processor: processor.name,
    charge: {
      amountMinor: toMinorUnits(amount, donation.currency),
      currency: donation.currency,
      reference: method.processorReference,
      kind: "renewal",
      idempotencyKey,
      context: await renewalContextOf(tx, donation),
    },
  };
}

/** What a renewal charge is for (the same whether the worker or the reconciler sends it). */
export const renewalContextOf = (
  db: Executor,
  donation: { organizationId: number; id: number; campaignId: number | null },
) =>
  chargeContextOf(db, "renewal", {
    organizationId: donation.organizationId,
    campaignId: donation.campaignId,
    donationId: donation.id,
    checkoutId: null,
  });

export const asRenewalOutcome = (settled: Settled): RenewalOutcome | "pending" => {
  if (settled === "renewed" || settled === "paid") return "renewed";
  if (settled === "failed" || settled === "revoked") return settled;
  return settled === "pending" ? "pending" : "skipped";
};

/**
 * Renewal steps 2 and 3, after the record is committed: the charge outside any transaction, with the
 * recorded key, then its outcome settled in a second transaction. A throw leaves the payment PENDING
 * for the reconciler.
 */
export async function chargeRenewal(
  db: Db,
  renewal: RecordedRenewal,
  options: {
    links: SettlementLinks;
    processors: ProcessorRegistry;
    now: Date;
    afterStep?: (step: "charge" | "settle") => void | Promise<void>;
  },
): Promise<RenewalOutcome | "pending"> {
  const processor = await options.processors.connect(renewal.organizationId, renewal.processor);
  // The organization disconnected the processor the donor's method lives at (Stripe): the renewal
  // fails like a declined one (past_due, retried on the usual schedule), visible to the admin.
  const charge: PaymentOutcome = processor
    ? await processor.charge(renewal.charge)
    : {
        state: "FAILED",
        intentId: null,
        code: "processor_not_connected",
        message: `The organization is no longer connected to the processor "${renewal.processor}"`,
      };
  await options.afterStep?.("charge");
  const { settled } = await withEvents(db, async (tx) => {
    const outcome = await settlePayment(
      tx,
      options.links,
      { organizationId: renewal.organizationId, origin: systemOrigin("worker") },
      renewal.paymentId,
      charge,
      options.now,
    );
    await options.afterStep?.("settle");
    return outcome;
  });
  return asRenewalOutcome(settled);
}

const organizationInTestMode = async (tx: Executor, organizationId: number) =>
  (await findOrganizationById(tx, organizationId))?.testMode === true;
