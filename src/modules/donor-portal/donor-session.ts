import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { cookieAttributes } from "../../http/cookies.js";
import { isLocale, type Locale, localeOr } from "../../i18n/locales.js";
import { loadDonorSession } from "../../identity/donor-sessions.service.js";
import { tokensEqual } from "../../identity/sessions.service.js";
import { findOrganizationBySlug } from "../organizations/organizations.repo.js";
import { findDonorLocale } from "./donor-portal.repo.js";
import { negotiatePortalLocale, PortalRefusal, rememberLocaleChoice } from "./portal-i18n.js";

/**
 * A signed-in donor: an email address within one organization. Every supporter record of that
 * organization with this email (compared case-insensitively) is theirs; nothing else is.
 */
export interface DonorSession {
  organizationId: number;
  organizationSlug: string;
  /** Shown at the top of every portal page. */
  organizationName: string;
  /** The organization's time zone (dates on the portal's pages). */
  timeZone: string;
  currency: string;
  /** The organization is in test mode: every page shows the test banner. */
  testMode: boolean;
  /** The email the donor signed in with, lower-cased. */
  email: string;
  /** Every form of the portal posts it back (field `csrf`); `checkDonorCsrf` compares. */
  csrfToken: string;
  /** The language of this request's pages (negotiated: src/modules/donor-portal/portal-i18n.ts). */
  locale: Locale;
  /** The language the donor's records keep (supporters.locale), if any. */
  savedLocale?: Locale;
}

/** The portal's base path for an organization: `/donor/{slug}/`. */
export function portalPath(organizationSlug: string, rest = ""): string {
  return `/donor/${encodeURIComponent(organizationSlug)}/${rest}`;
}

/**
 * The donor signed in for the organization of the URL's `:org` parameter, or undefined after
 * redirecting the browser to the sign-in page (303). Implemented by `createRequireDonor`.
 */
export type RequireDonor = (request: FastifyRequest, reply: FastifyReply) => Promise<DonorSession | undefined>;

export const DONOR_COOKIE = "donata_donor";

/**
 * The session cookie of one organization's portal: sent only to `/donor/{slug}/…`, never to scripts.
 * Lax, not Strict: donors arrive from their mailbox and come back from Stripe, both other sites, and
 * the portal must know them then. Without `maxAgeSeconds`: the attributes that clear it.
 */
export function donorCookieOptions(config: Pick<Config, "baseUrl">, organizationSlug: string, maxAgeSeconds?: number) {
  return {
    ...cookieAttributes(config.baseUrl, { path: portalPath(organizationSlug), sameSite: "lax" }),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

export interface PortalOrganization {
  id: number;
  slug: string;
  name: string;
  timeZone: string;
  currency: string;
  testMode: boolean;
  /** The organization's language: the portal's last word before English. */
  locale: Locale;
}

const organizationNotFound = () => new PortalRefusal("organization_not_found", "portal.errors.organization_not_found");

/** The organization of the URL's `:org` parameter; unknown: 404 (the portal's error page). */
export async function portalOrganization(db: Db, request: FastifyRequest): Promise<PortalOrganization> {
  const slug = (request.params as { org?: unknown }).org;
  if (typeof slug !== "string" || slug.length === 0 || slug.length > 100) throw organizationNotFound();
  const row = await findOrganizationBySlug(db, slug);
  if (!row) throw organizationNotFound();
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    timeZone: row.timeZone,
    currency: row.currency,
    testMode: row.testMode,
    locale: localeOr(row.locale),
  };
}

/** The donor whose cookie this request carries for this organization, if the session is live. */
export async function findDonorSession(
  db: Db,
  organization: PortalOrganization,
  request: FastifyRequest,
): Promise<DonorSession | undefined> {
  // Scoped by the URL's organization: a session of another organization's portal is no session here.
  const row = await loadDonorSession(db, organization.id, request.cookies[DONOR_COOKIE], request.ip);
  if (!row) return undefined;
  const saved = await findDonorLocale(db, organization.id, row.email);
  const savedLocale = saved === undefined ? undefined : localeOr(saved);
  return {
    organizationId: organization.id,
    organizationSlug: organization.slug,
    organizationName: organization.name,
    timeZone: organization.timeZone,
    currency: organization.currency,
    testMode: organization.testMode,
    email: row.email,
    csrfToken: row.csrfToken,
    locale: negotiatePortalLocale(request, organization, savedLocale),
    savedLocale,
  };
}

/**
 * A page of the portal to return to after signing in (`gifts/12`), as the part of its path after
 * `/donor/{org}/`: letters, digits, dashes and slashes only, so it can never lead elsewhere.
 */
export function portalReturnPath(raw: unknown): string | undefined {
  if (typeof raw !== "string" || raw.length > 100 || !/^[a-z0-9][a-z0-9/-]*$/i.test(raw)) return undefined;
  return raw;
}

/** The sign-in page, remembering the page a signed-out donor asked for (GET only: a form cannot be replayed). */
export function signInLocation(organizationSlug: string, request: FastifyRequest): string {
  const home = portalPath(organizationSlug);
  if (request.method !== "GET") return home;
  const path = (request.url.split("?")[0] as string).replace(/^\/donor\/[^/]+\//, "");
  const next = portalReturnPath(path);
  return next ? `${home}?next=${encodeURIComponent(next)}` : home;
}

/**
 * The RequireDonor of the portal's pages: signed out, the browser goes to the sign-in page (303).
 * A language chosen with `?lang=` is remembered for the donor.
 */
export function createRequireDonor(db: Db, config: Pick<Config, "baseUrl">): RequireDonor {
  return async (request, reply) => {
    const organization = await portalOrganization(db, request);
    const session = await findDonorSession(db, organization, request);
    if (!session) {
      // A language asked for goes along to the sign-in page (which remembers it).
      const lang = (request.query as { lang?: unknown } | undefined)?.lang;
      const location = signInLocation(organization.slug, request);
      const withLang = isLocale(lang) ? `${location}${location.includes("?") ? "&" : "?"}lang=${lang}` : location;
      await reply.code(303).header("cache-control", "no-store").redirect(withLang);
      return undefined;
    }
    await rememberLocaleChoice(db, config, request, reply, session);
    return session;
  };
}

/** Every POST of the portal carries the session's CSRF token in the field `csrf`; otherwise 403. */
export function checkDonorCsrf(session: DonorSession, body: unknown): void {
  const given = (body as { csrf?: unknown } | null | undefined)?.csrf;
  if (!tokensEqual(typeof given === "string" ? given : undefined, session.csrfToken)) {
    throw new PortalRefusal("csrf_refused", "portal.errors.csrf_refused");
  }
}
