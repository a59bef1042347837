import { createHash } from "node:crypto";
import type { Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import {
  type CardDetails,
  type ChargeRequest,
  type ChargeResult,
  type MethodInput,
  type Processor,
  type ProcessorDescription,
  ProcessorTimeoutError,
  type RefundRequest,
} from "./processor.js";
import {
  findSandboxCharge,
  insertSandboxCharge,
  refundSandboxCharge,
  type SandboxChargeRow,
} from "./sandbox-charges.repo.js";

const ISO_CURRENCIES = new Set(Intl.supportedValuesOf("currency"));

/**
 * Test card numbers, as in card processors' test modes. Any other number that passes the Luhn
 * check succeeds like 4242 4242 4242 4242.
 */
export const SANDBOX_CARDS = {
  succeeds: "4242424242424242",
  declined: "4000000000000002",
  insufficientFunds: "4000000000009995",
  /** The first charge succeeds; every renewal is declined. */
  failsOnRenewal: "4000000000000341",
  /** Every charge is taken but its answer is lost (a timeout): only retrieve, or a retry with the same key, tells. */
  timesOut: "4000000000000119",
} as const;

type Behaviour = "ok" | "declined" | "insufficient_funds" | "renewal_fails" | "timeout";

const BEHAVIOUR_BY_NUMBER: Record<string, Behaviour> = {
  [SANDBOX_CARDS.declined]: "declined",
  [SANDBOX_CARDS.insufficientFunds]: "insufficient_funds",
  [SANDBOX_CARDS.failsOnRenewal]: "renewal_fails",
  [SANDBOX_CARDS.timesOut]: "timeout",
};

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function brandOf(digits: string): string {
  if (digits.startsWith("4")) return "Visa";
  if (/^(5[1-5]|2[2-7])/.test(digits)) return "Mastercard";
  if (/^3[47]/.test(digits)) return "American Express";
  return "Card";
}

const cardError = (field: string, message: string) =>
  new AppError("invalid_card", `The card is not valid: ${message}`, { errors: [{ field: `card.${field}`, message }] });

function checkCard(card: CardDetails | undefined, now: Date): string {
  if (!card) throw cardError("number", "card details are required for a card payment");
  const digits = String(card.number).replace(/[\s-]/g, "");
  if (!/^\d{12,19}$/.test(digits) || !luhnValid(digits)) throw cardError("number", "the card number is not valid");
  const month = Number(card.exp_month);
  const year = Number(card.exp_year);
  if (!Number.isInteger(month) || month < 1 || month > 12) throw cardError("exp_month", "must be 1 to 12");
  if (!Number.isInteger(year) || year < 2000 || year > 2100) throw cardError("exp_year", "must be a four-digit year");
  // A card is valid through the last day of its expiry month.
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) {
    throw cardError("exp_year", "the card has expired");
  }
  if (!/^\d{3,4}$/.test(String(card.cvc ?? ""))) throw cardError("cvc", "must be 3 or 4 digits");
  return digits;
}

function intentId(idempotencyKey: string): string {
  return `sbx_pi_${createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 24)}`;
}

function sandboxRefundId(idempotencyKey: string): string {
  return `sbx_re_${createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 24)}`;
}

/** What the sandbox decides for a charge (no network, deterministic from the method reference). */
function decide(request: ChargeRequest): ChargeResult {
  const behaviour = /^sbx_pm_([a-z_]+)_[0-9a-f]+$/.exec(request.reference)?.[1] as Behaviour | undefined;
  const id = intentId(request.idempotencyKey);
  if (behaviour === "declined") {
    return { state: "FAILED", intentId: id, code: "card_declined", message: "The card was declined" };
  }
  if (behaviour === "insufficient_funds") {
    return { state: "FAILED", intentId: id, code: "insufficient_funds", message: "The card has insufficient funds" };
  }
  if (behaviour === "renewal_fails" && request.kind === "renewal") {
    return { state: "FAILED", intentId: id, code: "card_declined", message: "The card was declined" };
  }
  if (!behaviour) {
    return { state: "FAILED", intentId: id, code: "unknown_method", message: "The payment method is not known" };
  }
  return { state: "PAID", intentId: id };
}

function resultOf(row: SandboxChargeRow): ChargeResult {
  if (row.state === "FAILED") {
    return {
      state: "FAILED",
      intentId: row.intentId,
      code: row.failureCode ?? "card_declined",
      message: row.failureMessage ?? "The card was declined",
    };
  }
  return { state: "PAID", intentId: row.intentId };
}

export const sandboxDescription: ProcessorDescription = {
  name: "sandbox",
  title: "Card (sandbox)",
  capabilities: { oneOff: true, recurring: true, refunds: true },
  // Any ISO 4217 currency, with no minimum: the sandbox moves no money.
  supportsCurrency: (currency) => ISO_CURRENCIES.has(currency.toUpperCase()),
  checkAmount: () => {},

  tokenize(input: MethodInput) {
    const digits = checkCard(input.card, new Date());
    const behaviour = BEHAVIOUR_BY_NUMBER[digits] ?? "ok";
    const last4 = digits.slice(-4);
    const random = createHash("sha256").update(`${digits}:${Date.now()}:${Math.random()}`).digest("hex").slice(0, 16);
    return { label: `${brandOf(digits)} •••• ${last4}`, reference: `sbx_pm_${behaviour}_${random}` };
  },
};

/**
 * The sandbox processor: no network, deterministic outcomes from the test card numbers. The
 * method reference carries the card's behaviour (a real processor keeps that on its side), never
 * the card number. Like a real processor it keeps its charges (in its own table, so every process
 * sees them): the same idempotency key never charges twice and `retrieve` answers after a timeout.
 */
export function createSandboxProcessor(db: Executor): Processor {
  const find = (idempotencyKey: string) => findSandboxCharge(db, idempotencyKey);
  return {
    ...sandboxDescription,

    async charge(request: ChargeRequest): Promise<ChargeResult> {
      // Amounts arrive in the currency's minor units, as a real processor takes them.
      if (!Number.isSafeInteger(request.amountMinor)) {
        throw new RangeError(`sandbox charge of ${request.amountMinor} minor units of ${request.currency}`);
      }
      const decided = decide(request);
      const inserted = await insertSandboxCharge(db, {
        idempotencyKey: request.idempotencyKey,
        intentId: decided.intentId,
        state: decided.state,
        amountCents: request.amountMinor,
        currency: request.currency,
        failureCode: decided.state === "FAILED" ? decided.code : null,
        failureMessage: decided.state === "FAILED" ? decided.message : null,
      });
      // A timing-out card: the money is taken, the first answer is lost; a retry with the key gets it.
      if (inserted && request.reference.startsWith("sbx_pm_timeout_")) {
        throw new ProcessorTimeoutError("sandbox");
      }
      const row = await find(request.idempotencyKey);
      if (!row) throw new Error("sandbox charge vanished after its insert");
      return resultOf(row);
    },

    async retrieve(idempotencyKey: string) {
      const row = await find(idempotencyKey);
      return row ? resultOf(row) : null;
    },

    async refund(request: RefundRequest) {
      await refundSandboxCharge(db, request.intentId);
      return { state: "SUCCEEDED", refundId: sandboxRefundId(request.idempotencyKey) };
    },

    // Refunds answer at once: one never received is simply asked again with its key.
    async retrieveRefund() {
      return null;
    },
  };
}
