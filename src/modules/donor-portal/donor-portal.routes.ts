import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { createAfterResponse } from "../../http/after-response.js";
import { sessionContext } from "../../http/session-cookie.js";
import { isLocale, type Locale } from "../../i18n/locales.js";
import { hasMessage, t } from "../../i18n/messages.js";
import { DONOR_SESSION_TTL_SECONDS } from "../../identity/donor-sessions.service.js";
import type { LimitStore } from "../../limits/rate-limiter.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { countSignInRequest, enterWithLink, queueSignInLink, signOutDonor } from "./donor-links.service.js";
import { type ContactFormState, checkInboxBody, deadLinkBody, homeBody, signInBody } from "./donor-portal.page.js";
import { exportDonorData, loadDonorHome, parseContactForm, updateDonorContact } from "./donor-portal.service.js";
import {
  checkDonorCsrf,
  createRequireDonor,
  DONOR_COOKIE,
  type DonorSession,
  donorCookieOptions,
  findDonorSession,
  type PortalOrganization,
  portalOrganization,
  portalPath,
  portalReturnPath,
  type RequireDonor,
} from "./donor-session.js";
import { portalErrorPage, portalPage } from "./portal.page.js";
import { negotiatedLocaleOf, negotiatePortalLocale, PortalRefusal, rememberLocaleChoice } from "./portal-i18n.js";

export interface DonorPortalDependencies {
  db: Db;
  config: Config;
  links: DocumentLinks;
  /** The shared rate-limit counters (database or Redis), for the sign-in form's limits. */
  limits: LimitStore;
  /** Test-only: awaited after the sign-in form answered, before it looks the email up. */
  beforeSignInLinkQueued?: () => Promise<void> | void;
}

const Params = Type.Object({ org: Type.String({ maxLength: 100 }) });

/** The simplest address check: something@something.something, no spaces; the link proves the rest. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The portal's words for the refusals it meets that it does not word itself (PortalRefusal). */
const PAGE_ERRORS: Partial<Record<string, string>> = {
  organization_not_found: "portal.errors.organization_not_found",
  csrf_refused: "portal.errors.csrf_refused",
  cross_origin_refused: "portal.errors.cross_origin_refused",
  not_found: "portal.errors.gift_not_found",
};

/** What an error page says: the portal's own message for the refusal, else the catalog's for its code. */
function errorMessage(error: FastifyError, locale: Locale, refused: boolean): string {
  if (error.validation) return t(locale, "portal.errors.organization_not_found");
  if (!refused) return t(locale, "portal.errors.server");
  if (error instanceof PortalRefusal) return error.messageIn(locale);
  const code =
    error instanceof AppError ? error.code : (error.code ?? "").replace(/^FST_ERR_/, "").toLowerCase() || "bad_request";
  const key = PAGE_ERRORS[code] ?? (hasMessage(`errors.${code}`) ? `errors.${code}` : "portal.errors.refused");
  return t(locale, key);
}

/**
 * The portal's pages answer errors as pages, in the page's language: a refusal (4xx) says what was
 * refused with the status, anything else a generic page. The recurring-gift pages use the same handler.
 */
export function portalErrorHandler(db: Db) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // The only validated input is the slug: one no organization can have is simply not found.
    const status = error instanceof AppError ? error.status : error.validation ? 404 : error.statusCode || 500;
    const refused = status < 500 || error instanceof AppError;
    if (!refused) request.log.error({ err: error }, "donor portal page failed");
    if (error instanceof AppError && error.headers) reply.headers(error.headers);
    const unknownOrganization =
      error.validation !== undefined || (error instanceof AppError && error.code === "organization_not_found");
    const organization = unknownOrganization ? undefined : await portalOrganization(db, request).catch(() => undefined);
    // The language the page was being shown in; else the signed-in donor's, the request's, the organization's.
    let locale = negotiatedLocaleOf(request);
    if (!locale && organization)
      locale = (await findDonorSession(db, organization, request).catch(() => undefined))?.locale;
    locale ??= negotiatePortalLocale(request, organization);
    const message = errorMessage(error, locale, refused);
    return portalErrorPage(reply, { status, message, organization, locale, path: pagePathOf(request) });
  };
}

