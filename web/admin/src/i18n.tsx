import { IntlMessageFormat } from "intl-messageformat";
import { createContext, Fragment, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import enErrors from "../../../src/i18n/catalogs/en/errors.json";
import enFields from "../../../src/i18n/catalogs/en/fields.json";
import enOauth from "../../../src/i18n/catalogs/en/oauth.json";
import enPanel from "../../../src/i18n/catalogs/en/panel.json";
import itErrors from "../../../src/i18n/catalogs/it/errors.json";
import itFields from "../../../src/i18n/catalogs/it/fields.json";
import itOauth from "../../../src/i18n/catalogs/it/oauth.json";
import itPanel from "../../../src/i18n/catalogs/it/panel.json";
import { DEFAULT_LOCALE, isLocale, LOCALE_NAMES, LOCALES, type Locale } from "../../../src/i18n/locales";
import { ApiError, type FieldIssue, setIssueWording } from "./api/graphql";

/**
 * The panel's words: the server's catalogs (src/i18n/catalogs/<locale>/panel.json, errors.json and fields.json,
 * and the permissions of oauth.json, so the panel and the OAuth consent page describe them alike),
 * formatted with intl-messageformat like the server's `t`. Keys are written whole in the code
 * (`t("panel.nav.dashboard")`, or a template with a specific prefix like `panel.state.${state}`) so
 * the catalog test can tell which ones are used.
 */

export { LOCALE_NAMES, LOCALES, type Locale };

type Catalog = { [key: string]: string | Catalog };
export type MessageValues = Record<string, string | number | null | undefined>;
/** Values of a message with tags (`<link>…</link>`): a tag's value renders its chunks. */
export type RichValues = Record<string, string | number | ReactNode | ((chunks: ReactNode) => ReactNode)>;

function flatten(catalog: Catalog, prefix: string, into: Map<string, string>): Map<string, string> {
  for (const [key, value] of Object.entries(catalog)) {
    const path = `${prefix}.${key}`;
    if (typeof value === "string") into.set(path, value);
    else flatten(value, path, into);
  }
  return into;
}

function messagesOf(panel: Catalog, errors: Catalog, fields: Catalog, oauth: { permissions: Catalog }) {
  const messages = flatten(panel, "panel", new Map());
  flatten(errors, "errors", messages);
  flatten(fields, "fields", messages);
  return flatten({ permissions: oauth.permissions }, "oauth", messages);
}

const MESSAGES: Record<Locale, Map<string, string>> = {
  en: messagesOf(enPanel as Catalog, enErrors, enFields, enOauth),
  it: messagesOf(itPanel as Catalog, itErrors, itFields, itOauth),
};

const formats = new Map<string, IntlMessageFormat>();

function formatOf(locale: Locale, key: string, rich: boolean): IntlMessageFormat {
  const id = `${locale}\u0000${rich ? "rich" : "text"}\u0000${key}`;
  let format = formats.get(id);
  if (!format) {
    const message = MESSAGES[locale].get(key) ?? MESSAGES.en.get(key);
    if (message === undefined) throw new Error(`i18n: no message "${key}"`);
    format = new IntlMessageFormat(message, locale, undefined, { ignoreTag: !rich });
    formats.set(id, format);
  }
  return format;
}

function cleaned<T>(values: Record<string, T | null | undefined>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of Object.entries(values)) if (value !== null && value !== undefined) out[name] = value;
  return out;
}

/** Gives each part of a formatted rich message a key, so React can render the list. */
function keyed(parts: unknown): ReactNode {
  if (!Array.isArray(parts)) return parts as ReactNode;
  return parts.map((part, index) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one message never move.
    <Fragment key={index}>{part as ReactNode}</Fragment>
  ));
}

/** A stored language if it is one of ours, else null. */
export const isLocaleOf = (value: unknown): Locale | null => (isLocale(value) ? value : null);

/** The languages the browser asks for, in order (navigator.languages), mapped to ours (`it-IT` → `it`). */
export function browserLocale(): Locale | undefined {
  const languages = typeof navigator === "undefined" ? [] : (navigator.languages ?? [navigator.language]);
  for (const language of languages) {
    const base = language?.split("-")[0]?.toLowerCase();
    if (isLocale(base)) return base;
  }
  return undefined;
}

