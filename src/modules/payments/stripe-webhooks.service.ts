import Stripe from "stripe";
import { AppError } from "../../errors/app-error.js";
import type { StripeAccount } from "../../payments/processors/index.js";
import {
  chargeResultOf,
  refundReportOf,
  STRIPE_API_VERSION,
  STRIPE_KEY_METADATA,
  stripeMethodDetails,
} from "../../payments/processors/stripe.js";
import { fromStripeAmount } from "../../payments/processors/stripe-currencies.js";
import type { PaymentOutcome } from "../../payments/settlement.service.js";
import type { GivingContext } from "../giving/giving.context.js";
import { findOrganizationBySlug } from "../organizations/organizations.repo.js";
import { updatePaymentMethodsByReference } from "../payment-methods/payment-methods.repo.js";
import { findPaymentBy } from "./payments.repo.js";
import { findProcessorEvent, insertProcessorEvent } from "./processor-events.repo.js";
import { recordDispute, settleChargeOutcome, settleProcessorRefund } from "./processor-events.service.js";

export type WebhookContext = Pick<GivingContext, "db" | "links" | "processors">;

/**
 * What an event did, as kept in processor_events: settled (something changed or was confirmed),
 * ignored (an object Donata does not know, a type it does not handle, the other mode), duplicate
 * (delivered before; answered, not kept again), or refused:<code> (Donata could not apply it).
 */
export type EventOutcome = "settled" | "ignored" | "ignored_mode" | "duplicate" | `refused:${string}`;

/** An object id of an event's field that may be expanded. */
const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === "string" ? value : (value?.id ?? null);

function paymentOutcomeOf(intent: Stripe.PaymentIntent): PaymentOutcome {
  const result = chargeResultOf(intent);
  if (result.state === "FAILED") {
    return { state: "FAILED", intentId: result.intentId, code: result.code, message: result.message };
  }
  return { state: result.state, intentId: result.intentId };
}

async function applyEvent(
  context: WebhookContext,
  organizationId: number,
  account: StripeAccount,
  event: Stripe.Event,
): Promise<EventOutcome> {
  const now = new Date();
  // "settled" only when the event changed something: a late or repeated one that changes nothing is "ignored".
  const settled = (done: unknown): EventOutcome => (done && done !== "unchanged" ? "settled" : "ignored");
  switch (event.type) {
    // A charge's outcome, found by our key; out of order (failed after succeeded) it changes nothing.
    case "payment_intent.succeeded":
    case "payment_intent.payment_failed":
    case "payment_intent.processing": {
      const intent = event.data.object;
      const key = intent.metadata?.[STRIPE_KEY_METADATA];
      if (!key) return "ignored";
      return settled(await settleChargeOutcome(context, key, paymentOutcomeOf(intent), now, organizationId));
    }
    // Refunds, ours or made in Stripe's dashboard; charge.refunded names only the charge, so its refunds are asked.
    case "refund.created":
    case "refund.updated":
    case "refund.failed":
      return settled(
        (await settleProcessorRefund(context, organizationId, refundReportOf(event.data.object), now))?.changed,
      );
    case "charge.refunded": {
      const intentId = idOf(event.data.object.payment_intent);
      if (!intentId || !(await findPaymentBy(context.db, "processorIntentId", intentId, organizationId))) {
        return "ignored";
      }
      const reports = await account.processor.refundsOf(intentId);
      let any = false;
      for (const report of reports) {
        if ((await settleProcessorRefund(context, organizationId, report, now))?.changed) any = true;
      }
      return settled(any);
    }
    case "charge.dispute.created":
    case "charge.dispute.updated":
    case "charge.dispute.closed": {
      const dispute = event.data.object;
      const intentId = idOf(dispute.payment_intent);
      if (!intentId) return "ignored";
      return settled(
        await recordDispute(context, organizationId, intentId, {
          id: dispute.id,
          status: dispute.status,
          reason: dispute.reason,
          amountMinor: fromStripeAmount(dispute.amount, dispute.currency),
          currency: dispute.currency.toUpperCase(),
          date: new Date(dispute.created * 1000),
        }),
      );
    }
    // A card's bank sent a new expiry or number (automatically_updated), or the donor changed it.
    case "payment_method.updated":
    case "payment_method.automatically_updated": {
      const method = event.data.object;
      const updated = await updatePaymentMethodsByReference(
        context.db,
        organizationId,
        "stripe",
        method.id,
        stripeMethodDetails(method),
      );
      return settled(updated.length > 0);
    }
    default:
      return "ignored";
  }
}

/**
 * An event rendered in another API version than the one Donata speaks (the endpoint in Stripe's
 * dashboard was made with another version): its object is read again through the API, in ours,
 * so every field read has the shape the adapter knows. Objects Donata never acts on stay as sent.
 */
async function inOurVersion(account: StripeAccount, event: Stripe.Event): Promise<Stripe.Event> {
  if (!event.api_version || event.api_version === STRIPE_API_VERSION) return event;
  const current = await account.processor.currentObject(event.data.object as { object: string; id: string });
  return current ? ({ ...event, data: { ...event.data, object: current } } as unknown as Stripe.Event) : event;
}

/**
 * One delivery to `POST /webhooks/stripe/:organization`: the signature is checked with the
 * organization's webhook secret, an event id already kept is answered and ignored, an event of the
 * other mode (test/live) or about an object Donata does not know is kept as ignored, and the rest
 * is settled through the same steps as our own calls. A refusal Donata cannot apply is kept as
 * refused (answered 200: Stripe would only send it again); an outage throws, so Stripe retries.
 */
export async function receiveStripeEvent(
  context: WebhookContext,
  organizationSlug: string,
  payload: Buffer,
  signature: string | undefined,
): Promise<{ received: true; outcome: EventOutcome }> {
  const organization = await findOrganizationBySlug(context.db, organizationSlug);
  const account = organization ? await context.processors.stripeAccount(organization.id) : undefined;
  if (!organization || !account) {
    throw new AppError("organization_not_found", `No organization "${organizationSlug}" takes payments with Stripe`);
  }
  if (!signature) {
    throw new AppError("invalid_signature", "The Stripe-Signature header is missing", {
      errors: [{ field: "stripe-signature", message: "is required" }],
    });
  }
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(payload, signature, account.webhookSecret());
  } catch (error) {
    throw new AppError(
      "invalid_signature",
      "The Stripe-Signature header does not match this organization's webhook secret (or is too old)",
      { errors: [{ field: "stripe-signature", message: "does not verify" }], cause: error },
    );
  }
  const organizationId = organization.id;
  if (await findProcessorEvent(context.db, organizationId, "stripe", event.id)) {
    return { received: true, outcome: "duplicate" };
  }
  let outcome: EventOutcome;
  if (event.livemode !== (account.row.mode === "live")) {
    outcome = "ignored_mode";
  } else {
    try {
      outcome = await applyEvent(context, organizationId, account, await inOurVersion(account, event));
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      outcome = `refused:${error.code}`;
    }
  }
  const recorded = await insertProcessorEvent(context.db, {
    organizationId,
    processor: "stripe",
    eventId: event.id,
    eventType: event.type,
    outcome,
  });
  return { received: true, outcome: recorded ? outcome : "duplicate" };
}
