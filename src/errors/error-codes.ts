/**
 * Every error code the product answers with, and its one HTTP status. A code is a promise to
 * clients (docs/api.md lists them): add one here before using it, never reuse one for another status.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_signature: 400,
  bad_request: 400,
  too_many_statements: 400,
  ctp_empty_json_body: 400,
  ctp_invalid_content_length: 400,
  ctp_invalid_json_body: 400,
  // GraphQL validation refusals, rendered as extensions.code.
  query_too_deep: 400,
  too_many_root_fields: 400,
  too_many_aliases: 400,
  query_too_expensive: 400,
  invalid_token: 401,
  invalid_credentials: 401,
  // A second factor's code (authenticator app or recovery code) that is wrong or was already used.
  invalid_code: 401,
  // A passkey that signs in no one: unknown, removed, its challenge used or expired, or its signature wrong.
  passkey_refused: 401,
  not_signed_in: 401,
  payment_failed: 402,
  insufficient_scope: 403,
  insufficient_role: 403,
  not_a_member: 403,
  csrf_refused: 403,
  cross_origin_refused: 403,
  challenge_required: 403,
  challenge_invalid: 403,
  metrics_forbidden: 403,
  step_up_required: 403,
  not_found: 404,
  route_not_found: 404,
  organization_not_found: 404,
  application_not_found: 404,
  not_installed: 404,
  user_not_found: 404,
  sign_in_link_not_found: 404,
  request_timeout: 408,
  invalid_state_transition: 409,
  slug_taken: 409,
  already_member: 409,
  last_owner: 409,
  supporter_erased: 409,
  // Two supporters that cannot be merged as they are (both have a statement for the same year).
  merge_refused: 409,
  // A saved segment's name that another segment of the same table has (in any case).
  segment_name_taken: 409,
  checkout_closed: 409,
  checkout_expired: 409,
  checkout_attempt_abandoned: 409,
  payment_in_progress: 409,
  refund_unsupported: 409,
  not_manual_payment: 409,
  refund_in_progress: 409,
  processor_not_connected: 409,
  refund_failed: 409,
  // A campaign is published (created) only once the organization links its privacy notice (legal profile).
  privacy_policy_required: 409,
  already_set_up: 409,
  // Two-step verification: the organization's rule needs a second factor (turning it on without one, removing
  // the last one); an authenticator app already set up; none set up (or no enrolment started) for the change.
  second_factor_required: 409,
  second_factor_exists: 409,
  second_factor_not_set_up: 409,
  public_client: 409,
  // A campaign whose start_date is still to come: it takes gifts from then on.
  campaign_not_open: 409,
  campaign_closed: 410,
  sign_in_link_expired: 410,
  // An events cursor older than the event retention: the events after it are gone.
  cursor_expired: 410,
  request_too_large: 413,
  ctp_body_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  ctp_invalid_media_type: 415,
  unknown_reference: 422,
  invalid_card: 422,
  invalid_amount: 422,
  refund_amount_too_large: 422,
  amount_out_of_range: 422,
  amount_below_minimum: 422,
  currency_not_supported: 422,
  custom_amount_not_allowed: 422,
  frequency_not_offered: 422,
  cover_fee_not_offered: 422,
  field_not_on_form: 422,
  missing_required_field: 422,
  privacy_consent_required: 422,
  processor_unsupported: 422,
  invalid_processor_keys: 422,
  idempotency_key_reused: 422,
  // A webhook endpoint's address that is not https, or resolves to a loopback, private or link-local address.
  webhook_url_refused: 422,
  // An upload that is not a readable image of the declared type, or too small or too large in pixels.
  invalid_image: 422,
  // A new passkey whose registration does not verify (its challenge used, expired or another user's).
  passkey_invalid: 422,
  rate_limited: 429,
  too_many_attempts: 429,
  too_many_checkouts: 429,
  too_many_declines: 429,
  header_too_large: 431,
  internal_error: 500,
  database_unavailable: 503,
  overloaded: 503,
  shutting_down: 503,
  sign_in_unavailable: 503,
  processor_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus<C extends ErrorCode> = (typeof ERROR_STATUS)[C];

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, code);
}
