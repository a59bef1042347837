import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import type { ErrorCode } from "../../errors/error-codes.js";
import { coverFee } from "../../payments/cover-fee.js";
import { fitsCurrency, precisionRule, toCents } from "../../payments/money.js";
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

const rule = (code: ErrorCode, field: string, message: string) =>
  new AppError(code, message, { errors: [{ field, message }] satisfies ValidationIssue[] });

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
      throw rule("frequency_not_offered", "frequency", "This campaign accepts recurring gifts only");
    }
    if (recurring && !campaign.hasSubscription) {
      throw rule("frequency_not_offered", "frequency", "This campaign accepts one-off gifts only");
    }
  }
  if (amount === null || amount === undefined) return;
  if (!fitsCurrency(amount, currency)) {
    throw rule("invalid_amount", "amount", `The amount must ${precisionRule(currency)}`);
  }
  const min = recurring ? campaign.minSubscriptionAmount : campaign.minAmount;
  const max = recurring ? campaign.maxSubscriptionAmount : campaign.maxAmount;
  if (min !== null && toCents(amount) < toCents(min)) {
    throw rule("amount_out_of_range", "amount", `The smallest ${recurring ? "recurring " : ""}gift is ${min}`);
  }
  if (max !== null && toCents(amount) > toCents(max)) {
    throw rule("amount_out_of_range", "amount", `The largest ${recurring ? "recurring " : ""}gift is ${max}`);
  }
  const custom = recurring ? campaign.allowCustomSubscriptionAmount : campaign.allowCustomAmount;
  if (!custom) {
    const fallback = recurring ? campaign.defaultSubscriptionAmount : campaign.defaultAmount;
    const offered = [...asksOf(campaign, recurring), ...(fallback === null ? [] : [fallback])].map(toCents);
    if (!offered.includes(toCents(amount))) {
      throw rule(
        "custom_amount_not_allowed",
        "amount",
        `This campaign accepts only its suggested amounts${offered.length ? `: ${offered.map((c) => c / 100).join(", ")}` : ""}`,
      );
    }
  }
}

/** The fee a donor asked to cover (0 when they did not), by the organization's formula; never the client's figure. */
export function coveredFeeOf(campaign: CampaignRow, organization: OrganizationRow, amount: number, cover?: boolean) {
  if (!cover) return 0;
  if (!campaign.allowCoverFee) {
    throw rule("cover_fee_not_offered", "cover_fee", "This campaign does not offer to cover the processing fee");
  }
  return coverFee(amount, feeFormulaOf(organization), organization.currency);
}

/** The supporter fields must be on the campaign's form, and its required ones filled in. */
export function checkSupporterFields(campaign: CampaignRow, supporter: Record<string, string | undefined>) {
  const shown = shownFieldsOf(campaign);
  for (const [field, value] of Object.entries(supporter)) {
    if (value !== undefined && !shown.includes(field) && (SUPPORTER_FORM_FIELDS as readonly string[]).includes(field)) {
      throw rule("field_not_on_form", `supporter.${field}`, `"${field}" is not asked by this campaign's form`);
    }
  }
  for (const field of requiredFieldsOf(campaign)) {
    const value = supporter[field];
    if (value === undefined || value.trim() === "") {
      throw rule("missing_required_field", `supporter.${field}`, `"${field}" is required by this campaign`);
    }
  }
}

export function costExampleQuantity(campaign: CampaignRow, amount: number | null | undefined): number {
  if (amount === null || amount === undefined || !campaign.costExampleAmount) return 0;
  return Math.floor(toCents(amount) / toCents(campaign.costExampleAmount));
}
