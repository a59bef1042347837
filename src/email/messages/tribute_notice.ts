import { t } from "../../i18n/messages.js";
import { findDonationForEmail } from "../../modules/donations/donation-emails.repo.js";
import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface TributeNoticeModel extends BaseModel {
  /** The donor as they gave their name (never their address or the amount: the gift is theirs to tell). */
  donor_name: string;
  /** "no": the donor typed no name with the gift, and donor_name is the catalog's "A donor". */
  named: "yes" | "no";
  tribute_type: "honor" | "memory";
  tribute_name: string;
  recipient_name: string | null;
  message: string | null;
  campaign_title: string;
}

/**
 * Tells the person a donor named that a gift was made in honour or in memory of someone, in the
 * donor's language, with the donor's message, never the amount.
 */
export const message: EmailMessage<TributeNoticeModel> = {
  kind: "tribute_notice",
  async load(tx, row) {
    if (row.donationId === null) return null;
    // In the donor's language (the one they gave in), though it goes to the recipient.
    const base = await loadBaseModel(tx, row.organizationId, row.supporterId);
    const found = await findDonationForEmail(tx, row.organizationId, row.donationId);
    if (!base || !found) return null;
    const { donation, supporter } = found;
    // An erased donor's gift tells nobody any more.
    if (supporter.eraseDate || !donation.tributeName || !donation.tributeRecipientEmail) return null;
    return {
      ...base,
      audience: "tribute_recipient",
      // Only the name typed with this gift (anyone may give with any address: a stored record's name
      // could be someone else's); none typed: the words say "a donor".
      donor_name: donation.tributeDonorName ?? t(base.locale, "email.tribute_notice.a_donor"),
      named: donation.tributeDonorName ? "yes" : "no",
      tribute_type: donation.tributeType === "memory" ? "memory" : "honor",
      tribute_name: donation.tributeName,
      recipient_name: donation.tributeRecipientName,
      message: donation.tributeMessage,
      campaign_title: found.campaignTitle,
    };
  },
  sample(base) {
    return {
      ...base,
      audience: "tribute_recipient",
      donor_name: "Anna Bianchi",
      named: "yes",
      tribute_type: "memory",
      tribute_name: "Maria Rossi",
      recipient_name: "Luca Rossi",
      message: "Maria loved this school. With love, Anna",
      campaign_title: "School kits for every child",
    };
  },
};
