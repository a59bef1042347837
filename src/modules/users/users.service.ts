import argon2 from "argon2";
import type { Role } from "../../auth/actor.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { isLocale, LOCALES } from "../../i18n/locales.js";
import { listMemberRows, listMembershipsOfUser, upsertMembership } from "../members/members.repo.js";
import { requireOrganization } from "../organizations/organizations.service.js";
import { findUserLocales, findUserProfile, findUserRowByLowerEmail, insertUser, setUserLocale } from "./users.repo.js";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 10;

const invalid = (field: string, problem: FieldProblem) => {
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

export interface NewUser {
  email: string;
  password?: string;
  organization?: string;
  role?: Role;
}

/**
 * Creates the user, or finds the existing one by email, and adds the membership if asked,
 * so one person can belong to several organizations.
 */
/** The normalised form of an address a new account is created with; 400 when it is not an email address. */
export function requireEmailAddress(raw: string): string {
  const email = normalizeEmail(raw);
  if (!EMAIL.test(email) || email.length > 320) throw invalid("email", fieldProblem("email_address"));
  return email;
}

export async function createUser(db: Db, input: NewUser, origin?: EventOrigin) {
  const email = requireEmailAddress(input.email);
  if (input.role && !input.organization) throw invalid("role", fieldProblem("role_needs_organization"));
  return withEvents(db, async (tx) => {
    const organization = input.organization ? await requireOrganization(tx, input.organization) : undefined;
    let user = await findUserByEmail(tx, email);
    const created = !user;
    if (!user) {
      if (!input.password || input.password.length < MIN_PASSWORD_LENGTH) {
        throw invalid("password", fieldProblem("too_short", { min: MIN_PASSWORD_LENGTH }));
      }
      user = await insertUser(tx, { email, passwordHash: await hashPassword(input.password) });
    }
    let role: Role | undefined;
    if (organization) {
      const [before] = await listMemberRows(tx, organization.id, user.id);
      // An existing member keeps their role unless one is given: adding someone never demotes them.
      role = (await upsertMembership(tx, organization.id, user.id, input.role)) as Role | undefined;
      const member = { user_id: user.id, email: user.email, role };
      const scope = { organizationId: organization.id, origin };
      if (!before) await recordEvent(tx, scope, "membership.created", user.id, member);
      else if (before.role !== role) {
        await recordEvent(tx, scope, "membership.updated", user.id, member, {
          before: { ...member, role: before.role },
        });
      }
    }
    return {
      id: user.id,
      email: user.email,
      created,
      organization: organization?.slug ?? null,
      role: role ?? null,
    };
  });
}

/** A user and the organizations they belong to (by name), as the admin panel's session shows them. */
export async function userWithOrganizations(db: Db, userId: number) {
  const user = await findUserProfile(db, userId);
  if (!user) return undefined;
  const rows = await listMembershipsOfUser(db, userId);
  return {
    user,
    organizations: rows.map((row) => ({
      slug: row.slug,
      name: row.name,
      role: row.role,
      currency: row.currency,
      time_zone: row.timeZone,
    })),
  };
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
      throw invalid("locale", fieldProblem("one_of_or_null", { choices: LOCALES.join(", ") }));
    }
    await setUserLocale(db, userId, input.locale);
  }
  return getUserPreferences(db, userId, organizationId);
}
