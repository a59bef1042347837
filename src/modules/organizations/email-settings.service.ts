import type { Db } from "../../db/client.js";
import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { changesOf, recordEvent, withEvents } from "../../events/record-event.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { findOrganizationById, type OrganizationRow, updateOrganizationColumns } from "./organizations.repo.js";

export const EMAIL_SETTINGS_LOCALES = ["en", "it"] as const;
export const GIFT_NOTIFICATIONS = ["off", "each", "daily"] as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_LOGO_URL = 2000;

export interface EmailSettingsInput {
  email?: string | null;
  logo_url?: string | null;
  locale: string;
  gift_notifications: string;
}

export function emailSettingsToWire(row: OrganizationRow) {
  return {
    email: row.email,
    logo_url: row.logoUrl,
    locale: row.locale,
    gift_notifications: row.giftNotifications,
    update_date: row.updateDate.toISOString(),
  };
}

export type EmailSettingsWire = ReturnType<typeof emailSettingsToWire>;

export async function getEmailSettings(db: Db, organizationId: number): Promise<EmailSettingsWire> {
  const row = await findOrganizationById(db, organizationId);
  if (!row) throw new Error("organization of the request vanished");
  return emailSettingsToWire(row);
}

const blankToNull = (value: string | null | undefined) => (value?.trim() ? value.trim() : null);

function logoProblem(value: string): FieldProblem | null {
  if (value.length > MAX_LOGO_URL) return fieldProblem("too_long", { max: MAX_LOGO_URL });
  try {
    const url = new URL(value);
    if (url.protocol === "https:" || url.protocol === "http:") return null;
  } catch {}
  return fieldProblem("web_address_http");
}

/** The settings' form, every problem at once by field (the panel shows each next to its input). */
export function checkEmailSettings(input: EmailSettingsInput) {
  const settings = {
    email: blankToNull(input.email),
    logoUrl: blankToNull(input.logo_url),
    locale: input.locale.trim(),
    giftNotifications: input.gift_notifications.trim(),
  };
  const errors: ValidationIssue[] = [];
  if (settings.email !== null && (!EMAIL.test(settings.email) || settings.email.length > 254)) {
    errors.push(fieldIssue("email", fieldProblem("email")));
  }
  const logo = settings.logoUrl === null ? null : logoProblem(settings.logoUrl);
  if (logo) errors.push(fieldIssue("logo_url", logo));
  if (!(EMAIL_SETTINGS_LOCALES as readonly string[]).includes(settings.locale)) {
    errors.push(fieldIssue("locale", fieldProblem("one_of", { choices: EMAIL_SETTINGS_LOCALES.join(", ") })));
  }
  if (!(GIFT_NOTIFICATIONS as readonly string[]).includes(settings.giftNotifications)) {
    errors.push(fieldIssue("gift_notifications", fieldProblem("one_of", { choices: GIFT_NOTIFICATIONS.join(", ") })));
  } else if (settings.giftNotifications !== "off" && settings.email === null) {
    errors.push(fieldIssue("gift_notifications", fieldProblem("gift_notifications_need_email")));
  }
  if (errors.length > 0) {
    throw new AppError(
      "invalid_request",
      `The email settings were not saved: ${errors.map((error) => `${error.field} ${error.message}`).join("; ")}`,
      { errors },
    );
  }
  return settings;
}

/** Saves the organization's email settings, recorded with what changed as `email_settings.updated`, in one transaction. */
export async function updateEmailSettings(
  db: Db,
  organizationId: number,
  input: EmailSettingsInput,
  origin: EventOrigin | undefined,
): Promise<EmailSettingsWire> {
  const settings = checkEmailSettings(input);
  return withEvents(db, async (tx) => {
    const previous = await findOrganizationById(tx, organizationId);
    if (!previous) throw new Error("organization of the request vanished");
    const saved = await updateOrganizationColumns(tx, organizationId, settings);
    if (!saved) throw new Error("organization of the request vanished");
    const before = emailSettingsToWire(previous);
    const after = emailSettingsToWire(saved);
    if (changesOf(before, after)) {
      await recordEvent(tx, { organizationId, origin }, "email_settings.updated", organizationId, after, { before });
    }
    return after;
  });
}
