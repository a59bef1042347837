import {
  chargeOf,
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  giftPageUrl,
  loadDonationContext,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

export interface GiftActivationModel extends BaseModel {
  donor_name: string | null;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  setup_url: string;
}

/**
 * A recurring gift imported from the platform the organization left, which came without a card
 * Donata can charge: the donor is asked to set one up to carry on giving (docs/import.md).
 */
export const message: EmailMessage<GiftActivationModel> = {
  kind: "gift_activation",
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    // Set up already, or stopped, since the request was enqueued: nothing to ask.
    if (donation.activation !== "card_requested" || donation.state !== "pending") return null;
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      amount: chargeOf(donation),
      currency: donation.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      setup_url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
    };
  },
  sample(base, deps) {
    return {
      ...base,
      donor_name: "Ada",
      amount: 10,
      currency: "EUR",
      frequency_key: "frequency.monthly",
      campaign_title: "School kits for every child",
      setup_url: `${deps.baseUrl}/donor/${base.organization.slug}/gifts/1234`,
    };
  },
};
