import type { Scope } from "../../auth/scope.js";
import type { Db, Executor } from "../../db/client.js";
import { optionalDateBound, pageOf, parseOrder } from "../../db/list-query.js";
import { listStatementRecipients } from "../../email/statements.repo.js";
import { invalidParameter, notFound } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import type { EventScope } from "../../events/record-event.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { parseId } from "../../http/ids.js";
import { isLocale, type Locale, localeOr } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import { fromCents, toCents } from "../../payments/money.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { listStatementPayments } from "../documents/documents.repo.js";
import { findDonation } from "../donations/donations.repo.js";
import { findLegalProfile, type LegalProfileRow } from "../legal-profile/legal-profile.repo.js";
import type { LegalProfileWire } from "../legal-profile/legal-profile.service.js";
import { findOrganizationById, type OrganizationRow } from "../organizations/organizations.repo.js";
import { findPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import type { PaymentRow } from "../payments/payments.repo.js";
import { findSupporter, type SupporterRow } from "../supporters/supporters.repo.js";
import {
  findLivePaymentReceipt,
  findLiveStatement,
  findReceipt,
  findReceipts,
  insertReceipt,
  listReceiptPage,
  type NewReceipt,
  nextReceiptNumber,
  type ReceiptRow,
  voidReceiptRow,
} from "./receipts.repo.js";
import type { ReceiptApiWire, ReceiptListQuery } from "./receipts.schemas.js";

/**
 * Receipts as issued records (docs/receipts.md). A paid payment gets its receipt in the transaction
 * that records it paid (the subscriber in receipt-subscriber.ts), numbered per organization and
 * year; a refund voids it, and what a partial refund leaves gets a new one. Every rendering (the
 * page, the PDF, the email's link) is drawn from the row, never from the records as they are now.
 */

/** The organization as a receipt prints it, copied when issued: a later edit of the profile changes no receipt. */
export type IssuerSnapshot = Pick<
  LegalProfileWire,
  | "legal_form"
  | "address_line1"
  | "address_line2"
  | "postal_code"
  | "city"
  | "province"
  | "country"
  | "tax_code"
  | "vat_number"
  | "runts_number"
  | "ets_status"
  | "charity_number"
  | "ein"
  | "us_501c3"
  | "website"
  | "contact_email"
> & {
  /** The legal name, else the organization's name. */
  name: string;
  logo_url: string | null;
  time_zone: string;
};

/** The donor as the receipt names them, copied when issued. */
export interface DonorSnapshot {
  name: string;
  business_name: string | null;
  address: string | null;
  address2: string | null;
  postal_code: string | null;
  city: string | null;
  locality: string | null;
  country: string | null;
  /** Italy: the donor's codice fiscale (supporters.ssn), which a deduction needs. */
  tax_code: string | null;
  email: string | null;
  /** A payment receipt's gift made in honour or in memory of someone (absent: none, or issued before tributes). */
  tribute?: { type: "honor" | "memory"; name: string } | null;
}

export function issuerSnapshot(organization: OrganizationRow, profile: LegalProfileRow | undefined): IssuerSnapshot {
  return {
    name: profile?.legalName ?? organization.name,
    legal_form: profile?.legalForm ?? null,
    address_line1: profile?.addressLine1 ?? null,
    address_line2: profile?.addressLine2 ?? null,
    postal_code: profile?.postalCode ?? null,
    city: profile?.city ?? null,
    province: profile?.province ?? null,
    country: profile?.country ?? null,
    tax_code: profile?.taxCode ?? null,
    vat_number: profile?.vatNumber ?? null,
    runts_number: profile?.runtsNumber ?? null,
    ets_status: profile?.etsStatus ?? null,
    charity_number: profile?.charityNumber ?? null,
    ein: profile?.ein ?? null,
    us_501c3: profile?.us501c3 ?? false,
    website: profile?.website ?? null,
    contact_email: organization.email,
    logo_url: organization.logoUrl,
    time_zone: organization.timeZone,
  };
}

export function donorSnapshot(supporter: SupporterRow): DonorSnapshot {
  const person = [supporter.firstName, supporter.lastName].filter(Boolean).join(" ");
  return {
    name: person || supporter.businessName || supporter.email || "",
    business_name: supporter.businessName,
    address: supporter.address,
    address2: supporter.address2,
    postal_code: supporter.postalCode,
    city: supporter.city,
    locality: supporter.locality,
    country: supporter.country,
    tax_code: supporter.ssn,
    email: supporter.email,
  };
}

/** Which law's wording a receipt carries: Italy's art. 83 CTS, the US written acknowledgment, or a neutral one. */
export function receiptLaw(issuer: Pick<IssuerSnapshot, "country">): "it" | "us" | "default" {
  return issuer.country === "IT" ? "it" : issuer.country === "US" ? "us" : "default";
}

/** The law's words for the issuer's country, in the receipt's language, then the organization's own. */
export function legalTextOf(issuer: IssuerSnapshot, own: string | null, locale: Locale): string {
  const law = receiptLaw(issuer);
  const words =
    law === "it"
      ? t(locale, "receipts.law.it", { organization: issuer.name, status: issuer.ets_status ?? "none" })
      : law === "us"
        ? [
            t(locale, "receipts.law.us"),
            issuer.us_501c3 ? t(locale, "receipts.law.us_501c3", { organization: issuer.name }) : "",
          ]
            .filter(Boolean)
            .join(" ")
        : t(locale, "receipts.law.default", { organization: issuer.name });
  return own ? `${words}\n\n${own}` : words;
}

/** A payment made through a bank, a card or a processor; cash is not (Italian deductions need the former). */
export function isTraceable(processor: string | null | undefined, label: string | null | undefined): boolean {
  if (processor && processor !== "manual") return true;
  return !/^\s*(cash|contanti)\s*$/i.test(label ?? "cash");
}

/** The calendar year of an instant in the organization's time zone. */
export function yearIn(instant: Date, timeZone: string): number {
  return Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone }).format(instant));
}

