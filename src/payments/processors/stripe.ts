import Stripe from "stripe";
import { AppError } from "../../errors/app-error.js";
import {
  type ChargedMethod,
  type ChargeRequest,
  type ChargeResult,
  type Processor,
  type ProcessorDescription,
  ProcessorTimeoutError,
  type RefundReport,
  type RefundRequest,
  type RefundResult,
} from "./processor.js";
import { checkStripeAmount, fromStripeAmount, STRIPE_CURRENCIES, toStripeAmount } from "./stripe-currencies.js";

/**
 * The API version Donata speaks, sent as `Stripe-Version` on every call (not left to the library's
 * default, which moves with its upgrades): the objects' shapes the adapter reads are this version's.
 * A webhook event rendered in another version is read again through the API (stripe-webhooks).
 * Upgrading the `stripe` package means reading its changelog and moving this with it.
 */
export const STRIPE_API_VERSION = "2026-10-28.endive" satisfies Stripe.LatestApiVersion;

/** Where the client sends requests: Stripe itself unless a test points it at the local stand-in. */
export interface StripeApiBase {
  host: string;
  port: number;
  protocol: "http" | "https";
}

export interface StripeAccountOptions {
  secretKey: string;
  api?: StripeApiBase;
  /** Milliseconds before a call counts as lost (a ProcessorTimeoutError). */
  timeoutMs?: number;
}

/** The metadata field that carries our idempotency key, so `retrieve` can find a charge whose answer was lost. */
export const STRIPE_KEY_METADATA = "donata_idempotency_key";

/** A Stripe method reference: `pm_…` for a donor present, `cus_…/pm_…` for a method saved on a Customer. */
export function stripeMethodReference(customerId: string | null, paymentMethodId: string): string {
  return customerId ? `${customerId}/${paymentMethodId}` : paymentMethodId;
}

export function parseReference(reference: string): { customer?: string; paymentMethod: string } {
  const [first, second] = reference.split("/");
  return second ? { customer: first, paymentMethod: second } : { paymentMethod: first ?? reference };
}

/** What a Stripe gift carries until Stripe says which method it was: the donor's ConfirmationToken. */
export const STRIPE_PENDING_LABEL = "Stripe";

const CONFIRMATION_TOKEN = /^ctoken_[A-Za-z0-9_]{1,200}$/;

export const stripeDescription: ProcessorDescription = {
  name: "stripe",
  title: "Card, SEPA Direct Debit and wallets (Stripe)",
  capabilities: { oneOff: true, recurring: true, refunds: true },
  supportsCurrency: (currency) => STRIPE_CURRENCIES.has(currency.toUpperCase()),
  checkAmount: checkStripeAmount,
  /**
   * The donor's method reaches Donata only as a ConfirmationToken made by Stripe.js in the page
   * (`stripe.createConfirmationToken({ elements })`): card numbers and IBANs never do.
   */
  tokenize(input) {
    if (input.card) {
      throw new AppError("processor_unsupported", "Card details go to Stripe from the donation page, never to Donata", {
        errors: [{ field: "card", message: "pay with the Stripe payment form and send confirmation_token" }],
      });
    }
    const token = input.confirmationToken;
    if (!token || !CONFIRMATION_TOKEN.test(token)) {
      throw new AppError("invalid_card", "A Stripe payment needs the ConfirmationToken made by Stripe.js", {
        errors: [
          {
            field: "confirmation_token",
            message: token ? "must be a ConfirmationToken id (ctoken_…)" : "is required with processor stripe",
          },
        ],
      });
    }
    return { label: STRIPE_PENDING_LABEL, reference: token };
  },
};

const BRANDS: Record<string, string> = {
  amex: "American Express",
  american_express: "American Express",
  cartes_bancaires: "Cartes Bancaires",
  diners: "Diners Club",
  discover: "Discover",
  eftpos_au: "eftpos",
  jcb: "JCB",
  mastercard: "Mastercard",
  unionpay: "UnionPay",
  visa: "Visa",
};

