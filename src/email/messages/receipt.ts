import { loadDocumentLinks } from "../../modules/documents/document-links.js";
import { portalDeliveryLink, portalLinkPlaceholder } from "../../modules/donor-portal/donor-links.service.js";
import { findLivePaymentReceipt } from "../../modules/receipts/receipts.repo.js";
import {
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  loadDataPayment,
  loadDonationContext,
  sampleDate,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

export interface ReceiptModel extends BaseModel {
  donor_name: string | null;
  /** What this payment took: the gift plus any fee the donor covered. */
  amount: number;
  currency: string;
  payment_date: string;
  donation_code: string;
  campaign_title: string;
  method_label: string | null;
  frequency_key: `frequency.${FrequencyKey}`;
  /** A renewal of a recurring gift (not its first payment). */
  renewal: boolean;
  /** The payment's issued receipt (docs/receipts.md), else the donation's printable receipt (donations.receipt_url). */
  receipt_url: string;
  /** The issued receipt's PDF; null when the payment has none (a test gift, statements instead). */
  receipt_pdf_url: string | null;
  /** A link that signs the donor in to the portal (30 days, reusable), minted for the address it is delivered to. */
  portal_url: string;
}

/** The receipt of one payment received (first or renewal), with the donation's receipt and the donor's portal. */
export const message: EmailMessage<ReceiptModel> = {
  kind: "receipt",
  link: portalDeliveryLink("receipt"),
  async load(tx, row, deps) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    const payment = await loadDataPayment(tx, row.organizationId, row.data);
    if (!payment || payment.donationId !== donation.id || !donation.receiptUrl) return null;
    const issued = await findLivePaymentReceipt(tx, row.organizationId, payment.id);
    const issuedUrl = issued
      ? (await loadDocumentLinks(tx, deps.baseUrl)).taxReceiptUrl(issued.organizationId, issued.id)
      : null;
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      amount: payment.amount,
      currency: payment.currency,
      payment_date: (payment.paymentDate ?? payment.createDate).toISOString(),
      donation_code: donation.code,
      campaign_title: context.campaignTitle,
      method_label: context.method?.label ?? null,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      renewal: payment.billingCycle !== null,
      receipt_url: issuedUrl ?? donation.receiptUrl,
      receipt_pdf_url: issuedUrl ? `${issuedUrl}/pdf` : null,
      // The placeholder: the delivery mints the link for the address it sends to (only its hash stored).
      portal_url: portalLinkPlaceholder(deps.baseUrl, base.organization.slug),
    };
  },
  sample(base, deps) {
    return {
      ...base,
      donor_name: "Ada",
      amount: 25,
      currency: "EUR",
      payment_date: sampleDate(0),
      donation_code: "DON-00001234",
      campaign_title: "School kits for every child",
      method_label: "Visa •••• 4242",
      frequency_key: "frequency.monthly",
      renewal: false,
      receipt_url: `${deps.baseUrl}/documents/tax-receipts/1/1234/sample`,
      receipt_pdf_url: `${deps.baseUrl}/documents/tax-receipts/1/1234/sample/pdf`,
      portal_url: `${deps.baseUrl}/donor/${base.organization.slug}/enter?token=sample`,
    };
  },
};
