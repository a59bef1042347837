import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../errors/app-error.js";
import { requestOrigin } from "../../events/origin.js";
import { sendHtmlPage } from "../../http/html-page.js";
import type { Locale } from "../../i18n/locales.js";
import { hasMessage, t } from "../../i18n/messages.js";
import { hasCentPrecision, toCents } from "../../payments/money.js";
import {
  cancelRecurring,
  changeRecurringAmount,
  changeRecurringFrequency,
  completeStripeSetup,
  donorActor,
  MAX_CANCEL_REASON,
  MAX_PAUSE_CYCLES,
  pauseRecurring,
  prepareStripeSetup,
  replacePaymentMethod,
  resumeRecurring,
} from "../donations/recurring-changes.service.js";
import { STRIPE_PAGE_SECURITY } from "../giving/donate-page.routes.js";
import type { GivingContext } from "../giving/giving.context.js";
import { portalErrorHandler } from "./donor-portal.routes.js";
import { checkDonorCsrf, type DonorSession, type RequireDonor } from "./donor-session.js";
import {
  awaitingCard,
  cancelBody,
  changeable,
  type DonorGiftView,
  type GiftFormState,
  giftBody,
  giftPath,
  giftTitle,
  sandboxMethodBody,
  stripeMethodDocument,
} from "./gift.page.js";
import { loadDonorGift } from "./gift.service.js";
import { portalPage } from "./portal.page.js";
import { localeHeaders, PortalRefusal, portalFormat } from "./portal-i18n.js";

const Params = Type.Object({ org: Type.String({ maxLength: 100 }), id: Type.String({ maxLength: 40 }) });

/** The notice the gift's page shows after a change (`?done=`), by the catalog's key. */
const NOTICES: Record<string, string> = {
  amount: "portal.gift.notices.amount",
  frequency: "portal.gift.notices.frequency",
  pause: "portal.gift.notices.pause",
  resume: "portal.gift.notices.resume",
  unchanged: "portal.gift.notices.unchanged",
  payment_method: "portal.gift.notices.payment_method",
  cancel: "portal.gift.notices.cancel",
};

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === "string" ? value : "";
};

/** The donor asking for a change in the portal, as the change's event and audit entry name them. */
const donorOf = (request: FastifyRequest, gift: { donation: { supporterId: number } }) =>
  donorActor(requestOrigin(request, { type: "donor", supporter_id: gift.donation.supporterId, label: "donor" }));

/** A refusal the donor can fix (4xx AppError) becomes the form's inline error; anything else is the error page's. */
function refusalOf(error: unknown): AppError | undefined {
  return error instanceof AppError && error.status < 500 && error.status !== 404 && error.status !== 403
    ? error
    : undefined;
}

const issuesOf = (error: AppError, field: string) =>
  error.errors && error.errors.length > 0 ? error.errors : [{ field, message: error.message }];

/** What the donor asked for, to word a refusal of it (the amount typed, the card's expiry). */
interface Asked {
  gift: DonorGiftView;
  amount?: number;
  frequency?: number;
  expiry?: { month: number; year: number };
}

/** The Stripe SetupIntent refusals of completeStripeSetup, told apart by their problem's code; any other is the generic one. */
const SETUP_REFUSALS: Record<string, string> = {
  setup_not_this_gift: "portal.method.errors.not_this_gift",
  setup_not_confirmed: "portal.method.errors.not_confirmed",
};

/**
 * A refusal of a change, in the page's language: the portal's own words for each refusal of the
 * services behind the forms (the campaign's amount rules, the pause, the card…), else the catalog's
 * message for the refusal's code.
 */
