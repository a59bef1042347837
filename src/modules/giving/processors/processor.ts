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
}

/** A reusable payment method as the adapter sees it: a label for people and a reference for charging. */
export interface TokenizedMethod {
  label: string;
  reference: string;
}

export interface ChargeRequest {
  /** Integer cents. */
  amountCents: number;
  currency: string;
  reference: string;
  /** initial: the donor is present; renewal: a scheduled recurring charge. */
  kind: "initial" | "renewal";
  /** Same key, same charge: an adapter never charges twice for one key. */
  idempotencyKey: string;
}

export type ChargeResult =
  | { state: "PAID"; intentId: string }
  | { state: "PENDING"; intentId: string }
  | { state: "FAILED"; intentId: string; code: string; message: string };

export interface Processor {
  readonly name: string;
  readonly title: string;
  readonly capabilities: ProcessorCapabilities;
  /** Validates what the donor entered and returns a method to charge; throws a 4xx AppError on bad input. */
  tokenize(input: MethodInput): TokenizedMethod;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: { intentId: string; amountCents: number; currency: string }): Promise<void>;
}
