import Negotiator from "negotiator";
import { DEFAULT_LOCALE, isLocale, type Locale } from "./locales.js";

/** The cookie a language switcher on a public page leaves: the visitor's saved choice. */
export const LOCALE_COOKIE = "donata_lang";

export interface LocaleSources {
  /** `?lang=` of the request: an explicit choice wins. */
  query?: unknown;
  /** The signed-in user's or donor's saved language, or the switcher's cookie. */
  saved?: unknown;
  /** The request's Accept-Language header. */
  acceptLanguage?: string | string[] | undefined;
  /** The organization's default language (its legal profile), the last word. */
  fallback?: unknown;
}

/**
 * The language a page, a document or a problem detail speaks: `?lang=`, then the saved choice, then
 * the browser's Accept-Language (q-values and `it-IT` → `it` honoured), then the organization's
 * default, then English.
 */
export function negotiateLocale(sources: LocaleSources): Locale {
  if (isLocale(sources.query)) return sources.query;
  if (isLocale(sources.saved)) return sources.saved;
  const accepted = acceptedLocale(sources.acceptLanguage);
  if (accepted) return accepted;
  return isLocale(sources.fallback) ? sources.fallback : DEFAULT_LOCALE;
}

/**
 * The first of our languages an Accept-Language header names, in its order of preference (q-values;
 * `it-IT` is `it`), or undefined when it names none of them: a wildcard (`*`, what a bare HTTP
 * client sends) states no language.
 */
export function acceptedLocale(header: string | string[] | undefined): Locale | undefined {
  const value = Array.isArray(header) ? header.join(",") : header;
  if (!value) return undefined;
  for (const language of new Negotiator({ headers: { "accept-language": value } }).languages()) {
    const base = language.split("-")[0]?.toLowerCase();
    if (isLocale(base)) return base;
  }
  return undefined;
}

/** What a Fastify request offers for negotiation (query `lang`, the switcher's cookie, the header). */
export function requestLocaleSources(request: {
  query?: unknown;
  cookies?: Record<string, string | undefined>;
  headers: Record<string, string | string[] | undefined>;
}): Pick<LocaleSources, "query" | "saved" | "acceptLanguage"> {
  const query =
    request.query && typeof request.query === "object" ? (request.query as { lang?: unknown }).lang : undefined;
  return {
    query,
    saved: request.cookies?.[LOCALE_COOKIE],
    acceptLanguage: request.headers["accept-language"],
  };
}
