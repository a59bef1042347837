import { randomUUID } from "node:crypto";
import { and, eq, like, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { campaigns, checkoutAttempts, checkouts, jobs, payments, refunds, sandboxCharges } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { reconcilePending } from "../src/jobs/reconciler.job.js";
import { type DocumentLinks, loadDocumentLinks } from "../src/modules/documents/document-links.js";
import type { CompletionStep } from "../src/modules/giving/giving.context.js";
import { settleChargeOutcome, settleProcessorRefund } from "../src/modules/payments/processor-events.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { loadProcessorRegistry } from "../src/payments/processors/index.js";
import { fakeCampaign, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const CARDS = {
  ok: "4242424242424242",
  declined: "4000000000000002",
  timesOut: "4000000000000119",
  luhnBad: "4242424242424241",
};
const card = (number: string = CARDS.ok) => ({ number, exp_month: 12, exp_year: 2035, cvc: "123" });

type Json = Record<string, unknown>;

describe("giving: public checkout, processors, transitions", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let readOnly: Tenant;
  let campaign: { id: number; slug: string };
  let failAt: CompletionStep | null = null;
  let links: DocumentLinks;

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  };
  const postAs = (token: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (response) => ({ status: response.status, headers: response.headers, body: await response.json() }));
  const graphql = async (token: string, query: string, variables: Json = {}) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return response.json();
  };

  const start = (slug = campaign.slug, body: Json = {}, organization = tenant.slug) =>
    post(`/api/v1/public/organizations/${organization}/campaigns/${slug}/checkouts/`, body);

  const completion = (secret: string, overrides: Json = {}) => ({
    client_secret: secret,
    amount: 25,
    frequency: 0,
    processor: "sandbox",
    card: card(),
    supporter: { first_name: "Ada", last_name: "Lovelace", email: `ada-${unique(6)}@example.test` },
    consents: { privacy: true, email_marketing: true },
    ...overrides,
  });

  const complete = (id: number, body: Json, headers: Record<string, string> = {}, organization = tenant.slug) =>
    post(`/api/v1/public/organizations/${organization}/checkouts/${id}/complete`, body, headers);

  /** Starts a checkout on the campaign and completes it; returns the completion response. */
  const give = async (overrides: Json = {}, headers: Record<string, string> = {}, slug = campaign.slug) => {
    const started = await start(slug, {});
    expect(started.status).toBe(201);
    const response = await complete(started.body.id, completion(started.body.client_secret, overrides), headers);
    return { ...response, checkoutId: started.body.id as number, secret: started.body.client_secret as string };
  };

  /** Rows of the organization, to prove a refused request wrote nothing. */
  const counts = async (organizationId = tenant.organizationId) => {
    const result = await server.database.db.execute<Record<string, string>>(sql`
      select
        (select count(*) from supporters where organization_id = ${organizationId}) as supporters,
        (select count(*) from payment_methods where organization_id = ${organizationId}) as methods,
        (select count(*) from donations where organization_id = ${organizationId}) as donations,
        (select count(*) from payments where organization_id = ${organizationId}) as payments,
        (select count(*) from checkouts where organization_id = ${organizationId} and state = 'CLOSED') as closed,
        (select count(*) from jobs where organization_id = ${organizationId}) as jobs`);
    return (result as unknown as { rows: Record<string, string>[] }).rows[0];
  };

  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        testHooks: {
          afterCompletionStep: (step) => {
            if (step === failAt) throw new Error(`injected failure after ${step}`);
          },
        },
      },
    );
    const db = server.database.db;
    links = await loadDocumentLinks(db, server.config.baseUrl);
    tenant = await fakeTenant(db);
    other = await fakeTenant(db);
    readOnly = await fakeTenant(db, { permissions: ["donations:read", "payments:read"] });
    const row = await fakeCampaign(db, tenant.organizationId, {
      slug: `give-${unique(6)}`,
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      allowCustomSubscriptionAmount: true,
      minAmount: 5,
      maxAmount: 1000,
      minSubscriptionAmount: 3,
      maxSubscriptionAmount: 200,
      costExampleAmount: 10,
      costExampleLabel: "one school kit",
      shownFields: ["first_name", "last_name", "email", "phone", "city"],
      requiredFields: ["first_name", "email"],
      archiveDate: null,
    });
    campaign = { id: row.id, slug: row.slug as string };
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    failAt = null;
  });

  describe("public campaign and starting a checkout", () => {
    it("describes the campaign to a form, without a token", async () => {
      const response = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: campaign.id,
        slug: campaign.slug,
        organization: { slug: tenant.slug },
        currency: "EUR",
        min_amount: 5,
        max_amount: 1000,
        asks: [10, 25, 50],
        shown_fields: ["first_name", "last_name", "email", "phone", "city"],
        required_fields: ["first_name", "email"],
        cost_example_amount: 10,
        cost_example_label: "one school kit",
      });
      expect(response.body.processors.map((p: Json) => p.name)).toEqual(["sandbox", "manual"]);
    });

    it("404s an unknown organization or campaign, 410s an archived one", async () => {
      expect(
        (await server.get(`/api/v1/public/organizations/nope-${unique()}/campaigns/${campaign.slug}`)).status,
      ).toBe(404);
      expect((await server.get(`/api/v1/public/organizations/${other.slug}/campaigns/${campaign.slug}`)).status).toBe(
        404,
      );
      const archived = await fakeCampaign(server.database.db, tenant.organizationId, { archiveDate: new Date() });
      const response = await start(archived.slug as string, { amount: 10, frequency: 0 });
      expect(response.status).toBe(410);
      expect(response.body.code).toBe("campaign_closed");
    });

    it("opens a checkout with a one-time client secret and the cost example quantity", async () => {
      const response = await start(campaign.slug, { amount: 25, frequency: 0 });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ state: "OPEN", amount: 25, frequency: 0, cost_example_quantity: 2 });
      expect(response.body.client_secret).toMatch(/^dnt_cks_/);
      const [row] = await server.database.db
        .select()
        .from(checkouts)
        .where(and(eq(checkouts.organizationId, tenant.organizationId), eq(checkouts.id, response.body.id)));
      expect(row?.clientSecretHash).not.toContain(response.body.client_secret);
      expect(row?.campaignId).toBe(campaign.id);
    });

    it("refuses amounts and frequencies the campaign does not allow, creating nothing", async () => {
      const before = await counts();
      for (const [body, code] of [
        [{ amount: 4.99, frequency: 0 }, "amount_out_of_range"],
        [{ amount: 1000.01, frequency: 0 }, "amount_out_of_range"],
        [{ amount: 2, frequency: 12 }, "amount_out_of_range"],
        [{ amount: 10.005, frequency: 0 }, "invalid_amount"],
      ] as const) {
        const response = await start(campaign.slug, body);
        expect(response.status, JSON.stringify(body)).toBe(422);
        expect(response.body.code).toBe(code);
      }
      for (const body of [{ frequency: 2 }, { amount: -5 }, { amount: "ten" }, { extra: 1 }]) {
        expect((await start(campaign.slug, body)).status, JSON.stringify(body)).toBe(400);
      }
      expect(await counts()).toEqual(before);
    });
  });

  describe("completing a checkout", () => {
    it("one-off gift: supporter, donation done, payment PAID, checkout CLOSED with every field", async () => {
      const email = `grace-${unique(6)}@example.test`;
      const response = await give(
        { amount: 35, supporter: { first_name: "Grace", last_name: "Hopper", email, phone: "+39 06 1234" } },
        { "user-agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0" },
      );
      expect(response.status).toBe(200);
      expect(response.body.result).toBe("succeeded");
      const checkout = (await server.get(`/api/v1/checkouts/${response.checkoutId}`, tenant.token)).body;
      expect(checkout).toMatchObject({
        state: "CLOSED",
        amount: 35,
        frequency: 0,
        cost_example_quantity: 3,
        payment_method_processor: "sandbox",
        payment_method_label: "Visa •••• 4242",
        campaign: { id: campaign.id },
        supporter: { first_name: "Grace", last_name: "Hopper", email, phone: "+39 06 1234", privacy: true },
        donation: { state: "done", amount: 35, frequency: 0, device: "desktop", campaign_id: campaign.id },
        payment: { state: "PAID", amount: 35, payment_method: { label: "Visa •••• 4242" } },
      });
      expect(checkout.completed_date).toEqual(expect.any(String));
      expect(checkout.payment_method_id).toBe(checkout.payment.payment_method.id);
      expect(checkout.donation.code).toMatch(/^DON-\d{8}$/);
      expect(checkout.donation.receipt_url).toMatch(new RegExp(`^${server.url}/documents/receipts/`));
      expect(checkout.supporter.certification_url).toMatch(new RegExp(`^${server.url}/documents/statements/`));
      expect(checkout.payment.processor_intent_id).toMatch(/^sbx_pi_/);
      // Nothing of the card but its label is stored.
      const stored = await server.database.db.execute(
        sql`select count(*)::int as n from payment_methods where processor_reference like ${`%${CARDS.ok}%`} or label like ${`%${CARDS.ok}%`}`,
      );
      expect((stored as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(0);

      const again = await complete(response.checkoutId, completion(response.secret));
      expect(again.status).toBe(409);
      expect(again.body.code).toBe("checkout_closed");
    });

    it("monthly gift: donation active and its first renewal queued a month later", async () => {
      const response = await give(
        { amount: 12.5, frequency: 12 },
        { "user-agent": "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) Safari/604.1" },
      );
      expect(response.status).toBe(200);
      const { donation } = response.body;
      expect(donation).toMatchObject({ state: "active", frequency: 12, amount: 12.5, device: "tablet" });
      const [job] = await server.database.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.organizationId, tenant.organizationId), eq(jobs.subjectId, donation.id)));
      expect(job).toMatchObject({ kind: "renewal", state: "queued", payload: { cycle: 1 } });
      const completed = new Date(donation.completed_date);
      const due = new Date(completed);
      due.setUTCMonth(due.getUTCMonth() + 1);
      if (completed.getUTCDate() === due.getUTCDate()) expect(job?.runDate.toISOString()).toBe(due.toISOString());
    });

    it("matches the supporter by email within the organization only", async () => {
      const email = `match-${unique(6)}@example.test`;
      const first = await give({ supporter: { first_name: "Mae", email } });
      const second = await give({ supporter: { first_name: "Mae", email: email.toUpperCase(), city: "Rome" } });
      expect(second.body.donation.supporter_id).toBe(first.body.donation.supporter_id);
      // The second gift's city is kept from the supporter's record: a gift fills in nobody's details.
      const supporter = (await server.get(`/api/v1/supporters/${first.body.donation.supporter_id}`, tenant.token)).body;
      expect(supporter).toMatchObject({ email, city: null, first_name: "Mae" });

      const otherCampaign = await fakeCampaign(server.database.db, other.organizationId, { slug: `o-${unique(6)}` });
      const started = await start(otherCampaign.slug as string, {}, other.slug);
      const elsewhere = await complete(
        started.body.id,
        completion(started.body.client_secret, { amount: 10, supporter: { email } }),
        {},
        other.slug,
      );
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.body.donation.supporter_id).not.toBe(first.body.donation.supporter_id);
    });

    it("a gift with an existing supporter's email changes none of their consents or details; what the giver declared is kept as a consent record", async () => {
      const EXPORT = `mutation ($id: ID!) { exportSupporter(id: $id) { consent_records {
        source donation_id applied create_date
        privacy email_marketing phone_marketing sms_marketing postal_marketing profilation_marketing } } }`;
      const existing = await fakeSupporter(server.database.db, tenant.organizationId, {
        email: `kept-${unique(6)}@example.test`,
        firstName: "Grace",
        lastName: null,
        phone: null,
        city: null,
        privacy: true,
        emailMarketing: true,
        phoneMarketing: false,
        smsMarketing: null,
      });
      const before = (await server.get(`/api/v1/supporters/${existing.id}`, tenant.token)).body;
      // Nobody signed in, no money moves (a bank transfer awaited): the gift is still recorded, on that supporter.
      const started = new Date();
      const gift = await give({
        processor: "manual",
        card: undefined,
        amount: 15,
        supporter: {
          first_name: "Mallory",
          last_name: "Else",
          email: (existing.email as string).toUpperCase(),
          phone: "+39 000 0000",
          city: "Nowhere",
        },
        consents: { privacy: true, email_marketing: false, phone_marketing: true },
      });
      expect(gift.status).toBe(200);
      expect(gift.body).toMatchObject({ result: "pending", payment: { state: "PENDING" } });
      expect(gift.body.donation.supporter_id).toBe(existing.id);
      expect((await server.get(`/api/v1/supporters/${existing.id}`, tenant.token)).body).toEqual(before);

      const exported = await graphql(tenant.token, EXPORT, { id: existing.id });
      expect(exported.errors).toBeUndefined();
      const [record, ...more] = exported.data.exportSupporter.consent_records;
      expect(more).toEqual([]);
      expect(record).toEqual({
        source: "checkout",
        donation_id: gift.body.donation.id,
        applied: false,
        create_date: expect.any(String),
        privacy: true,
        email_marketing: false,
        phone_marketing: true,
        sms_marketing: null,
        postal_marketing: null,
        profilation_marketing: null,
      });
      expect(new Date(record.create_date).getTime()).toBeGreaterThanOrEqual(started.getTime() - 1000);

      // A new supporter is made of what the giver declared: the record says it was applied.
      const fresh = await give({ consents: { privacy: true, sms_marketing: true } });
      const freshSupporter = (await server.get(`/api/v1/supporters/${fresh.body.donation.supporter_id}`, tenant.token))
        .body;
      expect(freshSupporter).toMatchObject({ privacy: true, sms_marketing: true, email_marketing: null });
      const freshExport = await graphql(tenant.token, EXPORT, { id: fresh.body.donation.supporter_id });
      expect(freshExport.data.exportSupporter.consent_records).toEqual([
        expect.objectContaining({
          source: "checkout",
          donation_id: fresh.body.donation.id,
          applied: true,
          privacy: true,
          sms_marketing: true,
          email_marketing: null,
        }),
      ]);
    });

    it("declined card: recorded as an attempt without supporter, donation or payment; checkout stays OPEN; a retry succeeds", async () => {
      const started = await start();
      const body = completion(started.body.client_secret, { card: card(CARDS.declined) });
      const before = await counts();
      const declined = await complete(started.body.id, body);
      expect(declined.status).toBe(402);
      expect(declined.headers.get("content-type")).toContain("application/problem+json");
      expect(declined.body).toMatchObject({ status: 402, code: "payment_failed" });
      expect(await counts()).toEqual(before);
      let checkout = (await server.get(`/api/v1/checkouts/${started.body.id}`, tenant.token)).body;
      expect(checkout).toMatchObject({
        state: "OPEN",
        completed_date: null,
        supporter: null,
        donation: null,
        payment: null,
      });

      const retried = await complete(started.body.id, { ...body, card: card() });
      expect(retried.status).toBe(200);
      checkout = (await server.get(`/api/v1/checkouts/${started.body.id}`, tenant.token)).body;
      expect(checkout).toMatchObject({ state: "CLOSED", payment: { state: "PAID" }, donation: { state: "done" } });
      const payments = (
        await server.get(`/api/v1/payments/?donation_id=${checkout.donation.id}&order=create_date`, tenant.token)
      ).body;
      expect(payments.items.map((p: Json) => p.state)).toEqual(["PAID"]);
    });

    it("enforces every campaign rule, consent and card check on completion, writing nothing", async () => {
      const strict = await fakeCampaign(server.database.db, tenant.organizationId, {
        slug: `strict-${unique(6)}`,
        hasOneOff: true,
        hasSubscription: false,
        allowCustomAmount: false,
        asks: ["20", "40"],
        defaultAmount: 30,
        minAmount: 10,
        maxAmount: 100,
        shownFields: ["first_name", "email", "phone"],
        requiredFields: ["phone", "email"],
        archiveDate: null,
      });
      const started = await start(strict.slug as string);
      const supporter = { first_name: "Rule", email: `rule-${unique(6)}@example.test`, phone: "123" };
      const cases: [Json, number, string][] = [
        [{ amount: 25 }, 422, "custom_amount_not_allowed"],
        [{ amount: 20, frequency: 12 }, 422, "frequency_not_offered"],
        [{ amount: 200 }, 422, "amount_out_of_range"],
        [{ amount: 20, supporter: { first_name: "Rule", email: supporter.email } }, 422, "missing_required_field"],
        [{ amount: 20, supporter: { ...supporter, city: "Rome" } }, 422, "field_not_on_form"],
        [{ amount: 20, consents: { privacy: false } }, 422, "privacy_consent_required"],
        [{ amount: 20, consents: {} }, 422, "privacy_consent_required"],
        [{ amount: 20, card: card(CARDS.luhnBad) }, 422, "invalid_card"],
        [{ amount: 20, card: { ...card(), exp_year: 2020 } }, 422, "invalid_card"],
        [{ amount: 20, card: { ...card(), cvc: "1" } }, 422, "invalid_card"],
        [{ amount: 20, card: undefined }, 422, "invalid_card"],
        [{ amount: 20, processor: "paypal" }, 400, "invalid_request"],
        [{ amount: 20, frequency: 3 }, 400, "invalid_request"],
        [{ amount: 20, supporter: { ...supporter, email: "not-an-email" } }, 400, "invalid_request"],
        [{ amount: 20, supporter: { ...supporter, ssn_typo: "x" } }, 400, "invalid_request"],
      ];
      const before = await counts();
      for (const [overrides, status, code] of cases) {
        const response = await complete(
          started.body.id,
          completion(started.body.client_secret, { supporter, ...overrides }),
        );
        expect(response.status, JSON.stringify(overrides)).toBe(status);
        expect(response.body.code, JSON.stringify(overrides)).toBe(code);
      }
      expect(await counts()).toEqual(before);
      // The allowed amounts (asks and the default) still go through.
      const ok = await complete(started.body.id, completion(started.body.client_secret, { amount: 30, supporter }));
      expect(ok.status).toBe(200);
    });

    it("bank transfer (manual): payment PENDING, checkout closed, recurring refused", async () => {
      const recurring = await give({ processor: "manual", card: undefined, frequency: 12, amount: 10 });
      expect(recurring.status).toBe(422);
      expect(recurring.body).toMatchObject({
        code: "processor_unsupported",
        errors: [{ field: "processor", message: "does not support recurring gifts", code: "no_recurring" }],
      });
      const response = await give({ processor: "manual", card: undefined, amount: 60 });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        result: "pending",
        receipt_url: null,
        donation: { state: "pending", receipt_url: null },
        payment: { state: "PENDING", payment_date: null, payment_method: { processor: "manual" } },
      });
      const checkout = (await server.get(`/api/v1/checkouts/${response.checkoutId}`, tenant.token)).body;
      expect(checkout.state).toBe("CLOSED");
    });

    it("refuses a wrong client secret, a foreign organization and an unknown checkout with 404", async () => {
      const started = await start();
      const body = completion(started.body.client_secret);
      expect((await complete(started.body.id, { ...body, client_secret: "dnt_cks_wrong" })).status).toBe(404);
      expect((await complete(started.body.id, body, {}, other.slug)).status).toBe(404);
      expect((await complete(999_999_999, body)).status).toBe(404);
      expect((await complete("abc" as unknown as number, body)).status).toBe(404);
      const row = (await server.get(`/api/v1/checkouts/${started.body.id}`, tenant.token)).body;
      expect(row).toMatchObject({ state: "OPEN", donation: null, payment: null });
    });

    it("refuses an expired checkout", async () => {
      const started = await start();
      await server.database.db
        .update(checkouts)
        .set({ createDate: new Date(Date.now() - 25 * 3600 * 1000) })
        .where(and(eq(checkouts.organizationId, tenant.organizationId), eq(checkouts.id, started.body.id)));
      const response = await complete(started.body.id, completion(started.body.client_secret));
      expect(response.status).toBe(409);
      expect(response.body.code).toBe("checkout_expired");
    });
  });

  describe("idempotency", () => {
    it("replays a retry with the same key: one payment, same answer", async () => {
      const started = await start();
      const body = completion(started.body.client_secret);
      const key = { "idempotency-key": `key-${unique()}` };
      const first = await complete(started.body.id, body, key);
      const second = await complete(started.body.id, body, key);
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      const payments = (await server.get(`/api/v1/payments/?donation_id=${first.body.donation.id}`, tenant.token)).body;
      expect(payments.count).toBe(1);
    });

    it("concurrent retries with one key charge once", async () => {
      const started = await start();
      const body = completion(started.body.client_secret);
      const key = { "idempotency-key": `key-${unique()}` };
      const responses = await Promise.all([1, 2, 3, 4].map(() => complete(started.body.id, body, key)));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(responses.map((r) => r.body.payment.id)).size).toBe(1);
      const payments = (
        await server.get(`/api/v1/payments/?donation_id=${responses[0]?.body.donation.id}`, tenant.token)
      ).body;
      expect(payments.count).toBe(1);
    });

    it("replays a decline too, and refuses a key reused for another request", async () => {
      const started = await start();
      const key = { "idempotency-key": `key-${unique()}` };
      const body = completion(started.body.client_secret, { card: card(CARDS.declined) });
      expect((await complete(started.body.id, body, key)).status).toBe(402);
      const replay = await complete(started.body.id, body, key);
      expect(replay.status).toBe(402);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      const reused = await complete(started.body.id, { ...body, card: card() }, key);
      expect(reused.status).toBe(422);
      expect(reused.body.code).toBe("idempotency_key_reused");
      const badKey = await complete(started.body.id, body, { "idempotency-key": "x".repeat(256) });
      expect(badKey.status).toBe(400);
      const checkout = (await server.get(`/api/v1/checkouts/${started.body.id}`, tenant.token)).body;
      expect(checkout).toMatchObject({ state: "OPEN", payment: null });
      // The replay charged nothing: one declined attempt is recorded.
      const attempts = await server.database.db
        .select()
        .from(checkoutAttempts)
        .where(
          and(
            eq(checkoutAttempts.organizationId, tenant.organizationId),
            eq(checkoutAttempts.checkoutId, started.body.id),
          ),
        );
      expect(attempts).toHaveLength(1);
    });
  });

  describe("money movement in steps: kill or fail between each pair of steps", () => {
    // record → (processor call) → settle; the settle transaction's own steps follow "charge".
    const steps: CompletionStep[] = [
      "record",
      "charge",
      "supporter",
      "payment_method",
      "donation",
      "payment",
      "checkout",
    ];
    const reconcile = () =>
      reconcilePending(server.database.db, {
        now: new Date(),
        timeoutSeconds: server.config.paymentPendingTimeoutSeconds,
        links,
        processors: loadProcessorRegistry(server.database.db, server.config),
      });
    const attemptsOf = (checkoutId: number) =>
      server.database.db
        .select()
        .from(checkoutAttempts)
        .where(
          and(eq(checkoutAttempts.organizationId, tenant.organizationId), eq(checkoutAttempts.checkoutId, checkoutId)),
        )
        .orderBy(checkoutAttempts.id);
    /** What the sandbox processor charged for the checkout: its own ledger, not ours. */
    const chargesOf = (checkoutId: number) =>
      server.database.db
        .select()
        .from(sandboxCharges)
        .where(like(sandboxCharges.idempotencyKey, `checkout:${checkoutId}:attempt:%`));
    /** As a crash would leave it: the attempt has been PENDING for longer than the timeout. */
    const age = (checkoutId: number) =>
      server.database.db
        .update(checkoutAttempts)
        .set({ updateDate: new Date(Date.now() - (server.config.paymentPendingTimeoutSeconds + 60) * 1000) })
        .where(
          and(eq(checkoutAttempts.organizationId, tenant.organizationId), eq(checkoutAttempts.checkoutId, checkoutId)),
        );
    /** Exactly one charge at the processor, and exactly one PAID payment in our records, for it. */
    const expectOneChargeRecorded = async (checkoutId: number) => {
      const charges = await chargesOf(checkoutId);
      expect(charges).toHaveLength(1);
      expect(charges[0]).toMatchObject({ state: "PAID", amountCents: 1000, refundDate: null });
      const checkout = (await server.get(`/api/v1/checkouts/${checkoutId}`, tenant.token)).body;
      expect(checkout).toMatchObject({
        state: "CLOSED",
        donation: { state: "active", frequency: 12, amount: 10 },
        payment: { state: "PAID", amount: 10, processor_intent_id: charges[0]?.intentId },
      });
      expect(checkout.donation.receipt_url).toMatch(/\/documents\/receipts\//);
      expect(checkout.supporter.certification_url).toMatch(/\/documents\/statements\//);
      const payments = (await server.get(`/api/v1/payments/?donation_id=${checkout.donation.id}`, tenant.token)).body;
      expect(payments.count).toBe(1);
      const queued = await server.database.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.organizationId, tenant.organizationId), eq(jobs.subjectId, checkout.donation.id)));
      expect(queued.map((job) => [job.state, job.payload])).toEqual([["queued", { cycle: 1 }]]);
      expect((await attemptsOf(checkoutId)).map((attempt) => [attempt.state, attempt.gift])).toContainEqual([
        "SUCCEEDED",
        null,
      ]);
      return checkout;
    };

    /** Fails the completion at `step`: a 500 that leaves a PENDING attempt and no gift records. */
    const failAtStep = async (step: CompletionStep) => {
      const started = await start();
      const body = completion(started.body.client_secret, { frequency: 12, amount: 10 });
      const key = { "idempotency-key": `key-${unique()}` };
      const before = await counts();
      failAt = step;
      const failed = await complete(started.body.id, body, key).finally(() => {
        failAt = null;
      });
      expect(failed.status).toBe(500);
      expect(await counts()).toEqual(before);
      const row = (await server.get(`/api/v1/checkouts/${started.body.id}`, tenant.token)).body;
      expect(row).toMatchObject({ state: "OPEN", supporter: null, donation: null, payment: null });
      const [attempt, ...others] = await attemptsOf(started.body.id);
      expect(others).toEqual([]);
      expect(attempt).toMatchObject({ state: "PENDING", amount: 10, frequency: 12, processor: "sandbox" });
      expect(attempt?.idempotencyKey).toBe(`checkout:${started.body.id}:attempt:${attempt?.id}`);
      expect(JSON.stringify(attempt?.gift)).not.toContain(CARDS.ok);
      // Before the processor call nothing is charged; after it, the processor holds the one charge.
      expect(await chargesOf(started.body.id)).toHaveLength(step === "record" ? 0 : 1);
      return { started, body, key, before };
    };

    it.each(steps)(
      "a failure after %s leaves a PENDING attempt; a retry with the same key charges once",
      async (step) => {
        const { started, body, key, before } = await failAtStep(step);
        const retried = await complete(started.body.id, body, key);
        expect(retried.status).toBe(200);
        expect(retried.body.result).toBe("succeeded");
        await expectOneChargeRecorded(started.body.id);
        const after = await counts();
        expect(Number(after?.payments)).toBe(Number(before?.payments) + 1);
        expect(Number(after?.donations)).toBe(Number(before?.donations) + 1);
        expect(Number(after?.jobs)).toBe(Number(before?.jobs) + 1);
        const replay = await complete(started.body.id, body, key);
        expect(replay.body).toEqual(retried.body);
        expect(replay.headers.get("idempotent-replayed")).toBe("true");
        expect(await chargesOf(started.body.id)).toHaveLength(1);
      },
    );

    it.each(steps)("a failure after %s is settled by the reconciler from the processor's record", async (step) => {
      const { started, body, key, before } = await failAtStep(step);
      // Not before the timeout: a charge may still be in flight.
      await reconcile();
      expect((await attemptsOf(started.body.id))[0]?.state).toBe("PENDING");
      await age(started.body.id);
      await reconcile();
      if (step === "record") {
        // The processor never received it: nothing was charged, nothing is recorded, the donor may try again.
        const [attempt] = await attemptsOf(started.body.id);
        expect(attempt).toMatchObject({ state: "ABANDONED", gift: null });
        expect(await chargesOf(started.body.id)).toHaveLength(0);
        expect(await counts()).toEqual(before);
        const retried = await complete(started.body.id, body, key);
        expect(retried.status).toBe(200);
        await expectOneChargeRecorded(started.body.id);
        return;
      }
      const checkout = await expectOneChargeRecorded(started.body.id);
      expect(checkout.supporter).toMatchObject({ first_name: "Ada", last_name: "Lovelace" });
      // The donor's retry learns the outcome the reconciler settled, and is not charged again.
      const retried = await complete(started.body.id, body, key);
      expect(retried.status).toBe(200);
      expect(retried.headers.get("idempotent-replayed")).toBe("true");
      expect(retried.body).toMatchObject({ result: "succeeded", payment: { id: checkout.payment.id } });
      expect(await chargesOf(started.body.id)).toHaveLength(1);
      expect(await reconcile()).toEqual({ reconciled: 0, errors: 0 });
    });

    it("a processor timeout answers 503, leaves the charge PENDING, and the reconciler records the one charge", async () => {
      const started = await start();
      const body = completion(started.body.client_secret, { frequency: 12, amount: 10, card: card(CARDS.timesOut) });
      const before = await counts();
      const timedOut = await complete(started.body.id, body, { "idempotency-key": `key-${unique()}` });
      expect(timedOut.status).toBe(503);
      expect(timedOut.headers.get("retry-after")).toBe("5");
      expect(timedOut.body).toMatchObject({
        status: 503,
        code: "processor_unavailable",
        detail:
          "The payment processor did not answer in time. The payment may still go through: retry with the same " +
          "Idempotency-Key to learn its outcome (it is never charged twice)",
      });
      // The processor took the money; our records do not show it yet, but the attempt says it may have.
      expect(await chargesOf(started.body.id)).toHaveLength(1);
      expect(await counts()).toEqual(before);
      expect((await attemptsOf(started.body.id)).map((attempt) => attempt.state)).toEqual(["PENDING"]);
      await age(started.body.id);
      expect((await reconcile()).reconciled).toBeGreaterThanOrEqual(1);
      const checkout = await expectOneChargeRecorded(started.body.id);
      expect(checkout.payment.payment_method.label).toBe("Visa •••• 0119");
    });

    it("after a processor timeout, a retry with the same key learns the outcome and charges once", async () => {
      const started = await start();
      const body = completion(started.body.client_secret, { frequency: 12, amount: 10, card: card(CARDS.timesOut) });
      const key = { "idempotency-key": `key-${unique()}` };
      expect((await complete(started.body.id, body, key)).status).toBe(503);
      const retried = await complete(started.body.id, body, key);
      expect(retried.status).toBe(200);
      expect(retried.body.result).toBe("succeeded");
      await expectOneChargeRecorded(started.body.id);
    });

    it("an outcome the processor reports later (a webhook) enters through the same settle step, once", async () => {
      const { started, before } = await failAtStep("charge");
      const [attempt] = await attemptsOf(started.body.id);
      const [charge] = await chargesOf(started.body.id);
      const report = () =>
        settleChargeOutcome({ db: server.database.db, links }, attempt?.idempotencyKey as string, {
          state: "PAID",
          intentId: charge?.intentId ?? null,
        });
      expect(await report()).toBe("checkout_attempt");
      const checkout = await expectOneChargeRecorded(started.body.id);
      // Reported again (webhooks are delivered at least once): nothing changes, and the answer says so.
      expect(await report()).toBe("unchanged");
      expect(Number((await counts())?.payments)).toBe(Number(before?.payments) + 1);
      expect((await server.get(`/api/v1/payments/${checkout.payment.id}`, tenant.token)).body).toMatchObject({
        state: "PAID",
        update_date: checkout.payment.update_date,
      });
      expect(
        await settleChargeOutcome({ db: server.database.db, links }, "unknown-key", { state: "PAID", intentId: null }),
      ).toBeNull();

      // A refund made in the processor's dashboard, reported by the charge id: the payment is refunded, once.
      const dashboardRefund = {
        state: "SUCCEEDED" as const,
        refundId: `re_dashboard_${randomUUID()}`,
        intentId: checkout.payment.processor_intent_id,
        amountMinor: Math.round(checkout.payment.amount * 100),
        currency: "EUR",
        idempotencyKey: null,
      };
      const reportRefund = () =>
        settleProcessorRefund({ db: server.database.db }, tenant.organizationId, dashboardRefund);
      const refunded = await reportRefund();
      expect(refunded?.payment.state).toBe("REFUNDED");
      expect(refunded?.refund).toMatchObject({ origin: "processor", state: "SUCCEEDED" });
      const again = await reportRefund();
      expect(again?.settled).toBe("unchanged");
      expect(again?.payment.updateDate.toISOString()).toBe(refunded?.payment.updateDate.toISOString());
      expect((await server.get(`/api/v1/donations/${checkout.donation.id}`, tenant.token)).body.state).toBe("active");
    });

    it("a declined attempt keeps no supporter data; a refund left by a crash is finished by the reconciler", async () => {
      const started = await start();
      const declined = await complete(
        started.body.id,
        completion(started.body.client_secret, { card: card(CARDS.declined) }),
      );
      expect(declined.status).toBe(402);
      const [attempt] = await attemptsOf(started.body.id);
      expect(attempt).toMatchObject({ state: "DECLINED", failureCode: "card_declined", gift: null });
      expect(JSON.stringify(attempt)).not.toContain("Lovelace");

      // A refund recorded PENDING when the process died, before the processor was asked.
      const gift = await give({ amount: 10 });
      const [requested] = await server.database.db
        .insert(refunds)
        .values({
          organizationId: tenant.organizationId,
          paymentId: gift.body.payment.id,
          amount: 10,
          currency: "EUR",
          idempotencyKey: `refund:crashed:${randomUUID()}`,
          updateDate: new Date(Date.now() - (server.config.paymentPendingTimeoutSeconds + 60) * 1000),
        })
        .returning();
      expect(requested?.state).toBe("PENDING");
      await reconcile();
      const payment = (await server.get(`/api/v1/payments/${gift.body.payment.id}`, tenant.token)).body;
      expect(payment.state).toBe("REFUNDED");
      const donation = (await server.get(`/api/v1/donations/${gift.body.donation.id}`, tenant.token)).body;
      expect(donation.state).toBe("revoked");
      const [charge] = await chargesOf(gift.checkoutId);
      expect(charge?.refundDate).toEqual(expect.any(Date));
    });
  });

  describe("transitions through REST and GraphQL", () => {
    it("refund: PAID → REFUNDED and the one-off donation revoked; a second refund is 409 and changes nothing", async () => {
      const gift = await give({ amount: 40 });
      const paymentId = gift.body.payment.id;
      const refunded = await postAs(tenant.token, `/api/v1/payments/${paymentId}/refund`);
      expect(refunded.status).toBe(200);
      expect(refunded.body).toMatchObject({ id: paymentId, state: "REFUNDED" });
      const donation = (await server.get(`/api/v1/donations/${gift.body.donation.id}`, tenant.token)).body;
      expect(donation.state).toBe("revoked");

      const again = await postAs(tenant.token, `/api/v1/payments/${paymentId}/refund`);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: "invalid_state_transition", status: 409 });
      const unchanged = (await server.get(`/api/v1/payments/${paymentId}`, tenant.token)).body;
      expect(unchanged.update_date).toBe(refunded.body.update_date);
    });

    it("a partial refund keeps the payment PAID and counts only what was kept: raised total, receipt, statement", async () => {
      const raised = async () =>
        (await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`)).body
          .raised as number;
      const before = await raised();
      const gift = await give({ amount: 40 });
      expect(await raised()).toBe(before + 40);
      const part = await postAs(tenant.token, `/api/v1/payments/${gift.body.payment.id}/refund`, { amount: 15 });
      expect(part.status).toBe(200);
      expect(part.body).toMatchObject({ id: gift.body.payment.id, state: "PAID" });
      expect(await raised()).toBe(before + 25);

      const receipt = await fetch(gift.body.receipt_url as string);
      const receiptHtml = await receipt.text();
      expect(receipt.status).toBe(200);
      expect(receiptHtml).toContain("Partly refunded");
      expect(receiptHtml).toMatch(/15[.,]00.{0,20} was refunded to the donor/);
      const supporter = (await server.get(`/api/v1/supporters/${gift.body.donation.supporter_id}`, tenant.token)).body;
      const statementHtml = await (await fetch(supporter.certification_url as string)).text();
      expect(statementHtml).toMatch(/25[.,]00/);
      expect(statementHtml).not.toMatch(/40[.,]00/);
    });

    it("refunding one payment of a recurring donation keeps it active", async () => {
      const gift = await give({ amount: 10, frequency: 12 });
      expect((await postAs(tenant.token, `/api/v1/payments/${gift.body.payment.id}/refund`)).status).toBe(200);
      const donation = (await server.get(`/api/v1/donations/${gift.body.donation.id}`, tenant.token)).body;
      expect(donation.state).toBe("active");
    });

    it("refuses refunds of FAILED and PENDING payments and mark-paid of card payments", async () => {
      // Declined checkouts write no payment any more; a failed renewal is what leaves a FAILED one.
      const renewed = await give({ frequency: 12 });
      const [failedPayment] = await server.database.db
        .insert(payments)
        .values({
          organizationId: tenant.organizationId,
          donationId: renewed.body.donation.id,
          state: "FAILED",
          amount: 25,
          currency: "EUR",
          paymentMethodId: renewed.body.payment.payment_method.id,
          failureCode: "card_declined",
        })
        .returning();
      if (!failedPayment) throw new Error("payment not inserted");
      expect((await postAs(tenant.token, `/api/v1/payments/${failedPayment.id}/refund`)).status).toBe(409);
      expect((await postAs(tenant.token, `/api/v1/payments/${failedPayment.id}/mark_paid`)).status).toBe(409);

      const manual = await give({ processor: "manual", card: undefined });
      expect((await postAs(tenant.token, `/api/v1/payments/${manual.body.payment.id}/refund`)).status).toBe(409);

      const paid = await give();
      const markPaid = await postAs(tenant.token, `/api/v1/payments/${paid.body.payment.id}/mark_paid`);
      expect(markPaid.status).toBe(409);
      expect(markPaid.body.code).toBe("invalid_state_transition");
    });

    it("mark paid: a bank transfer arrives, the donation is done with a receipt", async () => {
      const manual = await give({ processor: "manual", card: undefined, amount: 75 });
      const paid = await postAs(tenant.token, `/api/v1/payments/${manual.body.payment.id}/mark_paid`);
      expect(paid.status).toBe(200);
      expect(paid.body).toMatchObject({ state: "PAID", payment_date: expect.any(String) });
      const donation = (await server.get(`/api/v1/donations/${manual.body.donation.id}`, tenant.token)).body;
      expect(donation).toMatchObject({ state: "done", completed_date: expect.any(String) });
      expect(donation.receipt_url).toMatch(/\/documents\/receipts\//);
      expect((await postAs(tenant.token, `/api/v1/payments/${manual.body.payment.id}/mark_paid`)).status).toBe(409);
    });

    it("cancel: a recurring donation is revoked; a one-off or revoked one is 409", async () => {
      const monthly = await give({ amount: 10, frequency: 12 });
      const cancelled = await postAs(tenant.token, `/api/v1/donations/${monthly.body.donation.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.state).toBe("revoked");
      const queued = await server.database.db
        .select()
        .from(jobs)
        .where(and(eq(jobs.organizationId, tenant.organizationId), eq(jobs.subjectId, monthly.body.donation.id)));
      expect(queued.map((job) => job.state)).toEqual(["cancelled"]);
      expect((await postAs(tenant.token, `/api/v1/donations/${monthly.body.donation.id}/cancel`)).status).toBe(409);
      const oneOff = await give();
      const refused = await postAs(tenant.token, `/api/v1/donations/${oneOff.body.donation.id}/cancel`);
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe("invalid_state_transition");
    });

    it("records an offline donation once per idempotency key", async () => {
      const supporter = await fakeSupporter(server.database.db, tenant.organizationId);
      const body = { supporter_id: supporter.id, campaign_id: campaign.id, amount: 120.5, label: "Cheque" };
      const key = { "idempotency-key": `key-${unique()}` };
      const created = await postAs(tenant.token, "/api/v1/donations/", body, key);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        donation: { state: "done", amount: 120.5, frequency: 0, supporter_id: supporter.id },
        payment: { state: "PAID", amount: 120.5, payment_method: { processor: "manual", label: "Cheque" } },
      });
      const replay = await postAs(tenant.token, "/api/v1/donations/", body, key);
      expect(replay.body.donation.id).toBe(created.body.donation.id);
      const count = (await server.get(`/api/v1/donations/?supporter_id=${supporter.id}`, tenant.token)).body.count;
      expect(count).toBe(1);

      const foreign = await fakeSupporter(server.database.db, other.organizationId);
      const refused = await postAs(tenant.token, "/api/v1/donations/", { ...body, supporter_id: foreign.id });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({
        type: "urn:donata:problem:unknown_reference",
        title: "Unprocessable Content",
        status: 422,
        detail: `Supporter ${foreign.id} not found`,
        code: "unknown_reference",
        errors: [{ field: "supporter_id", message: "no such supporter in this organization" }],
      });
      for (const bad of [
        { ...body, amount: 0 },
        { ...body, amount: 1.234 },
        { ...body, payment_date: "2999-01-01T00:00:00.000Z" },
        { ...body, extra: 1 },
      ]) {
        expect((await postAs(tenant.token, "/api/v1/donations/", bad)).status, JSON.stringify(bad)).toBe(400);
      }
    });

    it("needs the write permissions and never reaches another organization", async () => {
      const gift = await give();
      const forbidden = await postAs(readOnly.token, `/api/v1/payments/${gift.body.payment.id}/refund`);
      expect(forbidden.status).toBe(403);
      expect((await postAs(other.token, `/api/v1/payments/${gift.body.payment.id}/refund`)).status).toBe(404);
      expect((await postAs(other.token, `/api/v1/donations/${gift.body.donation.id}/cancel`)).status).toBe(404);
      const payment = (await server.get(`/api/v1/payments/${gift.body.payment.id}`, tenant.token)).body;
      expect(payment.state).toBe("PAID");
    });

    it("GraphQL mutations run the same services and refuse the same transitions", async () => {
      const gift = await give({ amount: 15, frequency: 12 });
      const refund = `mutation($id: ID!) { refundPayment(id: $id) { id state } }`;
      const first = await graphql(tenant.token, refund, { id: gift.body.payment.id });
      expect(first.data.refundPayment).toEqual({ id: gift.body.payment.id, state: "REFUNDED" });
      const second = await graphql(tenant.token, refund, { id: gift.body.payment.id });
      expect(second.errors[0].extensions.code).toBe("invalid_state_transition");

      const cancel = await graphql(tenant.token, `mutation($id: ID!) { cancelDonation(id: $id) { state } }`, {
        id: gift.body.donation.id,
      });
      expect(cancel.data.cancelDonation.state).toBe("revoked");

      const manual = await give({ processor: "manual", card: undefined });
      const marked = await graphql(tenant.token, `mutation($id: ID!) { markPaymentPaid(id: $id) { state } }`, {
        id: manual.body.payment.id,
      });
      expect(marked.data.markPaymentPaid.state).toBe("PAID");

      const supporter = await fakeSupporter(server.database.db, tenant.organizationId);
      const offline = await graphql(
        tenant.token,
        `mutation($input: OfflineDonationInput!) { recordOfflineDonation(input: $input) { donation { state amount } payment { state } } }`,
        { input: { supporter_id: supporter.id, campaign_id: campaign.id, amount: 9.99, note: null, label: null } },
      );
      expect(offline.data.recordOfflineDonation).toEqual({
        donation: { state: "done", amount: 9.99 },
        payment: { state: "PAID" },
      });
      const denied = await graphql(readOnly.token, refund, { id: manual.body.payment.id });
      expect(denied.errors[0].extensions.code).toBe("insufficient_scope");
    });
  });

  describe("cover the fee", () => {
    let covering: { id: number; slug: string };
    const SET_FEE = `mutation ($percent: Float!, $fixed: Float!) {
      updateOrganizationCoverFee(percent: $percent, fixed: $fixed) { cover_fee { percent fixed } } }`;

    beforeAll(async () => {
      const row = await fakeCampaign(server.database.db, tenant.organizationId, {
        slug: `cover-${unique(6)}`,
        hasOneOff: true,
        hasSubscription: true,
        allowCustomAmount: true,
        allowCustomSubscriptionAmount: true,
        minAmount: 1,
        maxAmount: 1000,
        minSubscriptionAmount: 1,
        maxSubscriptionAmount: 1000,
        shownFields: ["first_name", "last_name", "email"],
        requiredFields: [],
        allowCoverFee: true,
        archiveDate: null,
      });
      covering = { id: row.id, slug: row.slug as string };
    });

    it("the public campaign offers the organization's formula only where the campaign allows it", async () => {
      const offered = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${covering.slug}`);
      expect(offered.body.cover_fee).toEqual({ percent: 2.9, fixed: 0.3 });
      const plain = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`);
      expect(plain.body.cover_fee).toBeNull();
    });

    it("records the gift and the covered fee apart and charges their sum, computed by the server", async () => {
      const response = await give({ amount: 25, cover_fee: true }, {}, covering.slug);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.donation).toMatchObject({ amount: 25, covered_fee: 1.03, state: "done" });
      expect(response.body.payment).toMatchObject({ amount: 26.03, state: "PAID" });
      const [charge] = await server.database.db
        .select({ amountCents: sandboxCharges.amountCents })
        .from(sandboxCharges)
        .where(like(sandboxCharges.idempotencyKey, `checkout:${response.checkoutId}:attempt:%`));
      expect(charge?.amountCents).toBe(2603);
      const rest = await server.get(`/api/v1/donations/${response.body.donation.id}`, tenant.token);
      expect(rest.body).toMatchObject({ amount: 25, covered_fee: 1.03 });
      const gql = await graphql(tenant.token, `query ($id: ID!) { donation(id: $id) { amount covered_fee } }`, {
        id: String(response.body.donation.id),
      });
      expect(gql.data.donation).toEqual({ amount: 25, covered_fee: 1.03 });

      const without = await give({ amount: 25 }, {}, covering.slug);
      expect(without.body.donation).toMatchObject({ amount: 25, covered_fee: 0 });
      expect(without.body.payment.amount).toBe(25);
    });

    it("refuses a covered gift on a campaign without the option (422), and any fee figure from the client (400)", async () => {
      const before = await counts();
      const refused = await give({ cover_fee: true });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({
        code: "cover_fee_not_offered",
        errors: [
          {
            field: "cover_fee",
            message: "This campaign does not offer to cover the processing fee",
            code: "cover_fee_not_offered",
          },
        ],
      });
      const forged = await give({ amount: 25, cover_fee: true, covered_fee: 0.01 }, {}, covering.slug);
      expect(forged.status).toBe(400);
      expect(await counts()).toEqual(before);
    });

    it("uses the organization's own formula, set by an admin in GraphQL, with exact cents", async () => {
      const refused = await graphql(tenant.token, SET_FEE, { percent: 1.5, fixed: 0.25 });
      expect(refused.errors[0].extensions.code).toBe("insufficient_scope");
      const admin = await createUser(server.database.db, {
        email: `fees-${unique(6)}@example.test`,
        password: "long enough password",
        organization: tenant.slug,
        role: "admin",
      });
      const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, admin.id)}`;
      const asAdmin = (variables: Json) =>
        fetch(`${server.url}/admin/graphql/`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie },
          body: JSON.stringify({ query: SET_FEE, variables }),
        }).then((response) => response.json());
      const invalid = await asAdmin({ percent: 25, fixed: 0.25 });
      expect(invalid.errors[0]).toMatchObject({
        message: "Invalid percent: use a percentage from 0 to 20 with at most 2 decimals",
        extensions: {
          code: "invalid_request",
          errors: [
            {
              field: "percent",
              message: "use a percentage from 0 to 20 with at most 2 decimals",
              code: "fee_percent_range",
            },
          ],
        },
      });
      const saved = await asAdmin({ percent: 1.5, fixed: 0.25 });
      expect(saved.data.updateOrganizationCoverFee.cover_fee).toEqual({ percent: 1.5, fixed: 0.25 });
      // 1.5 % of 33.33 is 0.49995: half up to 0.50, plus 0.25.
      const response = await give({ amount: 33.33, frequency: 12, cover_fee: true }, {}, covering.slug);
      expect(response.body.donation).toMatchObject({ amount: 33.33, covered_fee: 0.75, state: "active" });
      expect(response.body.payment.amount).toBe(34.08);
      await asAdmin({ percent: 2.9, fixed: 0.3 });
    });
  });

  it("keeps the campaign rows untouched by the flow", async () => {
    const [row] = await server.database.db
      .select()
      .from(campaigns)
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)));
    expect(row?.minAmount).toBe(5);
  });
});
