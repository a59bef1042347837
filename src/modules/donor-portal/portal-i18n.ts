import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { AppError, type AppErrorOptions } from "../../errors/app-error.js";
import type { ErrorCode } from "../../errors/error-codes.js";
import { localeCookieAttributes } from "../../http/cookies.js";
import { isLocale, type Locale } from "../../i18n/locales.js";
import { type MessageValues, t } from "../../i18n/messages.js";
import { LOCALE_COOKIE, negotiateLocale, requestLocaleSources } from "../../i18n/negotiate.js";
import { formatMoney } from "../../payments/money.js";
import { setSupporterLocale } from "../supporters/supporters.repo.js";
import { listDonorSupporterIds } from "./donor-portal.repo.js";

/**
 * The donor portal's language (catalog `portal.*`, src/i18n/catalogs/<locale>/portal.json): `?lang=`
 * (remembered), then the signed-in donor's language (supporters.locale), then the switcher's cookie,
 * then Accept-Language, then the organization's language, then English.
 */

/** The language each request's page was negotiated in, for its error page. */
const negotiated = new WeakMap<FastifyRequest, Locale>();

/** The language of a portal page for this request; `donorLocale` is the signed-in donor's saved one. */
export function negotiatePortalLocale(
  request: FastifyRequest,
  organization: { locale?: unknown } | undefined,
  donorLocale?: unknown,
): Locale {
  const sources = requestLocaleSources(request);
  const locale = negotiateLocale({
    query: sources.query,
    saved: isLocale(donorLocale) ? donorLocale : sources.saved,
    acceptLanguage: sources.acceptLanguage,
    fallback: organization?.locale,
  });
  negotiated.set(request, locale);
  return locale;
}

/** The language this request's page was negotiated in, if it was. */
export const negotiatedLocaleOf = (request: FastifyRequest): Locale | undefined => negotiated.get(request);

/**
 * A language chosen with the switcher (`?lang=`) is remembered: in the site's language cookie, and
 * for a signed-in donor on each of their supporter records (their emails then speak it too).
 */
export async function rememberLocaleChoice(
  db: Db,
  config: Pick<Config, "baseUrl">,
  request: FastifyRequest,
  reply: FastifyReply,
  donor?: { organizationId: number; email: string; savedLocale?: Locale },
): Promise<void> {
  const chosen = requestLocaleSources(request).query;
  if (!isLocale(chosen)) return;
  reply.setCookie(LOCALE_COOKIE, chosen, localeCookieAttributes(config.baseUrl));
  if (!donor) return;
  await db.transaction(async (tx) => {
    for (const id of await listDonorSupporterIds(tx, donor.organizationId, donor.email)) {
      await setSupporterLocale(tx, donor.organizationId, id, chosen);
    }
  });
  donor.savedLocale = chosen;
}

/** Headers of a negotiated page. */
export const localeHeaders = (locale: Locale) => ({ "content-language": locale, vary: "Accept-Language, Cookie" });

/**
 * A refusal the portal words itself: its message is a catalog key, said in the page's language; the
 * English text stays the error's message (logs, anything that is not a portal page).
 */
export class PortalRefusal extends AppError {
  constructor(
    code: ErrorCode,
    readonly messageKey: string,
    readonly messageValues: MessageValues = {},
    options: AppErrorOptions & { field?: string } = {},
  ) {
    const message = t("en", messageKey, messageValues);
    super(code, message, {
      ...options,
      errors: options.field ? [{ field: options.field, message }] : options.errors,
    });
  }

  messageIn(locale: Locale): string {
    return t(locale, this.messageKey, this.messageValues);
  }
}

/** English dates keep the portal's day-month-year ("5 Mar 2025"); Italian ones read "5 mar 2025". */
const DATE_LOCALES: Record<Locale, string> = { en: "en-GB", it: "it-IT" };

/** The formatters of a page: dates in the organization's time zone, amounts, and an amount "a month". */
export function portalFormat(locale: Locale, timeZone: string) {
  const day = new Intl.DateTimeFormat(DATE_LOCALES[locale], { dateStyle: "medium", timeZone });
  const money = (amount: number, currency: string) => formatMoney(amount, currency, locale);
  return {
    date: (value: Date) => day.format(value),
    money,
    /** "€15.00 a month", "15,00 € al mese"; a one-off amount alone. */
    perPeriod: (amount: number, currency: string, frequency: number | null) =>
      t(locale, "portal.amount_per", { amount: money(amount, currency), per: periodOf(frequency) }),
  };
}

/** The select value the catalog's messages take for a frequency. */
export const periodOf = (frequency: number | null | undefined) =>
  frequency === 12 ? "month" : frequency === 1 ? "year" : "none";