/** The method a charge was made with, as a label for people and the reference renewals charge off-session. */
export function chargedMethodOf(intent: Stripe.PaymentIntent): ChargedMethod | undefined {
  const method = intent.payment_method;
  if (!method || typeof method === "string") return undefined;
  const customer = typeof intent.customer === "string" ? intent.customer : (intent.customer?.id ?? null);
  // Saved for renewals only when the intent asked for it: a one-off gift keeps the bare method.
  const reference = stripeMethodReference(intent.setup_future_usage ? customer : null, method.id);
  return { ...stripeMethodDetails(method), reference };
}

/** How people see a Stripe method ("Visa •••• 4242", "Visa (apple pay) •••• 4242", "SEPA Direct Debit •••• 3000") and its card's expiry. */
export function stripeMethodDetails(method: Stripe.PaymentMethod): {
  label: string;
  expiryMonth: number | null;
  expiryYear: number | null;
} {
  if (method.card) {
    const brand = method.card.display_brand ?? method.card.brand;
    const wallet = method.card.wallet?.type;
    const name = BRANDS[brand] ?? brand.replace(/_/g, " ").replace(/^\w/, (first) => first.toUpperCase());
    return {
      label: `${name}${wallet ? ` (${wallet.replace(/_/g, " ")})` : ""} •••• ${method.card.last4}`,
      expiryMonth: method.card.exp_month,
      expiryYear: method.card.exp_year,
    };
  }
  if (method.sepa_debit) {
    const label = `SEPA Direct Debit •••• ${method.sepa_debit.last4 ?? ""}`.trim();
    return { label, expiryMonth: null, expiryYear: null };
  }
  return { label: method.type.replace(/_/g, " "), expiryMonth: null, expiryYear: null };
}

function clientFor(options: StripeAccountOptions): Stripe {
  return new Stripe(options.secretKey, {
    ...options.api,
    apiVersion: STRIPE_API_VERSION,
    // 20 s bounds a donor's wait; one retry (same key, so never a second charge) rides out a dropped connection, the reconciler does the rest.
    timeout: options.timeoutMs ?? 20_000,
    maxNetworkRetries: 1,
    telemetry: false,
  });
}

/** The most telling code, in the sandbox's words: a specific decline reason (insufficient_funds), else Stripe's code (card_declined). */
function declineCode(decline: string | undefined, code: string | undefined): string | undefined {
  return decline && decline !== "generic_decline" ? decline : code || undefined;
}

/** What a PaymentIntent's status means for a payment. */
export function chargeResultOf(intent: Stripe.PaymentIntent): ChargeResult {
  // Known when the payment method was expanded (our own calls); a webhook's intent names it only.
  const known = chargedMethodOf(intent);
  const method = known ? { method: known } : {};
  switch (intent.status) {
    case "succeeded":
      return { state: "PAID", intentId: intent.id, ...method };
    case "processing":
      return { state: "PENDING", intentId: intent.id, reason: "processing", ...method };
    case "requires_action":
    case "requires_confirmation":
      return { state: "PENDING", intentId: intent.id, reason: "requires_action", ...method };
    case "requires_capture":
      return { state: "PENDING", intentId: intent.id, ...method };
    case "canceled":
      return { state: "FAILED", intentId: intent.id, code: "canceled", message: "The payment was canceled" };
    default: {
      const error = intent.last_payment_error;
      return {
        state: "FAILED",
        intentId: intent.id,
        code: declineCode(error?.decline_code, error?.code) ?? "payment_failed",
        message: error?.message ?? "The payment failed",
      };
    }
  }
}

/** What a Stripe refund's status means: pending and requires_action are under way (a SEPA refund takes days). */
export function refundResultOf(refund: Stripe.Refund): RefundResult {
  switch (refund.status) {
    case "succeeded":
      return { state: "SUCCEEDED", refundId: refund.id };
    case "failed":
    case "canceled":
      return {
        state: "FAILED",
        refundId: refund.id,
        message: `The refund ${refund.status}${refund.failure_reason ? `: ${refund.failure_reason}` : ""}`,
      };
    default:
      return { state: "PENDING", refundId: refund.id };
  }
}

