import type { Db, Executor } from "../../db/client.js";
import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { changesOf, recordEvent, withEvents } from "../../events/record-event.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { isLocale, LOCALES } from "../../i18n/locales.js";
import { largestImageUrl, prepareImage, saveImage } from "../../images/images.service.js";
import { bicProblem, compactIban, ibanProblem } from "../organizations/bank-account.js";
import {
  findOrganizationById,
  type OrganizationRow,
  updateOrganizationColumns,
} from "../organizations/organizations.repo.js";
import {
  countryProblem,
  italianTaxCodeProblem,
  italianVatNumberProblem,
  normalizeEin,
  normalizeTaxCode,
  normalizeVatNumber,
  webAddressProblem,
} from "./legal-identifiers.js";
import {
  findLegalProfile,
  type LegalProfileColumns,
  type LegalProfileRow,
  saveLegalProfile,
} from "./legal-profile.repo.js";

export const ETS_STATUSES = ["ets", "odv", "aps", "onlus"] as const;
export const RECEIPT_MODES = ["each_payment", "yearly_statement"] as const;
export type ReceiptMode = (typeof RECEIPT_MODES)[number];

/** The organization's legal profile as the API shows it: its own record, with the settings it shares. */
export type LegalProfileWire = {
  legal_name: string | null;
  legal_form: string | null;
  address_line1: string | null;
  address_line2: string | null;
  postal_code: string | null;
  city: string | null;
  province: string | null;
  country: string | null;
  tax_code: string | null;
  vat_number: string | null;
  runts_number: string | null;
  ets_status: string | null;
  charity_number: string | null;
  ein: string | null;
  us_501c3: boolean;
  website: string | null;
  privacy_policy_url: string | null;
  receipt_legal_text: string | null;
  receipt_mode: ReceiptMode;
  /** The organization's language (its pages' and emails' when the reader states none). */
  default_locale: string;
  /** Where donors write (Reply-To of every email). */
  contact_email: string | null;
  account_holder: string | null;
  iban: string | null;
  bic: string | null;
  /** The logo pages, emails and receipts show: an uploaded one (served by us), or an address set in Settings → Email. */
  logo_url: string | null;
  /** What a valid receipt needs and the profile does not have yet (field names). */
  missing: string[];
};

export type LegalProfileInput = Partial<
  Record<Exclude<keyof LegalProfileWire, "us_501c3" | "missing" | "logo_url">, string | null>
> & {
  us_501c3?: boolean | null;
};

/** What a receipt must show for the organization's country (docs/receipts.md). */
export function missingForReceipts(profile: Omit<LegalProfileWire, "missing">): string[] {
  const required: (keyof typeof profile)[] = ["legal_name", "address_line1", "postal_code", "city", "country"];
  if (profile.country === "IT") required.push("tax_code");
  if (profile.country === "US") required.push("ein");
  required.push("privacy_policy_url");
  return required.filter((field) => profile[field] === null || profile[field] === "");
}

export function legalProfileToWire(organization: OrganizationRow, row: LegalProfileRow | undefined): LegalProfileWire {
  const profile = {
    legal_name: row?.legalName ?? null,
    legal_form: row?.legalForm ?? null,
    address_line1: row?.addressLine1 ?? null,
    address_line2: row?.addressLine2 ?? null,
    postal_code: row?.postalCode ?? null,
    city: row?.city ?? null,
    province: row?.province ?? null,
    country: row?.country ?? null,
    tax_code: row?.taxCode ?? null,
    vat_number: row?.vatNumber ?? null,
    runts_number: row?.runtsNumber ?? null,
    ets_status: row?.etsStatus ?? null,
    charity_number: row?.charityNumber ?? null,
    ein: row?.ein ?? null,
    us_501c3: row?.us501c3 ?? false,
    website: row?.website ?? null,
    privacy_policy_url: row?.privacyPolicyUrl ?? null,
    receipt_legal_text: row?.receiptLegalText ?? null,
    receipt_mode: (row?.receiptMode ?? "each_payment") as ReceiptMode,
    default_locale: organization.locale,
    contact_email: organization.email,
    account_holder: organization.iban ? (organization.bankAccountName ?? organization.name) : null,
    iban: organization.iban,
    bic: organization.bic,
    logo_url: organization.logoUrl,
  };
  return { ...profile, missing: missingForReceipts(profile) };
}

