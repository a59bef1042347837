import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type Stripe from "stripe";

/**
 * Stripe's test payment methods (https://docs.stripe.com/testing) and what the stand-in does with
 * them. A SEPA Direct Debit method is made with POST /v1/payment_methods and stays `processing`
 * until the test settles it.
 */
export const STRIPE_TEST_METHODS = {
  succeeds: "pm_card_visa",
  declined: "pm_card_chargeDeclined",
  insufficientFunds: "pm_card_chargeDeclinedInsufficientFunds",
  /** 3-D Secure: requires_action when the donor is present, a 402 authentication_required off-session. */
  authenticationRequired: "pm_card_authenticationRequired",
  /** Stripe's card 4000 0000 0000 0341 as the stand-in reads it: taken with the donor present, declined off-session (renewals). */
  declinedOffSession: "pm_card_chargeCustomerFail",
} as const;

/** Where Stripe.js would send a donor's IBAN: a SEPA Direct Debit method for a confirmation token (debits stay `processing`). */
export const STRIPE_TEST_IBAN = "DE89370400440532013000";

/** What a confirmation token is made from: a test method (pm_card_visa…), a method made before, or a SEPA IBAN. */
export type ConfirmationTokenSource = { paymentMethod: string } | { sepaIban: string };

/**
 * Mints a ConfirmationToken at the stand-in, as Stripe.js's `stripe.createConfirmationToken({ elements })`
 * does in a donor's browser with the publishable key (pk_test_…): `setupFutureUsage: "off_session"`
 * for a recurring gift, as the page's Elements are configured. For tests of the page and the API.
 */
export async function mintConfirmationToken(
  api: StripeStandIn["api"],
  source: ConfirmationTokenSource,
  options: { setupFutureUsage?: "off_session"; publishableKey?: string } = {},
): Promise<string> {
  const form = new URLSearchParams();
  if ("paymentMethod" in source) form.set("payment_method", source.paymentMethod);
  else {
    form.set("payment_method_data[type]", "sepa_debit");
    form.set("payment_method_data[sepa_debit][iban]", source.sepaIban);
    form.set("payment_method_data[billing_details][name]", "Jenny Rosen");
    form.set("payment_method_data[billing_details][email]", "jenny@example.org");
  }
  if (options.setupFutureUsage) form.set("setup_future_usage", options.setupFutureUsage);
  const response = await fetch(`${api.protocol}://${api.host}:${api.port}/v1/confirmation_tokens`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${options.publishableKey ?? "pk_test_donata"}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: form,
  });
  const body = (await response.json()) as Stripe.ConfirmationToken & { error?: { message: string } };
  if (!response.ok) throw new Error(`confirmation token refused: ${body.error?.message}`);
  return body.id;
}

/** A fault for the next matching POST: a delay past the client's timeout, or a 500 before or after the charge is recorded. */
export type StandInFault =
  | { kind: "delay"; ms: number; times?: number }
  | { kind: "error_500"; when: "before_recording" | "after_recording"; times?: number };

/** A key's first response, serialized then: a replay shows the object as it was, not as it is now. */
interface StoredResponse {
  fingerprint: string;
  status: number;
  json: string;
}

interface Reply {
  status: number;
  body: unknown;
}

export interface StripeStandIn {
  /** Options for `new Stripe(key, …)`: the client talks to the stand-in. */
  readonly api: { host: string; port: number; protocol: "http" };
  readonly paymentIntents: ReadonlyMap<string, Stripe.PaymentIntent>;
  readonly refunds: ReadonlyMap<string, Stripe.Refund>;
  readonly customers: ReadonlyMap<string, Stripe.Customer>;
  /** SetupIntents (a donor's new method saved on their Customer), confirmed by Stripe.js with the publishable key. */
  readonly setupIntents: ReadonlyMap<string, Stripe.SetupIntent>;
  /** Every payment method: Stripe's test methods, SEPA methods, and those made from confirmation tokens. */
  readonly paymentMethods: ReadonlyMap<string, Stripe.PaymentMethod>;
  /** Every request received, in order (method and path), replays and refusals included. */
  readonly requests: { method: string; path: string; idempotencyKey?: string; stripeVersion?: string }[];
  inject(fault: StandInFault): void;
  /** A SEPA refund goes through or fails days later: settles a `pending` refund. */
  settleRefund(refundId: string, outcome: "succeeded" | "failed"): Stripe.Refund;
  /** A SEPA debit clears or is returned days later, or the donor completes 3-D Secure: settles a `processing` or `requires_action` intent. */
  settle(intentId: string, outcome: "succeeded" | "failed"): void;
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

function stripeError(status: number, error: Record<string, unknown>): Reply {
  return { status, body: { error: { ...error, doc_url: `https://docs.stripe.com/error-codes/${error.code ?? ""}` } } };
}

const missing = (param: string) =>
  stripeError(400, {
    type: "invalid_request_error",
    code: "parameter_missing",
    param,
    message: `Missing required param: ${param}.`,
  });

const noSuch = (what: string, id: string, param = "id") =>
  stripeError(404, {
    type: "invalid_request_error",
    code: "resource_missing",
    param,
    message: `No such ${what}: '${id}'`,
  });

/** Decodes a body the way Stripe reads the client's form encoding: `a[b]=1&c[0]=x` → `{ a: { b: "1" }, c: ["x"] }`. */
export function parseStripeForm(body: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = name.replace(/\]/g, "").split("[");
    let node = result as Record<string, unknown>;
    path.forEach((segment, index) => {
      if (index === path.length - 1) {
        node[segment] = value;
        return;
      }
      const nextIsIndex = /^\d+$/.test(path[index + 1] ?? "");
      node[segment] ??= nextIsIndex ? [] : {};
      node = node[segment] as Record<string, unknown>;
    });
  }
  return result;
}