/**
 * The tag numbers and dates are formatted with: the browser's own variant when it speaks the
 * chosen language (`en-GB` keeps day/month order), else the language itself.
 */
function formattingLocale(locale: Locale): string {
  const languages = typeof navigator === "undefined" ? [] : (navigator.languages ?? [navigator.language]);
  const own = languages.find((language) => language?.split("-")[0]?.toLowerCase() === locale);
  try {
    return own ? (Intl.getCanonicalLocales(own)[0] ?? locale) : locale;
  } catch {
    return locale;
  }
}

export type Translate = (key: string, values?: MessageValues) => string;

export interface I18n {
  locale: Locale;
  /** A BCP 47 tag for Intl (the browser's variant of `locale`, e.g. `en-GB`). */
  intlLocale: string;
  /** A message of the catalog, its arguments filled. */
  t: Translate;
  /** Whether the catalog has a message (a state or code the panel may not know yet). */
  has: (key: string) => boolean;
  /** A message with tags (`<link>…</link>`): each tag's value is a function rendering its chunks. */
  rich: (key: string, values?: RichValues) => ReactNode;
  /**
   * What to tell people of an error: in English the server's own sentence (more specific); in
   * another language the catalog's message for its code (errors.<code>), the server's text when the
   * catalog has none.
   */
  errorMessage: (error: Error | string) => string;
  /** The saved choice and the organization's language, once the panel knows them. */
  setSources: (sources: { saved?: Locale | null; organization?: Locale | null }) => void;
}

/** The panel's language: the user's saved choice → the browser's languages → the organization's → English. */
export function resolveLocale(saved: Locale | null | undefined, organization: Locale | null | undefined): Locale {
  return saved ?? browserLocale() ?? organization ?? DEFAULT_LOCALE;
}

export function makeI18n(locale: Locale, setSources: I18n["setSources"] = () => {}): I18n {
  const t = (key: string, values: MessageValues = {}) => String(formatOf(locale, key, false).format(cleaned(values)));
  const rich = (key: string, values: RichValues = {}) => {
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(cleaned(values))) {
      wrapped[name] =
        typeof value === "function"
          ? (chunks: unknown) => (value as (c: ReactNode) => ReactNode)(keyed(chunks))
          : value;
    }
    return keyed(formatOf(locale, key, true).format(wrapped as Record<string, string>));
  };
  const errorMessage = (error: Error | string): string => {
    if (typeof error === "string") return error;
    if (!(error instanceof ApiError)) return error.message || t("panel.errors.unknown");
    if (error.code === "network_error") return t("panel.errors.network");
    let text = error.message;
    if (locale !== DEFAULT_LOCALE) {
      if (error.code === "http_error") text = t("panel.errors.http", { status: error.status });
      else if (error.code === "insufficient_scope") return t("panel.errors.no_access_role");
      else if (MESSAGES[locale].has(`errors.${error.code}`)) text = t(`errors.${error.code}`);
    }
    if (error.code === "insufficient_scope") return t("panel.errors.no_access", { detail: text });
    return text;
  };
  const has = (key: string) => MESSAGES.en.has(key);
  return { locale, intlLocale: formattingLocale(locale), t, has, rich, errorMessage, setSources };
}

const I18nContext = createContext<I18n>(makeI18n(DEFAULT_LOCALE));

/** Holds the panel's language and keeps `<html lang>` in step with it. */
export function I18nProvider({ children }: { children: ReactNode }) {
  const [sources, setSourcesState] = useState<{ saved?: Locale | null; organization?: Locale | null }>({});
  const locale = resolveLocale(sources.saved, sources.organization);
  const setSources = useCallback<I18n["setSources"]>(
    (next) => setSourcesState((previous) => ({ ...previous, ...next })),
    [],
  );
  const value = useMemo(() => makeI18n(locale, setSources), [locale, setSources]);
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  // A field's problem in the panel's language, by its code (fields.<code>); else the server's words.
  useEffect(() => {
    setIssueWording((issue: FieldIssue) =>
      locale !== DEFAULT_LOCALE && issue.code && MESSAGES[locale].has(`fields.${issue.code}`)
        ? value.t(`fields.${issue.code}`, issue.values ?? {})
        : issue.message,
    );
  }, [locale, value]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  return useContext(I18nContext);
}

/** The `t(key, values)` of the panel's language. */
export function useT(): I18n["t"] {
  return useContext(I18nContext).t;
}
