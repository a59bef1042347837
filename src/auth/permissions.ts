/** What an application may be granted; shown to the admin who installs it. */
export const PERMISSION_DESCRIPTIONS = {
  "campaigns:read": "Read campaigns",
  "campaigns:write": "Create, edit and archive campaigns",
  "supporters:read": "Read supporters and their personal data",
  "supporters:write": "Create and edit supporters, export and erase their personal data",
  "donations:read": "Read donations",
  "donations:write": "Record offline donations and cancel recurring donations",
  "payments:read": "Read payments and payment methods",
  "payments:write": "Refund payments and mark bank transfers paid",
  "checkouts:read": "Read checkouts",
} as const;

export type Permission = keyof typeof PERMISSION_DESCRIPTIONS;
export const PERMISSIONS = Object.keys(PERMISSION_DESCRIPTIONS) as Permission[];
