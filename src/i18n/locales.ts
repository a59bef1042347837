/**
 * The languages the product speaks. Adding one: its catalog in src/i18n/catalogs/<code>/ (every file
 * key English has), the code here and in the organizations_locale_check constraint (a migration);
 * docs/localization.md walks through it.
 */
export const LOCALES = ["en", "it"] as const;
export type Locale = (typeof LOCALES)[number];

export const DEFAULT_LOCALE: Locale = "en";

/** Each language's name in itself, for the language switchers. */
export const LOCALE_NAMES: Record<Locale, string> = { en: "English", it: "Italiano" };

export const isLocale = (value: unknown): value is Locale =>
  typeof value === "string" && (LOCALES as readonly string[]).includes(value);

/** A stored or requested locale, or the fallback when it is none of ours. */
export const localeOr = (value: unknown, fallback: Locale = DEFAULT_LOCALE): Locale =>
  isLocale(value) ? value : fallback;
