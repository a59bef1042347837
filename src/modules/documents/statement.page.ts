import type { Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { escapeHtml } from "../../http/html-page.js";
import type { DocumentLinks } from "./document-links.js";
import { findStatementSupporter, listStatementPayments, listStatementYears } from "./documents.repo.js";
import {
  type DocumentAddress,
  documentFormat,
  documentLayout,
  documentNotFound,
  type OrganizationRow,
  type SupporterRow,
  supporterBlock,
  totalsByCurrency,
  verifiedOrganizationId,
} from "./receipt.page.js";

const YEAR = /^[0-9]{4}$/;

/** `?year=` as a calendar year; absent means "the latest year with payments". */
export function parseStatementYear(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const year = Number(raw);
  if (!YEAR.test(raw) || year < 1900) {
    throw new AppError("invalid_request", "The year must be a four-digit calendar year, like 2024.", {
      errors: [{ parameter: "year", message: "must be a four-digit year from 1900" }],
    });
  }
  return year;
}

export interface Statement {
  organization: OrganizationRow;
  supporter: SupporterRow;
  year: number;
  /** Every year with a received payment, latest first. */
  years: number[];
  payments: {
    id: number;
    paymentDate: Date;
    amount: number;
    currency: string;
    donationCode: string;
    campaignTitle: string;
  }[];
}

/** A supporter's payments received in one calendar year of the organization's time zone. */
export async function loadStatement(
  db: Executor,
  links: DocumentLinks,
  address: DocumentAddress,
  requestedYear: number | undefined,
): Promise<Statement> {
  const { organizationId, id } = await verifiedOrganizationId(db, links, "statement", address);
  const found = await findStatementSupporter(db, organizationId, id);
  // An erased supporter's statement would be personal data the organization no longer holds.
  if (!found || found.supporter.eraseDate) throw documentNotFound();
  const { timeZone } = found.organization;

  const years = (await listStatementYears(db, organizationId, id, timeZone)).sort((a, b) => b - a);
  const currentYear = Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone }).format(new Date()));
  const year = requestedYear ?? years[0] ?? currentYear;

  const rows = await listStatementPayments(db, organizationId, id, year, timeZone);
  return {
    organization: found.organization,
    supporter: found.supporter,
    year,
    years,
    payments: rows.map((row) => ({ ...row, paymentDate: row.paymentDate as Date })),
  };
}

export function statementPage(statement: Statement, nonce: string, issuedAt = new Date()): string {
  const { organization, supporter, year } = statement;
  const format = documentFormat(organization);
  const rows = statement.payments
    .map(
      (payment) => `<tr>
          <td>${escapeHtml(format.date(payment.paymentDate))}</td>
          <td>${escapeHtml(payment.donationCode)}</td>
          <td>${escapeHtml(payment.campaignTitle)}</td>
          <td class="number">${escapeHtml(format.money(payment.amount, payment.currency))}</td>
        </tr>`,
    )
    .join("\n        ");
  const totals = totalsByCurrency(statement.payments)
    .map((total) => escapeHtml(format.money(total.amount, total.currency)))
    .join(" + ");
  const table =
    statement.payments.length > 0
      ? `<table>
      <thead><tr><th>Date</th><th>Receipt no.</th><th>Campaign</th><th class="number">Amount</th></tr></thead>
      <tbody>
        ${rows}
      </tbody>
      <tfoot><tr><td colspan="3">Total ${year}</td><td class="number">${totals}</td></tr></tfoot>
    </table>`
      : `<p>No donation was received from you in ${year}.</p>`;
  const otherYears = statement.years.filter((other) => other !== year);
  const yearLinks =
    otherYears.length > 0
      ? `<p class="years no-print">Other years: ${otherYears.map((other) => `<a href="?year=${other}">${other}</a>`).join(" ")}</p>`
      : "";
  const body = `<header>
      <div class="organization">${escapeHtml(organization.name)}</div>
      <div class="title">
        <h1>Statement of donations ${year}</h1>
        <div>1 January – 31 December ${year}</div>
        <div class="note">Issued ${escapeHtml(format.date(issuedAt))}</div>
      </div>
    </header>
    ${yearLinks}
    <h2>Donor</h2>
    ${supporterBlock(supporter)}
    <h2>Donations received in ${year}</h2>
    ${table}
    <p class="note">Only payments received are listed, less any part refunded; refunded or failed payments are not. Dates are in the
      ${escapeHtml(organization.timeZone)} time zone.</p>
    <footer>
      ${escapeHtml(organization.name)} thanks you for your support. Keep this statement for your tax records.
    </footer>`;
  return documentLayout({
    title: `Statement ${year} · ${organization.name}`,
    nonce,
    body,
    printable: true,
  });
}
