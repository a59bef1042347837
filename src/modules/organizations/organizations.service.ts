import type { Actor } from "../../auth/actor.js";
import type { Db, Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { changesOf, recordEvent, withEvents } from "../../events/record-event.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { hasSecondFactor } from "../../identity/second-factor.service.js";
import type { FeeFormula } from "../../payments/cover-fee.js";
import { amountDecimals, fitsCurrency, hasCentPrecision, roundToCurrency } from "../../payments/money.js";
import { bicProblem, compactIban, ibanProblem } from "./bank-account.js";
import { checkEmbedOrigins } from "./embed-origins.js";
import {
  countOrganizations,
  findOrganizationById,
  findOrganizationBySlug,
  insertOrganization,
  type OrganizationRow,
  updateOrganizationColumns,
} from "./organizations.repo.js";

export { countOrganizations, findOrganizationBySlug, type OrganizationRow };

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const invalid = (field: string, problem: FieldProblem) => {
  const issue = fieldIssue(field, problem);
  return new AppError("invalid_request", `Invalid ${field}: ${issue.message}`, { errors: [issue] });
};

export interface NewOrganization {
  slug: string;
  name: string;
  currency?: string;
  timeZone?: string;
}

export function organizationToWire(row: OrganizationRow) {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    currency: row.currency,
    time_zone: row.timeZone,
    create_date: row.createDate.toISOString(),
  };
}

/** Where donors send a bank transfer; null until the organization enters an IBAN. */
export function bankTransferToWire(row: OrganizationRow) {
  if (!row.iban) return null;
  return { account_name: row.bankAccountName ?? row.name, iban: row.iban, bic: row.bic };
}

export interface BankAccountInput {
  account_name?: string | null;
  iban?: string | null;
  bic?: string | null;
}

const blankToNull = (value: string | null | undefined) => (value?.trim() ? value.trim() : null);

/** Replaces the bank transfer details; all blank clears them (the page then asks donors to get in touch). */
export async function updateBankAccount(db: Db, organizationId: number, input: BankAccountInput, origin?: EventOrigin) {
  const accountName = blankToNull(input.account_name);
  const rawIban = blankToNull(input.iban);
  const bic = blankToNull(input.bic)?.replace(/\s+/g, "").toUpperCase() ?? null;
  const iban = rawIban === null ? null : compactIban(rawIban);
  if (iban === null && (accountName !== null || bic !== null)) {
    throw invalid("iban", fieldProblem("iban_needed"));
  }
  const problem = iban === null ? null : ibanProblem(iban);
  if (problem) throw invalid("iban", problem);
  const bicError = bic === null ? null : bicProblem(bic);
  if (bicError) throw invalid("bic", bicError);
  if (accountName !== null && accountName.length > 70)
    throw invalid("account_name", fieldProblem("sepa_name_too_long"));
  return changeOrganization(db, organizationId, origin, { bankAccountName: accountName, iban, bic });
}

/** One change of the organization's settings, recorded as `organization.updated` with what changed. */
function changeOrganization(
  db: Db,
  organizationId: number,
  origin: EventOrigin | undefined,
  columns: Parameters<typeof updateOrganizationColumns>[2],
) {
  return withEvents(db, async (tx) => {
    const previous = await findOrganizationById(tx, organizationId);
    const row = await updateOrganizationColumns(tx, organizationId, columns);
    if (!previous || !row) throw new Error("organization of the request vanished");
    const before = organizationWithBankTransfer(previous);
    const after = organizationWithBankTransfer(row);
    if (changesOf(before, after)) {
      await recordEvent(tx, { organizationId, origin }, "organization.updated", organizationId, after, { before });
    }
    return after;
  });
}

/** The organization's fee formula, its fixed part in amounts of its currency (the 0.30 default is ¥0 for a yen organization). */
export const feeFormulaOf = (row: OrganizationRow): FeeFormula => ({
  percent: row.coverFeePercent,
  fixed: roundToCurrency(row.coverFeeFixed, row.currency),
});

const organizationWithBankTransfer = (row: OrganizationRow) => ({
  ...organizationToWire(row),
  test_mode: row.testMode,
  bank_transfer: bankTransferToWire(row),
  cover_fee: feeFormulaOf(row),
  embed_origins: row.embedOrigins,
  require_second_factor: row.requireSecondFactor,
});

