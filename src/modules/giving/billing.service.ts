import { and, asc, eq, isNotNull, lte, sql } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { checkouts, jobs, organizations, paymentMethods, payments } from "../../db/schema.js";
import { connectProcessor, findProcessor } from "../../payments/processors/index.js";
import type { ChargeRequest } from "../../payments/processors/processor.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { type ReconcileResult, reconcileCheckoutAttempts, reconcileOne } from "./checkout-flow.service.js";
import { findMethod, insertPayment, lockDonation } from "./giving.repo.js";
import { toCents } from "./money.js";
import { askRefund } from "./payment-actions.service.js";
import { type Settled, settlePayment, settleRefund } from "./settlement.service.js";

export interface BillingRunOptions {
  /** The clock: renewals due at or before it are charged (tests and `billing run --now` move it). */
  now: Date;
  checkoutTtlSeconds: number;
  /** Charges, refunds and checkout attempts PENDING longer than this are reconciled. */
  pendingTimeoutSeconds: number;
  /** Receipt and statement links, written when a reconciled checkout or payment settles. */
  links: DocumentLinks;
  /** Stop after this many jobs (one run never loops forever). */
  maxJobs?: number;
  /** Test hook: called between a renewal's steps; a throw leaves its payment PENDING for the reconciler. */
  afterStep?: (step: "record" | "charge" | "settle") => void | Promise<void>;
}

export interface BillingRunResult {
  renewed: number;
  failed: number;
  revoked: number;
  skipped: number;
  /** Jobs that threw: rolled back, put back an hour later, failed for good after 10 attempts. */
  errors: number;
  expired_checkouts: number;
  /** Charges, refunds and checkout attempts left PENDING by a crash or timeout, settled from the processor. */
  reconciled: number;
}

type JobRow = typeof jobs.$inferSelect;

const MAX_JOB_ATTEMPTS = 10;
const JOB_RETRY_DELAY_MS = 3_600_000;

/** Claims one due job; a job another worker holds is skipped, never waited for or run twice. */
async function claimDueJob(tx: Executor, now: Date): Promise<JobRow | undefined> {
  const [job] = await tx
    .select()
    .from(jobs)
    .where(and(eq(jobs.state, "queued"), lte(jobs.runDate, now)))
    .orderBy(asc(jobs.runDate), asc(jobs.id))
    .limit(1)
    .for("update", { skipLocked: true });
  return job;
}

type RenewalOutcome = "renewed" | "failed" | "revoked" | "skipped";

/** A renewal recorded as a PENDING payment, to be charged with this request, then settled. */
interface RecordedRenewal {
  organizationId: number;
  paymentId: number;
  processor: string;
  charge: ChargeRequest;
}

/**
 * Renewal step 1, in the job's transaction: checks the donation can be charged and records the
 * cycle's PENDING payment with its processor key (committed before the processor is called). A
 * donation with no method that can be charged again fails at once.
 */
async function recordRenewal(
  tx: Executor,
  links: DocumentLinks,
  job: JobRow,
  now: Date,
): Promise<RecordedRenewal | RenewalOutcome> {
  const organizationId = job.organizationId;
  const donation = await lockDonation(tx, organizationId, job.subjectId);
  if (!donation || (donation.state !== "active" && donation.state !== "past_due")) return "skipped";
  const frequency = donation.frequency ?? 0;
  if ((frequency !== 1 && frequency !== 12) || !donation.completedDate) return "skipped";
  const cycle = Number((job.payload as { cycle?: number }).cycle ?? 1);
  if (!Number.isInteger(cycle) || cycle < 1) throw new Error(`renewal job ${job.id} has no valid cycle`);
  const method = await findMethod(tx, organizationId, donation.paymentMethodId);
  const processor = method ? findProcessor(method.processor) : undefined;
  const idempotencyKey = `renewal:${donation.id}:${cycle}:${donation.failureCount}`;
  const payment = await insertPayment(tx, {
    organizationId,
    donationId: donation.id,
    state: "PENDING",
    amount: donation.amount,
    currency: donation.currency,
    paymentMethodId: method?.id ?? null,
    idempotencyKey,
    billingCycle: cycle,
  });
  if (!processor?.capabilities.recurring || !method?.processorReference) {
    const outcome = {
      state: "FAILED",
      intentId: null,
      code: "no_payment_method",
      message: "The donation has no payment method that can be charged again",
    } as const;
    const { settled } = await settlePayment(tx, links, organizationId, payment.id, outcome, now);
    return settled === "revoked" ? "revoked" : "failed";
  }
  return {
    organizationId,
    paymentId: payment.id,
    processor: processor.name,
    charge: {
      amountCents: toCents(donation.amount),
      currency: donation.currency,
      reference: method.processorReference,
      kind: "renewal",
      idempotencyKey,
    },
  };
}

