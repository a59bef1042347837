import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { checkouts, donations, jobs, organizations, payments } from "../../db/schema.js";
import { findMethod, lockDonation, queueRenewal } from "./giving.repo.js";
import { findProcessor } from "./processors/index.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES, retryDate } from "./schedule.js";
import { assertTransition } from "./transitions.js";

export interface BillingRunOptions {
  /** The clock: renewals due at or before it are charged (tests and `billing run --now` move it). */
  now: Date;
  checkoutTtlSeconds: number;
  /** Stop after this many jobs (one run never loops forever). */
  maxJobs?: number;
}

export interface BillingRunResult {
  renewed: number;
  failed: number;
  revoked: number;
  skipped: number;
  /** Jobs that threw: rolled back, put back an hour later, failed for good after 10 attempts. */
  errors: number;
  expired_checkouts: number;
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

/** Charges one billing cycle of a recurring donation, and queues the next charge or the retry. */
async function renew(tx: Executor, job: JobRow, now: Date): Promise<RenewalOutcome> {
  const organizationId = job.organizationId;
  const donation = await lockDonation(tx, organizationId, job.subjectId);
  if (!donation || (donation.state !== "active" && donation.state !== "past_due")) return "skipped";
  const frequency = donation.frequency ?? 0;
  const start = donation.completedDate;
  if ((frequency !== 1 && frequency !== 12) || !start) return "skipped";
  const cycle = Number((job.payload as { cycle?: number }).cycle ?? 1);
  const method = await findMethod(tx, organizationId, donation.paymentMethodId);
  const processor = method ? findProcessor(method.processor) : undefined;
  const charge =
    processor?.capabilities.recurring && method?.processorReference
      ? await processor.charge({
          amountCents: Math.round(donation.amount * 100),
          currency: donation.currency,
          reference: method.processorReference,
          kind: "renewal",
          idempotencyKey: `renewal:${donation.id}:${cycle}:${donation.failureCount}`,
        })
      : ({
          state: "FAILED",
          intentId: null,
          code: "no_payment_method",
          message: "The donation has no payment method that can be charged again",
        } as const);
  await tx.insert(payments).values({
    organizationId,
    donationId: donation.id,
    state: charge.state === "PAID" ? "PAID" : "FAILED",
    amount: donation.amount,
    currency: donation.currency,
    paymentDate: charge.state === "PAID" ? now : null,
    paymentMethodId: method?.id ?? null,
    processorIntentId: charge.intentId,
    failureCode: charge.state === "FAILED" ? charge.code : null,
    failureMessage: charge.state === "FAILED" ? charge.message : null,
  });
  const where = and(eq(donations.organizationId, organizationId), eq(donations.id, donation.id));
  if (charge.state === "PAID") {
    if (donation.state === "past_due") assertTransition("donation", donation.id, donation.state, "active");
    // After an outage, one charge covers the overdue cycles: the schedule resumes at the first
    // cycle still ahead instead of charging the donor once per missed period.
    let nextCycle = cycle + 1;
    while (cycleDueDate(start, frequency, nextCycle) <= now) nextCycle += 1;
    const nextDue = cycleDueDate(start, frequency, nextCycle);
    await tx
      .update(donations)
      .set({ state: "active", failureCount: 0, nextChargeDate: nextDue, updateDate: sql`now()` })
      .where(where);
    await queueRenewal(tx, { organizationId, donationId: donation.id, cycle: nextCycle, runDate: nextDue });
    return "renewed";
  }
  const failures = donation.failureCount + 1;
  if (failures >= MAX_RENEWAL_FAILURES) {
    assertTransition("donation", donation.id, donation.state, "revoked");
    await tx
      .update(donations)
      .set({ state: "revoked", failureCount: failures, nextChargeDate: null, updateDate: sql`now()` })
      .where(where);
    return "revoked";
  }
  assertTransition("donation", donation.id, donation.state, "past_due");
  const retry = retryDate(now, failures);
  await tx
    .update(donations)
    .set({ state: "past_due", failureCount: failures, nextChargeDate: retry, updateDate: sql`now()` })
    .where(where);
  await queueRenewal(tx, { organizationId, donationId: donation.id, cycle, runDate: retry });
  return "failed";
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
 * One pass of the worker: every due renewal, each in its own transaction, claimed with
 * FOR UPDATE SKIP LOCKED so that concurrent workers share the queue and never charge twice.
 */
export async function runBilling(db: Db, options: BillingRunOptions): Promise<BillingRunResult> {
  const result: BillingRunResult = { renewed: 0, failed: 0, revoked: 0, skipped: 0, errors: 0, expired_checkouts: 0 };
  const maxJobs = options.maxJobs ?? 10_000;
  for (let done = 0; done < maxJobs; done++) {
    let claimed: JobRow | undefined;
    try {
      const outcome = await db.transaction(async (tx) => {
        const job = await claimDueJob(tx, options.now);
        if (!job) return null;
        claimed = job;
        // The claimed job leaves the queue before renew() queues the next cycle or the retry: while
        // it is still queued, jobs_queued_subject_key would make that insert a silent no-op.
        await tx
          .update(jobs)
          .set({ state: "done", attempts: job.attempts + 1, updateDate: sql`now()` })
          .where(eq(jobs.id, job.id));
        const renewal = job.kind === "renewal" ? await renew(tx, job, options.now) : ("skipped" as const);
        if (renewal === "skipped") await tx.update(jobs).set({ state: "cancelled" }).where(eq(jobs.id, job.id));
        return renewal;
      });
      if (outcome === null) break;
      result[outcome] += 1;
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
    }
  }
  result.expired_checkouts = await expireCheckouts(db, options.now, options.checkoutTtlSeconds);
  return result;
}

/** Runs the worker every `intervalSeconds` until stopped; errors are reported and the loop goes on. */
export function startWorker(
  db: Db,
  options: { intervalSeconds: number; checkoutTtlSeconds: number; onError(error: unknown): void },
) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const tick = () => {
    running = runBilling(db, { now: new Date(), checkoutTtlSeconds: options.checkoutTtlSeconds })
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
