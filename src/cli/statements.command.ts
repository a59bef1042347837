import { sendStatements } from "../email/statements.service.js";
import { systemOrigin } from "../events/origin.js";
import { requireOrganization } from "../modules/organizations/organizations.service.js";
import { issueYearStatements } from "../modules/receipts/receipts.service.js";
import { type Command, optionalInteger, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const statementsSendCommand: Command = {
  name: "statements send",
  usage: "donata statements send --org S --year YYYY [--batch-size N] [--json]",
  summary:
    "Queue every supporter's yearly statement email for a year, in batches (resumable; never twice per supporter)",
  options: { org: { type: "string" }, year: { type: "string" }, "batch-size": { type: "string" } },
  async run(values, io) {
    const slug = requiredString(values, "org");
    const rawYear = requiredString(values, "year");
    if (!/^\d{4}$/.test(rawYear)) throw new UsageError(`--year must be a four-digit year, not "${rawYear}"`);
    const batchSize = optionalInteger(values, "batch-size", 200);
    if (batchSize < 1 || batchSize > 10_000) throw new UsageError("--batch-size must be from 1 to 10000");
    const counts = await withDatabase(io.env, async ({ database }) => {
      const organization = await requireOrganization(database.db, slug);
      // Each donor's statement is issued (numbered, kept) first; the emails link it.
      await issueYearStatements(database.db, organization.id, Number(rawYear), systemOrigin("cli"));
      return sendStatements(database.db, {
        organizationId: organization.id,
        year: Number(rawYear),
        batchSize,
        origin: systemOrigin("cli"),
      });
    });
    return {
      json: { organization: slug, ...counts },
      text: [
        `Statements ${counts.year} for ${slug}: ${counts.queued} queued, ${counts.already_sent} already sent, ` +
          `${counts.skipped_no_email} without an email (${counts.supporters} supporters gave in ${counts.year})`,
      ],
    };
  },
};
