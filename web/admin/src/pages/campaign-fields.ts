/** Fields a donor can be asked for on a donation form (the server's SUPPORTER_FORM_FIELDS). */
export const SUPPORTER_FORM_FIELDS = [
  ["business_name", "Business name"],
  ["first_name", "First name"],
  ["last_name", "Last name"],
  ["email", "Email"],
  ["phone", "Phone"],
  ["mobile", "Mobile"],
  ["job", "Job"],
  ["sex", "Sex"],
  ["date_of_birth", "Date of birth"],
  ["place_of_birth", "Place of birth"],
  ["ssn", "Tax code / SSN"],
  ["vat", "VAT number"],
  ["address", "Address"],
  ["address2", "Address (line 2)"],
  ["city", "City"],
  ["locality", "Locality"],
  ["country", "Country"],
  ["postal_code", "Postal code"],
  ["note", "Note"],
] as const;

export const CAMPAIGN_FIELDS = `id title slug code type goal is_goal_enabled has_one_off has_subscription
  allow_custom_amount allow_custom_subscription_amount default_amount default_subscription_amount
  min_amount max_amount min_subscription_amount max_subscription_amount asks asks_subscription
  shown_fields required_fields privacy_note cost_example_amount cost_example_label allow_cover_fee tags archive_date create_date update_date`;

export function donatePageUrl(org: string, slug: string): string {
  return `/donate/${encodeURIComponent(org)}/${encodeURIComponent(slug)}`;
}
