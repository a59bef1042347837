import type { Executor } from "../../db/client.js";
import { isLocale, type Locale } from "../../i18n/locales.js";
import { loadImageOfUrl, ownImagePath } from "../../images/images.service.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { type DocumentAddress, documentNotFound, verifiedOrganizationId } from "../documents/receipt.page.js";
import { receiptContent } from "./receipt-document.js";
import { findReceipt, findReplacement } from "./receipts.repo.js";

/**
 * An issued receipt behind its signed link, as content in a language: the receipt's own (the donor's
 * when it was issued) unless the reader asks for the other with ?lang=.
 */
export async function loadReceiptContent(db: Executor, links: DocumentLinks, address: DocumentAddress, lang: unknown) {
  if (address.organization === undefined) throw documentNotFound();
  const { organizationId, id } = await verifiedOrganizationId(db, links, "tax_receipt", address);
  const row = await findReceipt(db, organizationId, id);
  if (!row) throw documentNotFound();
  const replaces = row.replacesId === null ? null : await findReceipt(db, organizationId, row.replacesId);
  const replacedBy = row.voidDate === null ? null : await findReplacement(db, organizationId, row.id);
  const locale: Locale = isLocale(lang) ? lang : (row.locale as Locale);
  const content = receiptContent(row, locale, { replaces, replacedBy });
  // The page shows the logo only when it is one of the organization's own images (served by us).
  const logoUrl = ownImagePath(content.logo?.url, organizationId);
  return { row, content, logoUrl };
}

/** The bytes of the receipt's logo for its PDF: one of the organization's own images, never fetched from elsewhere. */
export async function receiptLogo(db: Executor, row: { organizationId: number; organization: unknown }) {
  const url = (row.organization as { logo_url?: string | null }).logo_url ?? null;
  return (await loadImageOfUrl(db, row.organizationId, url))?.data;
}