const asRenewalOutcome = (settled: Settled): RenewalOutcome | "pending" => {
  if (settled === "renewed" || settled === "paid") return "renewed";
  if (settled === "failed" || settled === "revoked") return settled;
  return settled === "pending" ? "pending" : "skipped";
};

/**
 * A charge or refund left unsettled longer than the timeout (a crash between steps, a processor
 * timeout): the processor is asked what became of its key and the answer is settled through the
 * same step as ever. A renewal the processor never received is charged with the same key; a refund
 * is asked again with its key (neither happens twice). One record that cannot be settled is counted
 * as an error and tried again next run; it never stops the others.
 */
export async function reconcilePending(
  db: Db,
  options: { now: Date; timeoutSeconds: number; links: DocumentLinks; limit?: number },
): Promise<ReconcileResult> {
  const { now, links } = options;
  // Staleness is measured on the real clock: a run with a moved clock (billing run --now) must not
  // take a charge still in flight for an abandoned one.
  const cutoff = new Date(Math.min(now.getTime(), Date.now()) - options.timeoutSeconds * 1000);
  const limit = options.limit ?? 1000;
  const result = await reconcileCheckoutAttempts({ db, links }, { now, cutoff, limit });
  const charges = await db
    .select({ payment: payments, processor: paymentMethods.processor, reference: paymentMethods.processorReference })
    .from(payments)
    .leftJoin(
      paymentMethods,
      and(eq(paymentMethods.organizationId, payments.organizationId), eq(paymentMethods.id, payments.paymentMethodId)),
    )
    .where(and(eq(payments.state, "PENDING"), isNotNull(payments.idempotencyKey), lte(payments.updateDate, cutoff)))
    .orderBy(asc(payments.updateDate))
    .limit(limit);
  for (const { payment, processor: name, reference } of charges) {
    await reconcileOne(result, async () => {
      const processor = name ? connectProcessor(db, name) : undefined;
      const key = payment.idempotencyKey as string;
      let found = processor ? await processor.retrieve(key) : null;
      // A renewal the processor never received is charged now, with the same key: the worker's own work.
      if (!found && processor && reference && payment.billingCycle !== null) {
        found = await processor.charge({
          amountCents: toCents(payment.amount),
          currency: payment.currency,
          reference,
          kind: "renewal",
          idempotencyKey: key,
        });
      }
      if (found?.state === "PENDING") return false;
      const outcome = found ?? {
        state: "FAILED" as const,
        intentId: null,
        code: "not_charged",
        message: "The processor never received the charge",
      };
      await db.transaction((tx) => settlePayment(tx, links, payment.organizationId, payment.id, outcome, now));
      return true;
    });
  }
  const refunds = await db
    .select({ payment: payments, processor: paymentMethods.processor })
    .from(payments)
    .leftJoin(
      paymentMethods,
      and(eq(paymentMethods.organizationId, payments.organizationId), eq(paymentMethods.id, payments.paymentMethodId)),
    )
    .where(and(isNotNull(payments.refundRequestDate), lte(payments.refundRequestDate, cutoff)))
    .orderBy(asc(payments.refundRequestDate))
    .limit(limit);
  for (const { payment, processor } of refunds) {
    await reconcileOne(result, async () => {
      if (payment.state === "PAID") await askRefund(db, processor ?? "manual", payment);
      await db.transaction((tx) => settleRefund(tx, payment.organizationId, payment.id));
      return true;
    });
  }
  return result;
}

/** Closes OPEN checkouts older than the expiry, without a payment (decisions.md §8). */
export async function expireCheckouts(db: Executor, now: Date, ttlSeconds: number): Promise<number> {
  const cutoff = new Date(now.getTime() - ttlSeconds * 1000);
  // One statement for every organization, each row matched by its organization, so the planner
  // reaches checkouts_state_idx (organization_id, state, create_date) per organization.
  const result = await db.execute(sql`
    update ${checkouts} set state = 'CLOSED', update_date = now()
    from ${organizations}
    where ${checkouts.organizationId} = ${organizations.id}
      and ${checkouts.state} = 'OPEN' and ${checkouts.createDate} <= ${cutoff.toISOString()}::timestamptz`);
  return (
    (result as unknown as { rowCount?: number; affectedRows?: number }).rowCount ??
    (result as unknown as { affectedRows?: number }).affectedRows ??
    0
  );
}