/** A refund as Stripe reports it on its own (an event, a dashboard refund): its amount and our key, if we made it. */
export function refundReportOf(refund: Stripe.Refund): RefundReport {
  const intent = refund.payment_intent;
  return {
    ...refundResultOf(refund),
    intentId: typeof intent === "string" ? intent : (intent?.id ?? null),
    amountMinor: fromStripeAmount(refund.amount, refund.currency),
    currency: refund.currency.toUpperCase(),
    idempotencyKey: refund.metadata?.[STRIPE_KEY_METADATA] ?? null,
  };
}

/** An answer that says nothing of the outcome (no answer, a 5xx, a key still in flight): ask again with retrieve. */
function outcomeUnknown(error: unknown): boolean {
  if (error instanceof Stripe.errors.StripeConnectionError) return true;
  if (error instanceof Stripe.errors.StripeAPIError) return true;
  if (error instanceof Stripe.errors.StripeRateLimitError) return true;
  return error instanceof Stripe.errors.StripeError && error.statusCode === 409;
}

function misconfigured(error: unknown): AppError {
  return new AppError("processor_unavailable", "The organization's Stripe account refused the request", {
    cause: error,
  });
}

/** Turns a failed call into our vocabulary: unknown outcomes are timeouts, a refused key is a configuration error. */
function rethrow(error: unknown): never {
  if (outcomeUnknown(error)) throw new ProcessorTimeoutError("stripe");
  // A method id from the page that Stripe does not know (or may not use here): nothing was charged.
  if (
    error instanceof Stripe.errors.StripeInvalidRequestError &&
    (error.param === "payment_method" ||
      error.param === "confirmation_token" ||
      error.code?.startsWith("payment_method_") ||
      error.code?.startsWith("confirmation_token_"))
  ) {
    const field = error.param === "confirmation_token" ? "confirmation_token" : "payment_method";
    throw new AppError("invalid_card", `The payment method was refused: ${error.message}`, {
      errors: [{ field, message: error.message }],
      cause: error,
    });
  }
  // Under Stripe's minimum for a currency missing from our table (about 0.50 USD elsewhere): nothing was charged.
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "amount_too_small") {
    throw new AppError("amount_below_minimum", `The amount is below Stripe's minimum charge: ${error.message}`, {
      errors: [{ field: "amount", message: error.message }],
      cause: error,
    });
  }
  if (error instanceof Stripe.errors.StripeAuthenticationError) throw misconfigured(error);
  if (error instanceof Stripe.errors.StripePermissionError) throw misconfigured(error);
  throw error;
}

/**
 * A statement descriptor suffix from the organization's name: Latin letters, digits, spaces and
 * `.,-` only (Stripe refuses < > \\ ' " *), at most 10 characters so that with the account's prefix
 * (up to 10) and Stripe's "* " it fits the 22 a statement shows; none without a letter.
 */
export function statementDescriptorSuffix(name: string): string | undefined {
  const cleaned = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9 .,-]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 10)
    .trim();
  return /[A-Za-z]/.test(cleaned) ? cleaned : undefined;
}

/** What Radar and the dashboard show of a charge: its description and statement suffix. */
function contextParams(context: ChargeRequest["context"]) {
  if (!context) return {};
  const suffix = statementDescriptorSuffix(context.statementName);
  return {
    description: context.description.slice(0, 1000),
    ...(suffix ? { statement_descriptor_suffix: suffix } : {}),
  };
}

/** The ids that tie a Stripe charge to Donata's records, as metadata (searchable in the dashboard). */
function contextMetadata(context: ChargeRequest["context"]): Record<string, string> {
  if (!context) return {};
  const ids: Record<string, number | null> = {
    donata_organization_id: context.organizationId,
    donata_campaign_id: context.campaignId,
    donata_donation_id: context.donationId,
    donata_checkout_id: context.checkoutId,
  };
  return Object.fromEntries(Object.entries(ids).flatMap(([name, id]) => (id === null ? [] : [[name, String(id)]])));
}

/** The objects an event may carry that Donata acts on, as `currentObject` reads them again. */
export type StripeEventObject =
  | Stripe.PaymentIntent
  | Stripe.Refund
  | Stripe.Charge
  | Stripe.Dispute
  | Stripe.PaymentMethod;