function refusalMessage(locale: Locale, refusal: AppError, field: string | undefined, asked: Asked): string {
  if (refusal instanceof PortalRefusal) return refusal.messageIn(locale);
  const { money } = portalFormat(locale, "UTC");
  const { campaign, donation } = asked.gift;
  const currency = donation.currency;
  const on = (name: string) => field === name || field === `card.${name}`;
  switch (refusal.code) {
    case "amount_out_of_range": {
      const min = campaign?.minSubscriptionAmount ?? null;
      const max = campaign?.maxSubscriptionAmount ?? null;
      if (min !== null && (asked.amount === undefined || asked.amount < min)) {
        return t(locale, "portal.gift.errors.amount_too_small", { min: money(min, currency) });
      }
      if (max !== null) return t(locale, "portal.gift.errors.amount_too_large", { max: money(max, currency) });
      return t(locale, "portal.gift.errors.amount_invalid");
    }
    case "custom_amount_not_allowed": {
      const asks = [...(campaign?.asksSubscription ?? []).map(Number)];
      if (campaign?.defaultSubscriptionAmount != null && !asks.includes(campaign.defaultSubscriptionAmount)) {
        asks.push(campaign.defaultSubscriptionAmount);
      }
      const amounts = asks.map((ask) => money(ask, currency)).join(", ");
      return t(locale, "portal.gift.errors.amount_not_offered", { amounts });
    }
    case "invalid_amount":
      return t(locale, "portal.gift.errors.amount_invalid");
    case "amount_below_minimum":
      return t(locale, "portal.gift.errors.amount_below_processor");
    case "frequency_not_offered":
      return t(
        locale,
        asked.frequency === 1 ? "portal.gift.errors.yearly_not_offered" : "portal.gift.errors.monthly_not_offered",
      );
    case "invalid_state_transition":
      return t(locale, "portal.gift.errors.not_possible");
    case "processor_not_connected":
      return t(locale, "portal.method.errors.unavailable");
    case "invalid_request":
    case "invalid_card": {
      if (on("cycles")) return t(locale, "portal.gift.errors.pause_cycles", { max: String(MAX_PAUSE_CYCLES) });
      if (on("reason")) return t(locale, "portal.gift.errors.reason_too_long", { max: String(MAX_CANCEL_REASON) });
      if (on("frequency")) return t(locale, "portal.gift.errors.frequency_invalid");
      if (on("amount")) return t(locale, "portal.gift.errors.amount_invalid");
      if (on("number") || on("card_number") || field === "card") return t(locale, "portal.method.errors.card_number");
      if (on("exp_month")) return t(locale, "portal.method.errors.exp_month");
      if (on("exp_year")) {
        const { month, year } = asked.expiry ?? { month: 0, year: 0 };
        const wellFormed = Number.isInteger(year) && year >= 2000 && year <= 2100 && month >= 1 && month <= 12;
        return t(locale, wellFormed ? "portal.method.errors.expired" : "portal.method.errors.exp_year");
      }
      if (on("cvc")) return t(locale, "portal.method.errors.cvc");
      if (on("setup_intent")) {
        const code = refusal.errors?.find((issue) => issue.field === "setup_intent")?.code;
        const known = code ? SETUP_REFUSALS[code] : undefined;
        return t(locale, known ?? "portal.method.errors.unknown_setup");
      }
      break;
    }
  }
  return t(locale, hasMessage(`errors.${refusal.code}`) ? `errors.${refusal.code}` : "portal.errors.refused");
}

/** A refusal's issues, each worded in the page's language, on the fields the form has. */
const localIssues = (locale: Locale, refusal: AppError, field: string, asked: Asked) =>
  issuesOf(refusal, field).map((issue) => ({
    ...issue,
    message: refusalMessage(locale, refusal, issue.field, asked),
  }));

/**
 * The donor portal's recurring-gift pages: `/donor/{org}/gifts/{id}` and one POST per change, each
 * through the services the admin uses. A gift of another donor or organization is a 404 page.
 */
