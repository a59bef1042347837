import type { Executor } from "../../db/client.js";
import type { donations, organizations, supporters } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";
import { escapeHtml, htmlDocument, TEST_MODE_STYLE, testModeBanner } from "../../http/html-page.js";
import { formatMoney, fromCents, toCents } from "../../payments/money.js";
import { printableIban } from "../organizations/bank-account.js";
import { bankTransferToWire } from "../organizations/organizations.service.js";
import type { DocumentKind, DocumentLinks } from "./document-links.js";
import { findDocumentOrganizationId, findReceiptDonation, listReceiptPayments } from "./documents.repo.js";

/** One answer for an unknown id, a bad signature and another organization's signature. */
export const documentNotFound = () => new AppError("not_found", "This document does not exist.");

const ID = /^[1-9][0-9]{0,14}$/;

/** A document link's path: the organization and the record (links issued before the organization was in the path have the record alone). */
export interface DocumentAddress {
  readonly organization?: string | undefined;
  readonly id: string;
  readonly signature: string;
}

/**
 * The organization a signed document belongs to. The signature covers the organization and the
 * record, so a link that names its organization is checked without a lookup, and everything after
 * is scoped by it (one shard on a cluster). An older link names the record alone: ids are unique
 * platform-wide, so its organization is found by id (a search of every shard on a cluster).
 */
export async function verifiedOrganizationId(
  db: Executor,
  links: DocumentLinks,
  kind: DocumentKind,
  address: DocumentAddress,
): Promise<{ organizationId: number; id: number }> {
  if (!ID.test(address.id)) throw documentNotFound();
  const id = Number(address.id);
  let organizationId: number;
  if (address.organization !== undefined) {
    if (!ID.test(address.organization)) throw documentNotFound();
    organizationId = Number(address.organization);
  } else {
    const row = await findDocumentOrganizationId(db, kind, id);
    if (!row) throw documentNotFound();
    organizationId = row.organizationId;
  }
  if (!links.verify(kind, organizationId, id, address.signature)) throw documentNotFound();
  return { organizationId, id };
}

export type OrganizationRow = typeof organizations.$inferSelect;
export type SupporterRow = typeof supporters.$inferSelect;

/** Money and dates as the organization's documents show them: its currency, its time zone. */
export function documentFormat(organization: OrganizationRow) {
  const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeZone: organization.timeZone });
  return {
    money: (amount: number, currency: string) => formatMoney(amount, currency),
    date: (instant: Date) => day.format(instant),
  };
}

/** Sums amounts in cents, one total per currency (an organization may have changed currency). */
export function totalsByCurrency(rows: { amount: number; currency: string }[]): { amount: number; currency: string }[] {
  const cents = new Map<string, number>();
  for (const row of rows) cents.set(row.currency, (cents.get(row.currency) ?? 0) + toCents(row.amount));
  return [...cents].map(([currency, total]) => ({ currency, amount: fromCents(total) }));
}

export function supporterBlock(supporter: SupporterRow): string {
  const person = [supporter.firstName, supporter.lastName].filter(Boolean).join(" ");
  const names = [supporter.businessName, person].filter((name): name is string => Boolean(name));
  if (supporter.eraseDate) names.splice(0, names.length, "Personal data erased at the supporter's request");
  else if (names.length === 0 && supporter.email) names.push(supporter.email);
  const place = [supporter.postalCode, supporter.city, supporter.locality].filter(Boolean).join(" ");
  const lines = supporter.eraseDate
    ? []
    : [supporter.address, supporter.address2, place, supporter.country].filter((line): line is string => Boolean(line));
  return `<address class="party">
      ${names.map((name, index) => (index === 0 ? `<strong>${escapeHtml(name)}</strong>` : escapeHtml(name))).join("<br>")}
      ${lines.map((line) => `<br>${escapeHtml(line)}`).join("")}
    </address>`;
}

