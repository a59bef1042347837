import { useMemo } from "react";
import { useOrg } from "./org-context";

export interface Formatters {
  money: (amount: number | null | undefined, currency?: string) => string;
  /** Money without cents, for charts and headline figures. */
  moneyShort: (amount: number | null | undefined) => string;
  dateTime: (iso: string | null | undefined) => string;
  date: (iso: string | null | undefined) => string;
  number: (value: number) => string;
  month: (period: string) => string;
}

const cache = new Map<string, Intl.NumberFormat>();
function currencyFormat(currency: string, digits?: number): Intl.NumberFormat {
  const key = `${currency}:${digits ?? ""}`;
  let format = cache.get(key);
  if (!format) {
    format = new Intl.NumberFormat(undefined, {
      style: "currency",
      currency,
      ...(digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }),
    });
    cache.set(key, format);
  }
  return format;
}

export function makeFormatters(currency: string, timeZone: string): Formatters {
  const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone });
  const date = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone });
  const month = new Intl.DateTimeFormat(undefined, { month: "short", year: "numeric", timeZone: "UTC" });
  const number = new Intl.NumberFormat();
  return {
    money: (amount, other) => (amount == null ? "—" : currencyFormat(other ?? currency).format(amount)),
    moneyShort: (amount) => (amount == null ? "—" : currencyFormat(currency, 0).format(amount)),
    dateTime: (iso) => (iso ? dateTime.format(new Date(iso)) : "—"),
    date: (iso) => (iso ? date.format(new Date(iso)) : "—"),
    number: (value) => number.format(value),
    month: (period) => {
      const [year, monthNumber] = period.split("-").map(Number);
      return year && monthNumber ? month.format(new Date(Date.UTC(year, monthNumber - 1, 1))) : period;
    },
  };
}

/** Money in the organization's currency, times in its time zone. */
export function useFormat(): Formatters {
  const { org } = useOrg();
  return useMemo(() => makeFormatters(org.currency, org.time_zone), [org.currency, org.time_zone]);
}

export function frequencyLabel(frequency: number | null | undefined): string {
  if (frequency === 12) return "Monthly";
  if (frequency === 1) return "Yearly";
  if (frequency === 0) return "One-off";
  return frequency == null ? "—" : `${frequency}× a year`;
}

export function supporterName(
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
  if (supporter.erase_date) return "Erased supporter";
  return supporter.id ? `Supporter #${supporter.id}` : "—";
}
