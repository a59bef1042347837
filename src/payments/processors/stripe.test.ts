import { randomUUID } from "node:crypto";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STRIPE_TEST_METHODS, type StripeStandIn, startStripeStandIn } from "../../../test/helpers/stripe-stand-in.js";
import { AppError } from "../../errors/app-error.js";
import { type ChargeRequest, ProcessorTimeoutError } from "./processor.js";
import {
  createStripeProcessor,
  STRIPE_KEY_METADATA,
  type StripeProcessor,
  stripeMethodReference,
  verifyStripeSecretKey,
} from "./stripe.js";

// Through the real `stripe` client against the local stand-in: no database, no network beyond 127.0.0.1.
let standIn: StripeStandIn;
let processor: StripeProcessor;
let stripe: Stripe;

beforeAll(async () => {
  standIn = await startStripeStandIn();
  processor = createStripeProcessor({ secretKey: "sk_test_donata", api: standIn.api, timeoutMs: 300 });
  stripe = new Stripe("sk_test_donata", { ...standIn.api, maxNetworkRetries: 0 });
});

afterAll(() => standIn.close());

const newKey = () => `checkout:${randomUUID()}:attempt:1`;

function request(reference: string, overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return { amountMinor: 2500, currency: "EUR", reference, kind: "initial", idempotencyKey: newKey(), ...overrides };
}

/** The charges Stripe holds for a key: the one number that must never exceed 1. */
const intentsFor = (key: string) =>
  [...standIn.paymentIntents.values()].filter((intent) => intent.metadata[STRIPE_KEY_METADATA] === key);

async function sepaMethod() {
  const method = await stripe.paymentMethods.create({
    type: "sepa_debit",
    sepa_debit: { iban: "DE89370400440532013000" },
    billing_details: { name: "Jenny Rosen", email: "jenny@example.org" },
  });
  return method.id;
}

describe("the stand-in keeps Stripe's idempotency rules", () => {
  it("replays a key's first answer for the same parameters and refuses other parameters", async () => {
    const idempotencyKey = newKey();
    const params = { amount: 1000, currency: "eur", payment_method: STRIPE_TEST_METHODS.succeeds, confirm: true };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey });
    const again = await stripe.paymentIntents.create(params, { idempotencyKey });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    const other = stripe.paymentIntents.create({ ...params, amount: 2000 }, { idempotencyKey });
    await expect(other).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    await expect(other).rejects.toMatchObject({ statusCode: 400, rawType: "idempotency_error" });
  });

  it("refuses a key that is not a test secret key with a 401, as Stripe does", async () => {
    const live = new Stripe("sk_live_abcdefghijkl1234", { ...standIn.api, maxNetworkRetries: 0 });
    await expect(live.balance.retrieve()).rejects.toMatchObject({
      type: "StripeAuthenticationError",
      statusCode: 401,
      message: "Invalid API Key provided: sk_live_************1234",
    });
  });
});