function paymentIntentOf(
  params: Record<string, unknown>,
  method: Stripe.PaymentMethod | undefined,
): Stripe.PaymentIntent {
  const id = newId("pi");
  const metadata = (params.metadata ?? {}) as Record<string, string>;
  return {
    id,
    object: "payment_intent",
    allowed_payment_method_types: null,
    amount: Number(params.amount),
    amount_capturable: 0,
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: "automatic",
    client_secret: `${id}_secret_${randomBytes(8).toString("hex")}`,
    confirmation_method: "automatic",
    created: now(),
    currency: String(params.currency),
    customer: typeof params.customer === "string" ? params.customer : null,
    customer_account: null,
    description: typeof params.description === "string" ? params.description : null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    managed_payments: null,
    metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: method?.id ?? null,
    payment_method_configuration_details: null,
    payment_method_options: null,
    payment_method_types: [method?.type ?? "card"],
    payment_record: null,
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: params.setup_future_usage === "off_session" ? "off_session" : null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix:
      typeof params.statement_descriptor_suffix === "string" ? params.statement_descriptor_suffix : null,
    status: "requires_payment_method",
    transfer_group: null,
  };
}

function paymentMethodOf(id: string, type: "card" | "sepa_debit", last4: string): Stripe.PaymentMethod {
  const base = {
    id,
    object: "payment_method" as const,
    allow_redisplay: "unspecified" as const,
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
    created: now(),
    customer: null,
    customer_account: null,
    livemode: false,
    metadata: {},
  };
  if (type === "sepa_debit") {
    const sepa = {
      bank_code: "37040044",
      branch_code: "",
      country: "DE",
      fingerprint: id,
      generated_from: null,
      last4,
    };
    return { ...base, type, sepa_debit: sepa };
  }
  const card = {
    brand: "visa",
    checks: null,
    country: "US",
    display_brand: "visa",
    exp_month: 12,
    exp_year: new Date().getUTCFullYear() + 3,
    fingerprint: id,
    funding: "credit",
    generated_from: null,
    last4,
    networks: null,
    regulated_status: null,
    three_d_secure_usage: null,
    wallet: null,
  };
  return { ...base, type, card } as Stripe.PaymentMethod;
}

/** Stripe's minimum charge for some currencies, in Stripe's units of each (docs.stripe.com/currencies). */
const MINIMUM_AMOUNTS: Record<string, number> = { eur: 50, usd: 50, gbp: 30, jpy: 50, chf: 50 };
const THREE_DECIMAL_CURRENCIES = new Set(["bhd", "jod", "kwd", "omr", "tnd"]);

/** What Stripe refuses of an intent's amount: under the currency's minimum, or a three-decimal amount not ending in 0. */
function amountProblem(amount: number, currency: string): Reply | undefined {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return stripeError(400, {
      type: "invalid_request_error",
      code: "parameter_invalid_integer",
      param: "amount",
      message: "Invalid integer: amount",
    });
  }
  const minimum = MINIMUM_AMOUNTS[currency];
  if (minimum !== undefined && amount < minimum) {
    return stripeError(400, {
      type: "invalid_request_error",
      code: "amount_too_small",
      param: "amount",
      message: `Amount must be at least ${minimum} ${currency} (in ${currency}'s smallest unit)`,
    });
  }
  if (THREE_DECIMAL_CURRENCIES.has(currency) && amount % 10 !== 0) {
    return stripeError(400, {
      type: "invalid_request_error",
      code: "invalid_amount",
      param: "amount",
      message: `Amounts in ${currency} must be a multiple of 10`,
    });
  }
  return undefined;
}

/** A live secret key the stand-in knows (its account answers livemode: true); any other live key is refused. */
export const STAND_IN_LIVE_KEY = "sk_live_donata4242";

