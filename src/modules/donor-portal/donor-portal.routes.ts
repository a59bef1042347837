import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { createAfterResponse } from "../../http/after-response.js";
import type { LimitStore } from "../../limits/rate-limiter.js";
import type { DocumentLinks } from "../documents/document-links.js";
import { countSignInRequest, enterWithLink, queueSignInLink, signOutDonor } from "./donor-links.service.js";
import { type ContactFormState, checkInboxBody, deadLinkBody, homeBody, signInBody } from "./donor-portal.page.js";
import { exportDonorData, loadDonorHome, parseContactForm, updateDonorContact } from "./donor-portal.service.js";
import {
  checkDonorCsrf,
  createRequireDonor,
  DONOR_COOKIE,
  DONOR_SESSION_TTL_SECONDS,
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

/**
 * The portal's pages answer errors as pages: a refusal (4xx) shows its message with the status,
 * anything else a generic page. The recurring-gift pages use the same handler.
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
    const message = error.validation
      ? "There is no donor portal at this address."
      : refused
        ? error.message
        : "The page could not be shown. Try again in a moment.";
    return portalErrorPage(reply, { status, message, organization });
  };
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
  const requireDonor = createRequireDonor(db);
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
      title: "Your donations",
      session,
      status: state.status,
      body: homeBody(session, home, { notice: state.notice, contact: state.contact }),
    });
  }

  function signInPage(
    reply: FastifyReply,
    organization: PortalOrganization,
    state: {
      status?: number;
      email?: string;
      error?: string;
      notice?: string;
      next?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    return portalPage(reply, {
      title: "Sign in",
      organization,
      status: state.status,
      headers: state.headers,
      body: signInBody(organization, {
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
    const notices: Record<string, string> = {
      contact: "Your contact details were saved. We sent you a confirmation by email.",
      signed_out: "You are signed out.",
    };
    const query = request.query as Record<string, unknown>;
    const notice = notices[String(query.done)];
    if (!session) return signInPage(reply, organization, { notice, next: portalReturnPath(query.next) });
    return renderHome(reply, session, { notice });
  });

  app.post("/donor/:org/sign-in", options, async (request, reply) => {
    const organization = await portalOrganization(db, request);
    const email = (field(request.body, "email") ?? "").trim();
    const next = portalReturnPath(field(request.body, "next"));
    if (!EMAIL.test(email) || email.length > 320) {
      return signInPage(reply, organization, {
        status: 400,
        email,
        next,
        error:
          email === ""
            ? "Enter your email address"
            : "Enter an email address in the form name@example.com, at most 320 characters",
      });
    }
    try {
      await countSignInRequest(throttle, { organization, email, ip: request.ip });
    } catch (error) {
      if (error instanceof AppError && (error.status === 429 || error.status === 503)) {
        return signInPage(reply, organization, {
          status: error.status,
          email,
          next,
          error: error.message,
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
    return portalPage(reply, { title: "Check your inbox", organization, body: checkInboxBody(organization) });
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
        ? await enterWithLink(db, organization, token, request.cookies[DONOR_COOKIE])
        : undefined;
    if (!sessionToken) {
      // A link followed twice (a double click) by a donor it already signed in just opens the portal.
      if (await findDonorSession(db, organization, request)) {
        return reply.code(303).header("cache-control", "no-store").redirect(destination);
      }
      return portalPage(reply, {
        title: "Link expired",
        organization,
        status: 410,
        body: deadLinkBody(organization, next),
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
    const form = parseContactForm(request.body);
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

  // The forms' addresses opened directly (a bookmark, a reload after the session ended) lead home.
  for (const page of ["sign-in", "sign-out", "contact", "export"]) {
    app.get(`/donor/:org/${page}`, options, async (request, reply) => {
      const organization = await portalOrganization(db, request);
      return reply.code(303).redirect(portalPath(organization.slug));
    });
  }

  return requireDonor;
}
