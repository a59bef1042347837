import { escapeHtml, htmlDocument } from "../../http/html-page.js";
import type { Locale } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import { formatMoney } from "../../payments/money.js";
import type { ReceiptRow } from "./receipts.repo.js";
import { type DonorSnapshot, type IssuerSnapshot, receiptCode } from "./receipts.service.js";

/**
 * One receipt's words, drawn from its issued row alone (the snapshots it keeps), in a language:
 * the page (HTML) and the PDF lay out the same content.
 */
export interface ReceiptContent {
  locale: Locale;
  title: string;
  number: string;
  issued: string;
  /** Set on a void receipt: why, said on every rendering. */
  void: string | null;
  replaces: string | null;
  issuer: { heading: string; lines: string[] };
  donor: { heading: string; lines: string[] };
  facts: [string, string][];
  lines: { heading: string; rows: [string, string, string][]; total: [string, string] } | null;
  legal: string[];
  contact: string | null;
  /** The logo the issuer had when the receipt was issued (its address), and what it stands for. */
  logo: { url: string; alt: string } | null;
}

export interface StatementLine {
  date: string;
  amount: number;
  method: string | null;
  donation_code: string | null;
}

export function receiptContent(
  row: ReceiptRow,
  locale: Locale,
  related: { replaces?: ReceiptRow | null; replacedBy?: ReceiptRow | null } = {},
): ReceiptContent {
  const issuer = row.organization as IssuerSnapshot;
  const donor = row.donor as DonorSnapshot;
  const day = new Intl.DateTimeFormat(locale, { dateStyle: "long", timeZone: issuer.time_zone });
  const date = (value: Date | string) => day.format(new Date(value));
  const money = (amount: number) => formatMoney(amount, row.currency, locale);
  const address = (parts: (string | null)[]) => parts.filter((part): part is string => Boolean(part));
  const regions = new Intl.DisplayNames([locale], { type: "region", fallback: "code" });
  const country = (code: string | null) => (code && /^[A-Z]{2}$/.test(code) ? (regions.of(code) ?? code) : code);
  const issuerLines = [
    issuer.name,
    ...address([issuer.legal_form]),
    ...address([issuer.address_line1, issuer.address_line2]),
    ...address([
      [issuer.postal_code, issuer.city, issuer.province ? `(${issuer.province})` : null].filter(Boolean).join(" "),
    ]),
    ...address([country(issuer.country)]),
    ...(issuer.tax_code ? [t(locale, "receipts.tax_code", { value: issuer.tax_code })] : []),
    ...(issuer.vat_number ? [t(locale, "receipts.vat_number", { value: issuer.vat_number })] : []),
    ...(issuer.ets_status ? [t(locale, `receipts.ets_status.${issuer.ets_status}`)] : []),
    ...(issuer.runts_number ? [t(locale, "receipts.runts_number", { value: issuer.runts_number })] : []),
    ...(issuer.charity_number ? [t(locale, "receipts.charity_number", { value: issuer.charity_number })] : []),
    ...(issuer.ein ? [t(locale, "receipts.ein", { value: issuer.ein })] : []),
    ...(issuer.us_501c3 ? [t(locale, "receipts.us_501c3")] : []),
  ].filter(Boolean);
  const donorLines = [
    donor.name,
    ...(donor.business_name && donor.business_name !== donor.name ? [donor.business_name] : []),
    ...address([donor.address, donor.address2]),
    ...address([[donor.postal_code, donor.city, donor.locality].filter(Boolean).join(" ")]),
    ...address([country(donor.country)]),
    ...(donor.tax_code ? [t(locale, "receipts.tax_code", { value: donor.tax_code })] : []),
  ].filter(Boolean);
  const statement = row.kind === "statement";
  const statementLines = (row.lines as StatementLine[] | null) ?? [];
  const voided =
    row.voidDate === null
      ? null
      : row.voidReason?.startsWith("partially_") && related.replacedBy
        ? t(
            locale,
            row.voidReason === "partially_disputed"
              ? "receipts.void_partially_disputed"
              : "receipts.void_partially_refunded",
            { date: date(row.voidDate), code: receiptCode(related.replacedBy) },
          )
        : t(locale, row.voidReason === "disputed" ? "receipts.void_disputed" : "receipts.void_refunded", {
            date: date(row.voidDate),
          });
  return {
    locale,
    title: statement
      ? t(locale, "receipts.title_statement", { year: String(row.year) })
      : t(locale, "receipts.title_payment"),
    number: t(locale, "receipts.number", { code: receiptCode(row) }),
    issued: t(locale, "receipts.issued", { date: date(row.createDate) }),
    void: voided,
    replaces: related.replaces
      ? t(
          locale,
          related.replaces.voidReason === "partially_disputed" ? "receipts.replaces_disputed" : "receipts.replaces",
          {
            code: receiptCode(related.replaces),
          },
        )
      : null,
    issuer: { heading: t(locale, "receipts.issuer_heading"), lines: issuerLines },
    donor: { heading: t(locale, "receipts.donor_heading"), lines: donorLines },
    facts: statement
      ? [[t(locale, "receipts.total"), money(row.amount)]]
      : [
          [t(locale, "receipts.amount"), money(row.amount)],
          [t(locale, "receipts.gift_date"), date(row.giftDate)],
          ...(row.reference ? [[t(locale, "receipts.reference"), row.reference] as [string, string]] : []),
          ...(row.paymentMethod ? [[t(locale, "receipts.method"), row.paymentMethod] as [string, string]] : []),
          [t(locale, "receipts.traceable"), t(locale, row.traceable ? "receipts.yes" : "receipts.no")],
          ...(donor.tribute
            ? [
                [
                  t(locale, "receipts.tribute"),
                  donor.tribute.type === "memory"
                    ? t(locale, "receipts.tribute_memory", { name: donor.tribute.name })
                    : t(locale, "receipts.tribute_honor", { name: donor.tribute.name }),
                ] as [string, string],
              ]
            : []),
        ],
    lines: statement
      ? {
          heading: t(locale, "receipts.lines_heading", { year: String(row.year) }),
          rows: statementLines.map((line) => [
            date(line.date),
            [line.method, line.donation_code].filter(Boolean).join(" · "),
            money(line.amount),
          ]),
          total: [t(locale, "receipts.total"), money(row.amount)],
        }
      : null,
    legal: row.legalText.split(/\n{2,}/),
    contact: issuer.contact_email ? t(locale, "receipts.contact", { email: issuer.contact_email }) : null,
    logo: issuer.logo_url ? { url: issuer.logo_url, alt: issuer.name } : null,
  };
}