export async function readLegalProfile(tx: Executor, organizationId: number): Promise<LegalProfileWire> {
  const organization = await findOrganizationById(tx, organizationId);
  if (!organization) throw new Error("organization of the request vanished");
  return legalProfileToWire(organization, await findLegalProfile(tx, organizationId));
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Text fields: their column and longest length. */
const TEXT_FIELDS = {
  legal_name: ["legalName", 200],
  legal_form: ["legalForm", 100],
  address_line1: ["addressLine1", 200],
  address_line2: ["addressLine2", 200],
  postal_code: ["postalCode", 20],
  city: ["city", 100],
  province: ["province", 100],
  runts_number: ["runtsNumber", 50],
  charity_number: ["charityNumber", 50],
  receipt_legal_text: ["receiptLegalText", 2000],
} as const satisfies Record<string, [keyof LegalProfileColumns, number]>;

const clean = (value: string | null | undefined) =>
  value === undefined ? undefined : value === null || value.trim() === "" ? null : value.trim();

/**
 * Checks a change of the profile: every field given is checked (a blank one clears it), all problems
 * answered at once. Identifiers are checked by the country they belong to: a codice fiscale and a
 * partita IVA by their check digit, an EIN by its form.
 */
function checkInput(input: LegalProfileInput, current: LegalProfileWire, giftNotifications: string) {
  const errors: ValidationIssue[] = [];
  const profile: LegalProfileColumns = {};
  const organization: Parameters<typeof updateOrganizationColumns>[2] = {};
  const fail = (field: string, problem: FieldProblem) => errors.push(fieldIssue(field, problem));
  const tooLong = (max: number) => fieldProblem("too_long", { max });

  for (const [field, [column, max]] of Object.entries(TEXT_FIELDS)) {
    const value = clean(input[field as keyof typeof TEXT_FIELDS]);
    if (value === undefined) continue;
    if (value !== null && value.length > max) fail(field, tooLong(max));
    else (profile as Record<string, unknown>)[column] = value;
  }
  const country = clean(input.country)?.toUpperCase();
  if (country !== undefined) {
    const problem = country === null ? null : countryProblem(country);
    if (problem) fail("country", problem);
    else profile.country = country;
  }
  const inCountry = country === undefined ? current.country : country;
  const taxCode = clean(input.tax_code);
  if (taxCode !== undefined) {
    const value = taxCode === null ? null : normalizeTaxCode(taxCode);
    const problem =
      value === null
        ? null
        : inCountry === "IT"
          ? italianTaxCodeProblem(value)
          : value.length > 30
            ? tooLong(30)
            : null;
    if (problem) fail("tax_code", problem);
    else profile.taxCode = value;
  }
  const vat = clean(input.vat_number);
  if (vat !== undefined) {
    const value =
      vat === null ? null : inCountry === "IT" ? normalizeVatNumber(vat) : vat.replace(/\s+/g, "").toUpperCase();
    const problem =
      value === null
        ? null
        : inCountry === "IT"
          ? italianVatNumberProblem(value)
          : value.length > 30
            ? tooLong(30)
            : null;
    if (problem) fail("vat_number", problem);
    else profile.vatNumber = value;
  }
  const ets = clean(input.ets_status);
  if (ets !== undefined) {
    if (ets !== null && !(ETS_STATUSES as readonly string[]).includes(ets)) {
      fail("ets_status", fieldProblem("one_of_or_empty", { choices: ETS_STATUSES.join(", ") }));
    } else profile.etsStatus = ets;
  }
  const ein = clean(input.ein);
  if (ein !== undefined) {
    const value = ein === null ? null : normalizeEin(ein);
    if (ein !== null && value === null) fail("ein", fieldProblem("ein"));
    else profile.ein = value;
  }
  if (input.us_501c3 !== undefined) profile.us501c3 = input.us_501c3 ?? false;
  for (const [field, column] of [
    ["website", "website"],
    ["privacy_policy_url", "privacyPolicyUrl"],
  ] as const) {
    const value = clean(input[field]);
    if (value === undefined) continue;
    const problem = value === null ? null : value.length > 500 ? tooLong(500) : webAddressProblem(value);
    if (problem) fail(field, problem);
    else profile[column] = value;
  }
  const mode = clean(input.receipt_mode);
  if (mode !== undefined) {
    if (mode === null || !(RECEIPT_MODES as readonly string[]).includes(mode)) {
      fail("receipt_mode", fieldProblem("one_of", { choices: RECEIPT_MODES.join(", ") }));
    } else profile.receiptMode = mode;
  }
  const locale = clean(input.default_locale);
  if (locale !== undefined) {
    if (!isLocale(locale)) fail("default_locale", fieldProblem("one_of", { choices: LOCALES.join(", ") }));
    else organization.locale = locale;
  }
  const email = clean(input.contact_email);
  if (email !== undefined) {
    if (email !== null && (!EMAIL.test(email) || email.length > 254)) {
      fail("contact_email", fieldProblem("email"));
    } else if (email === null && giftNotifications !== "off") {
      fail("contact_email", fieldProblem("contact_email_in_use"));
    } else organization.email = email;
  }
  if (input.account_holder !== undefined || input.iban !== undefined || input.bic !== undefined) {
    const holder = clean(input.account_holder === undefined ? current.account_holder : input.account_holder) ?? null;
    const rawIban = clean(input.iban === undefined ? current.iban : input.iban) ?? null;
    const bic =
      (clean(input.bic === undefined ? current.bic : input.bic) ?? null)?.replace(/\s+/g, "").toUpperCase() ?? null;
    const iban = rawIban === null ? null : compactIban(rawIban);
    const ibanError = iban === null ? null : ibanProblem(iban);
    const bicError = bic === null ? null : bicProblem(bic);
    if (iban === null && (holder !== null || bic !== null) && input.iban !== undefined) {
      fail("iban", fieldProblem("iban_needed"));
    } else if (ibanError) fail("iban", ibanError);
    else if (bicError) fail("bic", bicError);
    else if (holder !== null && holder.length > 70) fail("account_holder", fieldProblem("sepa_name_too_long"));
    else
      Object.assign(organization, {
        bankAccountName: iban === null ? null : holder,
        iban,
        bic: iban === null ? null : bic,
      });
  }
  if (errors.length > 0) {
    throw new AppError(
      "invalid_request",
      `The legal profile was not saved: ${errors.map((error) => `${error.field} ${error.message}`).join("; ")}`,
      { errors },
    );
  }
  return { profile, organization };
}

/**
 * Saves a change of the organization's legal profile, recorded with what changed as
 * `legal_profile.updated`, in one transaction. Receipts already issued keep the profile they were
 * issued with.
 */
export async function updateLegalProfile(
  db: Db,
  organizationId: number,
  input: LegalProfileInput,
  origin: EventOrigin | undefined,
): Promise<LegalProfileWire> {
  return withEvents(db, async (tx) => {
    const current = await findOrganizationById(tx, organizationId);
    if (!current) throw new Error("organization of the request vanished");
    const before = legalProfileToWire(current, await findLegalProfile(tx, organizationId));
    const { profile, organization } = checkInput(input, before, current.giftNotifications);
    if (Object.keys(organization).length > 0) await updateOrganizationColumns(tx, organizationId, organization);
    if (Object.keys(profile).length > 0) await saveLegalProfile(tx, organizationId, profile);
    const after = await readLegalProfile(tx, organizationId);
    if (changesOf(before, after)) {
      await recordEvent(tx, { organizationId, origin }, "legal_profile.updated", organizationId, after, { before });
    }
    return after;
  });
}

/**
 * Makes an uploaded image the organization's logo: checked and resized before the transaction, then
 * stored and named by the organization's logo address, audited as `legal_profile.updated`. The
 * previous image stays stored (receipts issued with it keep showing it).
 */
export async function uploadLogo(
  db: Db,
  organizationId: number,
  upload: { bytes: Buffer; contentType: string },
  baseUrl: string,
  origin: EventOrigin | undefined,
): Promise<LegalProfileWire> {
  const prepared = await prepareImage(organizationId, "logo", upload);
  return withEvents(db, async (tx) => {
    const before = await readLegalProfile(tx, organizationId);
    await saveImage(tx, prepared);
    await updateOrganizationColumns(tx, organizationId, { logoUrl: largestImageUrl(prepared, baseUrl) });
    const after = await readLegalProfile(tx, organizationId);
    await recordEvent(tx, { organizationId, origin }, "legal_profile.updated", organizationId, after, { before });
    return after;
  });
}

/** Takes the logo off pages, emails and future receipts (audited); the image itself stays for the receipts that show it. */
export async function removeLogo(
  db: Db,
  organizationId: number,
  origin: EventOrigin | undefined,
): Promise<LegalProfileWire> {
  return withEvents(db, async (tx) => {
    const before = await readLegalProfile(tx, organizationId);
    if (before.logo_url === null) return before;
    await updateOrganizationColumns(tx, organizationId, { logoUrl: null });
    const after = await readLegalProfile(tx, organizationId);
    await recordEvent(tx, { organizationId, origin }, "legal_profile.updated", organizationId, after, { before });
    return after;
  });
}
