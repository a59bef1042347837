import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentMethods, payments, processorEvents, receipts, refunds } from "../src/db/schema.js";
import { systemOrigin } from "../src/events/origin.js";
import { withEvents } from "../src/events/record-event.js";
import { reconcilePending } from "../src/jobs/reconciler.job.js";
import { loadDocumentLinks } from "../src/modules/documents/document-links.js";
import { findPaymentRowsByIds, type PaymentRow } from "../src/modules/payments/payments.repo.js";
import { issuePaymentReceipt } from "../src/modules/receipts/receipts.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { loadProcessorRegistry, type ProcessorRegistry } from "../src/payments/processors/index.js";
import { deleteProcessorAccount } from "../src/payments/processors/processor-accounts.repo.js";
import { createStripeProcessor, STRIPE_API_VERSION, STRIPE_KEY_METADATA } from "../src/payments/processors/stripe.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  connectFakeStripeAccount,
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakePaymentMethod,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";
import {
  STRIPE_TEST_METHODS,
  type StripeStandIn,
  startStripeStandIn,
  stripeDisputeOf,
} from "./helpers/stripe-stand-in.js";

// Stripe's events, signed with the real algorithm, posted to the real endpoint of a real server whose
// Stripe client talks to the local stand-in.
let standIn: StripeStandIn;
let server: TestServer;
let registry: ProcessorRegistry;

interface StripeTenant extends Tenant {
  secretKey: string;
  webhookSecret: string;
  stripe: Stripe;
}

let orgA: StripeTenant;
let orgB: StripeTenant;

async function stripeTenant(mode: "test" | "live" = "test"): Promise<StripeTenant> {
  const tenant = await fakeTenant(server.database.db);
  const account = await connectFakeStripeAccount(server.database.db, tenant.organizationId, registry.secrets, {
    mode,
    secretKey: `sk_test_${unique(24)}`,
  });
  const stripe = new Stripe(account.secretKey, { ...standIn.api, maxNetworkRetries: 0 });
  return { ...tenant, ...account, stripe };
}

beforeAll(async () => {
  standIn = await startStripeStandIn();
  server = await startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}` });
  registry = loadProcessorRegistry(server.database.db, server.config);
  orgA = await stripeTenant();
  orgB = await stripeTenant();
});

afterAll(async () => {
  await server?.close();
  await standIn?.close();
});

/** A Stripe payment as the checkout leaves it: a PaymentIntent at the stand-in, its payment row with the same key. */
async function stripePayment(tenant: StripeTenant, options: { sepa?: boolean; amountCents?: number } = {}) {
  const db = server.database.db;
  const amountCents = options.amountCents ?? 2500;
  const methodId = options.sepa
    ? (
        await tenant.stripe.paymentMethods.create({
          type: "sepa_debit",
          sepa_debit: { iban: "DE89370400440532013000" },
        })
      ).id
    : STRIPE_TEST_METHODS.succeeds;
  const idempotencyKey = `checkout:${randomUUID()}:attempt:1`;
  const processor = createStripeProcessor({ secretKey: tenant.secretKey, api: standIn.api });
  const charged = await processor.charge({
    amountMinor: amountCents,
    currency: "EUR",
    reference: methodId,
    kind: "initial",
    idempotencyKey,
  });
  const paid = charged.state === "PAID";
  const campaign = await fakeCampaign(db, tenant.organizationId);
  const supporter = await fakeSupporter(db, tenant.organizationId);
  const method = await fakePaymentMethod(db, tenant.organizationId, {
    supporterId: supporter.id,
    processor: "stripe",
    label: options.sepa ? "SEPA Direct Debit •••• 3000" : "Visa •••• 4242",
    processorReference: methodId,
  });
  const donation = await fakeDonation(db, tenant.organizationId, {
    supporterId: supporter.id,
    campaignId: campaign.id,
    state: paid ? "done" : "pending",
    frequency: 0,
    amount: amountCents / 100,
    completedDate: paid ? new Date() : null,
  });
  const payment = await fakePayment(db, tenant.organizationId, {
    donationId: donation.id,
    paymentMethodId: method.id,
    state: paid ? "PAID" : "PENDING",
    amount: amountCents / 100,
    paymentDate: paid ? new Date() : null,
    processorIntentId: charged.intentId,
    idempotencyKey,
  });
  return { payment, donation, method, idempotencyKey, intent: () => intentOf(charged.intentId) };
}

function intentOf(id: string): Stripe.PaymentIntent {
  const intent = standIn.paymentIntents.get(id);
  if (!intent) throw new Error(`no intent ${id} at the stand-in`);
  return structuredClone(intent);
}

/** An event as Stripe sends it, around an object of the stand-in. */
function eventOf(
  type: string,
  object: unknown,
  overrides: { livemode?: boolean; id?: string; apiVersion?: string } = {},
): Stripe.Event {
  return {
    id: overrides.id ?? `evt_${unique(24)}`,
    object: "event",
    // The endpoint's API version: Donata's own unless a test says otherwise.
    api_version: overrides.apiVersion ?? STRIPE_API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: overrides.livemode ?? false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  } as Stripe.Event;
}

async function deliver(
  slug: string,
  event: Stripe.Event,
  secret: string | null,
  options: { payload?: string; signature?: string } = {},
) {
  const payload = options.payload ?? JSON.stringify(event);
  const signature =
    options.signature ?? (secret ? Stripe.webhooks.generateTestHeaderString({ payload, secret }) : null);
  const response = await fetch(`${server.url}/webhooks/stripe/${slug}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(signature ? { "stripe-signature": signature } : {}) },
    body: payload,
  });
  return readResponse(response);
}

