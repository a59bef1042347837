import argon2 from "argon2";
import type { Db, Executor } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../i18n/field-problems.js";
import { isLocale, LOCALES } from "../i18n/locales.js";
import { findUserLocales, findUserRowByLowerEmail, setUserLocale } from "./users.repo.js";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 10;

export const invalidField = (field: string, problem: FieldProblem) => {
  const issue = fieldIssue(field, problem);
  return new AppError("invalid_request", `Invalid ${field}: ${issue.message}`, { errors: [issue] });
};

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
}

export function verifyPassword(hash: string, password: string): Promise<boolean> {
  return argon2.verify(hash, password).catch(() => false);
}

/**
 * The one form of an email address, for storage, lookup and throttling keys alike: trimmed,
 * Unicode NFC, lower-cased the same way in every process (String#toLowerCase, locale-free).
 * Two spellings are one account exactly when this function maps them to the same string.
 */
export function normalizeEmail(email: string): string {
  return email.trim().normalize("NFC").toLowerCase().normalize("NFC");
}

/**
 * The account of an email address. The unique index on lower(email) finds the candidate; the
 * decision is normalizeEmail's, never PostgreSQL's lower(), whose case mapping depends on the
 * server's locale (it maps "İ" to "i", which JavaScript does not).
 */
export async function findUserByEmail(db: Executor, email: string) {
  const normalized = normalizeEmail(email);
  const user = await findUserRowByLowerEmail(db, normalized);
  return user && normalizeEmail(user.email) === normalized ? user : undefined;
}

/** The normalised form of an address a new account is created with; 400 when it is not an email address. */
export function requireEmailAddress(raw: string): string {
  const email = normalizeEmail(raw);
  if (!EMAIL.test(email) || email.length > 320) throw invalidField("email", fieldProblem("email_address"));
  return email;
}

export interface UserPreferencesWire {
  /** The language the user chose for the panel and the sign-in pages; null: none chosen (negotiated). */
  locale: string | null;
  /** The organization's default language: the panel's last word before English. */
  organization_locale: string;
}

/** The signed-in user's own settings of the panel, with the organization's default language. */
export async function getUserPreferences(db: Db, userId: number, organizationId: number): Promise<UserPreferencesWire> {
  const found = await findUserLocales(db, userId, organizationId);
  if (!found) throw new AppError("user_not_found", "The signed-in user no longer exists");
  return { locale: found.locale, organization_locale: found.organizationLocale };
}

/**
 * Saves the user's choice of language (`en`, `it`; null forgets it, and the browser's then the
 * organization's applies again); a language the product does not speak is a 400 invalid_request.
 * An absent `locale` changes nothing.
 */
export async function updateUserPreferences(
  db: Db,
  userId: number,
  organizationId: number,
  input: { locale?: string | null },
): Promise<UserPreferencesWire> {
  if (input.locale !== undefined) {
    if (input.locale !== null && !isLocale(input.locale)) {
      throw invalidField("locale", fieldProblem("one_of_or_null", { choices: LOCALES.join(", ") }));
    }
    await setUserLocale(db, userId, input.locale);
  }
  return getUserPreferences(db, userId, organizationId);
}