export interface StripeProcessor extends Processor {
  /**
   * The object an event names, as Stripe has it now in STRIPE_API_VERSION; null for a kind Donata
   * never acts on. One Stripe no longer has is a 404 AppError (the event is kept as refused).
   */
  currentObject(object: { object: string; id: string }): Promise<StripeEventObject | null>;
  /** A Customer to save a recurring donor's method on (the first charge then keeps it for off-session renewals). */
  createCustomer(customer: { email: string; name: string; idempotencyKey: string }): Promise<string>;
  /** Every refund of a charge, as Stripe has them now (a `charge.refunded` event names only the charge). */
  refundsOf(intentId: string): Promise<RefundReport[]>;
  /** The client secret Stripe.js needs to run a charge's 3-D Secure challenge, or null if none is waiting. */
  authenticationSecret(intentId: string): Promise<string | null>;
  /** A charge's state now, asked by its intent (after the donor's 3-D Secure challenge): never a new charge. */
  retrieveIntent(intentId: string): Promise<ChargeResult>;
  /** Gives up a charge still waiting for the donor (3-D Secure abandoned); answers its final state. */
  cancelIntent(intentId: string): Promise<ChargeResult>;
  /** A SetupIntent that saves a new method on the Customer for off-session renewals (confirmed in the page by Stripe.js). */
  createSetupIntent(request: {
    customer: string;
    metadata: Record<string, string>;
    idempotencyKey: string;
  }): Promise<{ id: string; clientSecret: string }>;
  /** A SetupIntent as Stripe has it now, with the method it saved. */
  retrieveSetupIntent(setupIntentId: string): Promise<SetupIntentState>;
  /**
   * A payment method saved on a Customer, as Stripe has it now; null when Stripe has no such
   * Customer or the method is not saved on it (an imported recurring gift's, checked before it runs).
   */
  customerPaymentMethod(
    customer: string,
    paymentMethod: string,
  ): Promise<({ id: string } & ReturnType<typeof stripeMethodDetails>) | null>;
}

/** What a SetupIntent says: whose it is, whether it succeeded, and the method it saved. */
export interface SetupIntentState {
  id: string;
  status: Stripe.SetupIntent.Status;
  customer: string | null;
  metadata: Record<string, string>;
  method: ({ id: string } & ReturnType<typeof stripeMethodDetails>) | null;
}

/** A SetupIntent id as the page sends it back (seti_…). */
export const SETUP_INTENT_ID = /^seti_[A-Za-z0-9_]{1,200}$/;

/**
 * The Stripe processor of one organization (its own secret key). Every call that moves money sends
 * our key as Stripe's Idempotency-Key and in the intent's metadata: the same key never charges twice
 * (Stripe replays its first answer for 24 hours), and `retrieve` finds the charge by that metadata
 * with Stripe's search when the first answer was lost. A replay cannot serve `retrieve`: it needs
 * the original parameters, and would charge a key Stripe never received. Search shows a new intent
 * within about a minute, well inside PAYMENT_PENDING_TIMEOUT (600 s by default).
 */