const deliverTo = (tenant: StripeTenant, event: Stripe.Event) => deliver(tenant.slug, event, tenant.webhookSecret);

async function paymentRow(organizationId: number, id: number) {
  const [row] = await server.database.db
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, organizationId), eq(payments.id, id)));
  if (!row) throw new Error(`no payment ${id}`);
  return row;
}

const eventsOf = (organizationId: number) =>
  server.database.db.select().from(processorEvents).where(eq(processorEvents.organizationId, organizationId));

const refundsOf = (organizationId: number, paymentId: number) =>
  server.database.db
    .select()
    .from(refunds)
    .where(and(eq(refunds.organizationId, organizationId), eq(refunds.paymentId, paymentId)))
    .orderBy(refunds.id);

async function postAs(token: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return readResponse(response);
}

async function graphql(token: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${server.url}/admin/graphql/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return response.json();
}

const PAYMENT_QUERY = `query($id: ID!) { payment(id: $id) {
  id state amount amount_refunded
  refunds { state amount origin processor_refund_id }
  dispute { id status reason amount date }
} }`;
const paymentOverGraphql = async (tenant: Tenant, id: number) =>
  (await graphql(tenant.token, PAYMENT_QUERY, { id })).data.payment;

const reconcile = async () =>
  reconcilePending(server.database.db, {
    now: new Date(),
    timeoutSeconds: server.config.paymentPendingTimeoutSeconds,
    links: await loadDocumentLinks(server.database.db, server.config.baseUrl),
    processors: loadProcessorRegistry(server.database.db, server.config),
  });

const stripeRefundsOf = (intentId: string) =>
  [...standIn.refunds.values()].filter((refund) => refund.payment_intent === intentId);