/** The receipt as events and the API show it: what was issued, never the donor's identity. */
export function receiptToWire(row: ReceiptRow) {
  return {
    id: row.id,
    kind: row.kind,
    number: row.number,
    year: row.year,
    code: receiptCode(row),
    supporter_id: row.supporterId,
    donation_id: row.donationId,
    payment_id: row.paymentId,
    amount: row.amount,
    currency: row.currency,
    gift_date: row.giftDate.toISOString(),
    payment_method: row.paymentMethod,
    reference: row.reference,
    traceable: row.traceable,
    locale: row.locale,
    create_date: row.createDate.toISOString(),
    void_date: row.voidDate?.toISOString() ?? null,
    void_reason: row.voidReason,
    replaces_id: row.replacesId,
  };
}

export type ReceiptWire = ReturnType<typeof receiptToWire> & { url: string };

/** The organization's receipts for the panel and the API, each with its signed link. */
export async function listReceipts(
  tx: Executor,
  links: DocumentLinks,
  organizationId: number,
  args: { supporter_id?: number | null; year?: number | null; kind?: string | null; first?: number | null },
): Promise<ReceiptWire[]> {
  if (args.kind != null && args.kind !== "payment" && args.kind !== "statement") {
    throw invalidParameter("kind", "use payment or statement");
  }
  const first = args.first ?? 100;
  if (!Number.isInteger(first) || first < 1 || first > 500) throw invalidParameter("first", "use 1 to 500");
  const rows = await findReceipts(tx, organizationId, {
    supporterId: args.supporter_id,
    year: args.year,
    kind: args.kind,
    limit: first,
  });
  return rows.map((row) => ({ ...receiptToWire(row), url: links.taxReceiptUrl(row.organizationId, row.id) }));
}

/** How a receipt is cited: its number in its year, "2026-000042"; a yearly statement's has an S, "2026-S000007". */
export const receiptCode = (row: Pick<ReceiptRow, "year" | "number" | "kind">) =>
  `${row.year}-${row.kind === "statement" ? "S" : ""}${String(row.number).padStart(6, "0")}`;

/**
 * A donor's yearly statement as an issued record: every payment received in the year (test ones
 * never), less what was refunded, numbered in the statements' own sequence. Issued once per donor
 * and year; null when nothing is left to state. In 'yearly_statement' mode it is the donor's receipt.
 */
