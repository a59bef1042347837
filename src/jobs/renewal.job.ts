import type { Executor } from "../db/client.js";
import type { DocumentLinks } from "../modules/documents/document-links.js";
import { type RecordedRenewal, type RenewalOutcome, recordRenewal } from "../payments/renewal.service.js";
import type { JobRow } from "./jobs.repo.js";

/** A renewal job's first step: its payload names the cycle; the money steps are in renewal.service.ts. */
export function recordRenewalJob(
  tx: Executor,
  links: DocumentLinks,
  job: JobRow,
  now: Date,
): Promise<RecordedRenewal | RenewalOutcome> {
  const cycle = () => {
    const value = Number((job.payload as { cycle?: number }).cycle ?? 1);
    if (!Number.isInteger(value) || value < 1) throw new Error(`renewal job ${job.id} has no valid cycle`);
    return value;
  };
  return recordRenewal(tx, links, { organizationId: job.organizationId, donationId: job.subjectId, cycle }, now);
}
