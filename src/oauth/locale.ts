import type { FastifyReply, FastifyRequest } from "fastify";
import type { Db } from "../db/client.js";
import { localeCookieAttributes } from "../http/cookies.js";
import { isLocale, type Locale } from "../i18n/locales.js";
import { LOCALE_COOKIE, negotiateLocale, requestLocaleSources } from "../i18n/negotiate.js";
import { findUserLocale, setUserLocale } from "../identity/users.repo.js";

export interface PageLocaleOptions {
  /** The public URL the page is served from (AUTH_URL, BASE_URL): the switcher's cookie follows it. */
  publicUrl: string;
  /** An explicit choice other than the request's `?lang=` (a form's `lang` field). */
  chosen?: unknown;
  /** The signed-in user, whose saved language (users.locale) comes before the cookie. */
  userId?: number;
  /** False: read the user's language but keep a `?lang=` in the cookie only (a GET that must change nothing). */
  saveForUser?: boolean;
  /** The organization's language, when the page knows its organization: the last word before English. */
  fallback?: unknown;
}

/**
 * The language of a sign-in, consent or welcome page: `?lang=` (remembered in the switcher's cookie
 * and, for a signed-in user, in users.locale), then the user's saved language, then the cookie, then
 * Accept-Language, then the organization's, then English. Sets Content-Language and Vary.
 */
export async function pageLocale(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  options: PageLocaleOptions,
): Promise<Locale> {
  const sources = requestLocaleSources(request);
  const query = isLocale(options.chosen) ? options.chosen : sources.query;
  const stored = options.userId === undefined ? undefined : await findUserLocale(db, options.userId);
  if (isLocale(query)) {
    reply.setCookie(LOCALE_COOKIE, query, localeCookieAttributes(options.publicUrl));
    if (options.userId !== undefined && options.saveForUser !== false && stored !== undefined && stored !== query) {
      await setUserLocale(db, options.userId, query);
    }
  }
  const locale = negotiateLocale({
    ...sources,
    query,
    saved: isLocale(stored) ? stored : sources.saved,
    fallback: options.fallback,
  });
  reply.header("content-language", locale).header("vary", "Accept-Language, Cookie");
  return locale;
}

/** Saves a language the user chose as theirs (users.locale), writing only when it changes. */
export async function rememberUserLocale(db: Db, userId: number, locale: Locale): Promise<void> {
  if ((await findUserLocale(db, userId)) !== locale) await setUserLocale(db, userId, locale);
}

/** A `?lang=` the request names explicitly (one of ours), for a form to carry it on. */
export function chosenLocale(request: FastifyRequest, body?: unknown): Locale | undefined {
  const fromBody = (body as Record<string, unknown> | undefined)?.lang;
  if (isLocale(fromBody)) return fromBody;
  const { query } = requestLocaleSources(request);
  return isLocale(query) ? query : undefined;
}