describe("the webhook endpoint", () => {
  it("settles a signed event and refuses a missing, wrong or tampered signature with 400, changing nothing", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true });
    expect(payment.state).toBe("PENDING");
    standIn.settle(payment.processorIntentId as string, "succeeded");
    const event = eventOf("payment_intent.succeeded", intent());

    const missing = await deliver(orgA.slug, event, null);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      status: 400,
      code: "invalid_signature",
      detail: "The Stripe-Signature header is missing",
    });
    const wrongSecret = await deliver(orgA.slug, event, `whsec_${unique(32)}`);
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body).toMatchObject({ code: "invalid_signature" });
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: orgA.webhookSecret });
    const tampered = await deliver(orgA.slug, event, null, {
      payload: payload.replace('"livemode":false', '"livemode":true'),
      signature,
    });
    expect(tampered.status).toBe(400);
    const garbage = await deliver(orgA.slug, event, null, { signature: "t=1,v1=abc" });
    expect(garbage.status).toBe(400);
    expect((await paymentRow(orgA.organizationId, payment.id)).state).toBe("PENDING");
    expect((await eventsOf(orgA.organizationId)).map((row) => row.eventId)).not.toContain(event.id);

    const accepted = await deliverTo(orgA, event);
    expect(accepted).toMatchObject({ status: 200, body: { received: true, outcome: "settled" } });
    const paid = await paymentRow(orgA.organizationId, payment.id);
    expect(paid.state).toBe("PAID");
    const donation = (await server.get(`/api/v1/donations/${payment.donationId}`, orgA.token)).body;
    expect(donation.state).toBe("done");
  });

  it("answers 404 for an unknown organization or one without Stripe", async () => {
    const event = eventOf("payment_intent.succeeded", { id: "pi_x", object: "payment_intent", metadata: {} });
    const unknown = await deliver(`no-such-org-${unique()}`, event, orgA.webhookSecret);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "organization_not_found" });
    const sandboxOnly = await fakeTenant(server.database.db);
    const withoutStripe = await deliver(sandboxOnly.slug, event, orgA.webhookSecret);
    expect(withoutStripe.status).toBe(404);
    expect(withoutStripe.body).toMatchObject({ code: "organization_not_found" });
  });

  it("an event signed with organization A's secret posted to B's URL is refused, and neither changes", async () => {
    const a = await stripePayment(orgA, { sepa: true });
    const b = await stripePayment(orgB, { sepa: true });
    standIn.settle(a.payment.processorIntentId as string, "succeeded");
    const event = eventOf("payment_intent.succeeded", a.intent());
    const refused = await deliver(orgB.slug, event, orgA.webhookSecret);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid_signature" });
    // B's own secret on A's intent: B does not have it, so nothing of A's changes either.
    const foreign = await deliverTo(orgB, event);
    expect(foreign.body).toMatchObject({ outcome: "ignored" });
    expect((await paymentRow(orgA.organizationId, a.payment.id)).state).toBe("PENDING");
    expect((await paymentRow(orgB.organizationId, b.payment.id)).state).toBe("PENDING");
    expect((await eventsOf(orgA.organizationId)).map((row) => row.eventId)).not.toContain(event.id);
    expect((await eventsOf(orgB.organizationId)).find((row) => row.eventId === event.id)?.outcome).toBe("ignored");
  });

  it("keeps each event once: a duplicate delivery answers 200 and changes nothing", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true });
    standIn.settle(payment.processorIntentId as string, "succeeded");
    const event = eventOf("payment_intent.succeeded", intent());
    expect((await deliverTo(orgA, event)).body).toEqual({ received: true, outcome: "settled" });
    const settled = await paymentRow(orgA.organizationId, payment.id);
    const again = await deliverTo(orgA, event);
    expect(again).toMatchObject({ status: 200, body: { received: true, outcome: "duplicate" } });
    expect((await eventsOf(orgA.organizationId)).filter((row) => row.eventId === event.id)).toEqual([
      expect.objectContaining({ eventType: "payment_intent.succeeded", outcome: "settled", processor: "stripe" }),
    ]);
    expect((await paymentRow(orgA.organizationId, payment.id)).updateDate).toEqual(settled.updateDate);
  });

  it("acknowledges events about unknown objects, of unhandled types or of the other mode, as ignored", async () => {
    const unknownIntent = eventOf("payment_intent.succeeded", {
      ...(await stripePayment(orgA)).intent(),
      id: `pi_${unique(24)}`,
      metadata: { [STRIPE_KEY_METADATA]: `checkout:${randomUUID()}:attempt:1` },
    });
    expect((await deliverTo(orgA, unknownIntent)).body).toEqual({ received: true, outcome: "ignored" });
    const noKey = eventOf("payment_intent.payment_failed", {
      id: `pi_${unique(24)}`,
      object: "payment_intent",
      metadata: {},
    });
    expect((await deliverTo(orgA, noKey)).body).toEqual({ received: true, outcome: "ignored" });
    const other = eventOf("customer.created", { id: `cus_${unique(12)}`, object: "customer" });
    expect((await deliverTo(orgA, other)).body).toEqual({ received: true, outcome: "ignored" });
    const disputeOfUnknown = eventOf("charge.dispute.created", {
      ...stripeDisputeOf((await stripePayment(orgB)).intent()),
    });
    expect((await deliverTo(orgA, disputeOfUnknown)).body).toEqual({ received: true, outcome: "ignored" });

    const { payment, intent } = await stripePayment(orgA, { sepa: true });
    standIn.settle(payment.processorIntentId as string, "succeeded");
    const live = eventOf("payment_intent.succeeded", intent(), { livemode: true });
    expect((await deliverTo(orgA, live)).body).toEqual({ received: true, outcome: "ignored_mode" });
    expect((await paymentRow(orgA.organizationId, payment.id)).state).toBe("PENDING");
    const kept = await eventsOf(orgA.organizationId);
    for (const event of [unknownIntent, noKey, other, disputeOfUnknown]) {
      expect(kept.find((row) => row.eventId === event.id)?.outcome).toBe("ignored");
    }
  });
});

describe("events of another API version", () => {
  it("are read again in Donata's version: the intent as Stripe has it now settles the payment", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true });
    // The endpoint was made with an older version: the event carries the intent as it was (processing).
    const sent = intent();
    standIn.settle(payment.processorIntentId as string, "succeeded");
    const before = standIn.requests.length;
    const event = eventOf("payment_intent.processing", sent, { apiVersion: "2020-08-27" });
    expect((await deliverTo(orgA, event)).body).toEqual({ received: true, outcome: "settled" });
    expect(standIn.requests.slice(before)).toContainEqual(
      expect.objectContaining({
        method: "GET",
        path: `/v1/payment_intents/${payment.processorIntentId}`,
        stripeVersion: STRIPE_API_VERSION,
      }),
    );
    expect(await paymentRow(orgA.organizationId, payment.id)).toMatchObject({ state: "PAID" });
    // An object Donata never acts on is not asked for: ignored as sent.
    const asked = standIn.requests.length;
    const other = eventOf(
      "customer.created",
      { id: `cus_${unique(12)}`, object: "customer" },
      { apiVersion: "2020-08-27" },
    );
    expect((await deliverTo(orgA, other)).body).toEqual({ received: true, outcome: "ignored" });
    expect(standIn.requests.length).toBe(asked);
  });
});

