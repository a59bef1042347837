import { type FieldProblem, fieldProblem } from "../../i18n/field-problems.js";

/**
 * IBAN and BIC checks for the bank transfer instructions an organization shows its donors.
 * Lengths per country from the SWIFT IBAN registry (release 2024); the checksum is ISO 13616 mod-97.
 */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/;

/** The compact form people type with spaces or dashes ("IT60 X054 …" → "IT60X054…"). */
export const compactIban = (value: string) => value.replace(/[\s-]+/g, "").toUpperCase();

/** Groups of four, as printed on instructions and receipts. */
export const printableIban = (iban: string) => iban.replace(/(.{4})(?=.)/g, "$1 ");

function mod97(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const digits = /[0-9]/.test(char) ? char : String(char.charCodeAt(0) - 55);
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder;
}

/** Why a compact IBAN is not valid, or null when it is. */
export function ibanProblem(iban: string): FieldProblem | null {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(iban)) {
    return fieldProblem("iban_form");
  }
  const country = iban.slice(0, 2);
  const length = IBAN_LENGTHS[country];
  if (length === undefined) return fieldProblem("iban_country", { country });
  if (iban.length !== length) return fieldProblem("iban_length", { country, length, actual: iban.length });
  if (mod97(iban) !== 1) return fieldProblem("iban_checksum");
  return null;
}

/** Why a BIC is not valid (8 or 11 characters: bank, country, location, optional branch), or null. */
export function bicProblem(bic: string): FieldProblem | null {
  return BIC.test(bic) ? null : fieldProblem("bic_form");
}