const STYLE = `
  @page { size: A4; margin: 16mm; }
  * { box-sizing: border-box; }
  html { background: #e5e7eb; }
  body { margin: 0; font: 11pt/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111827;
    -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .sheet { width: 100%; max-width: 210mm; min-height: 297mm; margin: 1.5rem auto; padding: 16mm; background: #fff;
    box-shadow: 0 1px 4px rgb(0 0 0 / 20%); position: relative; }
  .sheet.message { min-height: auto; }
  .toolbar { max-width: 210mm; margin: 1rem auto 0; display: flex; justify-content: flex-end; gap: .5rem; }
  .toolbar button { font: inherit; font-weight: 600; padding: .5rem 1rem; border-radius: 6px; cursor: pointer;
    border: 1px solid #0f766e; background: #0f766e; color: #fff; }
  header { display: flex; justify-content: space-between; align-items: flex-start; gap: 2rem;
    border-bottom: 2px solid #0f766e; padding-bottom: 1rem; margin-bottom: 1.5rem; }
  header .organization { font-size: 16pt; font-weight: 700; }
  header .title { text-align: right; }
  h1 { font-size: 14pt; margin: 0 0 .25rem; }
  h2 { font-size: 11pt; text-transform: uppercase; letter-spacing: .04em; color: #4b5563; margin: 1.5rem 0 .5rem; }
  address { font-style: normal; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.5rem; margin: 0; }
  dl.facts dt { color: #4b5563; } dl.facts dd { margin: 0; }
  .amount { font-size: 15pt; font-weight: 700; }
  .struck { text-decoration: line-through; }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
  th { font-size: 9pt; text-transform: uppercase; letter-spacing: .04em; color: #4b5563; }
  td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  tfoot td { font-weight: 700; border-top: 2px solid #111827; border-bottom: none; }
  .stamp { display: inline-block; margin: 0 0 1rem; padding: .3rem .9rem; border: 3px solid #b91c1c; color: #b91c1c;
    font-size: 16pt; font-weight: 800; letter-spacing: .12em; text-transform: uppercase; transform: rotate(-4deg); }
  .note { color: #4b5563; font-size: 9.5pt; }
  .years a { margin-right: .6rem; color: #0f766e; }
  footer { margin-top: 2.5rem; padding-top: .75rem; border-top: 1px solid #e5e7eb; color: #4b5563; font-size: 9pt; }
  @media screen and (max-width: 700px) { .sheet { margin: 0; padding: 1.25rem; min-height: auto; box-shadow: none; }
    header { flex-direction: column; } header .title { text-align: left; } }
  @media print { html { background: none; } .sheet { margin: 0; padding: 0; max-width: none; min-height: auto;
    box-shadow: none; } .no-print { display: none !important; } a { color: inherit; text-decoration: none; } }
`;

// The button only appears when the script runs; without JavaScript the browser's own print still works.
const PRINT_SCRIPT = `const button = document.getElementById("print");
button.hidden = false;
button.addEventListener("click", () => window.print());`;

/** A self-contained printable page: inline style and script allowed only by the response's CSP nonce. */
export function documentLayout(options: { title: string; nonce: string; body: string; printable?: boolean }): string {
  const toolbar = options.printable
    ? `<div class="toolbar no-print"><button type="button" id="print" hidden>Print / Save as PDF</button></div>`
    : "";
  const script = options.printable ? `<script nonce="${options.nonce}">${PRINT_SCRIPT}</script>` : "";
  return htmlDocument({
    title: options.title,
    nonce: options.nonce,
    style: STYLE + TEST_MODE_STYLE,
    head: '<meta name="robots" content="noindex">\n',
    body: `${toolbar}
<main class="sheet${options.printable ? "" : " message"}">
${options.body}
</main>`,
    scripts: script,
  });
}

export function errorDocument(status: number, message: string, nonce: string): string {
  const title = status === 404 ? "Document not found" : status >= 500 ? "Something went wrong" : "Invalid request";
  return documentLayout({
    title,
    nonce,
    body: `<h1>${escapeHtml(title)}</h1>\n    <p>${escapeHtml(message)}</p>`,
  });
}

const FREQUENCIES: Record<number, string> = { 0: "One-off", 1: "Yearly", 12: "Monthly" };

/** frequency counts charges per year: 12 is monthly, 1 yearly, 0 (or none) a one-off gift. */
export const frequencyLabel = (frequency: number | null) => FREQUENCIES[frequency ?? 0] ?? `${frequency} times a year`;
const isRecurring = (frequency: number | null) => frequency === 1 || frequency === 12;