describe("SEPA Direct Debit through events", () => {
  it("processing keeps the payment PENDING, succeeded makes it PAID; late processing or failed change nothing", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true });
    // Processing: what the payment already says (PENDING under this intent), so nothing changes.
    const processing = eventOf("payment_intent.processing", intent());
    expect((await deliverTo(orgA, processing)).body.outcome).toBe("ignored");
    expect((await paymentRow(orgA.organizationId, payment.id)).state).toBe("PENDING");

    standIn.settle(payment.processorIntentId as string, "succeeded");
    const succeeded = eventOf("payment_intent.succeeded", intent());
    expect((await deliverTo(orgA, succeeded)).body).toEqual({ received: true, outcome: "settled" });
    const paid = await paymentRow(orgA.organizationId, payment.id);
    expect(paid).toMatchObject({ state: "PAID", processorIntentId: payment.processorIntentId });

    // Out of order: an older processing event and a failure arriving after the success change nothing: "ignored".
    const late = await deliverTo(orgA, eventOf("payment_intent.processing", processing.data.object));
    expect(late).toMatchObject({ status: 200, body: { received: true, outcome: "ignored" } });
    const failedIntent = { ...intent(), status: "requires_payment_method" as const };
    const lateFailure = await deliverTo(orgA, eventOf("payment_intent.payment_failed", failedIntent));
    expect(lateFailure).toMatchObject({ status: 200, body: { received: true, outcome: "ignored" } });
    expect(
      (await eventsOf(orgA.organizationId)).find(
        (row) => row.eventType === "payment_intent.payment_failed" && row.outcome === "settled",
      ),
    ).toBeUndefined();
    const after = await paymentRow(orgA.organizationId, payment.id);
    expect(after).toMatchObject({ state: "PAID", failureCode: null });
    expect(after.updateDate).toEqual(paid.updateDate);
  });

  it("processing then payment_failed: the payment FAILED with the bank's reason, the donation left pending", async () => {
    const { payment, donation, intent } = await stripePayment(orgA, { sepa: true });
    expect((await deliverTo(orgA, eventOf("payment_intent.processing", intent()))).status).toBe(200);
    standIn.settle(payment.processorIntentId as string, "failed");
    expect((await deliverTo(orgA, eventOf("payment_intent.payment_failed", intent()))).body.outcome).toBe("settled");
    expect(await paymentRow(orgA.organizationId, payment.id)).toMatchObject({
      state: "FAILED",
      failureCode: "payment_intent_payment_attempt_failed",
      failureMessage: "The debit was returned by the bank: insufficient funds.",
    });
    expect((await server.get(`/api/v1/donations/${donation.id}`, orgA.token)).body.state).toBe("pending");
    // A success reported after the failure is ignored by the settled payment.
    const late = { ...intent(), status: "succeeded" as const };
    expect((await deliverTo(orgA, eventOf("payment_intent.succeeded", late))).status).toBe(200);
    expect((await paymentRow(orgA.organizationId, payment.id)).state).toBe("FAILED");
  });
});

