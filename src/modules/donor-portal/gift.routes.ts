import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../errors/app-error.js";
import { requestOrigin } from "../../events/origin.js";
import { sendHtmlPage } from "../../http/html-page.js";
import { hasCentPrecision, toCents } from "../../payments/money.js";
import {
  cancelRecurring,
  changeRecurringAmount,
  changeRecurringFrequency,
  completeStripeSetup,
  donorActor,
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

const Params = Type.Object({ org: Type.String({ maxLength: 100 }), id: Type.String({ maxLength: 40 }) });

const NOTICES: Record<string, string> = {
  amount: "The amount was changed. We sent you a confirmation by email.",
  frequency: "How often you give was changed. We sent you a confirmation by email.",
  pause: "Your gift is paused. We sent you a confirmation by email.",
  resume: "Your gift is running again.",
  unchanged: "Nothing changed: your gift was already set that way.",
  payment_method: "Your payment method was updated. We sent you a confirmation by email.",
  cancel: "Your gift is cancelled. We sent you a confirmation by email.",
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
      throw new AppError("invalid_state_transition", "This gift has stopped; it can no longer be changed.");
    }
    return found;
  }

  function renderGift(reply: FastifyReply, session: DonorSession, gift: DonorGiftView, state: GiftFormState = {}) {
    return portalPage(reply, {
      title: giftTitle(gift),
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
    run: (session: DonorSession, gift: DonorGiftView) => unknown,
  ) {
    const found = await changeableGift(request, reply, true);
    if (!found) return reply;
    const { session, gift } = found;
    let done: string = form;
    try {
      if ((await run(session, gift)) === "unchanged") done = "unchanged";
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      const values = Object.fromEntries(
        Object.entries((request.body ?? {}) as Record<string, unknown>).filter(
          ([name, value]) => typeof value === "string" && name !== "csrf",
        ),
      ) as Record<string, string>;
      const state: GiftFormState = { form, errors: issuesOf(refusal, form === "pause" ? "cycles" : form), values };
      const fresh = await loadDonorGift(db, session, idOf(request));
      if (form === "cancel") {
        return portalPage(reply, {
          title: "Cancel your gift",
          session,
          status: refusal.status,
          body: cancelBody(session, fresh, state),
        });
      }
      return portalPage(reply, {
        title: giftTitle(fresh),
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
    const notice = NOTICES[String((request.query as Record<string, unknown>).done)];
    return renderGift(reply, found.session, found.gift, { notice });
  });

  app.post("/donor/:org/gifts/:id/amount", options, (request, reply) =>
    change(request, reply, "amount", (session, gift) => {
      const raw = field(request.body, "amount").trim().replace(",", ".");
      const amount = /^\d{1,9}(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
      if (Number.isNaN(amount)) {
        throw new AppError("invalid_amount", "Enter an amount such as 15 or 12.50", {
          errors: [{ field: "amount", message: "Enter an amount such as 15 or 12.50" }],
        });
      }
      if (hasCentPrecision(amount) && toCents(amount) === toCents(gift.donation.amount)) return "unchanged";
      return changeRecurringAmount(context, session.organizationId, gift.donation.id, amount, donorOf(request, gift));
    }),
  );

  app.post("/donor/:org/gifts/:id/frequency", options, (request, reply) =>
    change(request, reply, "frequency", (session, gift) => {
      const frequency = Number(field(request.body, "frequency"));
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
      title: "Cancel your gift",
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
      return sendHtmlPage(reply, state.status ?? 200, { ...STRIPE_PAGE_SECURITY, cacheControl: "no-store" }, (nonce) =>
        stripeMethodDocument(session, gift, setup, nonce, state),
      );
    }
    return portalPage(reply, {
      title: "Update the payment method",
      session,
      status: state.status,
      body: sandboxMethodBody(session, gift, state),
    });
  }

  app.get("/donor/:org/gifts/:id/payment-method", options, async (request, reply) => {
    const found = await changeableGift(request, reply, false);
    if (!found) return reply;
    return methodPage(reply, found.session, found.gift);
  });

  app.post("/donor/:org/gifts/:id/payment-method", options, async (request, reply) => {
    const found = await changeableGift(request, reply, true);
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
          throw new AppError("invalid_card", "Enter your new payment method in the form", {
            errors: [{ field: "setup_intent", message: "Enter your new payment method in the form" }],
          });
        }
        // The sandbox's card form only where the sandbox takes gifts (never a real gift in production).
        if ((await context.processors.mode(session.organizationId))?.card !== "sandbox") {
          throw new AppError("processor_not_connected", "Card changes are not available for this organization yet");
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
      const errors = issuesOf(refusal, "card_number").map((issue) => ({
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
