import {
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  giftPageUrl,
  loadDataPayment,
  loadDonationContext,
  sampleDate,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

/** Processor failure codes said in plain words (catalog `renewal_failed.reasons.<code>`); others quote the processor. */
const KNOWN_REASONS = new Set([
  "card_declined",
  "insufficient_funds",
  "expired_card",
  "incorrect_cvc",
  "authentication_required",
  "no_payment_method",
  "unknown_method",
  "processor_not_connected",
  "canceled",
]);

export interface RenewalFailedModel extends BaseModel {
  donor_name: string | null;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  attempt_date: string;
  /** The catalog key of what happened, in plain words; `other` quotes the processor's message. */
  reason_key: string;
  failure_message: string;
  /** When the renewal is tried again (null: not known). */
  retry_date: string | null;
  method_label: string | null;
  /** The gift's page in the portal, where the donor updates the payment method. */
  update_url: string;
}

/** A renewal was refused: what happened, when it is retried, and where to update the payment method. */
export const message: EmailMessage<RenewalFailedModel> = {
  kind: "renewal_failed",
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    const payment = await loadDataPayment(tx, row.organizationId, row.data);
    if (!payment || payment.donationId !== donation.id) return null;
    const code = payment.failureCode ?? "";
    const retry = (row.data as { retry_date?: unknown }).retry_date;
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      amount: payment.amount,
      currency: payment.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      attempt_date: payment.updateDate.toISOString(),
      reason_key: `renewal_failed.reasons.${KNOWN_REASONS.has(code) ? code : "other"}`,
      failure_message: payment.failureMessage ?? code,
      // Still past due: the retry is due; a gift stopped or paid meanwhile has none to announce.
      retry_date: typeof retry === "string" && donation.state === "past_due" ? retry : null,
      method_label: context.method?.label ?? null,
      update_url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
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
      attempt_date: sampleDate(0),
      reason_key: "renewal_failed.reasons.insufficient_funds",
      failure_message: "The card has insufficient funds",
      retry_date: sampleDate(2),
      method_label: "Visa •••• 4242",
      update_url: `${deps.baseUrl}/donor/${base.organization.slug}/gifts/1234`,
    };
  },
};