describe("refunds", () => {
  it("refunds in full from the API: REFUNDED once Stripe confirms, the one-off donation revoked", async () => {
    const { payment, donation } = await stripePayment(orgA, { amountCents: 4000 });
    const refunded = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`);
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({ id: payment.id, state: "REFUNDED", amount: 40 });
    expect(Object.keys(refunded.body).sort()).toEqual(
      [
        "amount",
        "create_date",
        "currency",
        "donation_id",
        "external_id",
        "id",
        "payment_date",
        "payment_method",
        "processor_intent_id",
        "state",
        "test",
        "update_date",
      ].sort(),
    );
    expect(stripeRefundsOf(payment.processorIntentId as string).map((refund) => refund.amount)).toEqual([4000]);
    expect((await server.get(`/api/v1/donations/${donation.id}`, orgA.token)).body.state).toBe("revoked");
    expect(await paymentOverGraphql(orgA, payment.id)).toMatchObject({
      state: "REFUNDED",
      amount_refunded: 40,
      refunds: [{ state: "SUCCEEDED", amount: 40, origin: "api", processor_refund_id: expect.stringMatching(/^re_/) }],
    });
    // Stripe's own event about our refund, delivered afterwards: recognised by our key, nothing changes.
    const [stripeRefund] = stripeRefundsOf(payment.processorIntentId as string);
    expect((await deliverTo(orgA, eventOf("refund.created", stripeRefund))).body.outcome).toBe("ignored");
    expect(await refundsOf(orgA.organizationId, payment.id)).toHaveLength(1);
    const again = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "invalid_state_transition" });
  });

  it("refunds in part (REST body, GraphQL argument): PAID until the whole amount is refunded", async () => {
    const { payment, donation } = await stripePayment(orgA, { amountCents: 2500 });
    const tooMuch = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 25.01 });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body).toMatchObject({
      status: 422,
      code: "refund_amount_too_large",
      detail: "The refund amount 25.01 is more than what is left to refund (25)",
      errors: [{ field: "amount", message: "must be at most 25" }],
    });
    expect((await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: "ten" })).status).toBe(400);
    expect((await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 0 })).status).toBe(400);
    expect((await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 1.005 })).status).toBe(422);
    const tiny = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 1e-9 });
    expect(tiny).toMatchObject({ status: 422, body: { code: "invalid_amount" } });
    expect(stripeRefundsOf(payment.processorIntentId as string)).toEqual([]);

    const part = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 10 });
    expect(part.status).toBe(200);
    expect(part.body).toMatchObject({ state: "PAID" });
    expect((await server.get(`/api/v1/donations/${donation.id}`, orgA.token)).body.state).toBe("done");
    const mutation = `mutation($id: ID!, $amount: Float) { refundPayment(id: $id, amount: $amount) { id state } }`;
    const tooMuchNow = await graphql(orgA.token, mutation, { id: payment.id, amount: 15.5 });
    expect(tooMuchNow.errors[0].extensions.code).toBe("refund_amount_too_large");
    const second = await graphql(orgA.token, mutation, { id: payment.id, amount: 5 });
    expect(second.data.refundPayment).toEqual({ id: payment.id, state: "PAID" });
    expect((await paymentOverGraphql(orgA, payment.id)).amount_refunded).toBe(15);
    const rest = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`);
    expect(rest.body).toMatchObject({ state: "REFUNDED" });
    expect(stripeRefundsOf(payment.processorIntentId as string).map((refund) => refund.amount)).toEqual([
      1000, 500, 1000,
    ]);
    expect((await paymentOverGraphql(orgA, payment.id)).amount_refunded).toBe(25);
    expect((await server.get(`/api/v1/donations/${donation.id}`, orgA.token)).body.state).toBe("revoked");
  });

  it("documents the optional refund body in OpenAPI; the webhook is Stripe's, not in it", async () => {
    const document = (await server.get("/api/v1/openapi.json")).body;
    const refund = document.paths["/api/v1/payments/{id}/refund"].post;
    expect(refund.requestBody.content["application/json"].schema).toMatchObject({
      type: "object",
      additionalProperties: false,
      properties: { amount: { type: "number", exclusiveMinimum: 0 } },
    });
    expect(refund.requestBody.content["application/json"].schema.required).toBeUndefined();
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/webhooks/"))).toEqual([]);
  });

  it("a SEPA refund stays pending until its event says it succeeded (and a failed one leaves the payment PAID)", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true, amountCents: 3000 });
    standIn.settle(payment.processorIntentId as string, "succeeded");
    await deliverTo(orgA, eventOf("payment_intent.succeeded", intent()));
    const asked = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 10 });
    expect(asked).toMatchObject({ status: 200, body: { state: "PAID" } });
    const [pending] = stripeRefundsOf(payment.processorIntentId as string);
    expect(pending?.status).toBe("pending");
    expect((await paymentOverGraphql(orgA, payment.id)).refunds).toEqual([
      { state: "PENDING", amount: 10, origin: "api", processor_refund_id: pending?.id },
    ]);
    // While it is pending the money is held back: only 20 is left to refund.
    const tooMuch = await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`, { amount: 25 });
    expect(tooMuch.body).toMatchObject({ code: "refund_amount_too_large" });

    const failed = standIn.settleRefund(pending?.id as string, "failed");
    expect((await deliverTo(orgA, eventOf("refund.failed", structuredClone(failed)))).body.outcome).toBe("settled");
    expect((await paymentOverGraphql(orgA, payment.id)).refunds[0]).toMatchObject({ state: "FAILED" });
    expect(await paymentRow(orgA.organizationId, payment.id)).toMatchObject({ state: "PAID", amountRefunded: 0 });

    expect((await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`)).body.state).toBe("PAID");
    const whole = stripeRefundsOf(payment.processorIntentId as string).find((refund) => refund.status === "pending");
    expect(whole?.amount).toBe(3000);
    const succeeded = standIn.settleRefund(whole?.id as string, "succeeded");
    expect((await deliverTo(orgA, eventOf("refund.updated", structuredClone(succeeded)))).body.outcome).toBe("settled");
    expect(await paymentRow(orgA.organizationId, payment.id)).toMatchObject({ state: "REFUNDED", amountRefunded: 30 });
  });

  it("a SEPA refund whose event never came is settled by the reconciler from Stripe's answer", async () => {
    const { payment, intent } = await stripePayment(orgA, { sepa: true, amountCents: 2000 });
    standIn.settle(payment.processorIntentId as string, "succeeded");
    await deliverTo(orgA, eventOf("payment_intent.succeeded", intent()));
    expect((await postAs(orgA.token, `/api/v1/payments/${payment.id}/refund`)).body.state).toBe("PAID");
    const [pending] = stripeRefundsOf(payment.processorIntentId as string);
    const [recorded] = await refundsOf(orgA.organizationId, payment.id);
    const makeStale = () =>
      server.database.db
        .update(refunds)
        .set({ updateDate: new Date(Date.now() - (server.config.paymentPendingTimeoutSeconds + 60) * 1000) })
        .where(and(eq(refunds.organizationId, orgA.organizationId), eq(refunds.id, recorded?.id as number)));
    // Still pending at Stripe: left PENDING, and not asked again before another timeout.
    await makeStale();
    await reconcile();
    const [stillPending] = await refundsOf(orgA.organizationId, payment.id);
    expect(stillPending?.state).toBe("PENDING");
    expect(stillPending?.updateDate.getTime()).toBeGreaterThan(Date.now() - 60_000);
    standIn.settleRefund(pending?.id as string, "succeeded");
    await makeStale();
    await reconcile();
    expect(await paymentRow(orgA.organizationId, payment.id)).toMatchObject({ state: "REFUNDED", amountRefunded: 20 });
    expect(stripeRefundsOf(payment.processorIntentId as string)).toHaveLength(1);
  });

  it("a refund made in Stripe's dashboard (charge.refunded) shows in Donata, the payment REFUNDED", async () => {
    const { payment, donation, intent } = await stripePayment(orgA, { amountCents: 1800 });
    // Stripe's dashboard: a refund without our key, then the event naming only the charge.
    await orgA.stripe.refunds.create({ payment_intent: payment.processorIntentId as string });
    const paid = intent();
    const charge = {
      id: paid.latest_charge,
      object: "charge",
      amount: paid.amount,
      amount_refunded: paid.amount,
      currency: paid.currency,
      livemode: false,
      payment_intent: paid.id,
      refunded: true,
      status: "succeeded",
    } as Stripe.Charge;
    const event = eventOf("charge.refunded", charge);
    expect((await deliverTo(orgA, event)).body.outcome).toBe("settled");
    expect(await paymentOverGraphql(orgA, payment.id)).toMatchObject({
      state: "REFUNDED",
      amount_refunded: 18,
      refunds: [{ state: "SUCCEEDED", amount: 18, origin: "processor" }],
    });
    expect((await server.get(`/api/v1/donations/${donation.id}`, orgA.token)).body.state).toBe("revoked");
    // The same refund reported again by its own event: still one refund.
    const [dashboardRefund] = stripeRefundsOf(payment.processorIntentId as string);
    expect((await deliverTo(orgA, eventOf("refund.updated", dashboardRefund))).status).toBe(200);
    expect(await refundsOf(orgA.organizationId, payment.id)).toHaveLength(1);
  });

  it("a processor 500 on a refund: asked again with the same key, refunded once", async () => {
    // The refund is made but its answer is a 500 (replayed for the key): found by our key at once.
    const first = await stripePayment(orgA, { amountCents: 1200 });
    standIn.inject({ kind: "error_500", when: "after_recording" });
    const answered = await postAs(orgA.token, `/api/v1/payments/${first.payment.id}/refund`);
    expect(answered).toMatchObject({ status: 200, body: { state: "REFUNDED" } });
    expect(stripeRefundsOf(first.payment.processorIntentId as string)).toHaveLength(1);

    // Stripe never got it (500 before recording, retried once by the client): PENDING until the reconciler.
    const second = await stripePayment(orgA, { amountCents: 1500 });
    standIn.inject({ kind: "error_500", when: "before_recording", times: 2 });
    const lost = await postAs(orgA.token, `/api/v1/payments/${second.payment.id}/refund`);
    expect(lost).toMatchObject({ status: 200, body: { state: "PAID" } });
    expect(stripeRefundsOf(second.payment.processorIntentId as string)).toEqual([]);
    const [recorded] = await refundsOf(orgA.organizationId, second.payment.id);
    expect(recorded).toMatchObject({ state: "PENDING", idempotencyKey: `refund:${recorded?.id}` });
    await reconcile();
    expect((await refundsOf(orgA.organizationId, second.payment.id))[0]?.state).toBe("PENDING");
    await server.database.db
      .update(refunds)
      .set({ updateDate: new Date(Date.now() - (server.config.paymentPendingTimeoutSeconds + 60) * 1000) })
      .where(and(eq(refunds.organizationId, orgA.organizationId), eq(refunds.id, recorded?.id as number)));
    await reconcile();
    await reconcile();
    expect(await paymentRow(orgA.organizationId, second.payment.id)).toMatchObject({ state: "REFUNDED" });
    const made = stripeRefundsOf(second.payment.processorIntentId as string);
    expect(made.map((refund) => [refund.amount, refund.metadata?.[STRIPE_KEY_METADATA]])).toEqual([
      [1500, recorded?.idempotencyKey],
    ]);
    const posts = standIn.requests.filter((request) => request.idempotencyKey === recorded?.idempotencyKey);
    expect(posts.length).toBeGreaterThanOrEqual(3);
  });
});

