import { and, asc, eq, gte, isNotNull, lt, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { campaigns, donations, organizations, payments, supporters } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";
import { escapeHtml } from "../../http/html-page.js";
import type { DocumentLinks } from "./document-links.js";
import {
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

/** The first instant of a calendar year in a time zone, computed by the database's time zone rules. */
const startOfYear = (year: number, timeZone: string) =>
  sql`(make_timestamp(${year}::int, 1, 1, 0, 0, 0) at time zone ${timeZone}::text)`;

/** A supporter's payments received in one calendar year of the organization's time zone. */
export async function loadStatement(
  db: Executor,
  links: DocumentLinks,
  rawId: string,
  signature: string,
  requestedYear: number | undefined,
): Promise<Statement> {
  const { organizationId, id } = await verifiedOrganizationId(db, links, "statement", rawId, signature);
  const [found] = await db
    .select({ organization: organizations, supporter: supporters })
    .from(supporters)
    .innerJoin(organizations, eq(organizations.id, supporters.organizationId))
    .where(and(eq(supporters.organizationId, organizationId), eq(supporters.id, id)));
  // An erased supporter's statement would be personal data the organization no longer holds.
  if (!found || found.supporter.eraseDate) throw documentNotFound();
  const { timeZone } = found.organization;

  const received = and(
    eq(payments.organizationId, organizationId),
    eq(donations.supporterId, id),
    eq(payments.state, "PAID"),
    isNotNull(payments.paymentDate),
  );
  const localYear = sql<number>`extract(year from ${payments.paymentDate} at time zone ${timeZone}::text)::int`;
  const yearRows = await db
    .selectDistinct({ year: localYear })
    .from(payments)
    .innerJoin(
      donations,
      and(eq(donations.organizationId, payments.organizationId), eq(donations.id, payments.donationId)),
    )
    .where(received);
  const years = yearRows.map((row) => Number(row.year)).sort((a, b) => b - a);
  const currentYear = Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone }).format(new Date()));
  const year = requestedYear ?? years[0] ?? currentYear;

  const rows = await db
    .select({
      id: payments.id,
      paymentDate: payments.paymentDate,
      amount: payments.amount,
      currency: payments.currency,
      donationCode: donations.code,
      campaignTitle: campaigns.title,
    })
    .from(payments)
    .innerJoin(
      donations,
      and(eq(donations.organizationId, payments.organizationId), eq(donations.id, payments.donationId)),
    )
    .innerJoin(
      campaigns,
      and(eq(campaigns.organizationId, donations.organizationId), eq(campaigns.id, donations.campaignId)),
    )
    .where(
      and(
        received,
        gte(payments.paymentDate, startOfYear(year, timeZone)),
        lt(payments.paymentDate, startOfYear(year + 1, timeZone)),
      ),
    )
    .orderBy(asc(payments.paymentDate), asc(payments.id));
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
    <p class="note">Only payments received are listed; refunded or failed payments are not. Dates are in the
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
