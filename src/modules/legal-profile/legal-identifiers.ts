import { type FieldProblem, fieldProblem } from "../../i18n/field-problems.js";

/**
 * Checks of the identifiers a receipt prints (docs/receipts.md): Italian codice fiscale (an
 * entity's 11 digits or a person's 16 characters) and partita IVA, the US EIN, ISO country codes
 * and web addresses. Each returns null when the value is good, else what is wrong (for an error's
 * message), and the `normalize*` ones the form stored.
 */

/** The check digit of an Italian 11-digit number (partita IVA, an entity's codice fiscale): Luhn. */
function italianNumberValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    let digit = Number(digits[i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10 === Number(digits[10]);
}

// The check character of a person's codice fiscale (DM 23/12/1976): odd and even positions weigh differently.
const ODD: Record<string, number> = {};
const ODD_VALUES = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
for (let i = 0; i < 26; i++) {
  ODD[String.fromCharCode(65 + i)] = ODD_VALUES[i] as number;
  if (i < 10) ODD[String(i)] = ODD_VALUES[i] as number;
}
const evenValue = (char: string) => (/[0-9]/.test(char) ? Number(char) : char.charCodeAt(0) - 65);

function personalCodeValid(code: string): boolean {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const char = code[i] as string;
    sum += i % 2 === 0 ? (ODD[char] ?? 0) : evenValue(char);
  }
  return String.fromCharCode(65 + (sum % 26)) === code[15];
}

export const normalizeTaxCode = (value: string) => value.replace(/\s+/g, "").toUpperCase();

/** An Italian codice fiscale: 11 digits (an entity's) or 16 characters (a person's), with its check. */
export function italianTaxCodeProblem(value: string): FieldProblem | null {
  if (/^[0-9]{11}$/.test(value)) return italianNumberValid(value) ? null : fieldProblem("check_digit");
  if (/^[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/.test(value)) {
    return personalCodeValid(value) ? null : fieldProblem("check_character");
  }
  return fieldProblem("tax_code_it");
}

/** An Italian partita IVA: 11 digits (an `IT` prefix is dropped), with its check digit. */
export const normalizeVatNumber = (value: string) =>
  value
    .replace(/[\s.-]+/g, "")
    .toUpperCase()
    .replace(/^IT/, "");

export function italianVatNumberProblem(value: string): FieldProblem | null {
  if (!/^[0-9]{11}$/.test(value)) return fieldProblem("vat_number_it");
  return italianNumberValid(value) ? null : fieldProblem("check_digit");
}

/** A US Employer Identification Number: nine digits, stored as 12-3456789. */
export function normalizeEin(value: string): string | null {
  const digits = value.replace(/[\s-]+/g, "");
  return /^[0-9]{9}$/.test(digits) ? `${digits.slice(0, 2)}-${digits.slice(2)}` : null;
}

const REGIONS = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/** An ISO 3166-1 alpha-2 country code that names a country. */
export function countryProblem(value: string): FieldProblem | null {
  if (!/^[A-Z]{2}$/.test(value)) return fieldProblem("country_code");
  return REGIONS.of(value) ? null : fieldProblem("country_unknown");
}

/** A web address people open (the privacy notice, the website): http or https, no credentials in it. */
export function webAddressProblem(value: string): FieldProblem | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fieldProblem("web_address");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fieldProblem("web_address_scheme");
  if (url.username || url.password) return fieldProblem("web_address_credentials");
  return null;
}