/** The sites allowed to frame the organization's donation pages (docs/embed.md); the list replaces the old one. */
export function updateEmbedOrigins(db: Db, organizationId: number, origins: readonly string[], origin?: EventOrigin) {
  return changeOrganization(db, organizationId, origin, { embedOrigins: checkEmbedOrigins(origins) });
}

/**
 * The organization's rule that its owners and admins sign in with a second factor (docs/accounts.md):
 * each one without a factor is asked to set one up at their next sign-in. Owners only; an owner turns it
 * on only once they have a second factor themselves (409 second_factor_required), so the rule never
 * locks out the person who sets it.
 */
export async function updateSecondFactorRule(
  db: Db,
  actor: Actor,
  organizationId: number,
  required: boolean,
  origin?: EventOrigin,
) {
  if (actor.kind !== "member" || actor.role !== "owner") {
    throw new AppError("insufficient_role", "Only owners can change the two-step verification rule");
  }
  if (required && !(await hasSecondFactor(db, actor.userId))) {
    throw new AppError("second_factor_required", "Set up two-step verification for yourself first");
  }
  return changeOrganization(db, organizationId, origin, { requireSecondFactor: required });
}

/** The allowed origins of an organization by its slug (none for an unknown one): the donation page's frame-ancestors. */
export async function embedOriginsBySlug(db: Db, slug: string): Promise<string[]> {
  return (await findOrganizationBySlug(db, slug))?.embedOrigins ?? [];
}

/** The fee formula donors see when a campaign lets them cover the fee: percent (2 decimals, at most 20) + fixed. */
export async function updateFeeFormula(db: Db, organizationId: number, formula: FeeFormula, origin?: EventOrigin) {
  if (!hasCentPrecision(formula.percent) || formula.percent < 0 || formula.percent > 20) {
    throw invalid("percent", fieldProblem("fee_percent_range"));
  }
  const currency = (await findOrganizationById(db, organizationId))?.currency ?? "EUR";
  if (!fitsCurrency(formula.fixed, currency) || formula.fixed < 0 || formula.fixed > 100) {
    throw invalid(
      "fixed",
      amountDecimals(currency) === 2
        ? fieldProblem("fee_fixed_range")
        : fieldProblem("fee_fixed_range_whole", { currency }),
    );
  }
  return changeOrganization(db, organizationId, origin, {
    coverFeePercent: formula.percent,
    coverFeeFixed: formula.fixed,
  });
}

export async function createOrganization(db: Executor, input: NewOrganization) {
  if (!SLUG.test(input.slug)) {
    throw invalid("slug", fieldProblem("slug_form"));
  }
  if (!input.name.trim()) throw invalid("name", fieldProblem("required"));
  const currency = (input.currency ?? "EUR").toUpperCase();
  if (!CURRENCIES.has(currency))
    throw invalid("currency", fieldProblem("currency_unknown", { currency: input.currency ?? currency }));
  const timeZone = input.timeZone ?? "UTC";
  if (!isTimeZone(timeZone)) throw invalid("time_zone", fieldProblem("time_zone_unknown", { zone: timeZone }));
  const row = await insertOrganization(db, { slug: input.slug, name: input.name.trim(), currency, timeZone });
  if (!row) throw new AppError("slug_taken", `An organization with slug "${input.slug}" already exists`);
  return row;
}

export async function requireOrganization(tx: Executor, slug: string) {
  const row = await findOrganizationBySlug(tx, slug);
  if (!row) throw new AppError("organization_not_found", `No organization with slug "${slug}"`);
  return row;
}

/** The organization a request acts for (its scope), as the wire shows it. */
export async function getOrganization(db: Db, organizationId: number) {
  const row = await findOrganizationById(db, organizationId);
  if (!row) throw new Error("organization of the request vanished");
  return organizationWithBankTransfer(row);
}

/**
 * Whether saving `iban` would change the organization's payout account (compared compact): such a change
 * asks a member to confirm it is them (src/auth/step-up.ts). Absent (undefined): no change.
 */
export async function ibanChanges(db: Db, organizationId: number, iban: string | null | undefined): Promise<boolean> {
  if (iban === undefined) return false;
  const organization = await findOrganizationById(db, organizationId);
  const next = iban === null || iban.trim() === "" ? null : compactIban(iban);
  return (organization?.iban ?? null) !== next;
}

/** Whether the organization requires a second factor of its owners and admins now (turning it off asks a step-up). */
export async function secondFactorRuleOn(db: Db, organizationId: number): Promise<boolean> {
  return (await findOrganizationById(db, organizationId))?.requireSecondFactor ?? false;
}
