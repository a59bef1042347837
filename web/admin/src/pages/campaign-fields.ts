/** Fields a donor can be asked for on a donation form (the server's SUPPORTER_FORM_FIELDS), with their label's key. */
export const SUPPORTER_FORM_FIELDS = [
  ["business_name", "panel.form_field.business_name"],
  ["first_name", "panel.form_field.first_name"],
  ["last_name", "panel.form_field.last_name"],
  ["email", "panel.form_field.email"],
  ["phone", "panel.form_field.phone"],
  ["mobile", "panel.form_field.mobile"],
  ["job", "panel.form_field.job"],
  ["sex", "panel.form_field.sex"],
  ["date_of_birth", "panel.form_field.date_of_birth"],
  ["place_of_birth", "panel.form_field.place_of_birth"],
  ["ssn", "panel.form_field.ssn"],
  ["vat", "panel.form_field.vat"],
  ["address", "panel.form_field.address"],
  ["address2", "panel.form_field.address2"],
  ["city", "panel.form_field.city"],
  ["locality", "panel.form_field.locality"],
  ["country", "panel.form_field.country"],
  ["postal_code", "panel.form_field.postal_code"],
  ["note", "panel.form_field.note"],
] as const;

export const CAMPAIGN_FIELDS = `id title slug code type goal is_goal_enabled has_one_off has_subscription
  allow_custom_amount allow_custom_subscription_amount default_amount default_subscription_amount
  min_amount max_amount min_subscription_amount max_subscription_amount asks asks_subscription
  shown_fields required_fields privacy_note cost_example_amount cost_example_label allow_cover_fee tags archive_date create_date update_date
  story status start_date end_date cover_image_url allow_tribute ask_impacts { amount recurring text }
  questions { key type label required options }`;

export const QUESTION_TYPES = ["short_text", "long_text", "single_choice", "multiple_choice", "checkbox"] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** What the editor reads of a campaign's page content (docs/campaigns.md). */
export interface CampaignContent {
  story: string | null;
  status: "draft" | "published";
  start_date: string | null;
  end_date: string | null;
  cover_image_url: string | null;
  allow_tribute: boolean;
  ask_impacts: { amount: number; recurring: boolean; text: string }[];
  questions: { key: string; type: QuestionType; label: string; required: boolean; options: string[] | null }[];
}

/** A zone's offset from UTC at an instant, in milliseconds. */
function zoneOffset(instant: number, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    })
      .formatToParts(new Date(instant))
      .map((part) => [part.type, part.value]),
  );
  const part = (name: string) => Number(parts[name] ?? 0);
  const local = Date.UTC(part("year"), part("month") - 1, part("day"), part("hour"), part("minute"), part("second"));
  return local - Math.floor(instant / 1000) * 1000;
}

/** The instant a day ("2026-03-12") starts in the organization's time zone, or, with `next`, the day after it. */
export function startOfDay(day: string, timeZone: string, next = false): string {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  const midnight = Date.UTC(year, month - 1, date + (next ? 1 : 0));
  const target = new Date(midnight).toISOString().slice(0, 10);
  const first = midnight - zoneOffset(midnight, timeZone);
  const second = midnight - zoneOffset(first, timeZone);
  // Where the clocks jump forward at midnight (Atlantic/Azores, America/Santiago…) the day has no 00:00:
  // it starts at 01:00, and the second guess lands on the day before. The earliest guess on the day wins.
  const onTheDay = [first, second].filter((instant) => dayOf(new Date(instant).toISOString(), timeZone) === target);
  return new Date(onTheDay.length > 0 ? Math.min(...onTheDay) : second).toISOString();
}

/** The day ("2026-03-12") an instant falls on in the time zone; with `before`, the day of the instant just before it. */
export function dayOf(iso: string, timeZone: string, before = false): string {
  const instant = new Date(iso).getTime() - (before ? 1 : 0);
  return new Intl.DateTimeFormat("en-CA", { timeZone }).format(new Date(instant));
}

export function donatePageUrl(org: string, slug: string): string {
  return `/donate/${encodeURIComponent(org)}/${encodeURIComponent(slug)}`;
}