export interface Receipt {
  organization: OrganizationRow;
  supporter: SupporterRow;
  donation: typeof donations.$inferSelect;
  campaignTitle: string;
  paymentMethodLabel: string | null;
  /** The processor of the gift's method: "manual" (bank transfer) prints where the money went. */
  processor: string | null;
  payments: {
    id: number;
    state: string;
    amount: number;
    /** Refunded of a PAID payment (a partial refund); a REFUNDED payment is refunded in full. */
    amountRefunded: number;
    currency: string;
    paymentDate: Date | null;
  }[];
}

/** The receipt behind a signed link; a donation that was never paid has none. */
export async function loadReceipt(db: Executor, links: DocumentLinks, address: DocumentAddress): Promise<Receipt> {
  const { organizationId, id } = await verifiedOrganizationId(db, links, "receipt", address);
  const found = await findReceiptDonation(db, organizationId, id);
  if (!found) throw documentNotFound();
  const paid = await listReceiptPayments(db, organizationId, id);
  if (paid.length === 0) throw documentNotFound();
  return {
    organization: found.organization,
    supporter: found.supporter,
    donation: found.donation,
    campaignTitle: found.campaignTitle,
    paymentMethodLabel: found.donationMethodLabel ?? paid[0]?.methodLabel ?? null,
    processor: found.donationMethodProcessor ?? paid[0]?.methodProcessor ?? null,
    payments: paid.map(({ methodLabel: _label, methodProcessor: _processor, ...payment }) => payment),
  };
}

function receiptMarker(receipt: Receipt): { stamp: string; note: string } | null {
  if (receipt.donation.test) {
    return {
      stamp: "Test",
      note: "This gift was made in test mode: no money was received, and this is not a receipt.",
    };
  }
  const refunded = receipt.payments.filter((payment) => payment.state === "REFUNDED").length;
  const stillPaid = receipt.payments.length - refunded;
  if (refunded > 0 && stillPaid === 0) {
    return { stamp: "Refunded", note: "This gift was refunded; it is no longer a donation." };
  }
  if (receipt.donation.state === "revoked") {
    const note = isRecurring(receipt.donation.frequency)
      ? "This recurring donation was cancelled; the payments listed below were received before it ended."
      : "This donation was cancelled.";
    return { stamp: "Cancelled", note };
  }
  if (refunded > 0) {
    const what = refunded === 1 ? "One payment was" : `${refunded} payments were`;
    return { stamp: "Partly refunded", note: `${what} refunded; refunded payments are not counted.` };
  }
  const partly = receipt.payments.filter((payment) => payment.state === "PAID" && toCents(payment.amountRefunded) > 0);
  if (partly.length > 0) {
    const cents = partly.reduce((sum, payment) => sum + toCents(payment.amountRefunded), 0);
    const currency = partly[0]?.currency ?? receipt.donation.currency;
    return {
      stamp: "Partly refunded",
      note: `${formatMoney(fromCents(cents), currency)} was refunded to the donor; only what was kept is counted as given.`,
    };
  }
  return null;
}

/** The gift and the fee the donor covered, shown apart: the gift is the donation, the fee went to the processor. */
function coveredFeeFacts(
  donation: Receipt["donation"],
  money: (amount: number, currency: string) => string,
  amountFact: [string, string],
): [string, string][] {
  const total = fromCents(toCents(donation.amount) + toCents(donation.coveredFee));
  return [
    [amountFact[0].replace("Amount", "Gift"), amountFact[1]],
    ["Processing fee covered", escapeHtml(money(donation.coveredFee, donation.currency))],
    [donation.frequency ? "Charged each time" : "Total charged", escapeHtml(money(total, donation.currency))],
  ];
}

function bankTransferSection(receipt: Receipt): string {
  const bank = receipt.processor === "manual" ? bankTransferToWire(receipt.organization) : null;
  if (!bank) return "";
  const facts: [string, string][] = [
    ["Account holder", bank.account_name],
    ["IBAN", printableIban(bank.iban)],
    ...(bank.bic ? ([["BIC", bank.bic]] as [string, string][]) : []),
    ["Reference", receipt.donation.code],
  ];
  return `<h2>Bank transfer</h2>
    <dl class="facts bank-transfer">
      ${facts.map(([term, value]) => `<dt>${term}</dt><dd>${escapeHtml(value)}</dd>`).join("\n      ")}
    </dl>`;
}

