import {
  chargeOf,
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  giftPageUrl,
  loadDonationContext,
  sampleDate,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

export interface RecurringWelcomeModel extends BaseModel {
  donor_name: string | null;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  /** Null once the gift stopped before the message went out. */
  next_charge_date: string | null;
  /** The gift's page in the donor portal: change the amount, the card, pause or stop. */
  gift_url: string;
}

/** The thank-you for a new monthly or yearly gift, with what happens next and where to manage it. */
export const message: EmailMessage<RecurringWelcomeModel> = {
  kind: "recurring_welcome",
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      amount: chargeOf(donation),
      currency: donation.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      next_charge_date: donation.nextChargeDate?.toISOString() ?? null,
      gift_url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
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
      next_charge_date: sampleDate(30),
      gift_url: `${deps.baseUrl}/donor/${base.organization.slug}/gifts/1234`,
    };
  },
};
