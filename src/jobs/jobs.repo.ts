import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { jobs } from "../db/schema.js";

export type JobRow = typeof jobs.$inferSelect;

/** Claims one due job; a job another worker holds is skipped, never waited for or run twice. */
export async function claimDueJob(tx: Executor, now: Date): Promise<JobRow | undefined> {
  const [job] = await tx
    .select()
    .from(jobs)
    .where(and(eq(jobs.state, "queued"), lte(jobs.runDate, now)))
    .orderBy(asc(jobs.runDate), asc(jobs.id))
    .limit(1)
    .for("update", { skipLocked: true });
  return job;
}

/** The claimed job leaves the queue (done, one more attempt) before its work queues anything. */
export async function markJobDone(tx: Executor, job: JobRow) {
  await tx
    .update(jobs)
    .set({ state: "done", attempts: job.attempts + 1, updateDate: sql`now()` })
    .where(eq(jobs.id, job.id));
}

export async function cancelJob(tx: Executor, id: number) {
  await tx.update(jobs).set({ state: "cancelled" }).where(eq(jobs.id, id));
}

/** A job that threw: its error kept, queued again at `runDate`, or failed for good. */
export async function recordJobFailure(
  db: Executor,
  id: number,
  values: { attempts: number; lastError: string; state: "queued" | "failed"; runDate: Date },
) {
  await db
    .update(jobs)
    .set({ ...values, updateDate: sql`now()` })
    .where(eq(jobs.id, id));
}

/** Queues the renewal of a recurring donation's billing cycle (one queued renewal per donation). */
export async function queueRenewal(
  tx: Executor,
  values: { organizationId: number; donationId: number; cycle: number; runDate: Date },
) {
  await tx
    .insert(jobs)
    .values({
      organizationId: values.organizationId,
      kind: "renewal",
      subjectId: values.donationId,
      payload: { cycle: values.cycle },
      runDate: values.runDate,
    })
    .onConflictDoNothing();
}

export async function cancelRenewals(tx: Executor, organizationId: number, donationId: number) {
  await tx
    .update(jobs)
    .set({ state: "cancelled", updateDate: sql`now()` })
    .where(
      and(
        eq(jobs.organizationId, organizationId),
        eq(jobs.kind, "renewal"),
        eq(jobs.subjectId, donationId),
        eq(jobs.state, "queued"),
      ),
    );
}
