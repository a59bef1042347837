import { listStatementPayments } from "../../modules/documents/documents.repo.js";
import { totalsByCurrency } from "../../modules/documents/receipt.page.js";
import { findSupporter } from "../../modules/supporters/supporters.repo.js";
import { donorFirstName } from "../message-models.js";
import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface StatementModel extends BaseModel {
  donor_name: string | null;
  year: number;
  /** What the donor gave in the year (less refunds), one total per currency. */
  totals: { amount: number; currency: string }[];
  payment_count: number;
  /** The supporter's signed statement link (certification_url) for that year. */
  statement_url: string;
}

/** The yearly statement of a supporter's donations, for their tax return: the total and the statement's link. */
export const message: EmailMessage<StatementModel> = {
  kind: "statement",
  async load(tx, row) {
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
    url.searchParams.set("year", String(year));
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      year,
      totals: totalsByCurrency(payments),
      payment_count: payments.length,
      statement_url: url.toString(),
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
      statement_url: `${deps.baseUrl}/documents/statements/1234/sample?year=${year}`,
    };
  },
};
