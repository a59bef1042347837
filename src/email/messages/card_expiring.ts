import { findPaymentMethod } from "../../modules/payment-methods/payment-methods.repo.js";
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

export interface CardExpiringModel extends BaseModel {
  donor_name: string | null;
  method_label: string;
  /** MM/YYYY, as printed on the card. */
  expiry: string;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  next_charge_date: string;
  update_url: string;
}

const pad = (month: number) => String(month).padStart(2, "0");

/** The card of a recurring gift expires before its next renewal: a warning with where to update it. */
export const message: EmailMessage<CardExpiringModel> = {
  kind: "card_expiring",
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    const methodId = (row.data as { payment_method_id?: unknown }).payment_method_id;
    const method = typeof methodId === "number" ? await findPaymentMethod(tx, row.organizationId, methodId) : undefined;
    // The donor replaced the card, or the gift stopped, since the warning was enqueued: nothing to say.
    if (!method || donation.paymentMethodId !== method.id || donation.state !== "active") return null;
    if (!method.expiryMonth || !method.expiryYear || !donation.nextChargeDate) return null;
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      method_label: method.label,
      expiry: `${pad(method.expiryMonth)}/${method.expiryYear}`,
      amount: chargeOf(donation),
      currency: donation.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      next_charge_date: donation.nextChargeDate.toISOString(),
      update_url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
    };
  },
  sample(base, deps) {
    const now = new Date();
    return {
      ...base,
      donor_name: "Ada",
      method_label: "Visa •••• 4242",
      expiry: `${pad(now.getUTCMonth() + 1)}/${now.getUTCFullYear()}`,
      amount: 10,
      currency: "EUR",
      frequency_key: "frequency.monthly",
      campaign_title: "School kits for every child",
      next_charge_date: sampleDate(20),
      update_url: `${deps.baseUrl}/donor/${base.organization.slug}/gifts/1234`,
    };
  },
};