export function createStripeProcessor(options: StripeAccountOptions): StripeProcessor {
  const stripe = clientFor(options);
  const retrieveIntent = async (intentId: string) =>
    chargeResultOf(await stripe.paymentIntents.retrieve(intentId, { expand: ["payment_method"] }).catch(rethrow));

  async function findRefundByKey(intentId: string, idempotencyKey: string): Promise<RefundResult | null> {
    const refunds = await stripe.refunds.list({ payment_intent: intentId, limit: 100 }).catch(rethrow);
    const found = refunds.data.find((refund) => refund.metadata?.[STRIPE_KEY_METADATA] === idempotencyKey);
    return found ? refundResultOf(found) : null;
  }

  return {
    ...stripeDescription,

    async charge(request: ChargeRequest): Promise<ChargeResult> {
      const { customer, paymentMethod } = parseReference(request.reference);
      const renewal = request.kind === "renewal";
      // A ConfirmationToken from Stripe.js carries the method (and a SEPA mandate) for a donor present.
      const method = paymentMethod.startsWith("ctoken_")
        ? { confirmation_token: paymentMethod }
        : { payment_method: paymentMethod };
      const params: Stripe.PaymentIntentCreateParams = {
        amount: toStripeAmount(request.amountMinor, request.currency),
        currency: request.currency.toLowerCase(),
        ...method,
        confirm: true,
        // Confirmed on the server: 3-D Secure completes in the page with Stripe.js, never by a redirect.
        automatic_payment_methods: { enabled: true, allow_redirects: "never" },
        ...contextParams(request.context),
        metadata: {
          [STRIPE_KEY_METADATA]: request.idempotencyKey,
          donata_reference: request.reference,
          ...contextMetadata(request.context),
        },
        ...(customer ? { customer } : {}),
        ...(renewal ? { off_session: true } : customer ? { setup_future_usage: "off_session" as const } : {}),
        expand: ["payment_method"],
      };
      try {
        return chargeResultOf(await stripe.paymentIntents.create(params, { idempotencyKey: request.idempotencyKey }));
      } catch (error) {
        // A renewal under Stripe's minimum (an amount from before the check): declined, retried on the usual schedule.
        if (renewal && error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "amount_too_small") {
          return { state: "FAILED", intentId: "", code: "amount_too_small", message: error.message };
        }
        if (error instanceof Stripe.errors.StripeCardError) {
          return {
            state: "FAILED",
            intentId: error.payment_intent?.id ?? "",
            code: declineCode(error.decline_code, error.code) ?? "card_declined",
            message: error.message,
          };
        }
        rethrow(error);
      }
    },

    async retrieve(idempotencyKey: string): Promise<ChargeResult | null> {
      const quoted = idempotencyKey.replace(/['\\]/g, "\\$&");
      const found = await stripe.paymentIntents
        .search({
          query: `metadata['${STRIPE_KEY_METADATA}']:'${quoted}'`,
          limit: 1,
          expand: ["data.payment_method"],
        })
        .catch(rethrow);
      const intent = found.data[0];
      return intent ? chargeResultOf(intent) : null;
    },

    async refund(request: RefundRequest): Promise<RefundResult> {
      const params: Stripe.RefundCreateParams = {
        payment_intent: request.intentId,
        amount: toStripeAmount(request.amountMinor, request.currency),
        metadata: { [STRIPE_KEY_METADATA]: request.idempotencyKey },
      };
      try {
        return refundResultOf(await stripe.refunds.create(params, { idempotencyKey: request.idempotencyKey }));
      } catch (error) {
        // Stripe refused the refund (already refunded, amount too large…): nothing moved.
        if (error instanceof Stripe.errors.StripeInvalidRequestError && !outcomeUnknown(error)) {
          return { state: "FAILED", refundId: "", message: error.message };
        }
        // A lost answer (Stripe replays a 500 for the key's 24 hours): the refund is found by our key.
        if (outcomeUnknown(error)) {
          const found = await findRefundByKey(request.intentId, request.idempotencyKey);
          if (found) return found;
        }
        rethrow(error);
      }
    },

    async retrieveRefund(request) {
      if (request.refundId) return refundResultOf(await stripe.refunds.retrieve(request.refundId).catch(rethrow));
      return findRefundByKey(request.intentId, request.idempotencyKey);
    },

    async refundsOf(intentId) {
      const refunds = await stripe.refunds.list({ payment_intent: intentId, limit: 100 }).catch(rethrow);
      return refunds.data.map(refundReportOf);
    },

    async authenticationSecret(intentId: string) {
      const intent = await stripe.paymentIntents.retrieve(intentId).catch(rethrow);
      return intent.status === "requires_action" ? intent.client_secret : null;
    },

    retrieveIntent,

    async currentObject(object) {
      const read = (): Promise<StripeEventObject> | null => {
        switch (object.object) {
          case "payment_intent":
            return stripe.paymentIntents.retrieve(object.id);
          case "refund":
            return stripe.refunds.retrieve(object.id);
          case "charge":
            return stripe.charges.retrieve(object.id);
          case "dispute":
            return stripe.disputes.retrieve(object.id);
          case "payment_method":
            return stripe.paymentMethods.retrieve(object.id);
          default:
            return null;
        }
      };
      try {
        return await read();
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) {
          throw new AppError("not_found", `Stripe no longer has the ${object.object} ${object.id}`, { cause: error });
        }
        rethrow(error);
      }
    },

    async cancelIntent(intentId: string) {
      try {
        return chargeResultOf(await stripe.paymentIntents.cancel(intentId, { expand: ["payment_method"] }));
      } catch (error) {
        // Settled meanwhile (the donor authenticated, the debit went through): its state is the answer.
        if (
          error instanceof Stripe.errors.StripeInvalidRequestError &&
          error.code === "payment_intent_unexpected_state"
        ) {
          return retrieveIntent(intentId);
        }
        rethrow(error);
      }
    },

    async createSetupIntent(request) {
      const intent = await stripe.setupIntents
        .create(
          {
            customer: request.customer,
            usage: "off_session",
            automatic_payment_methods: { enabled: true, allow_redirects: "never" },
            metadata: request.metadata,
          },
          { idempotencyKey: request.idempotencyKey },
        )
        .catch(rethrow);
      if (!intent.client_secret) throw new Error(`SetupIntent ${intent.id} has no client secret`);
      return { id: intent.id, clientSecret: intent.client_secret };
    },

    async retrieveSetupIntent(setupIntentId) {
      let intent: Stripe.SetupIntent;
      try {
        intent = await stripe.setupIntents.retrieve(setupIntentId, { expand: ["payment_method"] });
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) {
          const message = "Stripe does not know this payment method setup; try again";
          throw new AppError("invalid_card", message, {
            errors: [{ field: "setup_intent", message }],
            cause: error,
          });
        }
        rethrow(error);
      }
      const method = intent.payment_method && typeof intent.payment_method !== "string" ? intent.payment_method : null;
      const customer = typeof intent.customer === "string" ? intent.customer : (intent.customer?.id ?? null);
      return {
        id: intent.id,
        status: intent.status,
        customer,
        metadata: intent.metadata ?? {},
        method: method ? { id: method.id, ...stripeMethodDetails(method) } : null,
      };
    },

    async customerPaymentMethod(customer, paymentMethod) {
      try {
        const method = await stripe.customers.retrievePaymentMethod(customer, paymentMethod);
        return { id: method.id, ...stripeMethodDetails(method) };
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) return null;
        rethrow(error);
      }
    },

    async createCustomer(customer) {
      const created = await stripe.customers
        .create({ email: customer.email, name: customer.name }, { idempotencyKey: customer.idempotencyKey })
        .catch(rethrow);
      return created.id;
    },
  };
}

