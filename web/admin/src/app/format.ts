import { useMemo } from "react";
import { type I18n, useI18n } from "../i18n";
import { useOrg } from "./org-context";

export interface Formatters {
  money: (amount: number | null | undefined, currency?: string) => string;
  /** Money without cents, for charts and headline figures. */
  moneyShort: (amount: number | null | undefined) => string;
  dateTime: (iso: string | null | undefined) => string;
  /** `dateTime` cut where a line may break: the date (with its separator) and the time; one line when it cannot be. */
  dateTimeLines: (iso: string | null | undefined) => string[];
  date: (iso: string | null | undefined) => string;
  number: (value: number) => string;
  month: (period: string) => string;
}

const TIME_PARTS = new Set<string>(["hour", "minute", "second", "dayPeriod"]);

/** A date and time's text cut at the space before its time (one piece where the time comes first). */
function splitDateTime(format: Intl.DateTimeFormat, date: Date): string[] {
  // The whole as `dateTime` writes it (V8's format has plain spaces where its parts may have U+202F).
  const whole = format.format(date);
  const parts = format.formatToParts(date);
  const at = parts.findIndex((part) => TIME_PARTS.has(part.type));
  const day = at > 0 ? parts.slice(0, at).reduce((text, part) => text + part.value, "") : "";
  return /\S $/.test(day) && whole.startsWith(day) ? [day.slice(0, -1), whole.slice(day.length)] : [whole];
}

const cache = new Map<string, Intl.NumberFormat>();
/**
 * Money in a language: grouping always (Italian writes 1.234,50 €, where CLDR would leave four
 * digits ungrouped), as the receipts and statements people compare it with do.
 */
function currencyFormat(locale: string, currency: string, digits?: number): Intl.NumberFormat {
  const key = `${locale}:${currency}:${digits ?? ""}`;
  let format = cache.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, {
      style: "currency",
      currency,
      useGrouping: "always",
      ...(digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }),
    });
    cache.set(key, format);
  }
  return format;
}

/** Formatters of the panel's language (its Intl tag), the organization's currency and time zone. */
export function makeFormatters(currency: string, timeZone: string, locale: string): Formatters {
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone });
  const date = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone });
  const month = new Intl.DateTimeFormat(locale, { month: "short", year: "numeric", timeZone: "UTC" });
  const number = new Intl.NumberFormat(locale, { useGrouping: "always" });
  return {
    money: (amount, other) => (amount == null ? "—" : currencyFormat(locale, other ?? currency).format(amount)),
    moneyShort: (amount) => (amount == null ? "—" : currencyFormat(locale, currency, 0).format(amount)),
    dateTime: (iso) => (iso ? dateTime.format(new Date(iso)) : "—"),
    dateTimeLines: (iso) => (iso ? splitDateTime(dateTime, new Date(iso)) : ["—"]),
    date: (iso) => (iso ? date.format(new Date(iso)) : "—"),
    number: (value) => number.format(value),
    month: (period) => {
      const [year, monthNumber] = period.split("-").map(Number);
      return year && monthNumber ? month.format(new Date(Date.UTC(year, monthNumber - 1, 1))) : period;
    },
  };
}

/** Money in the organization's currency, times in its time zone, both in the panel's language. */
export function useFormat(): Formatters {
  const { org } = useOrg();
  const { intlLocale } = useI18n();
  return useMemo(
    () => makeFormatters(org.currency, org.time_zone, intlLocale),
    [org.currency, org.time_zone, intlLocale],
  );
}

/** Monthly, Yearly, One-off (a column's or a field's value). */
export function frequencyLabel(t: I18n["t"], frequency: number | null | undefined): string {
  if (frequency === 12) return t("panel.frequency.monthly");
  if (frequency === 1) return t("panel.frequency.yearly");
  if (frequency === 0) return t("panel.frequency.one_off");
  return frequency == null ? "—" : t("panel.frequency.times_a_year", { count: frequency });
}

/** monthly, yearly (within a sentence: "€10 monthly"). */
export function frequencyInSentence(t: I18n["t"], frequency: number | null | undefined): string {
  if (frequency === 12) return t("panel.frequency.every_monthly");
  if (frequency === 1) return t("panel.frequency.every_yearly");
  if (frequency === 0) return t("panel.frequency.every_one_off");
  return frequency == null ? "—" : t("panel.frequency.times_a_year", { count: frequency });
}

export function supporterName(
  t: I18n["t"],
  supporter:
    | {
        first_name?: string | null;
        last_name?: string | null;
        business_name?: string | null;
        email?: string | null;
        id?: number;
        erase_date?: string | null;
      }
    | null
    | undefined,
): string {
  if (!supporter) return "—";
  const name = [supporter.first_name, supporter.last_name].filter(Boolean).join(" ");
  if (name) return name;
  if (supporter.business_name) return supporter.business_name;
  if (supporter.email) return supporter.email;
  if (supporter.erase_date) return t("panel.supporter_name.erased");
  return supporter.id ? t("panel.supporter_name.numbered", { id: supporter.id }) : "—";
}