/**
 * The keys the stand-in's accounts accept: any secret or restricted test key (sk_test_…, rk_test_…)
 * except those naming themselves unknown (sk_test_unknown…, to test a refused key), and the one live
 * key STAND_IN_LIVE_KEY. Any other key gets Stripe's 401.
 */
function isKnownKey(key: string): boolean {
  if (key === STAND_IN_LIVE_KEY) return true;
  return /^(?:sk|rk)_test_\w+$/.test(key) && !/^(?:sk|rk)_test_unknown/.test(key);
}

const isLiveKey = (key: string) => /^(?:sk|rk)_live_/.test(key);

/** A chargeback on a paid intent, as Stripe sends it in `charge.dispute.*` events. */
export function stripeDisputeOf(
  intent: Stripe.PaymentIntent,
  overrides: Partial<Pick<Stripe.Dispute, "id" | "status" | "reason" | "amount">> = {},
): Stripe.Dispute {
  return {
    id: newId("dp"),
    object: "dispute",
    amount: intent.amount_received,
    balance_transactions: [],
    charge: intent.latest_charge as string,
    created: now(),
    currency: intent.currency,
    enhanced_eligibility_types: [],
    // Evidence is the organization's business in Stripe's dashboard; Donata never reads it.
    evidence: {} as Stripe.Dispute.Evidence,
    evidence_details: {} as Stripe.Dispute.EvidenceDetails,
    intended_submission_method: null,
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: intent.id,
    reason: "fraudulent",
    status: "needs_response",
    ...overrides,
  };
}

/**
 * A local HTTP server speaking the subset of Stripe's REST API the Stripe processor calls, with
 * Stripe's idempotency rules: a key's first response is stored (errors included, once the endpoint
 * started executing) and replayed for the same parameters; other parameters are a 400
 * idempotency_error. Keys: see isKnownKey.
 */
