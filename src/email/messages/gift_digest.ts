import { totalsByCurrency } from "../../modules/documents/receipt.page.js";
import { listGiftsOfDay } from "../../modules/donations/donation-emails.repo.js";
import { adminDonationUrl, chargeOf, donorFullName, type FrequencyKey, frequencyKey } from "../message-models.js";
import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface GiftDigestModel extends BaseModel {
  /** The local day (YYYY-MM-DD, the organization's time zone) and how it is written in its language. */
  date: string;
  day_text: string;
  count: number;
  totals: { amount: number; currency: string }[];
  gifts: {
    time: string;
    donor_name: string;
    amount: number;
    currency: string;
    frequency_key: `frequency.${FrequencyKey}`;
    campaign_title: string;
    donation_code: string;
    admin_url: string;
  }[];
  donations_url: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

const dayText = (day: string, locale: string) =>
  new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: "UTC" }).format(new Date(`${day}T12:00:00Z`));

/** The organization's daily digest (gift_notifications = 'daily'): every gift of the previous day, in its time zone. */
export const message: EmailMessage<GiftDigestModel> = {
  kind: "gift_digest",
  async load(tx, row, deps) {
    const date = (row.data as { date?: unknown }).date;
    if (typeof date !== "string" || !DAY.test(date)) return null;
    const base = await loadBaseModel(tx, row.organizationId);
    if (!base) return null;
    const { time_zone: timeZone, slug } = base.organization;
    const rows = await listGiftsOfDay(tx, row.organizationId, date, timeZone);
    if (rows.length === 0) return null;
    const clock = new Intl.DateTimeFormat(base.locale, { timeStyle: "short", timeZone });
    const gifts = rows.map((gift) => ({
      time: clock.format(gift.completedDate ?? new Date()),
      donor_name: donorFullName(gift.supporter),
      amount: chargeOf(gift),
      currency: gift.currency,
      frequency_key: `frequency.${frequencyKey(gift.frequency)}` as const,
      campaign_title: gift.campaignTitle,
      donation_code: gift.code,
      admin_url: adminDonationUrl(deps.adminUrl, slug, gift.id),
    }));
    return {
      ...base,
      audience: "organization",
      date,
      day_text: dayText(date, base.locale),
      count: gifts.length,
      totals: totalsByCurrency(gifts),
      gifts,
      donations_url: `${deps.adminUrl}/admin/o/${encodeURIComponent(slug)}/donations`,
    };
  },
  sample(base, deps) {
    const date = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const { slug } = base.organization;
    const gifts = [
      ["08:12", "Ada Lovelace", 25, "frequency.one_off", 1234],
      ["13:40", "Alan Turing", 10, "frequency.monthly", 1235],
    ] as const;
    return {
      ...base,
      audience: "organization",
      date,
      day_text: dayText(date, base.locale),
      count: gifts.length,
      totals: [{ amount: 35, currency: "EUR" }],
      gifts: gifts.map(([time, donor, amount, frequency, id]) => ({
        time,
        donor_name: donor,
        amount,
        currency: "EUR",
        frequency_key: frequency,
        campaign_title: "School kits for every child",
        donation_code: `DON-0000${id}`,
        admin_url: adminDonationUrl(deps.adminUrl, slug, id),
      })),
      donations_url: `${deps.adminUrl}/admin/o/${encodeURIComponent(slug)}/donations`,
    };
  },
};
