import { findCampaignRowsByIds } from "../../modules/campaigns/campaigns.repo.js";
import { findDonation } from "../../modules/donations/donations.repo.js";
import { portalPath } from "../../modules/donor-portal/donor-session.js";
import { findSupporter } from "../../modules/supporters/supporters.repo.js";
import { type BaseModel, type EmailMessage, loadBaseModel, translate } from "../render.js";

/** What the donor changed in the portal; the recurring-gift pages send the last four. */
export const DONOR_CHANGES = ["contact_details", "amount", "frequency", "pause", "payment_method"] as const;
export type DonorChange = (typeof DONOR_CHANGES)[number];

export interface DonorChangeModel extends BaseModel {
  change: DonorChange;
  /** The subject, worded for the change. */
  subject_line: string;
  donor_name: string | null;
  /** The recurring gift the change was about, as it is now (null for contact details). */
  gift: {
    amount: number;
    currency: string;
    frequency_key: string;
    campaign_title: string;
    paused_until: string | null;
  } | null;
  /** Where the donor sees the change: the gift's page, or the portal's home. */
  url: string;
}

const FREQUENCY_KEYS: Record<number, string> = { 0: "one_off", 1: "yearly", 12: "monthly" };

function withSubject(model: Omit<DonorChangeModel, "subject_line">): DonorChangeModel {
  return { ...model, subject_line: translate(model.locale, `donor_change.subjects.${model.change}`, {}, model) };
}

/** A confirmation of a change the donor made in the portal, so a change they did not make is noticed. */
export const message: EmailMessage<DonorChangeModel> = {
  kind: "donor_change",
  async load(tx, row, deps) {
    const base = await loadBaseModel(tx, row.organizationId);
    const change = DONOR_CHANGES.find((value) => value === (row.data as { change?: unknown }).change);
    if (!base || !change) return null;
    const supporter = row.supporterId ? await findSupporter(tx, row.organizationId, row.supporterId) : undefined;
    // An erased supporter is no longer written to.
    if (supporter?.eraseDate) return null;
    const home = `${deps.baseUrl}${portalPath(base.organization.slug)}`;
    const donation = row.donationId ? await findDonation(tx, row.organizationId, row.donationId) : undefined;
    if (change !== "contact_details" && !donation) return null;
    const [campaign] = donation ? await findCampaignRowsByIds(tx, row.organizationId, [donation.campaignId]) : [];
    return withSubject({
      ...base,
      change,
      donor_name: supporter?.firstName ?? null,
      gift: donation
        ? {
            amount: donation.amount,
            currency: donation.currency,
            frequency_key: `donor_change.frequency.${FREQUENCY_KEYS[donation.frequency ?? 0] ?? "one_off"}`,
            campaign_title: campaign?.title ?? "",
            paused_until: donation.pausedUntil?.toISOString() ?? null,
          }
        : null,
      url:
        donation && change !== "contact_details"
          ? `${deps.baseUrl}${portalPath(base.organization.slug, `gifts/${donation.id}`)}`
          : home,
    });
  },
  sample(base, deps) {
    return withSubject({
      ...base,
      change: "amount",
      donor_name: "Ada",
      gift: {
        amount: 15,
        currency: "EUR",
        frequency_key: "donor_change.frequency.monthly",
        campaign_title: "School kits for every child",
        paused_until: null,
      },
      url: `${deps.baseUrl}${portalPath(base.organization.slug, "gifts/1234")}`,
    });
  },
};
