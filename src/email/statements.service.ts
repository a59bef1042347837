import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import type { EventOrigin } from "../events/origin.js";
import { recordEvent } from "../events/record-event.js";
import { findOrganizationById } from "../modules/organizations/organizations.repo.js";
import { type EmailToSend, enqueueEmails } from "./outbox.repo.js";
import { listStatementRecipients } from "./statements.repo.js";

export const FIRST_STATEMENT_YEAR = 2000;

export interface StatementRun {
  organizationId: number;
  year: number;
  batchSize?: number;
  /** Who asked (the run is recorded as a `statements.sent` event once done; absent: the platform). */
  origin?: EventOrigin;
}

export interface StatementCounts {
  year: number;
  /** Supporters with a payment received in the year. */
  supporters: number;
  /** Statements put in the outbox by this run. */
  queued: number;
  /** Statements an earlier run of the same year already queued: never sent twice. */
  already_sent: number;
  /** Supporters without an email address, or erased. */
  skipped_no_email: number;
}

const currentYearIn = (timeZone: string, now: Date) =>
  Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone }).format(now));

export function checkStatementYear(year: unknown, timeZone: string, now = new Date()): number {
  const last = currentYearIn(timeZone, now);
  if (typeof year !== "number" || !Number.isInteger(year) || year < FIRST_STATEMENT_YEAR || year > last) {
    const message = `use a year from ${FIRST_STATEMENT_YEAR} to ${last}`;
    throw new AppError("invalid_request", `Invalid year: ${message}`, { errors: [{ field: "year", message }] });
  }
  return year;
}

/**
 * Queues the yearly statement of every supporter who gave in `year` (the organization's time zone).
 * Supporters are walked by id, one transaction per batch; each statement has the dedupe key
 * `statement:<year>:<supporter>`, so a run that stopped half way resumes where it was and a second
 * run queues nothing twice. The messages go out with the outbox's worker, not in this call.
 */
export async function sendStatements(db: Db, run: StatementRun): Promise<StatementCounts> {
  const organization = await findOrganizationById(db, run.organizationId);
  if (!organization) throw new AppError("organization_not_found", "Organization not found");
  const year = checkStatementYear(run.year, organization.timeZone);
  const batchSize = run.batchSize ?? 200;
  const counts: StatementCounts = { year, supporters: 0, queued: 0, already_sent: 0, skipped_no_email: 0 };
  let afterId = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const batch = await listStatementRecipients(
        tx,
        organization.id,
        { year, timeZone: organization.timeZone },
        afterId,
        batchSize,
      );
      const messages: EmailToSend[] = [];
      for (const supporter of batch) {
        const email = supporter.email?.trim();
        if (!email || supporter.eraseDate) {
          counts.skipped_no_email += 1;
          continue;
        }
        messages.push({
          organizationId: organization.id,
          kind: "statement",
          to: email,
          supporterId: supporter.id,
          data: { year },
          dedupeKey: `statement:${year}:${supporter.id}`,
        });
      }
      // One insert per batch: a GraphQL request has a budget of statements (GRAPHQL_MAX_STATEMENTS).
      const queued = (await enqueueEmails(tx, messages)).length;
      counts.supporters += batch.length;
      counts.queued += queued;
      counts.already_sent += messages.length - queued;
      afterId = batch.at(-1)?.id ?? afterId;
      return batch.length < batchSize;
    });
    if (done) break;
  }
  await db.transaction((tx) =>
    recordEvent(tx, { organizationId: organization.id, origin: run.origin }, "statements.sent", organization.id, {
      ...counts,
    }),
  );
  return counts;
}
