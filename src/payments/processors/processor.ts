/**
 * The one interface every payment processor adapter implements. An adapter declares what it
 * supports; the giving services refuse what an adapter cannot do before calling it.
 */
export interface ProcessorCapabilities {
  oneOff: boolean;
  recurring: boolean;
  refunds: boolean;
}

/** What the donor typed for a card: never stored, only handed to the adapter. */
export interface CardDetails {
  number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
}

export interface MethodInput {
  card?: CardDetails;
  /** Stripe: the ConfirmationToken Stripe.js made in the donor's browser (ctoken_…). */
  confirmationToken?: string;
}

/** A reusable payment method as the adapter sees it: a label for people and a reference for charging. */
export interface TokenizedMethod {
  label: string;
  reference: string;
}

/**
 * What a charge is for, for the processor's fraud screening and dashboard (Stripe: the description,
 * metadata and the statement descriptor's suffix). Derived from recorded rows, so a retry with the
 * same key sends the same.
 */
export interface ChargeContext {
  description: string;
  organizationId: number;
  campaignId: number | null;
  /** Known for a renewal; a checkout's donation is written once the charge is settled. */
  donationId: number | null;
  checkoutId: number | null;
  /** The organization's name for the donor's bank statement (the processor shortens and cleans it). */
  statementName: string;
}

export interface ChargeRequest {
  /** In the currency's ISO 4217 minor units (1000 JPY → 1000, 25.50 EUR → 2550, 12.5 KWD → 12500): see money.ts. */
  amountMinor: number;
  /** ISO 4217, upper case. */
  currency: string;
  reference: string;
  /** initial: the donor is present; renewal: a scheduled recurring charge. */
  kind: "initial" | "renewal";
  /** Same key, same charge: an adapter never charges twice for one key. */
  idempotencyKey: string;
  context?: ChargeContext;
}

/**
 * The method a charge ended up with, when the processor knows better than the checkout did (Stripe:
 * the donor's method saved on a Customer for off-session renewals, its brand and last digits).
 */
export interface ChargedMethod {
  label: string;
  reference: string;
  expiryMonth?: number | null;
  expiryYear?: number | null;
}

export type ChargeResult =
  | { state: "PAID"; intentId: string; method?: ChargedMethod }
  /** reason: a debit takes days (processing), or the donor must authenticate first (requires_action, 3-D Secure). */
  | { state: "PENDING"; intentId: string; reason?: "processing" | "requires_action"; method?: ChargedMethod }
  | { state: "FAILED"; intentId: string; code: string; message: string };

export interface RefundRequest {
  intentId: string;
  /** In the currency's ISO 4217 minor units: the whole charge or a part of it. */
  amountMinor: number;
  currency: string;
  /** Same key, same refund: asking again after a crash never refunds twice. */
  idempotencyKey: string;
}

/**
 * What the processor says of a refund: done, still under way (a SEPA refund takes days; its event or
 * the reconciler settles it later), or refused (the payment is left as it was).
 */
export interface RefundResult {
  state: "SUCCEEDED" | "PENDING" | "FAILED";
  /** The processor's id of the refund ("" when it refused before making one). */
  refundId: string;
  message?: string;
}

/** A refund the processor reports on its own (an event, one made in its dashboard), with what it refunds. */
export interface RefundReport extends RefundResult {
  /** The processor's charge id the refund belongs to. */
  intentId: string | null;
  /** In the currency's ISO 4217 minor units. */
  amountMinor: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** Our key, when Donata asked for the refund (null for one made in the processor's dashboard). */
  idempotencyKey: string | null;
}

/** What an adapter is, without a connection: enough to describe it to a form and check a card. */
export interface ProcessorDescription {
  readonly name: string;
  readonly title: string;
  readonly capabilities: ProcessorCapabilities;
  /** Whether the processor takes payments in this currency (ISO 4217, upper case). */
  supportsCurrency(currency: string): boolean;
  /**
   * Refuses, with a 422 AppError, a charge the processor would refuse for its amount (below its
   * minimum in that currency, finer than it charges): before anything is recorded or charged.
   */
  checkAmount(amountMinor: number, currency: string): void;
  /** Validates what the donor entered and returns a method to charge; throws a 4xx AppError on bad input. */
  tokenize(input: MethodInput): TokenizedMethod;
}

/**
 * Money movement. Every call may take seconds or time out (a ProcessorTimeoutError), so callers
 * make it outside any database transaction, with a key recorded beforehand.
 */
export interface Processor extends ProcessorDescription {
  charge(request: ChargeRequest): Promise<ChargeResult>;
  /** The outcome of the charge made with this key, or null if the processor never received it. */
  retrieve(idempotencyKey: string): Promise<ChargeResult | null>;
  refund(request: RefundRequest): Promise<RefundResult>;
  /**
   * The refund's current state, by the processor's id when known, else by our key; null if the
   * processor never received it (the reconciler then asks again with the same key).
   */
  retrieveRefund(request: {
    refundId: string | null;
    intentId: string;
    idempotencyKey: string;
  }): Promise<RefundResult | null>;
}

/** The processor did not answer in time: the charge may or may not have happened (ask with retrieve). */
export class ProcessorTimeoutError extends Error {
  constructor(readonly processor: string) {
    super(`The payment processor "${processor}" did not answer in time`);
    this.name = "ProcessorTimeoutError";
  }
}