/** The address of the page a request shows, for its language switcher: a form's answer switches on the page it came from. */
export function pagePathOf(request: FastifyRequest): string {
  const path = request.url.split("?")[0] as string;
  if (request.method === "GET" || /\/gifts\/[^/]+\/(cancel|payment-method)$/.test(path)) return path;
  const gift = /^\/donor\/[^/]+\/gifts\/[^/]+/.exec(path)?.[0];
  return gift ?? /^\/donor\/[^/]+\//.exec(path)?.[0] ?? path;
}

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * The donor portal: `/donor/{org}/` signs a donor in by email link and shows their gifts, receipts,
 * statements and contact details. Returns the RequireDonor the recurring-gift pages use.
 */
export function donorPortalRoutes(app: FastifyInstance, deps: DonorPortalDependencies): RequireDonor {
  const { db, config, links } = deps;
  const requireDonor = createRequireDonor(db, config);
  const throttle = { store: deps.limits, rules: config.rateLimits };
  const afterResponse = createAfterResponse(app);
  const options = { schema: { hide: true, params: Params }, errorHandler: portalErrorHandler(db) };

  async function renderHome(
    reply: FastifyReply,
    session: DonorSession,
    state: { status?: number; notice?: string; contact?: ContactFormState } = {},
  ) {
    const home = await loadDonorHome(db, session, links);
    return portalPage(reply, {
      title: t(session.locale, "portal.home.title"),
      locale: session.locale,
      path: portalPath(session.organizationSlug),
      session,
      status: state.status,
      body: homeBody(session, home, { notice: state.notice, contact: state.contact }),
    });
  }

  function signInPage(
    reply: FastifyReply,
    organization: PortalOrganization,
    locale: Locale,
    state: {
      status?: number;
      email?: string;
      error?: string;
      notice?: string;
      next?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    // The switcher keeps the page to come back to after signing in.
    const next = state.next ? `?next=${encodeURIComponent(state.next)}` : "";
    return portalPage(reply, {
      title: t(locale, "portal.sign_in.title"),
      locale,
      path: `${portalPath(organization.slug)}${next}`,
      organization,
      status: state.status,
      headers: state.headers,
      body: signInBody(organization, locale, {
        email: state.email,
        notice: state.notice,
        next: state.next,
        errors: state.error ? [{ field: "email", message: state.error }] : [],
      }),
    });
  }

  app.get("/donor/:org/", options, async (request, reply) => {
    const organization = await portalOrganization(db, request);
    const [path, search] = request.url.split("?") as [string, string | undefined];
    // The session cookie's path ends with a slash: without it the browser would not send the cookie.
    if (!path.endsWith("/"))
      return reply.redirect(`${portalPath(organization.slug)}${search ? `?${search}` : ""}`, 308);
    const session = await findDonorSession(db, organization, request);
    await rememberLocaleChoice(db, config, request, reply, session);
    const locale = session?.locale ?? negotiatePortalLocale(request, organization);
    const notices: Record<string, string> = {
      contact: "portal.notices.contact_saved",
      signed_out: "portal.notices.signed_out",
    };
    const query = request.query as Record<string, unknown>;
    const noticeKey = notices[String(query.done)];
    const notice = noticeKey ? t(locale, noticeKey) : undefined;
    if (!session) return signInPage(reply, organization, locale, { notice, next: portalReturnPath(query.next) });
    return renderHome(reply, session, { notice });
  });

  app.post("/donor/:org/sign-in", options, async (request, reply) => {
    const organization = await portalOrganization(db, request);
    // Signed in or not, the answer is the same: the language comes from the request and the organization alone.
    const locale = negotiatePortalLocale(request, organization);
    const email = (field(request.body, "email") ?? "").trim();
    const next = portalReturnPath(field(request.body, "next"));
    if (!EMAIL.test(email) || email.length > 320) {
      return signInPage(reply, organization, locale, {
        status: 400,
        email,
        next,
        error: t(locale, email === "" ? "portal.sign_in.errors.email_missing" : "portal.sign_in.errors.email_invalid"),
      });
    }
    try {
      await countSignInRequest(throttle, { organization, email, ip: request.ip });
    } catch (error) {
      if (error instanceof AppError && (error.status === 429 || error.status === 503)) {
        return signInPage(reply, organization, locale, {
          status: error.status,
          email,
          next,
          error: t(
            locale,
            error.status === 429 ? "portal.sign_in.errors.too_many" : "portal.sign_in.errors.unavailable",
          ),
          headers: error.headers,
        });
      }
      throw error;
    }
    // Known or not, the answer is the same and leaves at the same moment: the lookup comes after it.
    afterResponse(request, reply, async () => {
      await deps.beforeSignInLinkQueued?.();
      await queueSignInLink(db, { organization, email, baseUrl: config.baseUrl, next });
    });
    return portalPage(reply, {
      title: t(locale, "portal.check_inbox.title"),
      locale,
      // Its own address takes no GET: the switcher leads to the sign-in page in the other language.
      path: portalPath(organization.slug, "sign-in"),
      organization,
      body: checkInboxBody(organization, locale),
    });
  });

  app.get("/donor/:org/enter", options, async (request, reply) => {
    const organization = await portalOrganization(db, request);
    // A HEAD (a mail client's link check) must not use up a single-use link.
    if (request.method === "HEAD") return reply.code(200).header("cache-control", "no-store").send();
    const { token, next: rawNext } = request.query as Record<string, unknown>;
    const next = portalReturnPath(rawNext);
    const destination = portalPath(organization.slug, next);
    const sessionToken =
      typeof token === "string"
        ? await enterWithLink(db, organization, token, request.cookies[DONOR_COOKIE], sessionContext(request))
        : undefined;
    if (!sessionToken) {
      // A link followed twice (a double click) by a donor it already signed in just opens the portal.
      if (await findDonorSession(db, organization, request)) {
        return reply.code(303).header("cache-control", "no-store").redirect(destination);
      }
      await rememberLocaleChoice(db, config, request, reply);
      const locale = negotiatePortalLocale(request, organization);
      return portalPage(reply, {
        title: t(locale, "portal.dead_link.title"),
        locale,
        path: `${portalPath(organization.slug, "enter")}${next ? `?next=${encodeURIComponent(next)}` : ""}`,
        organization,
        status: 410,
        body: deadLinkBody(organization, locale, next),
      });
    }
    reply.setCookie(
      DONOR_COOKIE,
      sessionToken,
      donorCookieOptions(config, organization.slug, DONOR_SESSION_TTL_SECONDS),
    );
    return reply.code(303).header("cache-control", "no-store").redirect(destination);
  });

  app.post("/donor/:org/sign-out", options, async (request, reply) => {
    const organization = await portalOrganization(db, request);
    const session = await findDonorSession(db, organization, request);
    if (session) {
      checkDonorCsrf(session, request.body);
      await signOutDonor(db, organization, request.cookies[DONOR_COOKIE]);
    }
    reply.clearCookie(DONOR_COOKIE, donorCookieOptions(config, organization.slug));
    return reply.code(303).redirect(`${portalPath(organization.slug)}?done=signed_out`);
  });

  app.post("/donor/:org/contact", options, async (request, reply) => {
    const session = await requireDonor(request, reply);
    if (!session) return reply;
    checkDonorCsrf(session, request.body);
    const form = parseContactForm(request.body, session.locale);
    if (form.errors.length > 0) {
      return renderHome(reply, session, { status: 400, contact: { values: form.values, errors: form.errors } });
    }
    await updateDonorContact(db, session, form.patch, request);
    return reply.code(303).redirect(`${portalPath(session.organizationSlug)}?done=contact`);
  });

  app.post("/donor/:org/export", options, async (request, reply) => {
    const session = await requireDonor(request, reply);
    if (!session) return reply;
    checkDonorCsrf(session, request.body);
    const data = await exportDonorData(db, session, request);
    const day = data.export_date.slice(0, 10);
    return reply
      .headers({
        "content-type": "application/json; charset=utf-8",
        "content-disposition": `attachment; filename="my-data-${session.organizationSlug}-${day}.json"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      })
      .send(JSON.stringify(data, null, 2));
  });

  // The forms' addresses opened directly (a bookmark, a reload after the session ended) lead home,
  // in the language asked for, if any (the check-inbox page's switcher).
  for (const page of ["sign-in", "sign-out", "contact", "export"]) {
    app.get(`/donor/:org/${page}`, options, async (request, reply) => {
      const organization = await portalOrganization(db, request);
      const lang = (request.query as { lang?: unknown }).lang;
      return reply.code(303).redirect(`${portalPath(organization.slug)}${isLocale(lang) ? `?lang=${lang}` : ""}`);
    });
  }

  return requireDonor;
}
