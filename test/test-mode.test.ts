import { randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { donations, donorSessions, organizations, sandboxCharges } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { hashSecret } from "../src/identity/secrets.js";
import { createSession } from "../src/identity/sessions.service.js";
import { DONOR_COOKIE } from "../src/modules/donor-portal/donor-session.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser } from "./helpers/browser.js";
import {
  fakeCampaign,
  fakeDonation,
  fakePaymentMethod,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const CARD_OK = { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" };
const BANNER = "Test mode — no real money moves";
const SETTINGS = "{ paymentSettings { processor test_mode mode } }";
const SET_TEST_MODE =
  "mutation ($enabled: Boolean!) { setPaymentTestMode(enabled: $enabled) { processor test_mode mode } }";
const DASHBOARD = "{ dashboard(months: 1) { raised_this_month raised_this_year top_campaigns { raised } } }";

/**
 * Production takes no fake money: without a processor of its own an organization offers bank
 * transfer (IBAN set) or nothing, never the sandbox; test mode is an explicit switch whose gifts
 * are test data, shown with a banner and kept out of totals and statements.
 */
function givingOn(serverOf: () => TestServer) {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    readResponse(
      await fetch(`${serverOf().url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }),
    );
  const publicCampaign = async (tenant: Tenant, slug: string) => {
    const response = await serverOf().get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${slug}`);
    expect(response.status).toBe(200);
    return response.body as Json;
  };
  const donatePage = async (tenant: Tenant, slug: string) => {
    const response = await fetch(`${serverOf().url}/donate/${tenant.slug}/${slug}`);
    return { status: response.status, text: await response.text() };
  };
  const give = async (tenant: Tenant, slug: string, overrides: Json = {}) => {
    const started = await post(`/api/v1/public/organizations/${tenant.slug}/campaigns/${slug}/checkouts/`, {});
    expect(started.status).toBe(201);
    const completed = await post(`/api/v1/public/organizations/${tenant.slug}/checkouts/${started.body.id}/complete`, {
      client_secret: started.body.client_secret,
      amount: 40,
      frequency: 0,
      processor: "sandbox",
      card: CARD_OK,
      supporter: { first_name: "Ada", email: `ada-${unique(6)}@example.test` },
      consents: { privacy: true },
      ...overrides,
    });
    return { ...completed, checkoutId: started.body.id as number };
  };
  const graphql = async (auth: Record<string, string>, query: string, variables: Json = {}) => {
    const response = await fetch(`${serverOf().url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as Json;
  };
  const ownerOf = async (tenant: Tenant) => {
    const user = await createUser(serverOf().database.db, {
      email: `owner-${unique(6)}@example.test`,
      password: "long enough password",
      organization: tenant.slug,
      role: "owner",
    });
    const session = await createSession(serverOf().database.db, serverOf().config, user.id);
    return { cookie: `${SESSION_COOKIE}=${session}`, "x-donata-organization": tenant.slug };
  };
  const rowsOf = async (organizationId: number) => {
    const result = await serverOf().database.db.execute<Record<string, number>>(sql`
      select
        (select count(*)::int from supporters where organization_id = ${organizationId}) as supporters,
        (select count(*)::int from donations where organization_id = ${organizationId}) as donations,
        (select count(*)::int from payments where organization_id = ${organizationId}) as payments,
        (select count(*)::int from checkout_attempts where organization_id = ${organizationId}) as attempts`);
    return (result as unknown as { rows: Record<string, number>[] }).rows[0];
  };
  return { post, publicCampaign, donatePage, give, graphql, ownerOf, rowsOf };
}

describe("a production server (NODE_ENV=production)", () => {
  let server: TestServer;
  const giving = givingOn(() => server);

  beforeAll(async () => {
    server = await startTestServer({ production: true });
  });
  afterAll(() => server?.close());

  it("offers no sandbox to an organization without a processor: no test cards, no card form, a checkout posting the sandbox is refused", async () => {
    const tenant = await fakeTenant(server.database.db);
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, { hasOneOff: true });
    const slug = campaign.slug as string;

    const described = await giving.publicCampaign(tenant, slug);
    expect(described.processors).toEqual([]);
    expect(described.test_mode).toBe(false);

    const page = await giving.donatePage(tenant, slug);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Online giving is not set up yet");
    // No test card offered (a bare "4242" may be part of a random slug or nonce).
    expect(page.text).not.toMatch(/4242[\s-]?4242/);
    expect(page.text).not.toContain('id="card-fields"');
    expect(page.text).not.toContain('id="donate-form"');
    expect(page.text).not.toContain(BANNER);

    const before = await giving.rowsOf(tenant.organizationId);
    const refused = await giving.give(tenant, slug);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      type: "urn:donata:problem:processor_unsupported",
      title: "Unprocessable Content",
      status: 422,
      detail: "This organization does not take payments with Card (sandbox)",
      code: "processor_unsupported",
      errors: [{ field: "processor", message: "this organization takes no online payments yet" }],
    });
    expect(await giving.rowsOf(tenant.organizationId)).toEqual(before);
    const charges = await server.database.db
      .select()
      .from(sandboxCharges)
      .where(sql`${sandboxCharges.idempotencyKey} like ${`checkout:${refused.checkoutId}:%`}`);
    expect(charges).toEqual([]);

    const owner = await giving.ownerOf(tenant);
    expect((await giving.graphql(owner, SETTINGS)).data.paymentSettings).toEqual({
      processor: "none",
      test_mode: false,
      mode: null,
    });
  });

  it("offers bank transfer alone once the IBAN is set", async () => {
    const tenant = await fakeTenant(server.database.db);
    await server.database.db
      .update(organizations)
      .set({ iban: "IT60X0542811101000000123456" })
      .where(eq(organizations.id, tenant.organizationId));
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, { hasOneOff: true });
    const slug = campaign.slug as string;
    const described = await giving.publicCampaign(tenant, slug);
    expect(described.processors.map((processor: Json) => processor.name)).toEqual(["manual"]);
    const page = await giving.donatePage(tenant, slug);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="donate-form"');
    expect(page.text).toContain('id="processor-manual"');
    expect(page.text).not.toContain('id="processor-sandbox"');
    // No test card offered (a bare "4242" may be part of a random slug or nonce).
    expect(page.text).not.toMatch(/4242[\s-]?4242/);
    expect(page.text).not.toContain("Online giving is not set up yet");

    const refused = await giving.give(tenant, slug);
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: "processor", message: "must be one of manual" }]);
    const transfer = await giving.give(tenant, slug, { processor: "manual", card: undefined });
    expect(transfer.status).toBe(200);
    expect(transfer.body).toMatchObject({ result: "pending", payment: { state: "PENDING", test: false } });
  });

  it("test mode (Settings → Payments): the sandbox takes gifts marked test, with a banner, out of totals, raised and statements", async () => {
    const tenant = await fakeTenant(server.database.db);
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, { hasOneOff: true });
    const slug = campaign.slug as string;
    const owner = await giving.ownerOf(tenant);

    const switched = await giving.graphql(owner, SET_TEST_MODE, { enabled: true });
    expect(switched).toEqual({ data: { setPaymentTestMode: { processor: "sandbox", test_mode: true, mode: null } } });
    const organization = await giving.graphql(owner, "{ organization { test_mode } }");
    expect(organization.data.organization).toEqual({ test_mode: true });

    const described = await giving.publicCampaign(tenant, slug);
    expect(described.processors.map((processor: Json) => processor.name)).toEqual(["sandbox"]);
    expect(described.test_mode).toBe(true);
    const page = await giving.donatePage(tenant, slug);
    expect(page.text).toContain(BANNER);
    expect(page.text).toContain("4242 4242 4242 4242");
    const portal = await fetch(`${server.url}/donor/${tenant.slug}/`);
    expect(portal.status).toBe(200);
    expect(await portal.text()).toContain(BANNER);

    const gift = await giving.give(tenant, slug);
    expect(gift.status).toBe(200);
    expect(gift.body).toMatchObject({
      result: "succeeded",
      donation: { state: "done", test: true },
      payment: { state: "PAID", amount: 40, test: true },
    });
    const payment = await server.get(`/api/v1/payments/${gift.body.payment.id}`, tenant.token);
    expect(payment.status).toBe(200);
    expect(payment.body.test).toBe(true);
    const listed = await server.get(`/api/v1/payments/?test=true`, tenant.token);
    expect(listed.body.items.map((item: Json) => item.id)).toEqual([gift.body.payment.id]);
    expect((await server.get(`/api/v1/payments/?test=false`, tenant.token)).body.count).toBe(0);
    const viaGraphql = await giving.graphql(owner, "query ($id: ID!) { payment(id: $id) { id test } }", {
      id: String(gift.body.payment.id),
    });
    expect(viaGraphql.data?.payment ?? viaGraphql).toEqual({ id: gift.body.payment.id, test: true });

    // Out of every total: the campaign's raised figure, the dashboard, the yearly statement.
    expect((await giving.publicCampaign(tenant, slug)).raised).toBe(0);
    const dashboard = await giving.graphql(owner, DASHBOARD);
    expect(dashboard.data.dashboard).toEqual({ raised_this_month: 0, raised_this_year: 0, top_campaigns: [] });
    const receipt = await fetch(gift.body.receipt_url);
    expect(receipt.status).toBe(200);
    const receiptText = await receipt.text();
    expect(receiptText).toContain(BANNER);
    expect(receiptText).toContain("not a receipt");
    // No receipt email for test data: the donor is told nothing that could pass for a receipt.
    const queued = await server.database.db.execute<{ kind: string }>(
      sql`select kind from outbox_messages where organization_id = ${tenant.organizationId} order by id`,
    );
    expect((queued as unknown as { rows: { kind: string }[] }).rows.map((row) => row.kind)).not.toContain("receipt");
    const checkout = await server.get(`/api/v1/checkouts/${gift.checkoutId}`, tenant.token);
    const statement = await fetch(checkout.body.supporter.certification_url);
    const statementText = await statement.text();
    expect(statementText).toContain(`No donation was received from you in ${new Date().getUTCFullYear()}.`);

    // Leaving test mode: the sandbox is gone again; the test gift stays test data.
    const off = await giving.graphql(owner, SET_TEST_MODE, { enabled: false });
    expect(off).toEqual({ data: { setPaymentTestMode: { processor: "none", test_mode: false, mode: null } } });
    expect((await giving.publicCampaign(tenant, slug)).processors).toEqual([]);
    expect((await giving.give(tenant, slug)).status).toBe(422);
    expect(await (await fetch(`${server.url}/donor/${tenant.slug}/`)).text()).not.toContain(BANNER);
    const refund = await giving.graphql(owner, "mutation ($id: ID!) { refundPayment(id: $id) { id state } }", {
      id: String(gift.body.payment.id),
    });
    expect(refund.errors?.[0]?.extensions?.code).toBe("processor_not_connected");
  });
});

describe("a production server's donor portal", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ production: true });
  });
  afterAll(() => server?.close());

  it("takes no sandbox card for a real monthly gift when the organization has no card processor", async () => {
    const db = server.database.db;
    const tenant = await fakeTenant(db);
    const email = `donor-${unique(6)}@example.test`;
    const supporter = await fakeSupporter(db, tenant.organizationId, { email, eraseDate: null });
    const method = await fakePaymentMethod(db, tenant.organizationId, {
      supporterId: supporter.id,
      processor: "stripe",
      label: "Visa •••• 4242",
      processorReference: `pm_${unique(12)}`,
    });
    const campaign = await fakeCampaign(db, tenant.organizationId, { hasSubscription: true });
    const donation = await fakeDonation(db, tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "past_due",
      amount: 15,
      frequency: 12,
      completedDate: new Date(Date.now() - 86_400_000),
      paymentMethodId: method.id,
    });
    const token = randomBytes(24).toString("base64url");
    await db.insert(donorSessions).values({
      organizationId: tenant.organizationId,
      tokenHash: hashSecret(token),
      email,
      csrfToken: randomBytes(16).toString("hex"),
      expiresDate: new Date(Date.now() + 3600_000),
    });
    const browser = new Browser(server.url);
    browser.cookies.set(DONOR_COOKIE, token);
    const path = `/donor/${tenant.slug}/gifts/${donation.id}/payment-method`;
    const form = await browser.get(path);
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.html)?.[1] as string;
    const posted = await browser.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        card_number: "4242424242424242",
        exp_month: "12",
        exp_year: "2031",
        cvc: "123",
        csrf,
      }).toString(),
    });
    expect(posted.status).toBe(409);
    expect(posted.html).toContain("Card changes are not available for this organization yet");
    const [row] = await db
      .select({ paymentMethodId: donations.paymentMethodId, state: donations.state })
      .from(donations)
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, donation.id)));
    expect(row).toEqual({ paymentMethodId: method.id, state: "past_due" });
    const methods = await db.execute<{ processor: string }>(
      sql`select processor from payment_methods where organization_id = ${tenant.organizationId}`,
    );
    expect((methods as unknown as { rows: { processor: string }[] }).rows).toEqual([{ processor: "stripe" }]);
  });
});

describe("outside production nothing changes", () => {
  let server: TestServer;
  const giving = givingOn(() => server);
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it("an organization without Stripe keeps the sandbox, its gifts count and carry no banner", async () => {
    const tenant = await fakeTenant(server.database.db);
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, { hasOneOff: true });
    const slug = campaign.slug as string;
    const described = await giving.publicCampaign(tenant, slug);
    expect(described.processors.map((processor: Json) => processor.name)).toEqual(["sandbox", "manual"]);
    expect(described.test_mode).toBe(false);
    const page = await giving.donatePage(tenant, slug);
    expect(page.text).toContain("4242 4242 4242 4242");
    expect(page.text).not.toContain(BANNER);
    const gift = await giving.give(tenant, slug);
    expect(gift.body).toMatchObject({ payment: { state: "PAID", test: false }, donation: { test: false } });
    expect((await giving.publicCampaign(tenant, slug)).raised).toBe(40);
    const owner = await giving.ownerOf(tenant);
    expect((await giving.graphql(owner, SETTINGS)).data.paymentSettings).toEqual({
      processor: "sandbox",
      test_mode: false,
      mode: null,
    });
  });
});