describe("disputes and card updates", () => {
  it("a dispute opened then closed is recorded on the payment and shown in GraphQL; a late update does not reopen it", async () => {
    const { payment, intent } = await stripePayment(orgA, { amountCents: 5000 });
    expect((await paymentOverGraphql(orgA, payment.id)).dispute).toBeNull();
    const dispute = stripeDisputeOf(intent(), { reason: "product_not_received" });
    expect((await deliverTo(orgA, eventOf("charge.dispute.created", dispute))).body.outcome).toBe("settled");
    expect((await paymentOverGraphql(orgA, payment.id)).dispute).toEqual({
      id: dispute.id,
      status: "needs_response",
      reason: "product_not_received",
      amount: 50,
      date: new Date(dispute.created * 1000).toISOString(),
    });
    // The gift's receipt (the factory's payment was never announced paid: issued here as payment.paid would)
    // stands while the dispute is open; lost, the bank took the money back: void.
    await withEvents(server.database.db, async (tx) => {
      const [row] = await findPaymentRowsByIds(tx, orgA.organizationId, [payment.id]);
      await issuePaymentReceipt(tx, { organizationId: orgA.organizationId, origin: systemOrigin() }, row as PaymentRow);
    });
    const receiptsOfPayment = () =>
      server.database.db
        .select({ voidReason: receipts.voidReason, amount: receipts.amount })
        .from(receipts)
        .where(and(eq(receipts.organizationId, orgA.organizationId), eq(receipts.paymentId, payment.id)));
    await expect(receiptsOfPayment()).resolves.toEqual([{ voidReason: null, amount: 50 }]);
    const closed = { ...dispute, status: "lost" as const };
    expect((await deliverTo(orgA, eventOf("charge.dispute.closed", closed))).body.outcome).toBe("settled");
    await expect(receiptsOfPayment()).resolves.toEqual([{ voidReason: "disputed", amount: 50 }]);
    // A late update and the closing event delivered again (a new event id) change nothing: "ignored".
    const late = { ...dispute, status: "under_review" as const };
    expect((await deliverTo(orgA, eventOf("charge.dispute.updated", late))).body).toEqual({
      received: true,
      outcome: "ignored",
    });
    expect((await deliverTo(orgA, eventOf("charge.dispute.closed", closed))).body.outcome).toBe("ignored");
    expect((await paymentOverGraphql(orgA, payment.id)).dispute).toMatchObject({ id: dispute.id, status: "lost" });
    // Opened and closed are events (the processor's report, the platform's doing); what changed nothing is not.
    const disputed = (
      await server.get("/api/v1/events/?type=payment.disputed&limit=100", orgA.token)
    ).body.items.filter((event: { resource: { id: number } }) => event.resource.id === payment.id);
    expect(disputed.map((event: { actor: unknown }) => event.actor)).toEqual([
      { type: "system", id: null },
      { type: "system", id: null },
    ]);
    expect(disputed[1].data).toEqual((await server.get(`/api/v1/payments/${payment.id}`, orgA.token)).body);
    // Another organization's token sees nothing of it.
    expect((await graphql(orgB.token, PAYMENT_QUERY, { id: payment.id })).data.payment).toBeNull();
  });

  it("payment_method.automatically_updated changes the label and expiry of the organization's method only", async () => {
    const db = server.database.db;
    const methodId = `pm_${unique(24)}`;
    const supporterA = await fakeSupporter(db, orgA.organizationId);
    const supporterB = await fakeSupporter(db, orgB.organizationId);
    const saved = await fakePaymentMethod(db, orgA.organizationId, {
      supporterId: supporterA.id,
      processor: "stripe",
      label: "Visa •••• 4242",
      processorReference: `cus_${unique(14)}/${methodId}`,
      expiryMonth: 1,
      expiryYear: 2026,
    });
    const otherOrg = await fakePaymentMethod(db, orgB.organizationId, {
      supporterId: supporterB.id,
      processor: "stripe",
      label: "Visa •••• 4242",
      processorReference: methodId,
    });
    const card = {
      id: methodId,
      object: "payment_method",
      type: "card",
      livemode: false,
      card: { brand: "mastercard", last4: "4444", exp_month: 7, exp_year: 2031 },
    } as Stripe.PaymentMethod;
    const event = eventOf("payment_method.automatically_updated", card);
    expect((await deliverTo(orgA, event)).body.outcome).toBe("settled");
    const [updated] = await db.select().from(paymentMethods).where(eq(paymentMethods.id, saved.id));
    expect(updated).toMatchObject({ label: "Mastercard •••• 4444", expiryMonth: 7, expiryYear: 2031 });
    const [untouched] = await db.select().from(paymentMethods).where(eq(paymentMethods.id, otherOrg.id));
    expect(untouched).toMatchObject({ label: "Visa •••• 4242", expiryMonth: null });
    const unknown = eventOf("payment_method.updated", { ...card, id: `pm_${unique(24)}` });
    expect((await deliverTo(orgA, unknown)).body.outcome).toBe("ignored");
  });
});

