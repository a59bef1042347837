import { readdirSync, readFileSync } from "node:fs";
import { IntlMessageFormat } from "intl-messageformat";
import { DEFAULT_LOCALE, LOCALES, type Locale } from "./locales.js";

/**
 * The one catalog of words: src/i18n/catalogs/<locale>/<namespace>.json (common, errors, donate,
 * email, …; the file's name is its keys' first part), nested objects whose leaves are ICU
 * MessageFormat strings (`{amount}`, `{count, plural, one {# gift} other {# gifts}}`, `{kind, select, …}`).
 * A key is the leaves' dotted path (`donate.submit`); pages, documents, emails, problem details and
 * the admin panel all read from here. test/i18n.test.ts fails on a key missing from a language, a
 * key nothing uses, or a message that does not parse.
 */

export type Catalog = { [key: string]: string | Catalog };
export type MessageValues = Record<string, string | number | Date | boolean | null | undefined>;

const CATALOGS = new URL("./catalogs/", import.meta.url);
const catalogs = new Map<Locale, Map<string, string>>();
const formats = new Map<string, IntlMessageFormat>();

/** Every leaf of a nested catalog, by its dotted key. */
export function flattenCatalog(catalog: Catalog, prefix = "", into = new Map<string, string>()): Map<string, string> {
  for (const [key, value] of Object.entries(catalog)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === "string") into.set(path, value);
    else flattenCatalog(value, path, into);
  }
  return into;
}

/** A language's whole catalog, one namespace per file. */
export function readCatalog(locale: Locale): Catalog {
  const directory = new URL(`${locale}/`, CATALOGS);
  const catalog: Catalog = {};
  for (const file of readdirSync(directory).sort()) {
    if (!file.endsWith(".json")) continue;
    catalog[file.slice(0, -5)] = JSON.parse(readFileSync(new URL(file, directory), "utf8")) as Catalog;
  }
  return catalog;
}

/** A locale's messages by dotted key (read once). */
export function messagesOf(locale: Locale): Map<string, string> {
  let found = catalogs.get(locale);
  if (!found) {
    found = flattenCatalog(readCatalog(locale));
    catalogs.set(locale, found);
  }
  return found;
}

/** The raw ICU message of a key: the locale's, else English's (a language may lag), else undefined. */
export function rawMessage(locale: Locale, key: string): string | undefined {
  return messagesOf(locale).get(key) ?? messagesOf(DEFAULT_LOCALE).get(key);
}

export const hasMessage = (key: string): boolean => messagesOf(DEFAULT_LOCALE).has(key);

/**
 * A message of the catalog in a language, its arguments filled (numbers and plurals by the
 * language's rules). A key no catalog has is a programming error: it throws, and the catalog test
 * catches it before a reader could.
 */
export function t(locale: Locale, key: string, values: MessageValues = {}): string {
  const message = rawMessage(locale, key);
  if (message === undefined) throw new Error(`i18n: no message "${key}"`);
  const id = `${locale}\u0000${key}`;
  let format = formats.get(id);
  if (!format) {
    format = new IntlMessageFormat(message, locale, undefined, { ignoreTag: true });
    formats.set(id, format);
  }
  const cleaned: Record<string, string | number | Date | boolean> = {};
  for (const [name, value] of Object.entries(values)) if (value !== null && value !== undefined) cleaned[name] = value;
  return String(format.format(cleaned));
}

/**
 * The messages under a prefix (`donate.script`), raw, for a page's script: their arguments are plain
 * `{name}` ones (the catalog test holds them to that), which the script fills itself.
 */
export function messagesUnder(locale: Locale, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of messagesOf(DEFAULT_LOCALE).keys()) {
    if (key.startsWith(`${prefix}.`)) out[key.slice(prefix.length + 1)] = rawMessage(locale, key) as string;
  }
  return out;
}

export { LOCALES };
