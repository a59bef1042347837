import {
  chargeOf,
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  giftPageUrl,
  loadDonationContext,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

const BY = ["donor", "admin", "failed_payments"] as const;

export interface RecurringCancelledModel extends BaseModel {
  donor_name: string | null;
  /** Who stopped the gift: the donor, the organization, or the last failed renewal. */
  by: (typeof BY)[number];
  /** The reason the donor or the organization gave, if any. */
  reason: string | null;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  gift_url: string;
}

/** A recurring gift stopped (by the donor, the organization, or after failed renewals): no more charges. */
export const message: EmailMessage<RecurringCancelledModel> = {
  kind: "recurring_cancelled",
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    const data = row.data as { by?: unknown; reason?: unknown };
    const by = BY.find((value) => value === data.by) ?? "admin";
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      by,
      reason: typeof data.reason === "string" && data.reason.trim() ? data.reason.trim() : null,
      amount: chargeOf(donation),
      currency: donation.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      gift_url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
    };
  },
  sample(base, deps) {
    return {
      ...base,
      donor_name: "Ada",
      by: "donor",
      reason: "I give through my employer now",
      amount: 10,
      currency: "EUR",
      frequency_key: "frequency.monthly",
      campaign_title: "School kits for every child",
      gift_url: `${deps.baseUrl}/donor/${base.organization.slug}/gifts/1234`,
    };
  },
};
