import { portalPath } from "../../modules/donor-portal/donor-session.js";
import { findSupporter } from "../../modules/supporters/supporters.repo.js";
import {
  chargeOf,
  donorFirstName,
  type FrequencyKey,
  frequencyKey,
  giftPageUrl,
  loadDonationContext,
} from "../message-models.js";
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
    frequency_key: `frequency.${FrequencyKey}`;
    campaign_title: string;
    paused_until: string | null;
  } | null;
  /** Where the donor sees the change: the gift's page, or the portal's home. */
  url: string;
}

function withSubject(model: Omit<DonorChangeModel, "subject_line">): DonorChangeModel {
  return { ...model, subject_line: translate(model.locale, `donor_change.subjects.${model.change}`, {}, model) };
}

/**
 * A confirmation of a change the donor made in the portal (so a change they did not make is
 * noticed). Contact details need only the supporter; a gift's change reads the gift as it is now.
 */
export const message: EmailMessage<DonorChangeModel> = {
  kind: "donor_change",
  async load(tx, row, deps) {
    const change = DONOR_CHANGES.find((value) => value === (row.data as { change?: unknown }).change);
    if (!change) return null;
    if (change === "contact_details") {
      const base = await loadBaseModel(tx, row.organizationId, row.supporterId);
      const supporter = row.supporterId ? await findSupporter(tx, row.organizationId, row.supporterId) : undefined;
      // An erased supporter is no longer written to.
      if (!base || supporter?.eraseDate) return null;
      return withSubject({
        ...base,
        change,
        donor_name: supporter ? donorFirstName(supporter) : null,
        gift: null,
        url: `${deps.baseUrl}${portalPath(base.organization.slug)}`,
      });
    }
    const context = await loadDonationContext(tx, row);
    if (!context) return null;
    const { base, donation, supporter } = context;
    return withSubject({
      ...base,
      change,
      donor_name: donorFirstName(supporter),
      gift: {
        amount: chargeOf(donation),
        currency: donation.currency,
        frequency_key: `frequency.${frequencyKey(donation.frequency)}`,
        campaign_title: context.campaignTitle,
        paused_until:
          donation.pausedUntil && donation.pausedUntil > new Date() ? donation.pausedUntil.toISOString() : null,
      },
      url: giftPageUrl(deps.baseUrl, base.organization.slug, donation.id),
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
        frequency_key: "frequency.monthly",
        campaign_title: "School kits for every child",
        paused_until: null,
      },
      url: giftPageUrl(deps.baseUrl, base.organization.slug, 1234),
    });
  },
};
