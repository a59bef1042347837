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
  shown_fields required_fields privacy_note cost_example_amount cost_example_label allow_cover_fee tags archive_date create_date update_date`;

export function donatePageUrl(org: string, slug: string): string {
  return `/donate/${encodeURIComponent(org)}/${encodeURIComponent(slug)}`;
}