export async function startStripeStandIn(): Promise<StripeStandIn> {
  const paymentIntents = new Map<string, Stripe.PaymentIntent>();
  const refunds = new Map<string, Stripe.Refund>();
  const customers = new Map<string, Stripe.Customer>();
  const setupIntents = new Map<string, Stripe.SetupIntent>();
  const methods = new Map<string, Stripe.PaymentMethod>(
    Object.values(STRIPE_TEST_METHODS).map((id) => [id, paymentMethodOf(id, "card", "4242")]),
  );
  const stored = new Map<string, StoredResponse>();
  // A confirmation token is used once; the method it makes behaves as the test method it came from.
  const confirmationTokens = new Map<string, { token: Stripe.ConfirmationToken; source: string; used: boolean }>();
  const behaviourOf = new Map<string, string>();
  // Saved for off-session use, as `customer/method`: Stripe's test methods (pm_card_visa) may be saved on many customers.
  const saved = new Set<string>();
  const requests: StripeStandIn["requests"] = [];
  const faults: StandInFault[] = [];
  const timers = new Set<NodeJS.Timeout>();

  function takeFault(): StandInFault | undefined {
    const fault = faults[0];
    if (!fault) return undefined;
    const times = (fault.times ?? 1) - 1;
    if (times <= 0) faults.shift();
    else faults[0] = { ...fault, times };
    return fault;
  }

  function confirm(intent: Stripe.PaymentIntent, params: Record<string, unknown>): Reply {
    const paymentMethodId = intent.payment_method as string;
    const methodId = behaviourOf.get(paymentMethodId) ?? paymentMethodId;
    const offSession = params.off_session === "true";
    const fail = (code: string, declineCode: string, message: string): Reply => {
      const error = { type: "card_error" as const, code, decline_code: declineCode, message };
      intent.status = "requires_payment_method";
      intent.last_payment_error = { ...error, payment_method: methods.get(paymentMethodId) };
      return stripeError(402, { ...error, payment_intent: intent });
    };
    if (methodId === STRIPE_TEST_METHODS.declined)
      return fail("card_declined", "generic_decline", "Your card was declined.");
    if (methodId === STRIPE_TEST_METHODS.declinedOffSession && offSession) {
      return fail("card_declined", "generic_decline", "Your card was declined.");
    }
    if (methodId === STRIPE_TEST_METHODS.insufficientFunds) {
      return fail("card_declined", "insufficient_funds", "Your card has insufficient funds.");
    }
    if (methodId === STRIPE_TEST_METHODS.authenticationRequired) {
      if (offSession) {
        return fail(
          "authentication_required",
          "authentication_required",
          "Your card was declined. This transaction requires authentication.",
        );
      }
      intent.status = "requires_action";
      intent.next_action = { type: "use_stripe_sdk", use_stripe_sdk: {} };
      return { status: 200, body: intent };
    }
    if (methods.get(paymentMethodId)?.type === "sepa_debit") {
      intent.status = "processing";
      intent.processing = { type: "card" } as Stripe.PaymentIntent.Processing;
      return { status: 200, body: intent };
    }
    succeed(intent);
    return { status: 200, body: intent };
  }

  function succeed(intent: Stripe.PaymentIntent) {
    intent.status = "succeeded";
    intent.amount_received = intent.amount;
    intent.latest_charge = newId("ch");
    intent.processing = null;
    if (intent.customer && intent.setup_future_usage)
      attach(intent.payment_method as string, intent.customer as string);
  }

  /** A method saved on a customer for off-session use (Stripe's test methods may be saved on many). */
  function attach(methodId: string, customerId: string) {
    saved.add(`${customerId}/${methodId}`);
    const method = methods.get(methodId);
    if (method && behaviourOf.has(methodId)) method.customer = customerId;
  }

  /** The intent as the client asked to see it: `expand[]=payment_method` puts the method object in. */
  function expandIntent(intent: Stripe.PaymentIntent, expand: unknown, prefix = ""): Stripe.PaymentIntent {
    const fields = Array.isArray(expand) ? (expand as string[]) : [];
    const methodId = intent.payment_method;
    if (!fields.includes(`${prefix}payment_method`) || typeof methodId !== "string") return intent;
    return { ...intent, payment_method: methods.get(methodId) ?? methodId };
  }

  function createConfirmationToken(params: Record<string, unknown>): Reply {
    let source: Stripe.PaymentMethod | undefined;
    const methodId = params.payment_method as string | undefined;
    const data = params.payment_method_data as
      | { type?: string; sepa_debit?: { iban?: string }; billing_details?: Stripe.PaymentMethod.BillingDetails }
      | undefined;
    if (methodId) {
      source = methods.get(methodId);
      if (!source) return noSuch("PaymentMethod", methodId, "payment_method");
    } else if (data?.type === "sepa_debit") {
      const iban = String(data.sepa_debit?.iban ?? "");
      if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban)) return missing("payment_method_data[sepa_debit][iban]");
      source = paymentMethodOf(newId("pm"), "sepa_debit", iban.slice(-4));
      methods.set(source.id, source);
    } else return missing("payment_method");
    const setupFutureUsage = params.setup_future_usage === "off_session" ? "off_session" : null;
    const {
      id: _id,
      object: _object,
      created: _created,
      livemode: _livemode,
      metadata: _metadata,
      ...preview
    } = source;
    const token: Stripe.ConfirmationToken = {
      id: newId("ctoken"),
      object: "confirmation_token",
      created: now(),
      expires_at: now() + 12 * 3600,
      livemode: false,
      ...(source.type === "sepa_debit"
        ? {
            mandate_data: {
              customer_acceptance: { online: { ip_address: "127.0.0.1", user_agent: "stand-in" }, type: "online" },
            },
          }
        : {}),
      metadata: {},
      payment_intent: null,
      payment_method_options: null,
      payment_method_preview: preview as Stripe.ConfirmationToken.PaymentMethodPreview,
      return_url: null,
      setup_future_usage: setupFutureUsage,
      setup_intent: null,
      shipping: null,
      use_stripe_sdk: true,
    };
    confirmationTokens.set(token.id, { token, source: source.id, used: false });
    return { status: 200, body: token };
  }

  /** A confirmation token spent on an intent: a new PaymentMethod, behaving as the one it was made from. */
  function spendConfirmationToken(params: Record<string, unknown>): Stripe.PaymentMethod | Reply {
    const tokenId = params.confirmation_token as string;
    const found = confirmationTokens.get(tokenId);
    if (!found) return noSuch("confirmation token", tokenId, "confirmation_token");
    if (found.used) {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "confirmation_token_already_used",
        param: "confirmation_token",
        message: `This ConfirmationToken (${tokenId}) has already been used.`,
      });
    }
    const intentUsage = params.setup_future_usage === "off_session" ? "off_session" : null;
    if (intentUsage !== found.token.setup_future_usage) {
      return stripeError(400, {
        type: "invalid_request_error",
        param: "setup_future_usage",
        message:
          "The provided setup_future_usage does not match the ConfirmationToken's; create it with the same setupFutureUsage as the PaymentIntent.",
      });
    }
    if (params.customer && !customers.has(String(params.customer)))
      return noSuch("customer", String(params.customer), "customer");
    found.used = true;
    const source = methods.get(found.source) as Stripe.PaymentMethod;
    const method = { ...source, id: newId("pm"), created: now() } as Stripe.PaymentMethod;
    methods.set(method.id, method);
    behaviourOf.set(method.id, behaviourOf.get(source.id) ?? source.id);
    return method;
  }

  function createPaymentIntent(params: Record<string, unknown>): Reply {
    if (!params.amount) return missing("amount");
    if (!params.currency) return missing("currency");
    const refused = amountProblem(Number(params.amount), String(params.currency));
    if (refused) return refused;
    let methodId = params.payment_method as string | undefined;
    let method = methodId ? methods.get(methodId) : undefined;
    if (methodId && !method) return noSuch("PaymentMethod", methodId, "payment_method");
    if (params.confirmation_token && !methodId) {
      const spent = spendConfirmationToken(params);
      if ("status" in spent && "body" in spent) return spent;
      method = spent as Stripe.PaymentMethod;
      methodId = method.id;
    }
    if (params.off_session === "true" && !saved.has(`${params.customer}/${methodId}`)) {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "payment_method_unexpected_state",
        param: "payment_method",
        message: "The PaymentMethod must be attached to the customer to be used off-session.",
      });
    }
    const intent = paymentIntentOf(params, method);
    paymentIntents.set(intent.id, intent);
    const reply = params.confirm === "true" && method ? confirm(intent, params) : { status: 200, body: intent };
    return reply.body === intent ? { ...reply, body: expandIntent(intent, params.expand) } : reply;
  }

  function retrievePaymentIntent(intentId: string, query: Record<string, unknown>): Reply {
    const intent = paymentIntents.get(intentId);
    return intent ? { status: 200, body: expandIntent(intent, query.expand) } : noSuch("payment_intent", intentId);
  }

  /** Saves a method on a Customer (what a checkout with setup_future_usage does too). */
  function attachPaymentMethod(methodId: string, params: Record<string, unknown>): Reply {
    const method = methods.get(methodId);
    if (!method) return noSuch("PaymentMethod", methodId);
    const customer = typeof params.customer === "string" ? params.customer : "";
    if (!customers.has(customer)) return noSuch("customer", customer, "customer");
    saved.add(`${customer}/${methodId}`);
    return { status: 200, body: { ...method, customer } };
  }

  /** A method as saved on a Customer: Stripe answers 404 when it is not saved there. */
  function retrieveCustomerPaymentMethod(customer: string, methodId: string): Reply {
    if (!customers.has(customer)) return noSuch("customer", customer, "customer");
    const method = methods.get(methodId);
    if (!method || !saved.has(`${customer}/${methodId}`)) return noSuch("PaymentMethod", methodId);
    return { status: 200, body: { ...method, customer } };
  }

  function retrievePaymentMethod(methodId: string): Reply {
    const method = methods.get(methodId);
    return method ? { status: 200, body: method } : noSuch("PaymentMethod", methodId);
  }

  /** A donor who never finished 3-D Secure: the intent is canceled (one that succeeded meanwhile cannot be). */
  function cancelPaymentIntent(intentId: string, params: Record<string, unknown>): Reply {
    const intent = paymentIntents.get(intentId);
    if (!intent) return noSuch("payment_intent", intentId);
    if (intent.status === "succeeded" || intent.status === "canceled" || intent.status === "processing") {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "payment_intent_unexpected_state",
        message: `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
      });
    }
    intent.status = "canceled";
    intent.canceled_at = now();
    intent.cancellation_reason = "abandoned";
    intent.next_action = null;
    return { status: 200, body: expandIntent(intent, params.expand) };
  }

  function createRefund(params: Record<string, unknown>): Reply {
    const intentId = params.payment_intent as string | undefined;
    if (!intentId) return missing("payment_intent");
    const intent = paymentIntents.get(intentId);
    if (!intent) return noSuch("payment_intent", intentId, "payment_intent");
    if (intent.status !== "succeeded") {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "charge_not_refundable",
        message: `This PaymentIntent (${intentId}) does not have a successful charge to refund.`,
      });
    }
    // A failed or canceled refund gave nothing back: it does not count against what is left.
    const refunded = [...refunds.values()].filter(
      (refund) => refund.payment_intent === intentId && refund.status !== "failed" && refund.status !== "canceled",
    );
    const remaining = intent.amount_received - refunded.reduce((sum, refund) => sum + refund.amount, 0);
    const amount = params.amount === undefined ? remaining : Number(params.amount);
    if (remaining === 0) {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "charge_already_refunded",
        message: `Charge ${intent.latest_charge} has already been refunded.`,
      });
    }
    if (amount > remaining) {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "amount_too_large",
        param: "amount",
        message: `Refund amount (€${amount / 100}) is greater than unrefunded amount on charge (€${remaining / 100})`,
      });
    }
    const sepa = methods.get(intent.payment_method as string)?.type === "sepa_debit";
    const refund: Stripe.Refund = {
      id: newId("re"),
      object: "refund",
      amount,
      balance_transaction: null,
      charge: intent.latest_charge as string,
      created: now(),
      currency: intent.currency,
      customer: null,
      customer_account: null,
      metadata: (params.metadata ?? {}) as Record<string, string>,
      payment_intent: intentId,
      payment_method: intent.payment_method as string,
      reason: null,
      receipt_number: null,
      source_transfer_reversal: null,
      status: sepa ? "pending" : "succeeded",
      transfer_reversal: null,
    };
    refunds.set(refund.id, refund);
    return { status: 200, body: refund };
  }

  function retrieveRefund(refundId: string): Reply {
    const refund = refunds.get(refundId);
    return refund ? { status: 200, body: refund } : noSuch("refund", refundId);
  }

  function listRefunds(query: URLSearchParams): Reply {
    const intentId = query.get("payment_intent");
    const data = [...refunds.values()].filter((refund) => !intentId || refund.payment_intent === intentId).reverse();
    const list: Stripe.ApiList<Stripe.Refund> = { object: "list", data, has_more: false, url: "/v1/refunds" };
    return { status: 200, body: list };
  }

  function createCustomer(params: Record<string, unknown>): Reply {
    const customer: Stripe.Customer = {
      id: newId("cus"),
      object: "customer",
      balance: 0,
      created: now(),
      customer_account: null,
      default_source: null,
      description: null,
      email: typeof params.email === "string" ? params.email : null,
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
      metadata: (params.metadata ?? {}) as Record<string, string>,
      name: typeof params.name === "string" ? params.name : null,
      shipping: null,
    };
    customers.set(customer.id, customer);
    return { status: 200, body: customer };
  }

  function createPaymentMethod(params: Record<string, unknown>): Reply {
    if (params.type !== "sepa_debit") {
      return stripeError(400, {
        type: "invalid_request_error",
        message: "The stand-in creates sepa_debit methods only; use a test method such as pm_card_visa for cards.",
      });
    }
    const iban = String((params.sepa_debit as { iban?: string } | undefined)?.iban ?? "");
    if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban)) return missing("sepa_debit[iban]");
    const method = paymentMethodOf(newId("pm"), "sepa_debit", iban.slice(-4));
    methods.set(method.id, method);
    return { status: 200, body: method };
  }

  function createSetupIntent(params: Record<string, unknown>): Reply {
    const customer = typeof params.customer === "string" ? params.customer : null;
    if (customer && !customers.has(customer)) return noSuch("customer", customer, "customer");
    const id = newId("seti");
    const intent = {
      id,
      object: "setup_intent",
      application: null,
      automatic_payment_methods: { allow_redirects: "never", enabled: true },
      cancellation_reason: null,
      client_secret: `${id}_secret_${randomBytes(8).toString("hex")}`,
      created: now(),
      customer,
      description: null,
      last_setup_error: null,
      latest_attempt: null,
      livemode: false,
      mandate: null,
      metadata: (params.metadata ?? {}) as Record<string, string>,
      next_action: null,
      on_behalf_of: null,
      payment_method: null,
      payment_method_types: ["card", "sepa_debit"],
      single_use_mandate: null,
      status: "requires_payment_method",
      usage: params.usage === "on_session" ? "on_session" : "off_session",
    } as unknown as Stripe.SetupIntent;
    setupIntents.set(id, intent);
    return { status: 200, body: intent };
  }

  function expandSetupIntent(intent: Stripe.SetupIntent, expand: unknown): Stripe.SetupIntent {
    const fields = Array.isArray(expand) ? (expand as string[]) : [];
    const methodId = intent.payment_method;
    if (!fields.includes("payment_method") || typeof methodId !== "string") return intent;
    return { ...intent, payment_method: methods.get(methodId) ?? methodId };
  }

  /** What Stripe.js's confirmSetup does in the donor's browser: the chosen method saved on the intent's customer. */
  function confirmSetupIntent(intentId: string, params: Record<string, unknown>): Reply {
    const intent = setupIntents.get(intentId);
    if (!intent) return noSuch("setup_intent", intentId, "intent");
    if (params.client_secret !== undefined && params.client_secret !== intent.client_secret) {
      return stripeError(400, {
        type: "invalid_request_error",
        param: "client_secret",
        message: "The client_secret provided does not match the client_secret associated with the SetupIntent.",
      });
    }
    if (intent.status === "succeeded") {
      return stripeError(400, {
        type: "invalid_request_error",
        code: "setup_intent_unexpected_state",
        message: "You cannot confirm this SetupIntent because it has already succeeded.",
      });
    }
    let source: Stripe.PaymentMethod | undefined;
    const methodId = params.payment_method as string | undefined;
    const data = params.payment_method_data as { type?: string; sepa_debit?: { iban?: string } } | undefined;
    if (methodId) {
      source = methods.get(methodId);
      if (!source) return noSuch("PaymentMethod", methodId, "payment_method");
    } else if (data?.type === "sepa_debit") {
      const iban = String(data.sepa_debit?.iban ?? "");
      if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban)) return missing("payment_method_data[sepa_debit][iban]");
      source = paymentMethodOf(newId("pm"), "sepa_debit", iban.slice(-4));
      methods.set(source.id, source);
    } else return missing("payment_method");
    const behaviour = behaviourOf.get(source.id) ?? source.id;
    if (behaviour === STRIPE_TEST_METHODS.declined || behaviour === STRIPE_TEST_METHODS.insufficientFunds) {
      const error = {
        type: "card_error" as const,
        code: "card_declined",
        decline_code: "generic_decline",
        message: "Your card was declined.",
      };
      intent.last_setup_error = error as Stripe.SetupIntent.LastSetupError;
      return stripeError(402, { ...error, setup_intent: intent });
    }
    const method = { ...source, id: newId("pm"), created: now() } as Stripe.PaymentMethod;
    methods.set(method.id, method);
    behaviourOf.set(method.id, behaviour);
    intent.payment_method = method.id;
    intent.status = "succeeded";
    intent.last_setup_error = null;
    if (intent.customer) attach(method.id, intent.customer as string);
    return { status: 200, body: intent };
  }

  function searchPaymentIntents(query: string, expand: unknown): Reply {
    const match = /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(query.trim());
    if (!match) {
      return stripeError(400, {
        type: "invalid_request_error",
        param: "query",
        message: `Unsupported query: ${query}`,
      });
    }
    const [, field, escaped] = match as unknown as [string, string, string];
    const value = escaped.replace(/\\(.)/g, "$1");
    const data = [...paymentIntents.values()]
      .filter((intent) => intent.metadata[field] === value)
      .map((intent) => expandIntent(intent, expand, "data."));
    const result: Stripe.ApiSearchResult<Stripe.PaymentIntent> = {
      object: "search_result",
      data,
      has_more: false,
      next_page: null,
      url: "/v1/payment_intents/search",
    };
    return { status: 200, body: result };
  }

  /** The balance answers in the key's mode: a live key's account is live. */
  function balance(key: string): Reply {
    const money = [{ amount: 0, currency: "eur", source_types: { card: 0 } }];
    const body: Stripe.Balance = { object: "balance", available: money, livemode: isLiveKey(key), pending: money };
    return { status: 200, body };
  }

  function route(
    method: string,
    path: string,
    params: Record<string, unknown>,
    query: URLSearchParams,
    key: string,
  ): Reply {
    if (method === "POST" && path === "/v1/payment_intents") return createPaymentIntent(params);
    if (method === "POST" && path === "/v1/refunds") return createRefund(params);
    if (method === "POST" && path === "/v1/customers") return createCustomer(params);
    if (method === "POST" && path === "/v1/setup_intents") return createSetupIntent(params);
    if (method === "GET" && path === "/v1/refunds") return listRefunds(query);
    if (method === "GET" && path.startsWith("/v1/refunds/")) return retrieveRefund(path.slice("/v1/refunds/".length));
    if (method === "POST" && path === "/v1/payment_methods") return createPaymentMethod(params);
    if (method === "POST" && path === "/v1/confirmation_tokens") return createConfirmationToken(params);
    if (method === "POST" && path === "/v1/test_helpers/confirmation_tokens") return createConfirmationToken(params);
    const queryParams = parseStripeForm(query.toString());
    if (method === "GET" && path === "/v1/payment_intents/search")
      return searchPaymentIntents(query.get("query") ?? "", queryParams.expand);
    if (method === "GET" && path === "/v1/balance") return balance(key);
    const intentId = /^\/v1\/payment_intents\/([^/]+)$/.exec(path)?.[1];
    if (method === "GET" && intentId) return retrievePaymentIntent(intentId, queryParams);
    const canceled = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path)?.[1];
    if (method === "POST" && canceled) return cancelPaymentIntent(canceled, params);
    const setupId = /^\/v1\/setup_intents\/([^/]+)$/.exec(path)?.[1];
    if (method === "GET" && setupId) {
      const intent = setupIntents.get(setupId);
      return intent
        ? { status: 200, body: expandSetupIntent(intent, queryParams.expand) }
        : noSuch("setup_intent", setupId, "intent");
    }
    const confirmedSetup = /^\/v1\/setup_intents\/([^/]+)\/confirm$/.exec(path)?.[1];
    if (method === "POST" && confirmedSetup) return confirmSetupIntent(confirmedSetup, params);
    const methodId = /^\/v1\/payment_methods\/([^/]+)$/.exec(path)?.[1];
    if (method === "GET" && methodId) return retrievePaymentMethod(methodId);
    const attached = /^\/v1\/payment_methods\/([^/]+)\/attach$/.exec(path)?.[1];
    if (method === "POST" && attached) return attachPaymentMethod(attached, params);
    const customerMethod = /^\/v1\/customers\/([^/]+)\/payment_methods\/([^/]+)$/.exec(path);
    if (method === "GET" && customerMethod) {
      return retrieveCustomerPaymentMethod(customerMethod[1] as string, customerMethod[2] as string);
    }
    return stripeError(404, {
      type: "invalid_request_error",
      message: `Unrecognized request URL (${method}: ${path}).`,
    });
  }

  const authorized = (request: IncomingMessage) => {
    const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
    return key && isKnownKey(key) ? key : undefined;
  };

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const url = new URL(request.url ?? "/", "http://stand-in");
    const method = request.method ?? "GET";
    const idempotencyKey = request.headers["idempotency-key"] as string | undefined;
    requests.push({
      method,
      path: url.pathname,
      idempotencyKey,
      stripeVersion: request.headers["stripe-version"] as string | undefined,
    });
    const headers: Record<string, string> = { "content-type": "application/json", "request-id": newId("req") };
    const send = (reply: Reply | StoredResponse, delayMs = 0) => {
      const json = "json" in reply ? reply.json : JSON.stringify(reply.body);
      const write = () => {
        if (response.destroyed) return;
        response.writeHead(reply.status, headers).end(json);
      };
      if (delayMs <= 0) return write();
      const timer = setTimeout(() => {
        timers.delete(timer);
        write();
      }, delayMs);
      timers.add(timer);
    };

    const publishable = /^Bearer (pk_test_\w+)$/.exec(request.headers.authorization ?? "")?.[1];
    const key =
      publishable &&
      method === "POST" &&
      (url.pathname === "/v1/confirmation_tokens" || /^\/v1\/setup_intents\/[^/]+\/confirm$/.test(url.pathname))
        ? publishable
        : authorized(request);
    if (!key) {
      const shown = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
      return send(
        stripeError(401, {
          type: "invalid_request_error",
          message: `Invalid API Key provided: ${shown.slice(0, 8)}${"*".repeat(Math.max(0, shown.length - 12))}${shown.slice(-4)}`,
        }),
      );
    }
    const fault = method === "POST" ? takeFault() : undefined;
    const delayMs = fault?.kind === "delay" ? fault.ms : 0;
    if (fault?.kind === "error_500" && fault.when === "before_recording") {
      return send(stripeError(500, { type: "api_error", message: "An unknown error occurred" }));
    }
    const fingerprint = `${method} ${url.pathname} ${[...new URLSearchParams(body)].map(String).sort().join("&")}`;
    const storedKey = idempotencyKey && method === "POST" ? `${key}:${idempotencyKey}` : undefined;
    const previous = storedKey ? stored.get(storedKey) : undefined;
    if (previous && previous.fingerprint !== fingerprint) {
      return send(
        stripeError(400, {
          type: "idempotency_error",
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
        }),
      );
    }
    if (previous) {
      headers["idempotent-replayed"] = "true";
      headers["idempotency-key"] = idempotencyKey as string;
      return send(previous, delayMs);
    }
    let reply = route(method, url.pathname, parseStripeForm(body), url.searchParams, key);
    if (fault?.kind === "error_500")
      reply = stripeError(500, { type: "api_error", message: "An unknown error occurred" });
    if (storedKey) stored.set(storedKey, { fingerprint, status: reply.status, json: JSON.stringify(reply.body) });
    send(reply, delayMs);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(JSON.stringify({ error: { type: "api_error", message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    api: { host: "127.0.0.1", port, protocol: "http" },
    paymentIntents,
    refunds,
    customers,
    setupIntents,
    paymentMethods: methods,
    requests,
    inject: (fault) => faults.push(fault),
    settleRefund(refundId, outcome) {
      const refund = refunds.get(refundId);
      if (refund?.status !== "pending") throw new Error(`refund ${refundId} is not pending`);
      refund.status = outcome;
      if (outcome === "failed") refund.failure_reason = "expired_or_canceled_card";
      return refund;
    },
    settle(intentId, outcome) {
      const intent = paymentIntents.get(intentId);
      if (intent?.status !== "processing" && intent?.status !== "requires_action") {
        throw new Error(`payment intent ${intentId} is not waiting for an outcome`);
      }
      intent.next_action = null;
      if (outcome === "succeeded") return succeed(intent);
      const challenged = intent.status === "requires_action";
      intent.status = "requires_payment_method";
      intent.processing = null;
      intent.last_payment_error = challenged
        ? {
            type: "card_error",
            code: "payment_intent_authentication_failure",
            message: "The provided PaymentMethod has failed authentication.",
          }
        : {
            type: "card_error",
            code: "payment_intent_payment_attempt_failed",
            message: "The debit was returned by the bank: insufficient funds.",
          };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
