import type { Db } from "../../db/client.js";
import { withEvents } from "../../events/record-event.js";
import { loadDocumentLinks } from "../../modules/documents/document-links.js";
import { listStatementPayments } from "../../modules/documents/documents.repo.js";
import { totalsByCurrency } from "../../modules/documents/receipt.page.js";
import { findOrganizationById } from "../../modules/organizations/organizations.repo.js";
import { findLiveStatement } from "../../modules/receipts/receipts.repo.js";
import { issueStatement } from "../../modules/receipts/receipts.service.js";
import { findSupporter } from "../../modules/supporters/supporters.repo.js";
import { donorFirstName } from "../message-models.js";
import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface StatementModel extends BaseModel {
  donor_name: string | null;
  year: number;
  /** What the donor gave in the year (less refunds), one total per currency. */
  totals: { amount: number; currency: string }[];
  payment_count: number;
  /** The donor's issued statement of that year (docs/receipts.md), else the supporter's signed statement link. */
  statement_url: string;
  /** The issued statement's PDF; null when none was issued. */
  statement_pdf_url: string | null;
}

/** The yearly statement of a supporter's donations, for their tax return: the total and the statement's link. */
export const message: EmailMessage<StatementModel> = {
  kind: "statement",
  async load(tx, row, deps) {
    const year = (row.data as { year?: unknown }).year;
    if (row.supporterId === null || typeof year !== "number") return null;
    const base = await loadBaseModel(tx, row.organizationId, row.supporterId);
    const supporter = await findSupporter(tx, row.organizationId, row.supporterId);
    if (!base || !supporter || supporter.eraseDate || !supporter.email || !supporter.certificationUrl) return null;
    const payments = await listStatementPayments(
      tx,
      row.organizationId,
      supporter.id,
      year,
      base.organization.time_zone,
    );
    const url = new URL(supporter.certificationUrl);
    // The donor's statement of the year, issued now if the run that queued this message did not
    // (the panel's run queues; the CLI issues every donor's first, those without an address too).
    const organization = await findOrganizationById(tx, row.organizationId);
    const issued =
      (await findLiveStatement(tx, row.organizationId, supporter.id, year)) ??
      (organization
        ? // One transaction: its number and its row commit together, or neither (no gap).
          await withEvents(tx as Db, (inner) =>
            issueStatement(inner, { organizationId: row.organizationId }, organization, supporter, year),
          )
        : null);
    const issuedUrl = issued
      ? (await loadDocumentLinks(tx, deps.baseUrl)).taxReceiptUrl(issued.organizationId, issued.id)
      : null;
    url.searchParams.set("year", String(year));
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      year,
      totals: totalsByCurrency(payments),
      payment_count: payments.length,
      statement_url: issuedUrl ?? url.toString(),
      statement_pdf_url: issuedUrl ? `${issuedUrl}/pdf` : null,
    };
  },
  sample(base, deps) {
    const year = new Date().getUTCFullYear() - 1;
    return {
      ...base,
      donor_name: "Ada",
      year,
      totals: [{ amount: 240, currency: "EUR" }],
      payment_count: 12,
      statement_url: `${deps.baseUrl}/documents/tax-receipts/1/1234/sample`,
      statement_pdf_url: `${deps.baseUrl}/documents/tax-receipts/1/1234/sample/pdf`,
    };
  },
};
