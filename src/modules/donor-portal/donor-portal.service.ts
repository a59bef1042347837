import type { Scope } from "../../auth/scope.js";
import type { Db, Executor } from "../../db/client.js";
import type { ValidationIssue } from "../../errors/app-error.js";
import { type RequestFacts, requestOrigin } from "../../events/origin.js";
import { withEvents } from "../../events/record-event.js";
import type { Locale } from "../../i18n/locales.js";
import { t } from "../../i18n/messages.js";
import { findCampaignRowsByIds } from "../campaigns/campaigns.repo.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { type DonationRow, listSupporterDonationRows } from "../donations/donations.repo.js";
import { listDonationPaymentRows, type PaymentRow } from "../payments/payments.repo.js";
import { receiptCode } from "../receipts/receipts.service.js";
import { listSupporterRows, type SupporterRow } from "../supporters/supporters.repo.js";
import type { SupporterPatch } from "../supporters/supporters.schemas.js";
import { exportSupporter, updateSupporter } from "../supporters/supporters.service.js";
import { listDonorDocuments } from "./donor-portal.repo.js";
import type { DonorSession } from "./donor-session.js";

const scopeOf = (session: DonorSession): Scope => ({
  organizationId: session.organizationId,
  timeZone: session.timeZone,
});

/** More records than one person ever has under one email; the portal shows them all. */
const MAX_IDENTITY_RECORDS = 1000;

/**
 * The donor's supporter records: every live one of the session's organization with the session's
 * email (case-insensitive). Erased records have no email, so they never match.
 */
export async function identitySupporters(tx: Executor, session: DonorSession): Promise<SupporterRow[]> {
  const { rows } = await listSupporterRows(
    tx,
    scopeOf(session),
    { email: session.email },
    { field: "id", descending: false },
    { limit: MAX_IDENTITY_RECORDS, offset: 0 },
  );
  return rows.filter((row) => row.eraseDate === null);
}

export interface DonorGift {
  donation: DonationRow;
  campaignTitle: string;
  payments: PaymentRow[];
}

export interface DonorStatement {
  supporterId: number;
  year: number;
  url: string;
}

/** An issued receipt or yearly statement (docs/receipts.md), with its signed page and PDF. */
export interface DonorDocument {
  id: number;
  kind: "payment" | "statement";
  year: number;
  /** "2026-000042" */
  code: string;
  amount: number;
  currency: string;
  giftDate: Date;
  /** The donation's code (DON-…), for a payment's receipt. */
  reference: string | null;
  voidDate: Date | null;
  voidReason: string | null;
  url: string;
  pdfUrl: string;
}

export interface DonorHome {
  /** The record whose details the contact form shows: the one updated last. */
  contact: SupporterRow | undefined;
  gifts: DonorGift[];
  statements: DonorStatement[];
  /** Receipts and yearly statements issued to the donor's records, void ones included, newest first. */
  documents: DonorDocument[];
}

/** Payments that count on a yearly statement (money received, refunded later or not). */
const RECEIVED = new Set(["PAID", "REFUNDED"]);

/** Everything the signed-in home shows: gifts (newest first) with their payments, statements by year. */
export async function loadDonorHome(db: Db, session: DonorSession, links: DocumentLinks): Promise<DonorHome> {
  const scope = scopeOf(session);
  const supporters = await identitySupporters(db, session);
  const donations = (
    await Promise.all(supporters.map((supporter) => listSupporterDonationRows(db, scope, supporter.id)))
  )
    .flat()
    // A draft is a checkout that was never paid: nothing was given.
    .filter((donation) => donation.state !== "draft")
    .sort((a, b) => b.createDate.getTime() - a.createDate.getTime() || b.id - a.id);
  const ids = donations.map((donation) => donation.id);
  const [campaigns, payments, documents] = await Promise.all([
    findCampaignRowsByIds(db, session.organizationId, [...new Set(donations.map((donation) => donation.campaignId))]),
    ids.length === 0 ? [] : listDonationPaymentRows(db, scope, ids),
    documentsOf(db, session, supporters, links),
  ]);
  const titles = new Map(campaigns.map((campaign) => [campaign.id, campaign.title]));
  const gifts = donations.map((donation) => ({
    donation,
    campaignTitle: titles.get(donation.campaignId) ?? "",
    payments: payments
      .filter((payment) => payment.donationId === donation.id)
      .sort((a, b) => b.createDate.getTime() - a.createDate.getTime() || b.id - a.id),
  }));
  const contact = [...supporters].sort((a, b) => b.updateDate.getTime() - a.updateDate.getTime() || b.id - a.id)[0];
  return { contact, gifts, statements: statementsOf(session, supporters, gifts, links), documents };
}

/** The documents issued to the donor's records, of the session's organization only. */
async function documentsOf(
  db: Db,
  session: DonorSession,
  supporters: SupporterRow[],
  links: DocumentLinks,
): Promise<DonorDocument[]> {
  const rows = await listDonorDocuments(
    db,
    session.organizationId,
    supporters.map((supporter) => supporter.id),
  );
  return rows.map((row) => {
    const url = links.taxReceiptUrl(row.organizationId, row.id);
    return {
      id: row.id,
      kind: row.kind === "statement" ? "statement" : "payment",
      year: row.year,
      code: receiptCode(row),
      amount: row.amount,
      currency: row.currency,
      giftDate: row.giftDate,
      reference: row.reference,
      voidDate: row.voidDate,
      voidReason: row.voidReason,
      url,
      pdfUrl: `${url}/pdf`,
    };
  });
}