/** What an organization's settings may show of a key: its mode and last four characters, never the key. */
export interface StripeKeyCheck {
  mode: "test" | "live";
  last4: string;
}

/** Asks Stripe whether a secret key works (the balance is the cheapest call any key may make). */
export async function verifyStripeSecretKey(options: StripeAccountOptions): Promise<StripeKeyCheck> {
  const refuse = (message: string, cause?: unknown) =>
    new AppError("invalid_processor_keys", `The Stripe secret key was refused: ${message}`, {
      errors: [{ field: "secret_key", message }],
      cause,
    });
  const mode = /^(?:sk|rk)_(test|live)_/.exec(options.secretKey)?.[1] as StripeKeyCheck["mode"] | undefined;
  if (!mode) throw refuse("a secret key starts with sk_test_ or sk_live_");
  try {
    const balance = await clientFor(options).balance.retrieve();
    if (balance.livemode !== (mode === "live")) throw refuse(`Stripe answered in the other mode than a ${mode} key`);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeAuthenticationError) throw refuse("Stripe does not know this key", error);
    if (error instanceof Stripe.errors.StripePermissionError) throw refuse("the key may not read the account", error);
    if (error instanceof AppError) throw error;
    if (outcomeUnknown(error))
      throw new AppError("processor_unavailable", "Stripe did not answer; try again", { cause: error });
    throw error;
  }
  return { mode, last4: options.secretKey.slice(-4) };
}