describe("refunds after disconnecting Stripe", () => {
  it("are refused 409 processor_not_connected, recording nothing, until Stripe is connected again", async () => {
    const tenant = await stripeTenant();
    const { payment } = await stripePayment(tenant);
    await deleteProcessorAccount(server.database.db, tenant.organizationId, "stripe");
    const refused = await postAs(tenant.token, `/api/v1/payments/${payment.id}/refund`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "processor_not_connected" });
    expect(refused.body.detail).toContain("Settings → Payments");
    const recorded = await server.database.db.select().from(refunds).where(eq(refunds.paymentId, payment.id));
    expect(recorded).toEqual([]);
    await connectFakeStripeAccount(server.database.db, tenant.organizationId, registry.secrets, {
      secretKey: tenant.secretKey,
      webhookSecret: tenant.webhookSecret,
    });
    const refunded = await postAs(tenant.token, `/api/v1/payments/${payment.id}/refund`);
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({ id: payment.id, state: "REFUNDED" });
  });
});

describe("refunds from the admin panel with Stripe", () => {
  it("an owner refunds part, then the rest, of a card payment; a SEPA refund shows as asked until Stripe confirms", async () => {
    const db = server.database.db;
    const email = `owner-${unique(6)}@example.test`;
    const password = "a long enough password";
    await createUser(db, { email, password, organization: orgA.slug, role: "owner" });
    const card = await stripePayment(orgA, { amountCents: 3000 });
    const sepa = await stripePayment(orgA, { sepa: true, amountCents: 1500 });
    standIn.settle(sepa.payment.processorIntentId as string, "succeeded");
    await deliverTo(orgA, eventOf("payment_intent.succeeded", sepa.intent()));
    const browser = await launchChromium();
    try {
      const page = await signInToPanel(browser, { url: server.url, email, password, organization: orgA.slug });

      const refundsAtStripe = () =>
        [...standIn.refunds.values()]
          .filter((refund) => refund.payment_intent === card.payment.processorIntentId)
          .map((refund) => [refund.amount, refund.status]);
      await page.goto(`${server.url}/admin/o/${orgA.slug}/payments/${card.payment.id}`);
      await page.click(`[data-testid="refund-${card.payment.id}"]`);
      await page.locator(`[data-testid="refund-amount-${card.payment.id}"]`).fill("10");
      await page.click('[data-testid="confirm-dialog-confirm"]');
      await expect
        .poll(() => page.locator(".flash").textContent())
        .toContain(`of payment #${card.payment.id} refunded.`);
      expect(refundsAtStripe()).toEqual([[1000, "succeeded"]]);
      const paymentRow = async (id: number) =>
        (
          await db
            .select()
            .from(payments)
            .where(and(eq(payments.organizationId, orgA.organizationId), eq(payments.id, id)))
        )[0];
      expect(await paymentRow(card.payment.id)).toMatchObject({ state: "PAID", amountRefunded: 10 });

      await page.click(`[data-testid="refund-${card.payment.id}"]`);
      expect(await page.locator(`[data-testid="refund-amount-${card.payment.id}"]`).inputValue()).toBe("20.00");
      await page.click('[data-testid="confirm-dialog-confirm"]');
      await expect.poll(async () => (await paymentRow(card.payment.id))?.state).toBe("REFUNDED");
      expect(refundsAtStripe()).toEqual([
        [1000, "succeeded"],
        [2000, "succeeded"],
      ]);

      // A bank debit's refund is pending at Stripe: the panel says it was asked, the payment stays PAID.
      await page.goto(`${server.url}/admin/o/${orgA.slug}/payments/${sepa.payment.id}`);
      await page.click(`[data-testid="refund-${sepa.payment.id}"]`);
      await page.click('[data-testid="confirm-dialog-confirm"]');
      await expect
        .poll(() => page.locator(".flash").textContent())
        .toBe(`Refund of payment #${sepa.payment.id} asked; it shows as refunded once the processor confirms it.`);
      expect(await paymentRow(sepa.payment.id)).toMatchObject({ state: "PAID", amountRefunded: 0 });
    } finally {
      await browser.close();
    }
  });
});
