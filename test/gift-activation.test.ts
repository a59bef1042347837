import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import type { Browser as Chromium } from "playwright-core";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { donations, donorSessions, jobs, outboxMessages, paymentMethods, supporters } from "../src/db/schema.js";
import { hashSecret } from "../src/identity/secrets.js";
import { DONOR_COOKIE } from "../src/modules/donor-portal/donor-session.js";
import { importGifts } from "../src/modules/imports/gift-import.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { loadProcessorRegistry } from "../src/payments/processors/index.js";
import { Browser } from "./helpers/browser.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  connectFakeStripeAccount,
  type FakeStripeAccount,
  fakeCampaign,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";
import { type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;

const ACTIVATE = `mutation ($id: ID!) { activateImportedDonation(id: $id) { outcome donation { id state } } }`;

const text = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, "")
    .replace(/<script[^>]*>[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

/**
 * An imported recurring gift still running on the platform the charity left charges nobody until an
 * admin turns it on: at once on the Stripe customer and method the file named, once Stripe confirms
 * they are saved together; otherwise its donor is emailed (in their language) a link to set up a card,
 * and it runs once they have.
 */
describe("turning imported recurring gifts on", () => {
  let server: TestServer;
  let standIn: StripeStandIn;
  let smtp: TestSmtpServer;
  let stripeTenant: Tenant;
  let sandboxTenant: Tenant;
  let account: FakeStripeAccount;
  let chromium: Chromium | undefined;
  const db = () => server.database.db;

  beforeAll(async () => {
    [standIn, smtp] = await Promise.all([startStripeStandIn(), startSmtpServer()]);
    server = await startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}`, smtpUrl: smtp.url });
    stripeTenant = await fakeTenant(db());
    sandboxTenant = await fakeTenant(db());
    account = await connectFakeStripeAccount(
      db(),
      stripeTenant.organizationId,
      loadProcessorRegistry(db(), server.config).secrets,
    );
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await standIn?.close();
    await smtp?.close();
  });

  const graphql = async (query: string, variables: Record<string, unknown>, token: string) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    expect(response.status).toBeLessThan(500);
    return (await response.json()) as Json;
  };

  /** A monthly plan still running, imported with these Stripe ids (or none), for a donor of this address. */
  async function importPlan(tenant: Tenant, options: { customer?: string; method?: string; email: string }) {
    const campaign = await fakeCampaign(db(), tenant.organizationId, { title: `Friends ${unique(6)}` });
    const plan = `P-${unique(8)}`;
    const stripe = options.customer ? `${options.customer},${options.method}` : ",";
    const rows = ["2025-01-10", "2025-02-10", "2025-03-10"].map(
      (date, index) =>
        `${plan}-${index},${date},${campaign.title},${options.email},Giulia,Verdi,12.00,succeeded,Monthly,${plan},active,${stripe}`,
    );
    const result = await importGifts(db(), {
      organizationId: tenant.organizationId,
      fileName: "plans.csv",
      content: [
        "Transaction ID,Transaction Date,Campaign Title,Email,First Name,Last Name,Amount,Status,Frequency,Plan ID,Plan Status,Stripe Customer ID,Stripe Payment Method ID",
        ...rows,
      ].join("\n"),
      preset: "givebutter",
      dryRun: false,
    });
    expect(result).toMatchObject({ created: 3, refused: 0, recurring_awaiting: 1 });
    const [donation] = await db()
      .select()
      .from(donations)
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.externalId, plan)));
    if (!donation) throw new Error("plan not imported");
    return donation;
  }

  const donationRow = async (tenant: Tenant, id: number) =>
    (
      await db()
        .select()
        .from(donations)
        .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, id)))
    )[0];
  const renewalsOf = (id: number) =>
    db()
      .select()
      .from(jobs)
      .where(and(eq(jobs.kind, "renewal"), eq(jobs.subjectId, id), eq(jobs.state, "queued")));

  it("charges nobody until turned on; runs at once on the Stripe customer and method Stripe confirms", async () => {
    const stripe = new Stripe(account.secretKey, { ...standIn.api, maxNetworkRetries: 0 });
    const customer = await stripe.customers.create({ email: "giulia@example.org", name: "Giulia Verdi" });
    await stripe.paymentMethods.attach("pm_card_visa", { customer: customer.id });
    const donation = await importPlan(stripeTenant, {
      customer: customer.id,
      method: "pm_card_visa",
      email: `giulia.${unique(6)}@example.org`,
    });
    expect(donation).toMatchObject({ state: "pending", activation: "awaiting" });
    expect(await renewalsOf(donation.id)).toEqual([]);

    const before = Date.now();
    const answer = await graphql(ACTIVATE, { id: donation.id }, stripeTenant.token);
    expect(answer.errors).toBeUndefined();
    expect(answer.data.activateImportedDonation).toEqual({
      outcome: "activated",
      donation: { id: donation.id, state: "active" },
    });
    const row = await donationRow(stripeTenant, donation.id);
    expect(row).toMatchObject({ state: "active", activation: null });
    // The next cycle after now, on the first payment's day of the month.
    expect(row?.nextChargeDate?.getTime()).toBeGreaterThan(before);
    expect(row?.nextChargeDate?.getUTCDate()).toBe(10);
    const [method] = await db()
      .select()
      .from(paymentMethods)
      .where(
        and(
          eq(paymentMethods.organizationId, stripeTenant.organizationId),
          eq(paymentMethods.id, row?.paymentMethodId ?? -1),
        ),
      );
    expect(method).toMatchObject({
      processor: "stripe",
      label: "Visa •••• 4242",
      processorReference: `${customer.id}/pm_card_visa`,
    });
    const renewals = await renewalsOf(donation.id);
    expect(renewals.map((job) => job.runDate.getTime())).toEqual([row?.nextChargeDate?.getTime()]);
    // Asked Stripe whether the method is saved on that customer.
    expect(standIn.requests.map((request) => `${request.method} ${request.path}`)).toContain(
      `GET /v1/customers/${customer.id}/payment_methods/pm_card_visa`,
    );

    // Once on, it is not waiting any more: a second turn-on is refused and changes nothing.
    const again = await graphql(ACTIVATE, { id: donation.id }, stripeTenant.token);
    expect(again.errors?.[0]?.extensions?.code).toBe("invalid_state_transition");
    expect(await renewalsOf(donation.id)).toHaveLength(1);
  });

  it("a method Stripe does not have saved on that customer: the donor is emailed a link, and the gift runs once they set up a card", async () => {
    const stripe = new Stripe(account.secretKey, { ...standIn.api, maxNetworkRetries: 0 });
    const customer = await stripe.customers.create({ email: "x@example.org", name: "X" });
    const email = `giulia.${unique(6)}@example.org`;
    // The method was never saved on this customer.
    const donation = await importPlan(stripeTenant, { customer: customer.id, method: "pm_card_mastercard", email });
    const answer = await graphql(ACTIVATE, { id: donation.id }, stripeTenant.token);
    expect(answer.data.activateImportedDonation.outcome).toBe("card_requested");
    expect(await donationRow(stripeTenant, donation.id)).toMatchObject({
      state: "pending",
      activation: "card_requested",
    });
    await flushOutbox(server, stripeTenant.organizationId);
    const mails = smtp.messages.filter((mail) => JSON.stringify(mail.to).includes(email));
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toMatch(/^Carry on your gift to .+: set up your card$/);
    expect(linksOf(mails[0]?.html).some((link) => link.includes(`/gifts/${donation.id}`))).toBe(true);
    // Asking again sends nothing more.
    const again = await graphql(ACTIVATE, { id: donation.id }, stripeTenant.token);
    expect(again.data.activateImportedDonation.outcome).toBe("card_requested");
    const queued = await db()
      .select()
      .from(outboxMessages)
      .where(
        and(eq(outboxMessages.organizationId, stripeTenant.organizationId), eq(outboxMessages.kind, "gift_activation")),
      );
    expect(queued.filter((message) => message.donationId === donation.id)).toHaveLength(1);
  });

  it("without Stripe ids: the donor (Italian) sets up a sandbox card in the portal and the gift runs", async () => {
    const email = `giulia.${unique(6)}@example.org`;
    const donation = await importPlan(sandboxTenant, { email });
    // The donor speaks Italian: their email and portal page do too.
    await db()
      .update(supporters)
      .set({ locale: "it" })
      .where(and(eq(supporters.organizationId, sandboxTenant.organizationId), eq(supporters.id, donation.supporterId)));
    const answer = await graphql(ACTIVATE, { id: donation.id }, sandboxTenant.token);
    expect(answer.data.activateImportedDonation.outcome).toBe("card_requested");
    await flushOutbox(server, sandboxTenant.organizationId);
    const mail = smtp.messages.find((each) => JSON.stringify(each.to).includes(email));
    expect(mail?.subject).toMatch(/^Continua la tua donazione a .+: inserisci la carta$/);

    // The donor's gift page asks for a card; the card form saves it; the gift runs.
    const token = randomBytes(24).toString("base64url");
    await db()
      .insert(donorSessions)
      .values({
        organizationId: sandboxTenant.organizationId,
        tokenHash: hashSecret(token),
        email,
        csrfToken: randomBytes(16).toString("hex"),
        expiresDate: new Date(Date.now() + 3600_000),
      });
    const browser = new Browser(server.url);
    browser.cookies.set(DONOR_COOKIE, token);
    const gift = await browser.get(`/donor/${sandboxTenant.slug}/gifts/${donation.id}`);
    expect(gift.status).toBe(200);
    expect(text(gift.html)).toContain("Continua la tua donazione");
    const form = await browser.get(`/donor/${sandboxTenant.slug}/gifts/${donation.id}/payment-method`);
    expect(form.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.html)?.[1] as string;
    const saved = await browser.request(`/donor/${sandboxTenant.slug}/gifts/${donation.id}/payment-method`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        csrf,
        card_number: "4242 4242 4242 4242",
        exp_month: "12",
        exp_year: "2031",
        cvc: "123",
      }).toString(),
    });
    expect(saved.status).toBe(303);
    const row = await donationRow(sandboxTenant, donation.id);
    expect(row).toMatchObject({ state: "active", activation: null });
    expect(await renewalsOf(donation.id)).toHaveLength(1);
  });

  it("refuses what it cannot turn on, changing nothing", async () => {
    const email = `giulia.${unique(6)}@example.org`;
    const donation = await importPlan(sandboxTenant, { email });
    const other = await fakeTenant(db());
    const foreign = await graphql(ACTIVATE, { id: donation.id }, other.token);
    expect(foreign.errors?.[0]?.extensions?.code).toBe("not_found");
    const malformed = await graphql(ACTIVATE, { id: "abc" }, sandboxTenant.token);
    expect(malformed.errors?.[0]?.extensions?.code).toMatch(/^(invalid_request|not_found)$/);
    // A one-off imported gift has nothing to turn on.
    const campaign = await fakeCampaign(db(), sandboxTenant.organizationId, { title: `One ${unique(6)}` });
    await importGifts(db(), {
      organizationId: sandboxTenant.organizationId,
      fileName: "one.csv",
      content: `external_id,date,amount,email,campaign\nO-${unique(8)},2025-01-01,5,${email},${campaign.title}\n`,
      dryRun: false,
    });
    const [oneOff] = await db()
      .select()
      .from(donations)
      .where(and(eq(donations.organizationId, sandboxTenant.organizationId), eq(donations.campaignId, campaign.id)));
    const refused = await graphql(ACTIVATE, { id: oneOff?.id }, sandboxTenant.token);
    expect(refused.errors?.[0]?.extensions?.code).toBe("invalid_state_transition");
    expect(await donationRow(sandboxTenant, donation.id)).toMatchObject({ state: "pending", activation: "awaiting" });
  });

  it("the panel: the donation's page says it charges nobody; Turn on asks, then says the donor was emailed (English and Italian, axe)", async () => {
    chromium = await launchChromium();
    const password = "correct horse battery staple";
    const owner = `owner-${unique(6)}@example.test`;
    await createUser(db(), { email: owner, password, organization: sandboxTenant.slug, role: "owner" });
    const donation = await importPlan(sandboxTenant, { email: `giulia.${unique(6)}@example.org` });
    const page = await signInToPanel(chromium, {
      url: server.url,
      email: owner,
      password,
      organization: sandboxTenant.slug,
    });
    await page.goto(`${server.url}/admin/o/${sandboxTenant.slug}/donations/${donation.id}`);
    const notice = page.locator('[data-testid="activation-notice"]');
    await notice.waitFor();
    expect(await notice.textContent()).toBe(
      "Imported from another platform: this gift charges nobody until it is turned on.",
    );
    const axe = async () =>
      (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );
    expect(await axe()).toEqual([]);
    await page.locator('[data-testid="activate-donation"]').click();
    const dialog = page.getByRole("dialog");
    await dialog
      .getByText("Turn it on once the platform it came from has stopped charging it.", { exact: false })
      .waitFor();
    expect(await axe()).toEqual([]);
    await dialog.getByRole("button", { name: "Turn on" }).click();
    await page.getByText("The donor has been emailed a link to set up a card; the gift runs once they have.").waitFor();
    await expect
      .poll(() => notice.textContent(), { timeout: 15_000 })
      .toBe(
        "Imported from another platform: the donor has been asked to set up a card, and the gift runs once they have.",
      );
    expect(await donationRow(sandboxTenant, donation.id)).toMatchObject({ activation: "card_requested" });

    // In Italian.
    await page.evaluate(() => localStorage.clear());
    const { users } = await import("../src/db/schema.js");
    await db().update(users).set({ locale: "it" }).where(eq(users.email, owner));
    const italian = await importPlan(sandboxTenant, { email: `giulia.${unique(6)}@example.org` });
    await page.goto(`${server.url}/admin/o/${sandboxTenant.slug}/donations/${italian.id}`);
    await page
      .getByText("Importata da un’altra piattaforma: questa donazione non addebita nulla finché non viene attivata.")
      .waitFor();
    await page.getByRole("button", { name: "Attiva" }).waitFor();
    expect(await axe()).toEqual([]);
  });
});
