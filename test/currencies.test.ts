import { and, eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { checkoutAttempts, donations, payments, refunds, sandboxCharges } from "../src/db/schema.js";
import { runBilling } from "../src/jobs/runner.js";
import { type DocumentLinks, loadDocumentLinks } from "../src/modules/documents/document-links.js";
import { loadProcessorRegistry, type ProcessorRegistry } from "../src/payments/processors/index.js";
import { STRIPE_API_VERSION, STRIPE_KEY_METADATA } from "../src/payments/processors/stripe.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import {
  connectFakeStripeAccount,
  type FakeStripeAccount,
  fakeCampaign,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { TEST_ENCRYPTION_KEY } from "./helpers/server.js";
import {
  mintConfirmationToken,
  STRIPE_TEST_METHODS,
  type StripeStandIn,
  startStripeStandIn,
  stripeDisputeOf,
} from "./helpers/stripe-stand-in.js";

/**
 * Every currency in its own minor units: gifts in EUR, JPY (no minor unit) and KWD (three decimals)
 * through the public checkout API, refunds through REST, Stripe's events through the webhook, and
 * renewals through the worker's run; the real server and database, Stripe as the local stand-in.
 * Renewals act on every organization, so this file has a database of its own.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

let standIn: StripeStandIn;
let database: Database;
let dropDatabase: (() => Promise<void>) | undefined;
let app: FastifyInstance;
let url: string;
let processors: ProcessorRegistry;
let links: DocumentLinks;

interface Org extends Tenant {
  currency: string;
  campaign: string;
  stripe?: FakeStripeAccount;
}

const db = () => database.db;

const CAMPAIGN = {
  hasOneOff: true,
  hasSubscription: true,
  allowCustomAmount: true,
  allowCustomSubscriptionAmount: true,
  allowCoverFee: true,
  minAmount: 1,
  maxAmount: 1_000_000,
  minSubscriptionAmount: 1,
  maxSubscriptionAmount: 1_000_000,
  shownFields: ["first_name", "last_name", "email"],
  requiredFields: ["email"],
  archiveDate: null,
};

async function organization(currency: string, withStripe: boolean): Promise<Org> {
  const tenant = await fakeTenant(db(), { currency });
  const stripe = withStripe
    ? await connectFakeStripeAccount(db(), tenant.organizationId, processors.secrets)
    : undefined;
  const campaign = await fakeCampaign(db(), tenant.organizationId, {
    slug: `c-${unique(6)}`,
    title: "Clean water",
    ...CAMPAIGN,
  });
  return { ...tenant, currency, campaign: campaign.slug as string, stripe };
}

let jpy: Org;
let kwd: Org;
let eur: Org;
let jpySandbox: Org;

async function request(method: "GET" | "POST", path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : null };
}

beforeAll(async () => {
  standIn = await startStripeStandIn();
  const sharedUrl = testDatabaseUrl();
  let databaseUrl: string | undefined;
  if (sharedUrl) {
    const created = await createPrivateDatabase(sharedUrl, "currencies", { migrate: true });
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
  database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4 });
  if (!databaseUrl) await database.migrate();
  const config = loadConfig({
    LOG_LEVEL: "silent",
    MAX_EVENT_LOOP_DELAY: "0",
    DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    CARD_DECLINE_FLOOR_MS: "0",
    STRIPE_API_URL: `http://127.0.0.1:${standIn.api.port}`,
  });
  app = await buildApp({ config, database });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
  processors = loadProcessorRegistry(database.db, config);
  links = await loadDocumentLinks(database.db, config.baseUrl);
  jpy = await organization("JPY", true);
  kwd = await organization("KWD", true);
  eur = await organization("EUR", true);
  jpySandbox = await organization("JPY", false);
});

afterAll(async () => {
  await app?.close();
  await database?.close();
  await dropDatabase?.();
  await standIn?.close();
});

async function start(org: Org, amount: number, frequency: 0 | 12 = 0) {
  return request("POST", `/api/v1/public/organizations/${org.slug}/campaigns/${org.campaign}/checkouts/`, {
    amount,
    frequency,
  });
}

async function completion(org: Org, checkout: Json, amount: number, overrides: Json = {}) {
  const frequency = overrides.frequency ?? 0;
  const payment = org.stripe
    ? {
        processor: "stripe",
        confirmation_token: await mintConfirmationToken(
          standIn.api,
          { paymentMethod: STRIPE_TEST_METHODS.succeeds },
          {
            publishableKey: org.stripe.publishableKey,
            ...(frequency === 0 ? {} : { setupFutureUsage: "off_session" as const }),
          },
        ),
      }
    : { processor: "sandbox", card: { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" } };
  return {
    client_secret: checkout.client_secret,
    amount,
    frequency,
    supporter: { email: `${unique(8)}@example.org`, first_name: "Ada", last_name: "Lovelace" },
    consents: { privacy: true },
    ...payment,
    ...overrides,
  };
}

const complete = (org: Org, checkout: Json, body: Json) =>
  request("POST", `/api/v1/public/organizations/${org.slug}/checkouts/${checkout.id}/complete`, body, {
    "idempotency-key": unique(16),
  });

/** A gift through the public API; its payment and the PaymentIntent the stand-in received. */
async function give(org: Org, amount: number, overrides: Json = {}) {
  const started = await start(org, amount, overrides.frequency ?? 0);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const answer = await complete(org, started.body, await completion(org, started.body, amount, overrides));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const intent = org.stripe ? standIn.paymentIntents.get(answer.body.payment.processor_intent_id) : undefined;
  return { answer: answer.body, intent, checkoutId: started.body.id as number };
}

const refundOver = (org: Org, paymentId: number, amount?: number) =>
  request("POST", `/api/v1/payments/${paymentId}/refund`, amount === undefined ? undefined : { amount }, {
    authorization: `Bearer ${org.token}`,
  });

async function deliver(org: Org, type: string, object: unknown) {
  const payload = JSON.stringify({
    id: `evt_${unique(24)}`,
    object: "event",
    api_version: STRIPE_API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
  const response = await fetch(`${url}/webhooks/stripe/${org.slug}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "stripe-signature": Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: org.stripe?.webhookSecret as string,
      }),
    },
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const stripeClient = (org: Org) =>
  new Stripe(org.stripe?.secretKey as string, { ...standIn.api, maxNetworkRetries: 0 });

const refundRows = (org: Org, paymentId: number) =>
  db()
    .select()
    .from(refunds)
    .where(and(eq(refunds.organizationId, org.organizationId), eq(refunds.paymentId, paymentId)))
    .orderBy(refunds.id);

const paymentRow = async (org: Org, paymentId: number) =>
  (
    await db()
      .select()
      .from(payments)
      .where(and(eq(payments.organizationId, org.organizationId), eq(payments.id, paymentId)))
  )[0];

const attemptsOfCheckout = (checkoutId: number) =>
  db().select().from(checkoutAttempts).where(eq(checkoutAttempts.checkoutId, checkoutId));

const stripeIntentCount = () => standIn.paymentIntents.size;

describe("a gift is charged in its currency's minor units", () => {
  it("¥1,000 is 1000 at Stripe and ¥1,000 PAID in Donata (not 100000)", async () => {
    const { answer, intent } = await give(jpy, 1000);
    expect(answer.payment).toMatchObject({ state: "PAID", amount: 1000, currency: "JPY" });
    expect(intent).toMatchObject({ amount: 1000, currency: "jpy", status: "succeeded" });
  });

  it("12.5 KWD is 12500 fils at Stripe (three decimals, the last one 0)", async () => {
    const { answer, intent } = await give(kwd, 12.5);
    expect(answer.payment).toMatchObject({ state: "PAID", amount: 12.5, currency: "KWD" });
    expect(intent).toMatchObject({ amount: 12500, currency: "kwd" });
  });

  it("€25.50 is 2550 cents at Stripe, as before", async () => {
    const { answer, intent } = await give(eur, 25.5);
    expect(answer.payment).toMatchObject({ state: "PAID", amount: 25.5, currency: "EUR" });
    expect(intent).toMatchObject({ amount: 2550, currency: "eur" });
  });

  it("the sandbox records ¥1,000 as 1000 minor units", async () => {
    const { answer } = await give(jpySandbox, 1000);
    expect(answer.payment).toMatchObject({ state: "PAID", amount: 1000, currency: "JPY" });
    const [charge] = await db()
      .select()
      .from(sandboxCharges)
      .where(eq(sandboxCharges.intentId, answer.payment.processor_intent_id));
    expect(charge).toMatchObject({ amountCents: 1000, currency: "JPY", state: "PAID" });
  });

  it("covering the fee in yen: 2.9 % of ¥1,000 is ¥29, the 0.30 fixed part is ¥0; ¥1,029 charged, 1029 at Stripe", async () => {
    const campaign = await request("GET", `/api/v1/public/organizations/${jpy.slug}/campaigns/${jpy.campaign}`);
    expect(campaign.body.cover_fee).toEqual({ percent: 2.9, fixed: 0 });
    const { answer, intent } = await give(jpy, 1000, { cover_fee: true });
    expect(answer.donation).toMatchObject({ amount: 1000, covered_fee: 29 });
    expect(answer.payment).toMatchObject({ amount: 1029, currency: "JPY" });
    expect(intent).toMatchObject({ amount: 1029, currency: "jpy" });
  });
});

describe("amounts a currency cannot hold are refused before anything moves", () => {
  it("¥1,000.50 is a 422 invalid_amount when the checkout starts and when it completes", async () => {
    const started = await start(jpy, 1000.5);
    expect(started.status).toBe(422);
    expect(started.body).toEqual({
      type: expect.stringContaining("invalid_amount"),
      title: expect.any(String),
      status: 422,
      detail: "The amount must be a whole number of JPY (it has no minor unit)",
      code: "invalid_amount",
      errors: [
        {
          field: "amount",
          message: "The amount must be a whole number of JPY (it has no minor unit)",
          code: "gift_whole_units",
          values: { currency: "JPY" },
        },
      ],
    });
    const open = await start(jpy, 1000);
    const intents = stripeIntentCount();
    const completed = await complete(jpy, open.body, await completion(jpy, open.body, 1000.5));
    expect(completed.status).toBe(422);
    expect(completed.body).toMatchObject({
      code: "invalid_amount",
      errors: [{ field: "amount", code: "gift_whole_units", values: { currency: "JPY" } }],
    });
    expect(await attemptsOfCheckout(open.body.id)).toEqual([]);
    expect(stripeIntentCount()).toBe(intents);
  });

  it("under Stripe's minimum (¥50) is a 422 amount_below_minimum on the page, nothing recorded or charged", async () => {
    const open = await start(jpy, 49);
    expect(open.status).toBe(201);
    const intents = stripeIntentCount();
    const completed = await complete(jpy, open.body, await completion(jpy, open.body, 49));
    expect(completed.status).toBe(422);
    expect(completed.body).toEqual({
      type: expect.stringContaining("amount_below_minimum"),
      title: expect.any(String),
      status: 422,
      detail: "The smallest amount Stripe charges in JPY is ¥50",
      code: "amount_below_minimum",
      errors: [{ field: "amount", message: "The smallest amount Stripe charges in JPY is ¥50" }],
    });
    expect(await attemptsOfCheckout(open.body.id)).toEqual([]);
    expect(stripeIntentCount()).toBe(intents);
    // The same checkout then takes ¥50.
    const body = await completion(jpy, open.body, 50);
    expect((await complete(jpy, open.body, body)).status).toBe(200);
  });

  it("a currency Stripe does not take (IQD) cannot give with Stripe: 422 currency_not_supported, nothing charged", async () => {
    const iqd = await organization("IQD", true);
    const open = await start(iqd, 5000);
    expect(open.status).toBe(201);
    const intents = stripeIntentCount();
    const completed = await complete(iqd, open.body, await completion(iqd, open.body, 5000));
    expect(completed.status).toBe(422);
    expect(completed.body).toMatchObject({
      code: "currency_not_supported",
      detail: "Card, SEPA Direct Debit and wallets (Stripe) does not take payments in IQD",
      errors: [
        { field: "processor", message: "does not take IQD", code: "currency_not_taken", values: { currency: "IQD" } },
      ],
    });
    expect(stripeIntentCount()).toBe(intents);
  });
});

describe("a campaign's amounts are in its organization's currency", () => {
  it("a yen organization's campaign takes whole amounts only, each field named; a euro one keeps 2 decimals", async () => {
    const create = (org: Org, input: Json) =>
      request(
        "POST",
        "/admin/graphql/",
        { query: "mutation ($input: CampaignInput!) { createCampaign(input: $input) { id } }", variables: { input } },
        { authorization: `Bearer ${org.token}` },
      );
    const refused = await create(jpy, { title: "Books", min_amount: 0.5, asks: [500, 1000.5] });
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors[0]).toMatchObject({
      message: 'Invalid field "min_amount": must be a whole number of JPY (it has no minor unit)',
      extensions: {
        code: "invalid_request",
        errors: [
          {
            field: "min_amount",
            message: "must be a whole number of JPY (it has no minor unit)",
            code: "whole_units",
            values: { currency: "JPY" },
          },
          {
            field: "asks",
            message: "amounts must be a whole number of JPY (it has no minor unit)",
            code: "amounts_whole_units",
            values: { currency: "JPY" },
          },
        ],
      },
    });
    const whole = await create(jpy, { title: "Books", min_amount: 500, asks: [500, 1000] });
    expect(whole.body.errors).toBeUndefined();
    const cents = await create(eur, { title: "Books", min_amount: 0.5, asks: [5.5] });
    expect(cents.body.errors).toBeUndefined();
  });
});

describe("refunds, disputes and Stripe's reports in the payment's currency", () => {
  it("a ¥100 refund sends 100 (not 10000); a KWD refund of 2.25 sends 2250", async () => {
    const { answer, intent } = await give(jpy, 1000);
    const refunded = await refundOver(jpy, answer.payment.id, 100);
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    const sent = [...standIn.refunds.values()].filter((refund) => refund.payment_intent === intent?.id);
    expect(sent.map((refund) => refund.amount)).toEqual([100]);
    expect((await paymentRow(jpy, answer.payment.id))?.amountRefunded).toBe(100);
    // A refund finer than the currency: refused before Stripe is asked.
    const fraction = await refundOver(jpy, answer.payment.id, 0.5);
    expect(fraction.status).toBe(422);
    expect(fraction.body).toMatchObject({ code: "invalid_amount" });

    const fils = await give(kwd, 10);
    expect((await refundOver(kwd, fils.answer.payment.id, 2.25)).status).toBe(200);
    const kwdRefunds = [...standIn.refunds.values()].filter((refund) => refund.payment_intent === fils.intent?.id);
    expect(kwdRefunds.map((refund) => refund.amount)).toEqual([2250]);
  });

  it("a refund made in Stripe's dashboard (300 yen) is recorded as ¥300, a ¥1,000 dispute as ¥1,000", async () => {
    const { answer, intent } = await give(jpy, 1000);
    await stripeClient(jpy).refunds.create({ payment_intent: intent?.id as string, amount: 300 });
    const event = await deliver(jpy, "charge.refunded", {
      id: intent?.latest_charge,
      object: "charge",
      payment_intent: intent?.id,
    });
    expect(event).toEqual({ status: 200, body: { received: true, outcome: "settled" } });
    expect(await refundRows(jpy, answer.payment.id)).toEqual([
      expect.objectContaining({ amount: 300, currency: "JPY", origin: "processor", state: "SUCCEEDED" }),
    ]);
    expect((await paymentRow(jpy, answer.payment.id))?.amountRefunded).toBe(300);

    const dispute = stripeDisputeOf(intent as Stripe.PaymentIntent, { amount: 1000 });
    expect((await deliver(jpy, "charge.dispute.created", dispute)).body.outcome).toBe("settled");
    expect(await paymentRow(jpy, answer.payment.id)).toMatchObject({ disputeId: dispute.id, disputeAmount: 1000 });
  });
});

describe("renewals in the donation's currency", () => {
  it("a ¥1,000 monthly gift renews for 1000 at Stripe, the donation's id in the intent's metadata", async () => {
    const { answer } = await give(jpy, 1000, { frequency: 12 });
    const due = (await db().select().from(donations).where(eq(donations.id, answer.donation.id)))[0]
      ?.nextChargeDate as Date;
    const result = await runBilling(db(), {
      now: new Date(due.getTime() + 60_000),
      checkoutTtlSeconds: 3600,
      pendingTimeoutSeconds: 600,
      links,
      processors,
    });
    expect(result).toMatchObject({ renewed: 1, failed: 0, errors: 0 });
    const [renewal] = await db()
      .select()
      .from(payments)
      .where(and(eq(payments.donationId, answer.donation.id), eq(payments.billingCycle, 1)));
    expect(renewal).toMatchObject({ state: "PAID", amount: 1000, currency: "JPY" });
    const charged = standIn.paymentIntents.get(renewal?.processorIntentId as string);
    expect(charged).toMatchObject({
      amount: 1000,
      currency: "jpy",
      description: `Recurring donation to ${(await organizationName(jpy)) ?? ""} (Clean water)`,
      metadata: expect.objectContaining({
        donata_organization_id: String(jpy.organizationId),
        donata_donation_id: String(answer.donation.id),
      }),
    });
  });
});

async function organizationName(org: Org) {
  const campaign = await request("GET", `/api/v1/public/organizations/${org.slug}/campaigns/${org.campaign}`);
  return campaign.body.organization.name as string;
}

describe("Stripe gets context and our API version", () => {
  it("every call carries Stripe-Version as Donata pins it; a charge carries a description, ids and a statement suffix", async () => {
    const before = standIn.requests.length;
    const { answer, intent, checkoutId } = await give(eur, 30);
    const ours = standIn.requests.slice(before).filter((sent) => sent.path !== "/v1/confirmation_tokens");
    expect(ours.length).toBeGreaterThan(0);
    for (const sent of ours) expect(sent.stripeVersion).toBe(STRIPE_API_VERSION);
    const name = await organizationName(eur);
    expect(intent).toMatchObject({
      description: `Donation to ${name} (Clean water)`,
      statement_descriptor_suffix: name
        .replace(/[^A-Za-z0-9 .,-]/g, "")
        .slice(0, 10)
        .trim(),
      metadata: {
        [STRIPE_KEY_METADATA]: expect.stringMatching(/^checkout:\d+:attempt:\d+$/),
        donata_reference: expect.any(String),
        donata_organization_id: String(eur.organizationId),
        donata_campaign_id: expect.stringMatching(/^\d+$/),
        donata_checkout_id: String(checkoutId),
      },
    });
    expect(answer.payment.state).toBe("PAID");
  });
});