export function giftRoutes(app: FastifyInstance, context: GivingContext, requireDonor: RequireDonor) {
  const { db } = context;
  const options = { schema: { hide: true, params: Params }, errorHandler: portalErrorHandler(db) };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  /** The signed-in donor and their gift, or undefined once the browser was sent to sign in. */
  async function donorGift(request: FastifyRequest, reply: FastifyReply, post: boolean) {
    const session = await requireDonor(request, reply);
    if (!session) return undefined;
    if (post) checkDonorCsrf(session, request.body);
    return { session, gift: await loadDonorGift(db, session, idOf(request)) };
  }

  /** The pages of one change (cancel, payment method) exist only while the gift can change. */
  async function changeableGift(request: FastifyRequest, reply: FastifyReply, post: boolean) {
    const found = await donorGift(request, reply, post);
    if (found && !changeable(found.gift.donation)) {
      throw new PortalRefusal("invalid_state_transition", "portal.errors.gift_stopped");
    }
    return found;
  }

  /** A gift whose card may change: a changeable one, or an imported one waiting for its donor's card. */
  async function methodGift(request: FastifyRequest, reply: FastifyReply, post: boolean) {
    const found = await donorGift(request, reply, post);
    if (found && !changeable(found.gift.donation) && !awaitingCard(found.gift.donation)) {
      throw new PortalRefusal("invalid_state_transition", "portal.errors.gift_stopped");
    }
    return found;
  }

  function renderGift(reply: FastifyReply, session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}) {
    return portalPage(reply, {
      title: giftTitle(gift, session.locale),
      locale: session.locale,
      path: giftPath(session, gift.donation.id),
      session,
      body: giftBody(session, gift, state),
    });
  }

  /** Runs a change: on success back to the gift's page with a notice; a refusal shows the form again. */
  async function change(
    request: FastifyRequest,
    reply: FastifyReply,
    form: NonNullable<GiftFormState["form"]>,
    /** The change; `"unchanged"` when the gift already was as asked (no confirmation is sent then). */
    run: (session: DonorSession, gift: DonorGiftView, asked: Asked) => unknown,
  ) {
    const found = await changeableGift(request, reply, true);
    if (!found) return reply;
    const { session, gift } = found;
    const { locale } = session;
    let done: string = form;
    const asked: Asked = { gift };
    try {
      if ((await run(session, gift, asked)) === "unchanged") done = "unchanged";
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      const values = Object.fromEntries(
        Object.entries((request.body ?? {}) as Record<string, unknown>).filter(
          ([name, value]) => typeof value === "string" && name !== "csrf",
        ),
      ) as Record<string, string>;
      const fresh = await loadDonorGift(db, session, idOf(request));
      const errors = localIssues(locale, refusal, form === "pause" ? "cycles" : form, { ...asked, gift: fresh });
      const state: GiftFormState = { form, errors, values };
      if (form === "cancel") {
        return portalPage(reply, {
          title: t(locale, "portal.cancel.title"),
          locale,
          path: giftPath(session, fresh.donation.id, "cancel"),
          session,
          status: refusal.status,
          body: cancelBody(session, fresh, state),
        });
      }
      return portalPage(reply, {
        title: giftTitle(fresh, locale),
        locale,
        path: giftPath(session, fresh.donation.id),
        session,
        status: refusal.status,
        body: giftBody(session, fresh, state),
      });
    }
    return reply.code(303).redirect(`${giftPath(session, gift.donation.id)}?done=${done}`);
  }

  app.get("/donor/:org/gifts/:id", options, async (request, reply) => {
    const found = await donorGift(request, reply, false);
    if (!found) return reply;
    const key = NOTICES[String((request.query as Record<string, unknown>).done)];
    const notice = key ? t(found.session.locale, key) : undefined;
    return renderGift(reply, found.session, found.gift, { notice });
  });

  app.post("/donor/:org/gifts/:id/amount", options, (request, reply) =>
    change(request, reply, "amount", (session, gift, asked) => {
      const raw = field(request.body, "amount").trim().replace(",", ".");
      const amount = /^\d{1,9}(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
      if (Number.isNaN(amount)) {
        throw new PortalRefusal("invalid_amount", "portal.gift.errors.amount_format", {}, { field: "amount" });
      }
      asked.amount = amount;
      if (hasCentPrecision(amount) && toCents(amount) === toCents(gift.donation.amount)) return "unchanged";
      return changeRecurringAmount(context, session.organizationId, gift.donation.id, amount, donorOf(request, gift));
    }),
  );

  app.post("/donor/:org/gifts/:id/frequency", options, (request, reply) =>
    change(request, reply, "frequency", (session, gift, asked) => {
      const frequency = Number(field(request.body, "frequency"));
      asked.frequency = frequency;
      if (frequency === gift.donation.frequency && gift.donation.state === "active") return "unchanged";
      return changeRecurringFrequency(
        context,
        session.organizationId,
        gift.donation.id,
        frequency,
        donorOf(request, gift),
      );
    }),
  );

  app.post("/donor/:org/gifts/:id/pause", options, (request, reply) =>
    change(request, reply, "pause", (session, gift) => {
      const raw = field(request.body, "cycles");
      return pauseRecurring(
        context,
        session.organizationId,
        gift.donation.id,
        /^\d$/.test(raw) ? Number(raw) : 0,
        donorOf(request, gift),
      );
    }),
  );

  app.post("/donor/:org/gifts/:id/resume", options, (request, reply) =>
    change(request, reply, "resume", (session, gift) =>
      resumeRecurring(context, session.organizationId, gift.donation.id, donorOf(request, gift)),
    ),
  );

  app.get("/donor/:org/gifts/:id/cancel", options, async (request, reply) => {
    const found = await changeableGift(request, reply, false);
    if (!found) return reply;
    return portalPage(reply, {
      title: t(found.session.locale, "portal.cancel.title"),
      locale: found.session.locale,
      path: giftPath(found.session, found.gift.donation.id, "cancel"),
      session: found.session,
      body: cancelBody(found.session, found.gift),
    });
  });

  app.post("/donor/:org/gifts/:id/cancel", options, (request, reply) =>
    change(request, reply, "cancel", (session, gift) =>
      cancelRecurring(
        context,
        session.organizationId,
        gift.donation.id,
        { reason: field(request.body, "reason") },
        donorOf(request, gift),
      ),
    ),
  );

  /** The payment-method page: Stripe's Payment Element with a fresh SetupIntent, or the sandbox card form. */
  async function methodPage(
    reply: FastifyReply,
    session: DonorSession,
    gift: DonorGiftView,
    state: GiftFormState & { status?: number } = {},
  ) {
    const setup = await prepareStripeSetup(context, session.organizationId, gift.donation.id);
    if (setup) {
      const security = { ...STRIPE_PAGE_SECURITY, cacheControl: "no-store", headers: localeHeaders(session.locale) };
      return sendHtmlPage(reply, state.status ?? 200, security, (nonce) =>
        stripeMethodDocument(session, gift, setup, nonce, state),
      );
    }
    return portalPage(reply, {
      title: t(session.locale, "portal.method.title"),
      locale: session.locale,
      path: giftPath(session, gift.donation.id, "payment-method"),
      session,
      status: state.status,
      body: sandboxMethodBody(session, gift, state),
    });
  }

  app.get("/donor/:org/gifts/:id/payment-method", options, async (request, reply) => {
    const found = await methodGift(request, reply, false);
    if (!found) return reply;
    return methodPage(reply, found.session, found.gift);
  });

  app.post("/donor/:org/gifts/:id/payment-method", options, async (request, reply) => {
    const found = await methodGift(request, reply, true);
    if (!found) return reply;
    const { session, gift } = found;
    const body = request.body;
    try {
      const setupIntent = field(body, "setup_intent");
      if (setupIntent) {
        await completeStripeSetup(
          context,
          session.organizationId,
          gift.donation.id,
          setupIntent,
          donorOf(request, gift),
        );
      } else {
        if (await context.processors.stripeAccount(session.organizationId)) {
          throw new PortalRefusal("invalid_card", "portal.method.errors.setup_missing", {}, { field: "setup_intent" });
        }
        // The sandbox's card form only where the sandbox takes gifts (never a real gift in production).
        if ((await context.processors.mode(session.organizationId))?.card !== "sandbox") {
          throw new PortalRefusal("processor_not_connected", "portal.method.errors.unavailable");
        }
        const card = {
          number: field(body, "card_number"),
          exp_month: Number(field(body, "exp_month")),
          exp_year: Number(field(body, "exp_year")),
          cvc: field(body, "cvc"),
        };
        await replacePaymentMethod(
          context,
          session.organizationId,
          gift.donation.id,
          { processor: "sandbox", card },
          donorOf(request, gift),
        );
      }
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      // The card form's fields are card_number, exp_month…; the processor names them card.number, card.exp_month…
      const expiry = { month: Number(field(body, "exp_month")), year: Number(field(body, "exp_year")) };
      const errors = localIssues(session.locale, refusal, "card_number", { gift, expiry }).map((issue) => ({
        ...issue,
        field: issue.field === "card.number" ? "card_number" : issue.field?.replace(/^card\./, ""),
      }));
      const values = { exp_month: field(body, "exp_month"), exp_year: field(body, "exp_year") };
      const fresh = await loadDonorGift(db, session, idOf(request));
      return methodPage(reply, session, fresh, { form: "payment_method", errors, values, status: refusal.status });
    }
    return reply.code(303).redirect(`${giftPath(session, gift.donation.id)}?done=payment_method`);
  });
}
