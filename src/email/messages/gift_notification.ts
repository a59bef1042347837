import { formatMoney } from "../../payments/money.js";
import {
  adminDonationUrl,
  chargeOf,
  donorFullName,
  type FrequencyKey,
  frequencyKey,
  loadDonationContext,
  sampleDate,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

export interface GiftNotificationModel extends BaseModel {
  donor_name: string;
  donor_email: string | null;
  amount: number;
  currency: string;
  /** The amount formatted in the organization's language, for the subject. */
  amount_text: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  donation_code: string;
  completed_date: string;
  /** The donation's page in the admin panel. */
  admin_url: string;
}

/** The organization's notice of one new gift (organizations.gift_notifications = 'each'), to its own address. */
export const message: EmailMessage<GiftNotificationModel> = {
  kind: "gift_notification",
  async load(tx, row, deps) {
    if (row.donationId === null) return null;
    // To the organization: read even when the supporter has no address of their own.
    const context = await loadDonationContext(tx, row, { requireDonorAddress: false });
    if (!context) return null;
    const { base, donation, supporter } = context;
    const amount = chargeOf(donation);
    return {
      ...base,
      audience: "organization",
      donor_name: donorFullName(supporter),
      donor_email: supporter.eraseDate ? null : supporter.email,
      amount,
      currency: donation.currency,
      amount_text: formatMoney(amount, donation.currency, base.locale),
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      donation_code: donation.code,
      completed_date: (donation.completedDate ?? donation.createDate).toISOString(),
      admin_url: adminDonationUrl(deps.adminUrl, base.organization.slug, donation.id),
    };
  },
  sample(base, deps) {
    return {
      ...base,
      audience: "organization",
      donor_name: "Ada Lovelace",
      donor_email: "ada@example.org",
      amount: 25,
      currency: "EUR",
      amount_text: formatMoney(25, "EUR", base.locale),
      frequency_key: "frequency.monthly",
      campaign_title: "School kits for every child",
      donation_code: "DON-00001234",
      completed_date: sampleDate(0),
      admin_url: adminDonationUrl(deps.adminUrl, base.organization.slug, 1234),
    };
  },
};