export function receiptPage(receipt: Receipt, nonce: string, issuedAt = new Date()): string {
  const { organization, donation, supporter } = receipt;
  const format = documentFormat(organization);
  const recurring = isRecurring(donation.frequency);
  const marker = receiptMarker(receipt);
  const giftDate = donation.completedDate ?? receipt.payments[0]?.paymentDate ?? null;
  // What was received and kept: a partly refunded payment counts for what was not given back.
  const received = receipt.payments
    .filter((payment) => payment.state === "PAID")
    .map((payment) => ({ ...payment, amount: fromCents(toCents(payment.amount) - toCents(payment.amountRefunded)) }));
  const amountFact: [string, string] = [
    recurring ? "Amount of each payment" : "Amount",
    `<span class="amount${marker?.stamp === "Refunded" ? " struck" : ""}">${escapeHtml(format.money(donation.amount, donation.currency))}</span>`,
  ];
  const facts: [string, string][] = [
    ...(toCents(donation.coveredFee) > 0 ? coveredFeeFacts(donation, format.money, amountFact) : [amountFact]),
    ["Frequency", escapeHtml(frequencyLabel(donation.frequency))],
    [recurring ? "First payment" : "Date of the gift", giftDate ? escapeHtml(format.date(giftDate)) : "—"],
    ["Payment method", escapeHtml(receipt.paymentMethodLabel ?? "—")],
    ["Campaign", escapeHtml(receipt.campaignTitle)],
  ];
  const paymentRows = receipt.payments
    .map(
      (payment) => `<tr>
          <td>${payment.paymentDate ? escapeHtml(format.date(payment.paymentDate)) : "—"}</td>
          <td>${payment.state === "PAID" ? `Received${toCents(payment.amountRefunded) > 0 ? `, ${escapeHtml(format.money(payment.amountRefunded, payment.currency))} refunded` : ""}` : "<strong>REFUNDED</strong>"}</td>
          <td class="number${payment.state === "PAID" ? "" : " struck"}">${escapeHtml(format.money(payment.state === "PAID" ? fromCents(toCents(payment.amount) - toCents(payment.amountRefunded)) : payment.amount, payment.currency))}</td>
        </tr>`,
    )
    .join("\n        ");
  const totals = totalsByCurrency(received)
    .map((total) => escapeHtml(format.money(total.amount, total.currency)))
    .join(" + ");
  const paymentsTable = recurring
    ? `<h2>Payments received</h2>
    <table>
      <thead><tr><th>Date</th><th>Status</th><th class="number">Amount</th></tr></thead>
      <tbody>
        ${paymentRows}
      </tbody>
      <tfoot><tr><td colspan="2">Total received</td><td class="number">${totals || escapeHtml(format.money(0, donation.currency))}</td></tr></tfoot>
    </table>`
    : "";
  const banner = donation.test ? testModeBanner("This document shows a test gift; it is not a receipt.") : "";
  const body = `${banner}<header>
      <div class="organization">${escapeHtml(organization.name)}</div>
      <div class="title">
        <h1>Donation receipt</h1>
        <div>Receipt no. <strong>${escapeHtml(donation.code)}</strong></div>
        <div class="note">Issued ${escapeHtml(format.date(issuedAt))}</div>
      </div>
    </header>
    ${marker ? `<div class="stamp">${escapeHtml(marker.stamp)}</div>\n    <p><strong>${escapeHtml(marker.note)}</strong></p>` : ""}
    <h2>Received from</h2>
    ${supporterBlock(supporter)}
    <h2>Gift</h2>
    <dl class="facts">
      ${facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n      ")}
    </dl>
    ${paymentsTable}
    ${bankTransferSection(receipt)}
    <footer>
      ${escapeHtml(organization.name)} thanks you for your support. Keep this receipt for your records.
    </footer>`;
  return documentLayout({ title: `Receipt ${donation.code} · ${organization.name}`, nonce, body, printable: true });
}