const STYLE = `
  body { font-family: system-ui, sans-serif; color: #1f2933; margin: 0; background: #f5f7fa; }
  .sheet { max-width: 46rem; margin: 1.5rem auto; background: #fff; padding: 2.5rem; border: 1px solid #d9e2ec; }
  h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
  .logo { display: block; max-height: 4rem; max-width: 14rem; margin: 0 0 1.25rem; }
  .meta { color: #52606d; margin: 0 0 1.5rem; }
  .void { border: 3px solid #b91c1c; color: #b91c1c; font-weight: 700; padding: .75rem 1rem; margin: 0 0 1.5rem; text-transform: uppercase; letter-spacing: .02em; }
  .parties { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5rem; margin-bottom: 1.5rem; }
  .parties h2, .lines h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: #52606d; margin: 0 0 .4rem; }
  .parties p { margin: 0; line-height: 1.5; }
  table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
  th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid #e4e7eb; }
  td.amount, th.amount { text-align: right; white-space: nowrap; }
  .legal { font-size: .92rem; line-height: 1.55; }
  .actions { max-width: 46rem; margin: 0 auto 2rem; display: flex; gap: 1rem; }
  @media (max-width: 40rem) { .parties { grid-template-columns: 1fr; } .sheet { padding: 1.25rem; margin: 0; } }
  @media print { body { background: #fff; } .sheet { border: 0; margin: 0; } .actions { display: none; } }
`;

const lines = (values: string[]) => values.map((value) => escapeHtml(value)).join("<br>");

/** The receipt as a printable page, with a link to its PDF. */
export function receiptHtml(
  content: ReceiptContent,
  options: {
    nonce: string;
    pdfUrl: string /** The logo's address, when it is one of ours (the page loads images from its own origin only). */;
    logoUrl?: string | null;
  },
): string {
  const { locale } = content;
  const facts = content.facts
    .map(([label, value]) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
    .join("\n      ");
  const statement = content.lines
    ? `<section class="lines"><h2>${escapeHtml(content.lines.heading)}</h2>
    <table>
      ${content.lines.rows.map(([date, method, amount]) => `<tr><td>${escapeHtml(date)}</td><td>${escapeHtml(method)}</td><td class="amount">${escapeHtml(amount)}</td></tr>`).join("\n      ")}
      <tr><th scope="row" colspan="2">${escapeHtml(content.lines.total[0])}</th><td class="amount"><strong>${escapeHtml(content.lines.total[1])}</strong></td></tr>
    </table></section>`
    : "";
  const logo =
    options.logoUrl && content.logo
      ? `<img class="logo" id="issuer-logo" src="${escapeHtml(options.logoUrl)}" alt="${escapeHtml(content.logo.alt)}">`
      : "";
  const body = `<main class="sheet" id="receipt">
  ${logo}
  ${content.void ? `<p class="void" id="void" role="alert">${escapeHtml(content.void)}</p>` : ""}
  <h1>${escapeHtml(content.title)}</h1>
  <p class="meta"><span id="receipt-number">${escapeHtml(content.number)}</span> · ${escapeHtml(content.issued)}</p>
  ${content.replaces ? `<p class="meta">${escapeHtml(content.replaces)}</p>` : ""}
  <div class="parties">
    <section><h2>${escapeHtml(content.issuer.heading)}</h2><p>${lines(content.issuer.lines)}</p></section>
    <section><h2>${escapeHtml(content.donor.heading)}</h2><p>${lines(content.donor.lines)}</p></section>
  </div>
  <table class="facts">
      ${facts}
  </table>
  ${statement}
  <div class="legal" id="legal-text">${content.legal.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join("\n  ")}</div>
  ${content.contact ? `<p class="meta">${escapeHtml(content.contact)}</p>` : ""}
</main>
<p class="actions"><a href="${escapeHtml(options.pdfUrl)}" id="pdf-link">${escapeHtml(t(locale, "receipts.download_pdf"))}</a></p>`;
  return htmlDocument({
    title: `${content.title} ${content.number}`,
    nonce: options.nonce,
    style: STYLE,
    body,
    lang: locale,
    head: '<meta name="robots" content="noindex">\n',
  });
}
