import type { Db } from "../db/client.js";
import { withEvents } from "../events/record-event.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import type { ProcessorRegistry } from "../payments/processors/index.js";
import { chargeRenewal, type RecordedRenewal, type RenewalOutcome } from "../payments/renewal.service.js";
import { runCardExpiryScan } from "./card-expiry.job.js";
import { runCheckoutExpiry } from "./checkout-expiry.job.js";
import { runEventRetention } from "./event-retention.job.js";
import { runGiftDigest } from "./gift-digest.job.js";
import { cancelJob, claimDueJob, type JobRow, markJobDone, recordJobFailure } from "./jobs.repo.js";
import { startLoop } from "./loop.js";
import { reconcilePending } from "./reconciler.job.js";
import { recordRenewalJob } from "./renewal.job.js";

export interface BillingRunOptions {
  /** The clock: renewals due at or before it are charged (tests and `billing run --now` move it). */
  now: Date;
  checkoutTtlSeconds: number;
  /** Charges, refunds and checkout attempts PENDING longer than this are reconciled. */
  pendingTimeoutSeconds: number;
  /** Receipt and statement links, written when a reconciled checkout or payment settles. */
  links: DocumentLinks;
  /** The payment adapters renewals are charged and pending payments reconciled with. */
  processors: ProcessorRegistry;
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

const MAX_JOB_ATTEMPTS = 10;
const JOB_RETRY_DELAY_MS = 3_600_000;

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
      recorded = await withEvents(db, async (tx) => {
        const job = await claimDueJob(tx, options.now);
        if (!job) return null;
        claimed = job;
        // The claimed job leaves the queue before the renewal queues the next cycle or the retry: while
        // it is still queued, jobs_queued_subject_key would make that insert a silent no-op.
        await markJobDone(tx, job);
        const renewal =
          job.kind === "renewal" ? await recordRenewalJob(tx, options.links, job, options.now) : "skipped";
        if (renewal === "skipped") await cancelJob(tx, job.id);
        return renewal;
      });
    } catch (error) {
      // Everything the job did is rolled back; it is put back later so one bad job never blocks the queue.
      if (!claimed) throw error;
      result.errors += 1;
      const attempts = claimed.attempts + 1;
      await recordJobFailure(db, claimed.id, {
        attempts,
        lastError: error instanceof Error ? error.message.slice(0, 2000) : String(error),
        state: attempts >= MAX_JOB_ATTEMPTS ? "failed" : "queued",
        runDate: new Date(options.now.getTime() + JOB_RETRY_DELAY_MS),
      });
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
      const outcome = await chargeRenewal(db, recorded, options);
      if (outcome !== "pending") result[outcome] += 1;
    } catch {
      result.errors += 1;
    }
  }
  const reconciled = await reconcilePending(db, {
    now: options.now,
    timeoutSeconds: options.pendingTimeoutSeconds,
    links: options.links,
    processors: options.processors,
  });
  result.reconciled = reconciled.reconciled;
  result.errors += reconciled.errors;
  result.expired_checkouts = await runCheckoutExpiry(db, options.now, options.checkoutTtlSeconds);
  // Messages no event enqueues: warnings of cards expiring before a renewal, and yesterday's gift digests.
  await runCardExpiryScan(db, options.now);
  await runGiftDigest(db, options.now);
  return result;
}

/** Runs the worker every `intervalSeconds` until stopped; errors are reported and the loop goes on. */
export function startWorker(
  db: Db,
  options: Omit<BillingRunOptions, "now" | "maxJobs" | "afterStep"> & {
    intervalSeconds: number;
    /** Events older than this many days are deleted, once an hour (it visits every organization with old events). */
    eventRetentionDays: number;
    onError(error: unknown): void;
  },
) {
  let lastRetention = 0;
  return startLoop(async () => {
    const now = new Date();
    const result = await runBilling(db, {
      now,
      checkoutTtlSeconds: options.checkoutTtlSeconds,
      pendingTimeoutSeconds: options.pendingTimeoutSeconds,
      links: options.links,
      processors: options.processors,
    });
    if (now.getTime() - lastRetention >= 3_600_000) {
      lastRetention = now.getTime();
      await runEventRetention(db, now, options.eventRetentionDays);
    }
    return result;
  }, options);
}
