import { printableIban } from "../../modules/organizations/bank-account.js";
import { findOrganizationById } from "../../modules/organizations/organizations.repo.js";
import {
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  loadDataPayment,
  loadDonationContext,
} from "../message-models.js";
import type { BaseModel, EmailMessage } from "../render.js";

export interface BankTransferModel extends BaseModel {
  donor_name: string | null;
  amount: number;
  currency: string;
  frequency_key: `frequency.${FrequencyKey}`;
  campaign_title: string;
  /** Null when the organization has no account on file: the donor is asked to get in touch. */
  bank: { account_name: string; iban: string; bic: string | null } | null;
  /** The donation's code: the transfer's reference, so the organization can match it. */
  reference: string;
}

/** Bank transfer instructions for a donor who chose to pay by transfer: account, amount, reference. */
export const message: EmailMessage<BankTransferModel> = {
  kind: "bank_transfer",
  async load(tx, row) {
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    const payment = await loadDataPayment(tx, row.organizationId, row.data);
    // Marked paid (or refused) before the message went out: the instructions are moot.
    if (!payment || payment.donationId !== donation.id || payment.state !== "PENDING") return null;
    const organization = await findOrganizationById(tx, row.organizationId);
    return {
      ...base,
      donor_name: donorFirstName(supporter),
      amount: payment.amount,
      currency: payment.currency,
      frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
      campaign_title: context.campaignTitle,
      bank: organization?.iban
        ? {
            account_name: organization.bankAccountName ?? organization.name,
            iban: printableIban(organization.iban),
            bic: organization.bic,
          }
        : null,
      reference: donation.code,
    };
  },
  sample(base) {
    return {
      ...base,
      donor_name: "Ada",
      amount: 50,
      currency: "EUR",
      frequency_key: "frequency.one_off",
      campaign_title: "School kits for every child",
      bank: {
        account_name: base.organization.name,
        iban: printableIban("IT60X0542811101000000123456"),
        bic: "BPMOIT22",
      },
      reference: "DON-00001234",
    };
  },
};