export async function issueStatement(
  tx: Executor,
  scope: EventScope,
  organization: OrganizationRow,
  supporter: SupporterRow,
  year: number,
): Promise<ReceiptRow | null> {
  const existing = await findLiveStatement(tx, organization.id, supporter.id, year);
  if (existing) return existing;
  const payments = (await listStatementPayments(tx, organization.id, supporter.id, year, organization.timeZone)).filter(
    (payment) => payment.amount > 0 && payment.currency === organization.currency,
  );
  if (payments.length === 0) return null;
  const profile = await findLegalProfile(tx, organization.id);
  const issuer = issuerSnapshot(organization, profile);
  const locale: Locale = isLocale(supporter.locale) ? supporter.locale : localeOr(organization.locale);
  const total = fromCents(payments.reduce((sum, payment) => sum + toCents(payment.amount), 0));
  const lines = payments.map((payment) => ({
    date: (payment.paymentDate ?? new Date()).toISOString(),
    amount: payment.amount,
    method: payment.methodLabel ?? null,
    donation_code: payment.donationCode,
  }));
  return issue(tx, scope, {
    organizationId: organization.id,
    kind: "statement",
    year,
    supporterId: supporter.id,
    donationId: null,
    paymentId: null,
    amount: total,
    currency: organization.currency,
    giftDate: (payments.at(-1)?.paymentDate ?? new Date()) as Date,
    paymentMethod: null,
    reference: null,
    traceable: payments.every((payment) => isTraceable(payment.processor, payment.methodLabel)),
    organization: issuer,
    donor: donorSnapshot(supporter),
    lines,
    legalText: legalTextOf(issuer, profile?.receiptLegalText ?? null, locale),
    locale,
    replacesId: null,
  });
}

/**
 * Issues the yearly statement of every donor who gave in the year (the organization's time zone),
 * a batch of donors per transaction, before the statements are sent: each email links its
 * statement. A second run issues nothing twice.
 */
export async function issueYearStatements(
  db: Db,
  organizationId: number,
  year: number,
  origin: EventOrigin | undefined,
  /** Only the donors no statement email reaches (no address, not erased): the email worker issues the others'. */
  options: { withoutEmailOnly?: boolean } = {},
): Promise<number> {
  const organization = await findOrganizationById(db, organizationId);
  if (!organization) return 0;
  let issued = 0;
  let afterId = 0;
  for (;;) {
    const batch = await withEvents(db, async (tx) => {
      const recipients = await listStatementRecipients(
        tx,
        organizationId,
        { year, timeZone: organization.timeZone },
        afterId,
        100,
      );
      for (const recipient of recipients) {
        if (options.withoutEmailOnly && (recipient.email?.trim() || recipient.eraseDate)) continue;
        const supporter = await findSupporter(tx, organizationId, recipient.id);
        if (!supporter) continue;
        const before = await findLiveStatement(tx, organizationId, supporter.id, year);
        if (!before && (await issueStatement(tx, { organizationId, origin }, organization, supporter, year)))
          issued += 1;
      }
      return recipients;
    });
    if (batch.length < 100) break;
    afterId = batch.at(-1)?.id ?? afterId;
  }
  return issued;
}

async function issue(tx: Executor, scope: EventScope, values: NewReceipt): Promise<ReceiptRow> {
  const number = await nextReceiptNumber(tx, scope.organizationId, values.kind as "payment" | "statement", values.year);
  const row = await insertReceipt(tx, { ...values, number });
  await recordEvent(tx, scope, "receipt.issued", row.id, receiptToWire(row));
  return row;
}

/**
 * The receipt of a paid payment, issued once (none for a test payment: test data never gets a
 * number, nor in 'yearly_statement' mode, where the donor's statement is the receipt). `amount` is
 * what it covers: the payment, or what is left of it after a partial refund.
 */
export async function issuePaymentReceipt(
  tx: Executor,
  scope: EventScope,
  payment: PaymentRow,
  options: { amount?: number; replaces?: ReceiptRow } = {},
): Promise<ReceiptRow | null> {
  if (payment.test || payment.state !== "PAID") return null;
  const organizationId = scope.organizationId;
  const organization = await findOrganizationById(tx, organizationId);
  if (!organization) return null;
  const profile = await findLegalProfile(tx, organizationId);
  if ((profile?.receiptMode ?? "each_payment") !== "each_payment" && !options.replaces) return null;
  if (!options.replaces && (await findLivePaymentReceipt(tx, organizationId, payment.id))) return null;
  const donation = await findDonationOfPayment(tx, payment);
  if (!donation) return null;
  const supporter = await findSupporter(tx, organizationId, donation.supporterId);
  if (!supporter) return null;
  const method = await findPaymentMethod(tx, organizationId, payment.paymentMethodId);
  const issuer = issuerSnapshot(organization, profile);
  const locale: Locale = isLocale(supporter.locale) ? supporter.locale : localeOr(organization.locale);
  const giftDate = payment.paymentDate ?? new Date();
  return issue(tx, scope, {
    organizationId,
    kind: "payment",
    year: yearIn(giftDate, organization.timeZone),
    supporterId: supporter.id,
    donationId: donation.id,
    paymentId: payment.id,
    amount: options.amount ?? payment.amount,
    currency: payment.currency,
    giftDate,
    paymentMethod: method?.label ?? null,
    reference: donation.code,
    traceable: isTraceable(method?.processor, method?.label),
    organization: issuer,
    donor: {
      ...donorSnapshot(supporter),
      tribute: donation.tributeName
        ? { type: donation.tributeType === "memory" ? "memory" : "honor", name: donation.tributeName }
        : null,
    },
    lines: null,
    legalText: legalTextOf(issuer, profile?.receiptLegalText ?? null, locale),
    locale,
    replacesId: options.replaces?.id ?? null,
  });
}

