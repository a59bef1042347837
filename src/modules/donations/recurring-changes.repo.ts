import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { jobs } from "../../db/schema.js";

/** The queued renewal of a recurring donation, locked (jobs before the donation, in the worker's lock order). */
export async function lockQueuedRenewal(tx: Executor, organizationId: number, donationId: number) {
  const [row] = await tx
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.organizationId, organizationId),
        eq(jobs.kind, "renewal"),
        eq(jobs.subjectId, donationId),
        eq(jobs.state, "queued"),
      ),
    )
    .limit(1)
    .for("update");
  return row;
}

/** The billing cycle a renewal job charges. */
export function cycleOfJob(payload: unknown): number | undefined {
  const cycle = (payload as { cycle?: unknown } | null)?.cycle;
  return typeof cycle === "number" && Number.isInteger(cycle) && cycle > 0 ? cycle : undefined;
}
