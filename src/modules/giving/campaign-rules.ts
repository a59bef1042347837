import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import type { ErrorCode } from "../../errors/error-codes.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { coverFee } from "../../payments/cover-fee.js";
import { amountDecimals, fitsCurrency, toCents } from "../../payments/money.js";
import type { CampaignRow } from "../campaigns/campaigns.repo.js";
import { SUPPORTER_FORM_FIELDS } from "../campaigns/campaigns.schemas.js";
import type { OrganizationRow } from "../organizations/organizations.repo.js";
import { feeFormulaOf } from "../organizations/organizations.service.js";

export type Frequency = 0 | 1 | 12;

/** Fields a form shows when the campaign does not say, and the one every gift needs. */
export const DEFAULT_SHOWN_FIELDS = ["first_name", "last_name", "email"];
export const ALWAYS_REQUIRED = ["email"];

export function shownFieldsOf(campaign: CampaignRow): string[] {
  const shown = campaign.shownFields && campaign.shownFields.length > 0 ? campaign.shownFields : DEFAULT_SHOWN_FIELDS;
  return shown.includes("email") ? shown : [...shown, "email"];
}

export function requiredFieldsOf(campaign: CampaignRow): string[] {
  return [...new Set([...(campaign.requiredFields ?? []), ...ALWAYS_REQUIRED])];
}

const numbers = (values: string[] | null) => (values ?? []).map(Number);

export function asksOf(campaign: CampaignRow, recurring: boolean): number[] {
  return recurring ? numbers(campaign.asksSubscription) : numbers(campaign.asks);
}

/** A refused gift: its English words are both the error's message and its one field issue's. */
const rule = (code: ErrorCode, field: string, problem: FieldProblem) => {
  const issue = fieldIssue(field, problem);
  return new AppError(code, issue.message, { errors: [issue] satisfies ValidationIssue[] });
};

/** Every rule of the campaign about what may be given, enforced on the server. */
export function checkGift(
  campaign: CampaignRow,
  currency: string,
  amount: number | null | undefined,
  frequency: Frequency | undefined,
) {
  const recurring = frequency !== undefined && frequency !== 0;
  if (frequency !== undefined) {
    if (!recurring && !campaign.hasOneOff) {
      throw rule("frequency_not_offered", "frequency", fieldProblem("recurring_only"));
    }
    if (recurring && !campaign.hasSubscription) {
      throw rule("frequency_not_offered", "frequency", fieldProblem("one_off_only"));
    }
  }
  if (amount === null || amount === undefined) return;
  if (!fitsCurrency(amount, currency)) {
    const decimals = amountDecimals(currency);
    throw rule(
      "invalid_amount",
      "amount",
      decimals === 0
        ? fieldProblem("gift_whole_units", { currency: currency.toUpperCase() })
        : fieldProblem("gift_max_decimals", { decimals }),
    );
  }
  const min = recurring ? campaign.minSubscriptionAmount : campaign.minAmount;
  const max = recurring ? campaign.maxSubscriptionAmount : campaign.maxAmount;
  if (min !== null && toCents(amount) < toCents(min)) {
    throw rule(
      "amount_out_of_range",
      "amount",
      recurring ? fieldProblem("recurring_gift_min", { min }) : fieldProblem("gift_min", { min }),
    );
  }
  if (max !== null && toCents(amount) > toCents(max)) {
    throw rule(
      "amount_out_of_range",
      "amount",
      recurring ? fieldProblem("recurring_gift_max", { max }) : fieldProblem("gift_max", { max }),
    );
  }
  const custom = recurring ? campaign.allowCustomSubscriptionAmount : campaign.allowCustomAmount;
  if (!custom) {
    const fallback = recurring ? campaign.defaultSubscriptionAmount : campaign.defaultAmount;
    const offered = [...asksOf(campaign, recurring), ...(fallback === null ? [] : [fallback])].map(toCents);
    if (!offered.includes(toCents(amount))) {
      throw rule(
        "custom_amount_not_allowed",
        "amount",
        offered.length
          ? fieldProblem("suggested_amounts_only_listed", { amounts: offered.map((c) => c / 100).join(", ") })
          : fieldProblem("suggested_amounts_only"),
      );
    }
  }
}

/** The fee a donor asked to cover (0 when they did not), by the organization's formula; never the client's figure. */
export function coveredFeeOf(campaign: CampaignRow, organization: OrganizationRow, amount: number, cover?: boolean) {
  if (!cover) return 0;
  if (!campaign.allowCoverFee) {
    throw rule("cover_fee_not_offered", "cover_fee", fieldProblem("cover_fee_not_offered"));
  }
  return coverFee(amount, feeFormulaOf(organization), organization.currency);
}

/** The supporter fields must be on the campaign's form, and its required ones filled in. */
export function checkSupporterFields(campaign: CampaignRow, supporter: Record<string, string | undefined>) {
  const shown = shownFieldsOf(campaign);
  for (const [field, value] of Object.entries(supporter)) {
    if (value !== undefined && !shown.includes(field) && (SUPPORTER_FORM_FIELDS as readonly string[]).includes(field)) {
      throw rule("field_not_on_form", `supporter.${field}`, fieldProblem("not_on_form", { field }));
    }
  }
  for (const field of requiredFieldsOf(campaign)) {
    const value = supporter[field];
    if (value === undefined || value.trim() === "") {
      throw rule("missing_required_field", `supporter.${field}`, fieldProblem("required_by_campaign", { field }));
    }
  }
}

export function costExampleQuantity(campaign: CampaignRow, amount: number | null | undefined): number {
  if (amount === null || amount === undefined || !campaign.costExampleAmount) return 0;
  return Math.floor(toCents(amount) / toCents(campaign.costExampleAmount));
}