/**
 * A refund of a payment voids its receipt (marked void on every rendering); what a partial refund
 * leaves of the payment gets a new receipt, which names the one it replaces.
 */
export async function voidRefundedReceipt(
  tx: Executor,
  scope: EventScope,
  payment: PaymentRow,
  /** What took the money back: the event that asks (a refund, or a dispute the organization lost). */
  cause: "refunded" | "disputed" = "refunded",
) {
  const live = await findLivePaymentReceipt(tx, scope.organizationId, payment.id);
  if (!live) return;
  // A dispute the organization lost took the money back through the donor's bank: no gift either.
  const disputed = payment.disputeStatus === "lost" ? toCents(payment.disputeAmount ?? payment.amount) : 0;
  const left = fromCents(Math.max(0, toCents(payment.amount) - toCents(payment.amountRefunded) - disputed));
  if (left === live.amount) return;
  const voided = await voidReceiptRow(tx, scope.organizationId, live.id, left > 0 ? `partially_${cause}` : cause);
  if (!voided) return;
  await recordEvent(tx, scope, "receipt.voided", voided.id, receiptToWire(voided));
  if (left > 0) await issuePaymentReceipt(tx, scope, payment, { amount: left, replaces: voided });
}

const findDonationOfPayment = (tx: Executor, payment: PaymentRow) =>
  findDonation(tx, payment.organizationId, payment.donationId);

/**
 * The REST form of a receipt: its link only for a reader who may also read supporters (the page
 * shows the donor's name, address and tax code), as every document link (document-access.ts).
 */
export function receiptToApiWire(row: ReceiptRow, links: DocumentLinks, mayOpen: boolean): ReceiptApiWire {
  return {
    ...receiptToWire(row),
    kind: row.kind,
    void_reason: row.voidReason,
    url: mayOpen ? links.taxReceiptUrl(row.organizationId, row.id) : null,
  };
}

/** A page of the organization's receipts, filtered and ordered as every REST list. */
export async function listReceiptsPage(
  db: Executor,
  links: DocumentLinks,
  scope: Scope,
  query: ReceiptListQuery,
  mayOpen: boolean,
) {
  const { rows, count } = await listReceiptPage(
    db,
    scope,
    {
      kind: query.kind,
      year: query.year,
      supporterId: query.supporter_id,
      donationId: query.donation_id,
      paymentId: query.payment_id,
      void: query.void,
      createDateFrom: optionalDateBound("create_date_from", query.create_date_from),
      createDateTo: optionalDateBound("create_date_to", query.create_date_to),
    },
    parseOrder(query.order),
    pageOf(query),
  );
  return { items: rows.map((row) => receiptToApiWire(row, links, mayOpen)), count };
}

export async function getReceipt(db: Executor, links: DocumentLinks, scope: Scope, rawId: string, mayOpen: boolean) {
  const row = await findReceipt(db, scope.organizationId, parseId(rawId, "Receipt"));
  if (!row) throw notFound("Receipt");
  return receiptToApiWire(row, links, mayOpen);
}

/**
 * The statements of the year's donors without an email address, run after the panel's Send
 * statements has answered (the email worker issues the others' as it delivers them). The batches
 * are idempotent: one that fails (a statement issued at the same moment elsewhere hits the unique
 * index) is simply walked again, at most three times.
 */
export async function issueStatementsWithoutEmail(
  db: Db,
  organizationId: number,
  year: number,
  origin: EventOrigin | undefined,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await issueYearStatements(db, organizationId, year, origin, { withoutEmailOnly: true });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}