function statementsOf(
  session: DonorSession,
  supporters: SupporterRow[],
  gifts: DonorGift[],
  links: DocumentLinks,
): DonorStatement[] {
  const yearOf = new Intl.DateTimeFormat("en", { year: "numeric", timeZone: session.timeZone });
  const statements: DonorStatement[] = [];
  for (const supporter of supporters) {
    const years = new Set<number>();
    for (const gift of gifts) {
      if (gift.donation.supporterId !== supporter.id) continue;
      for (const payment of gift.payments) {
        if (RECEIVED.has(payment.state) && payment.paymentDate) years.add(Number(yearOf.format(payment.paymentDate)));
      }
    }
    const base = supporter.certificationUrl ?? links.statementUrl(session.organizationId, supporter.id);
    for (const year of [...years].sort((a, b) => b - a)) {
      statements.push({ supporterId: supporter.id, year, url: `${base}?year=${year}` });
    }
  }
  return statements.sort((a, b) => b.year - a.year || a.supporterId - b.supporterId);
}

/**
 * What a donor may change about themselves: contact details and marketing consents (not the email).
 * Their labels are the catalog's `portal.contact.fields.<name>` and `portal.contact.consents.<name>`.
 */
export const CONTACT_FIELDS = [
  { name: "first_name", maxLength: 100, autocomplete: "given-name" },
  { name: "last_name", maxLength: 100, autocomplete: "family-name" },
  { name: "phone", maxLength: 50, autocomplete: "tel", type: "tel" },
  { name: "address", maxLength: 300, autocomplete: "address-line1" },
  { name: "address2", maxLength: 300, autocomplete: "address-line2" },
  { name: "postal_code", maxLength: 20, autocomplete: "postal-code" },
  { name: "city", maxLength: 100, autocomplete: "address-level2" },
  { name: "locality", maxLength: 100, autocomplete: "address-level1" },
  { name: "country", maxLength: 2, autocomplete: "country" },
] as const;

export const CONSENT_FIELDS = [
  { name: "email_marketing" },
  { name: "phone_marketing" },
  { name: "sms_marketing" },
  { name: "postal_marketing" },
] as const;

export type ContactFieldName = (typeof CONTACT_FIELDS)[number]["name"];
export type ConsentFieldName = (typeof CONSENT_FIELDS)[number]["name"];
export type ContactPatch = Pick<SupporterPatch, ContactFieldName | ConsentFieldName>;

/** The contact form as typed (re-shown after an error) and the patch it means, or its errors. */
export interface ContactForm {
  values: Record<string, string | boolean>;
  patch: ContactPatch;
  errors: ValidationIssue[];
}

/** The contact form as posted; its errors in the page's language. */
export function parseContactForm(body: unknown, locale: Locale): ContactForm {
  const source = (body ?? {}) as Record<string, unknown>;
  const values: Record<string, string | boolean> = {};
  const patch: Record<string, string | boolean | null> = {};
  const errors: ValidationIssue[] = [];
  for (const field of CONTACT_FIELDS) {
    const raw = source[field.name];
    const text = typeof raw === "string" ? raw.trim() : "";
    values[field.name] = text;
    const label = t(locale, `portal.contact.fields.${field.name}`);
    if (raw !== undefined && typeof raw !== "string") {
      errors.push({ field: field.name, message: t(locale, "portal.contact.errors.repeated", { field: label }) });
      continue;
    }
    if (field.name === "country" && text !== "" && !/^[A-Za-z]{2}$/.test(text)) {
      errors.push({ field: field.name, message: t(locale, "portal.contact.errors.country") });
      continue;
    }
    if (text.length > field.maxLength) {
      const message = t(locale, "portal.contact.errors.too_long", { field: label, max: String(field.maxLength) });
      errors.push({ field: field.name, message });
      continue;
    }
    patch[field.name] = text === "" ? null : field.name === "country" ? text.toUpperCase() : text;
  }
  for (const field of CONSENT_FIELDS) {
    // An unticked checkbox sends nothing: absent means "no".
    const ticked = source[field.name] !== undefined;
    values[field.name] = ticked;
    patch[field.name] = ticked;
  }
  return { values, patch: patch as ContactPatch, errors };
}

/**
 * Saves the donor's contact details and consents on every supporter record of their identity,
 * through the supporter service the admin panel uses, and confirms by email, in one transaction.
 * Returns how many records changed.
 */
export async function updateDonorContact(
  db: Db,
  session: DonorSession,
  patch: ContactPatch,
  /** The donor's request: the events name the donor (their confirmation follows from that) and where they asked from. */
  request: RequestFacts,
): Promise<number> {
  return withEvents(db, async (tx) => {
    const supporters = await identitySupporters(tx, session);
    for (const supporter of supporters) {
      // Each record's event names the donor as that record, so erasing it also scrubs where they asked from.
      const actor = { type: "donor" as const, supporter_id: supporter.id, label: "donor" };
      await updateSupporter(
        tx,
        { ...scopeOf(session), origin: requestOrigin(request, actor) },
        String(supporter.id),
        patch,
      );
    }
    return supporters.length;
  });
}

/** Everything the organization holds about the donor's identity (GDPR art. 15 and 20), record by record. */
export async function exportDonorData(db: Db, session: DonorSession, request?: RequestFacts) {
  const supporters = await identitySupporters(db, session);
  const records = [];
  for (const supporter of supporters) {
    const actor = { type: "donor" as const, supporter_id: supporter.id, label: "donor" };
    const origin = request ? requestOrigin(request, actor) : undefined;
    records.push(await exportSupporter(db, { ...scopeOf(session), origin }, String(supporter.id)));
  }
  return {
    export_date: new Date().toISOString(),
    organization: { name: session.organizationName, slug: session.organizationSlug },
    email: session.email,
    supporters: records,
  };
}