/**
 * One pass of the worker: every due renewal, each in steps (record the PENDING payment with the
 * job's claim, charge outside any transaction, settle), claimed with FOR UPDATE SKIP LOCKED so that
 * concurrent workers share the queue and never charge twice; then the reconciler and checkout expiry.
 */
export async function runBilling(db: Db, options: BillingRunOptions): Promise<BillingRunResult> {
  const result: BillingRunResult = {
    renewed: 0,
    failed: 0,
    revoked: 0,
    skipped: 0,
    errors: 0,
    expired_checkouts: 0,
    reconciled: 0,
  };
  const maxJobs = options.maxJobs ?? 10_000;
  for (let done = 0; done < maxJobs; done++) {
    let claimed: JobRow | undefined;
    let recorded: RecordedRenewal | RenewalOutcome | null;
    try {
      recorded = await db.transaction(async (tx) => {
        const job = await claimDueJob(tx, options.now);
        if (!job) return null;
        claimed = job;
        // The claimed job leaves the queue before the renewal queues the next cycle or the retry: while
        // it is still queued, jobs_queued_subject_key would make that insert a silent no-op.
        await tx
          .update(jobs)
          .set({ state: "done", attempts: job.attempts + 1, updateDate: sql`now()` })
          .where(eq(jobs.id, job.id));
        const renewal = job.kind === "renewal" ? await recordRenewal(tx, options.links, job, options.now) : "skipped";
        if (renewal === "skipped") await tx.update(jobs).set({ state: "cancelled" }).where(eq(jobs.id, job.id));
        return renewal;
      });
    } catch (error) {
      // Everything the job did is rolled back; it is put back later so one bad job never blocks the queue.
      if (!claimed) throw error;
      result.errors += 1;
      const attempts = claimed.attempts + 1;
      await db
        .update(jobs)
        .set({
          attempts,
          lastError: error instanceof Error ? error.message.slice(0, 2000) : String(error),
          state: attempts >= MAX_JOB_ATTEMPTS ? "failed" : "queued",
          runDate: new Date(options.now.getTime() + JOB_RETRY_DELAY_MS),
          updateDate: sql`now()`,
        })
        .where(eq(jobs.id, claimed.id));
      continue;
    }
    if (recorded === null) break;
    if (typeof recorded === "string") {
      result[recorded] += 1;
      continue;
    }
    // Past the record step a failure leaves a PENDING payment: the reconciler settles it from the
    // processor's record, so it is never charged again nor lost.
    try {
      await options.afterStep?.("record");
      const renewal = recorded;
      const processor = connectProcessor(db, renewal.processor);
      if (!processor) throw new Error(`no processor "${renewal.processor}"`);
      const charge = await processor.charge(renewal.charge);
      await options.afterStep?.("charge");
      const { settled } = await db.transaction(async (tx) => {
        const outcome = await settlePayment(
          tx,
          options.links,
          renewal.organizationId,
          renewal.paymentId,
          charge,
          options.now,
        );
        await options.afterStep?.("settle");
        return outcome;
      });
      const outcome = asRenewalOutcome(settled);
      if (outcome !== "pending") result[outcome] += 1;
    } catch {
      result.errors += 1;
    }
  }
  const reconciled = await reconcilePending(db, {
    now: options.now,
    timeoutSeconds: options.pendingTimeoutSeconds,
    links: options.links,
  });
  result.reconciled = reconciled.reconciled;
  result.errors += reconciled.errors;
  result.expired_checkouts = await expireCheckouts(db, options.now, options.checkoutTtlSeconds);
  return result;
}

/** Runs the worker every `intervalSeconds` until stopped; errors are reported and the loop goes on. */
export function startWorker(
  db: Db,
  options: Omit<BillingRunOptions, "now" | "maxJobs" | "afterStep"> & {
    intervalSeconds: number;
    onError(error: unknown): void;
  },
) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = () => {
    running = runBilling(db, {
      now: new Date(),
      checkoutTtlSeconds: options.checkoutTtlSeconds,
      pendingTimeoutSeconds: options.pendingTimeoutSeconds,
      links: options.links,
    })
      .catch(options.onError)
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, options.intervalSeconds * 1000);
      });
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