describe("Stripe processor", () => {
  it("charges a card once: PAID, and the same key answers the same intent", async () => {
    const charge = request(STRIPE_TEST_METHODS.succeeds);
    const result = await processor.charge(charge);
    // The method comes back with the charge (expanded): what a payment method row shows and renewals charge.
    const year = new Date().getUTCFullYear() + 3;
    const method = {
      label: "Visa •••• 4242",
      reference: STRIPE_TEST_METHODS.succeeds,
      expiryMonth: 12,
      expiryYear: year,
    };
    expect(result).toEqual({ state: "PAID", intentId: expect.stringMatching(/^pi_/), method });
    expect(await processor.charge(charge)).toEqual(result);
    expect(await processor.retrieve(charge.idempotencyKey)).toEqual(result);
    const [intent, ...others] = intentsFor(charge.idempotencyKey);
    expect(others).toEqual([]);
    expect(intent).toMatchObject({ amount: 2500, currency: "eur", status: "succeeded", amount_received: 2500 });
  });

  it("reports a decline as FAILED with Stripe's reason, and a retry with a new key and card succeeds", async () => {
    const declined = await processor.charge(request(STRIPE_TEST_METHODS.declined));
    expect(declined).toEqual({
      state: "FAILED",
      intentId: expect.stringMatching(/^pi_/),
      code: "card_declined",
      message: "Your card was declined.",
    });
    const poor = await processor.charge(request(STRIPE_TEST_METHODS.insufficientFunds));
    expect(poor).toMatchObject({ state: "FAILED", code: "insufficient_funds" });
    expect(await processor.charge(request(STRIPE_TEST_METHODS.succeeds))).toMatchObject({ state: "PAID" });
  });

  it("leaves a 3-D Secure charge PENDING until the donor authenticates", async () => {
    const charge = request(STRIPE_TEST_METHODS.authenticationRequired);
    const result = await processor.charge(charge);
    expect(result).toMatchObject({
      state: "PENDING",
      intentId: expect.stringMatching(/^pi_/),
      reason: "requires_action",
    });
    const secret = await processor.authenticationSecret(result.intentId);
    expect(secret).toMatch(new RegExp(`^${result.intentId}_secret_`));
    standIn.settle(result.intentId, "succeeded");
    expect(await processor.authenticationSecret(result.intentId)).toBeNull();
    expect(await processor.retrieve(charge.idempotencyKey)).toMatchObject({ state: "PAID", intentId: result.intentId });
    expect(await processor.retrieveIntent(result.intentId)).toMatchObject({ state: "PAID", intentId: result.intentId });
  });

  it("saves a recurring donor's method on a Customer and renews off-session; a renewal needing authentication fails", async () => {
    const customer = await processor.createCustomer({
      email: "ada@example.org",
      name: "Ada Lovelace",
      idempotencyKey: `customer:${randomUUID()}`,
    });
    expect(standIn.customers.get(customer)).toMatchObject({ email: "ada@example.org", name: "Ada Lovelace" });
    const saved = stripeMethodReference(customer, STRIPE_TEST_METHODS.succeeds);
    const first = request(saved);
    expect(await processor.charge(first)).toMatchObject({ state: "PAID" });
    expect(intentsFor(first.idempotencyKey)[0]).toMatchObject({ customer, setup_future_usage: "off_session" });
    const renewal = await processor.charge(
      request(saved, { kind: "renewal", idempotencyKey: `renewal:${randomUUID()}:1:0` }),
    );
    expect(renewal).toMatchObject({ state: "PAID" });

    // A card that always asks for 3-D Secure: authenticated once in the page, then refused off-session.
    const strict = stripeMethodReference(customer, STRIPE_TEST_METHODS.authenticationRequired);
    const initial = await processor.charge(request(strict));
    standIn.settle(initial.intentId, "succeeded");
    const refused = await processor.charge(request(strict, { kind: "renewal" }));
    expect(refused).toMatchObject({ state: "FAILED", code: "authentication_required" });
  });

  it("keeps a SEPA debit PENDING (processing) until the bank settles it, then retrieve tells PAID or FAILED", async () => {
    const method = await sepaMethod();
    const cleared = request(method);
    const pending = await processor.charge(cleared);
    expect(pending).toEqual({
      state: "PENDING",
      intentId: expect.stringMatching(/^pi_/),
      reason: "processing",
      method: { label: "SEPA Direct Debit •••• 3000", reference: method, expiryMonth: null, expiryYear: null },
    });
    expect(await processor.retrieve(cleared.idempotencyKey)).toEqual(pending);
    standIn.settle(pending.intentId, "succeeded");
    expect(await processor.retrieve(cleared.idempotencyKey)).toMatchObject({
      state: "PAID",
      intentId: pending.intentId,
    });

    const returned = request(method);
    const second = await processor.charge(returned);
    standIn.settle(second.intentId, "failed");
    expect(await processor.retrieve(returned.idempotencyKey)).toEqual({
      state: "FAILED",
      intentId: second.intentId,
      code: "payment_intent_payment_attempt_failed",
      message: "The debit was returned by the bank: insufficient funds.",
    });
  });

  it("after a timeout, retrieve finds the charge taken and the same key never charges again", async () => {
    // The first request and the client's own retry both wait past its 300 ms timeout.
    standIn.inject({ kind: "delay", ms: 1500, times: 2 });
    const charge = request(STRIPE_TEST_METHODS.succeeds);
    await expect(processor.charge(charge)).rejects.toBeInstanceOf(ProcessorTimeoutError);
    const found = await processor.retrieve(charge.idempotencyKey);
    expect(found).toMatchObject({ state: "PAID", intentId: expect.stringMatching(/^pi_/) });
    expect(await processor.charge(charge)).toEqual(found);
    expect(intentsFor(charge.idempotencyKey)).toHaveLength(1);
  });

  it("refuses a method Stripe does not know, or a method not saved for off-session use, as an invalid card", async () => {
    await expect(processor.charge(request("pm_forged"))).rejects.toMatchObject({
      code: "invalid_card",
      message: "The payment method was refused: No such PaymentMethod: 'pm_forged'",
    });
    const unsaved = request(stripeMethodReference("cus_unknown", STRIPE_TEST_METHODS.succeeds), { kind: "renewal" });
    await expect(processor.charge(unsaved)).rejects.toMatchObject({ code: "invalid_card", status: 422 });
  });

  it("answers null for a key Stripe never received", async () => {
    expect(await processor.retrieve(newKey())).toBeNull();
    expect(await processor.retrieve("it's odd\\")).toBeNull();
  });

  it("retries a 500 that came before the charge with the same key: charged once", async () => {
    standIn.inject({ kind: "error_500", when: "before_recording" });
    const charge = request(STRIPE_TEST_METHODS.succeeds);
    expect(await processor.charge(charge)).toMatchObject({ state: "PAID" });
    const sent = standIn.requests.filter((sent) => sent.idempotencyKey === charge.idempotencyKey);
    expect(sent).toHaveLength(2);
    expect(intentsFor(charge.idempotencyKey)).toHaveLength(1);
  });

  it("treats a 500 after the charge as an unknown outcome: retries replay it, retrieve tells PAID, charged once", async () => {
    standIn.inject({ kind: "error_500", when: "after_recording" });
    const charge = request(STRIPE_TEST_METHODS.succeeds);
    await expect(processor.charge(charge)).rejects.toBeInstanceOf(ProcessorTimeoutError);
    await expect(processor.charge(charge)).rejects.toBeInstanceOf(ProcessorTimeoutError);
    expect(await processor.retrieve(charge.idempotencyKey)).toMatchObject({ state: "PAID" });
    expect(intentsFor(charge.idempotencyKey)).toHaveLength(1);
  });

  it("refunds in full or in part, once per key", async () => {
    const paid = await processor.charge(request(STRIPE_TEST_METHODS.succeeds));
    const refundsOf = (intentId: string) =>
      [...standIn.refunds.values()]
        .filter((refund) => refund.payment_intent === intentId)
        .map((refund) => refund.amount);
    const refundOf = (intentId: string, amountMinor: number) => ({
      intentId,
      amountMinor,
      currency: "EUR",
      idempotencyKey: `refund:${randomUUID()}`,
    });
    const part = refundOf(paid.intentId, 1000);
    const first = await processor.refund(part);
    expect(first).toEqual({ state: "SUCCEEDED", refundId: expect.stringMatching(/^re_/) });
    expect(await processor.refund(part)).toEqual(first);
    expect(refundsOf(paid.intentId)).toEqual([1000]);
    await processor.refund(refundOf(paid.intentId, 1500));
    expect(refundsOf(paid.intentId)).toEqual([1000, 1500]);
    // Stripe refuses (nothing left): a FAILED answer with its reason, nothing refunded.
    expect(await processor.refund(refundOf(paid.intentId, 1000))).toEqual({
      state: "FAILED",
      refundId: "",
      message: expect.stringContaining("has already been refunded"),
    });
    expect(
      await processor.retrieveRefund({ refundId: first.refundId, intentId: paid.intentId, idempotencyKey: "x" }),
    ).toEqual(first);
    expect(
      await processor.retrieveRefund({ refundId: null, intentId: paid.intentId, idempotencyKey: part.idempotencyKey }),
    ).toEqual(first);
    expect(
      await processor.retrieveRefund({ refundId: null, intentId: paid.intentId, idempotencyKey: "refund:never" }),
    ).toBeNull();

    const whole = await processor.charge(request(STRIPE_TEST_METHODS.succeeds));
    const full = refundOf(whole.intentId, 2500);
    await processor.refund(full);
    await processor.refund(full);
    expect(refundsOf(whole.intentId)).toEqual([2500]);
  });

  it("a SEPA refund is PENDING until the bank returns the money; retrieveRefund then tells", async () => {
    const debit = request(await sepaMethod());
    const charged = await processor.charge(debit);
    standIn.settle(charged.intentId, "succeeded");
    const refund = {
      intentId: charged.intentId,
      amountMinor: 2500,
      currency: "EUR",
      idempotencyKey: `refund:${randomUUID()}`,
    };
    const pending = await processor.refund(refund);
    expect(pending).toEqual({ state: "PENDING", refundId: expect.stringMatching(/^re_/) });
    standIn.settleRefund(pending.refundId, "succeeded");
    expect(await processor.retrieveRefund({ ...refund, refundId: pending.refundId })).toEqual({
      state: "SUCCEEDED",
      refundId: pending.refundId,
    });
    expect(await processor.refundsOf(charged.intentId)).toEqual([
      {
        state: "SUCCEEDED",
        refundId: pending.refundId,
        intentId: charged.intentId,
        amountMinor: 2500,
        currency: "EUR",
        idempotencyKey: refund.idempotencyKey,
      },
    ]);
  });

  it("reports a refused secret key as a configuration error, never as a charge outcome", async () => {
    const wrong = createStripeProcessor({ secretKey: "sk_live_revoked0000", api: standIn.api, timeoutMs: 300 });
    const refused = wrong.charge(request(STRIPE_TEST_METHODS.succeeds));
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ code: "processor_unavailable", status: 503 });
  });

  it("checks a secret key against Stripe before it is saved", async () => {
    const check = (secretKey: string) => verifyStripeSecretKey({ secretKey, api: standIn.api, timeoutMs: 300 });
    expect(await check("sk_test_donata4242")).toEqual({ mode: "test", last4: "4242" });
    await expect(check("sk_live_unknown0000")).rejects.toMatchObject({
      code: "invalid_processor_keys",
      status: 422,
      message: "The Stripe secret key was refused: Stripe does not know this key",
      errors: [{ field: "secret_key", message: "Stripe does not know this key" }],
    });
    await expect(check("pk_test_publishable")).rejects.toMatchObject({
      message: "The Stripe secret key was refused: a secret key starts with sk_test_ or sk_live_",
    });
  });
});
