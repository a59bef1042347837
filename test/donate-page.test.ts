import { like } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type campaigns, checkoutProtection, sandboxCharges } from "../src/db/schema.js";
import { updateBankAccount } from "../src/modules/organizations/organizations.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

interface Donor {
  card?: string;
  firstName?: string;
}

describe("hosted donation page", () => {
  let server: TestServer;
  let tenant: Tenant;
  let browser: Browser;
  let campaign: typeof campaigns.$inferSelect;

  beforeAll(async () => {
    // Default limits (a real donor is never blocked by them); only the proof of work is made light.
    const cardTesting = { ...loadConfig({}).cardTesting, challengeCost: 10, challengeMaxNumber: 200 };
    [server, browser] = await Promise.all([startTestServer({ cardTesting }), launchChromium()]);
    tenant = await fakeTenant(server.database.db);
    await updateBankAccount(server.database.db, tenant.organizationId, {
      account_name: "School Kits Foundation",
      iban: "IT60 X054 2811 1010 0000 0123 456",
      bic: "BPMOIT22XXX",
    });
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `school-kits-${unique(6)}`,
      title: "School kits for every child",
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      allowCustomSubscriptionAmount: true,
      minAmount: 5,
      maxAmount: 5000,
      minSubscriptionAmount: 5,
      maxSubscriptionAmount: 500,
      asks: ["10", "25", "50"],
      asksSubscription: ["5", "10"],
      defaultAmount: 25,
      isGoalEnabled: true,
      goal: 1000,
      shownFields: ["first_name", "last_name", "email", "city"],
      requiredFields: ["first_name", "last_name"],
      privacyNote: "We use your data only to process your gift.",
      costExampleAmount: 10,
      costExampleLabel: "one school kit",
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const pagePath = () => `/donate/${tenant.slug}/${campaign.slug}`;

  /** A fresh browser context (cookies, storage, UA) on the same browser, closed by the caller. */
  async function openPage(options: Parameters<Browser["newContext"]>[0] = {}, path = pagePath()) {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    const response = await page.goto(`${server.url}${path}`);
    expect(response?.status()).toBe(200);
    return { context, page, cspViolations };
  }

  async function fillDonor(page: Page, donor: Donor = {}) {
    await page.getByLabel("First name").fill(donor.firstName ?? "Ada");
    await page.getByLabel("Last name").fill("Lovelace");
    await page.getByRole("textbox", { name: "Email" }).fill(`ada-${unique(6)}@example.org`);
    await page.getByLabel("City").fill("London");
    await page.getByLabel("I have read the privacy notice").check();
    await page.getByRole("checkbox", { name: "Email" }).check();
    await fillCard(page, donor.card ?? "4242 4242 4242 4242");
  }

  async function fillCard(page: Page, number: string) {
    await page.getByLabel("Card number").fill(number);
    await page.getByLabel("Expiry month").fill("12");
    await page.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
    await page.getByLabel("Security code").fill("123");
  }

  /** Clicks Donate and returns the body of the completion response. */
  async function submit(page: Page) {
    const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
    await page.getByRole("button", { name: /^Donate/ }).click();
    const response = await completion;
    return { status: response.status(), body: await response.json(), request: response.request() };
  }

  async function checkoutOf(id: number) {
    const response = await server.get(`/api/v1/checkouts/${id}`, tenant.token);
    expect(response.status).toBe(200);
    return response.body;
  }

  it("completes a one-off gift with the test card and shows the receipt link", async () => {
    const { context, page, cspViolations } = await openPage();
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("School kits for every child");
    await expect(page.locator("progress").getAttribute("max")).resolves.toBe("1000");
    expect(await page.getByRole("radio", { name: "One-off" }).isChecked()).toBe(true);
    // The default amount is preselected; choosing another one starts the checkout.
    expect(await page.getByRole("radio", { name: "€25" }).isChecked()).toBe(true);
    const started = page.waitForResponse((response) => response.url().endsWith("/checkouts/"));
    await page.getByRole("radio", { name: "€50" }).check();
    expect((await started).status()).toBe(201);
    await expect(page.locator("#cost-example").textContent()).resolves.toBe("€50 = 5 × school kit");
    await page.getByRole("radio", { name: "€25" }).check();
    await expect(page.locator("#cost-example").textContent()).resolves.toBe("€25 = 2 × school kit");
    await expect(page.getByRole("button", { name: /^Donate/ }).textContent()).resolves.toBe("Donate €25");

    await fillDonor(page);
    const { status, body, request } = await submit(page);
    expect(status).toBe(200);
    expect(request.headers()["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(page.locator("#success-title").textContent()).resolves.toBe("Thank you, Ada!");
    const receipt = page.getByRole("link", { name: "Download your receipt" });
    await expect(receipt.getAttribute("href")).resolves.toBe(body.receipt_url);
    expect(body.receipt_url).toMatch(/\/documents\/receipts\//);
    expect((await fetch(body.receipt_url)).status).toBe(200);
    expect(await page.locator("#donate-form").isVisible()).toBe(false);
    expect(cspViolations).toEqual([]);

    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({
      state: "CLOSED",
      amount: 25,
      frequency: 0,
      cost_example_quantity: 2,
      payment_method_processor: "sandbox",
      payment_method_label: "Visa •••• 4242",
      campaign: { id: campaign.id },
      supporter: { first_name: "Ada", last_name: "Lovelace", city: "London", privacy: true, email_marketing: true },
      donation: { state: "done", amount: 25, frequency: 0, device: "desktop", receipt_url: body.receipt_url },
      payment: { state: "PAID", amount: 25 },
    });
    expect(checkout.completed_date).not.toBeNull();
    await context.close();
  });

  it("completes a monthly gift: the donation is active with frequency 12", async () => {
    const { context, page } = await openPage();
    await page.getByRole("radio", { name: "Monthly" }).check();
    // Bank transfer cannot renew by itself, so it is offered for one-off gifts only.
    expect(await page.getByRole("radio", { name: "Bank transfer" }).isDisabled()).toBe(true);
    await page.getByRole("radio", { name: "€10" }).check();
    await expect(page.getByRole("button", { name: /^Donate/ }).textContent()).resolves.toBe("Donate €10 monthly");
    await fillDonor(page);
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    await page.locator("#success").waitFor({ state: "visible" });

    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({
      state: "CLOSED",
      amount: 10,
      frequency: 12,
      donation: { state: "active", frequency: 12, amount: 10 },
      payment: { state: "PAID" },
    });
    await context.close();
  });

  it("shows a declined card, keeps the checkout open, and succeeds on retry with one paid payment", async () => {
    const { context, page } = await openPage();
    await page.getByLabel("Other amount").fill("30");
    await page.getByLabel("Other amount").press("Tab");
    await fillDonor(page, { card: "4000 0000 0000 0002" });
    const declined = await submit(page);
    expect(declined.status).toBe(402);
    const alert = page.getByRole("alert").first();
    await expect(alert.textContent()).resolves.toContain("The card was declined");
    await expect(page.locator("#e-f-card-number").textContent()).resolves.toContain("declined");
    await expect(page.getByLabel("Card number").getAttribute("aria-invalid")).resolves.toBe("true");
    const checkoutId = Number(/\/checkouts\/(\d+)\/complete$/.exec(declined.request.url())?.[1]);
    await expect(checkoutOf(checkoutId)).resolves.toMatchObject({ state: "OPEN" });

    await fillCard(page, "4242424242424242");
    const retried = await submit(page);
    expect(retried.status).toBe(200);
    expect(retried.body.checkout_id).toBe(checkoutId);
    expect(retried.request.headers()["idempotency-key"]).not.toBe(declined.request.headers()["idempotency-key"]);
    await page.locator("#success").waitFor({ state: "visible" });
    expect(await page.getByRole("alert").first().isVisible()).toBe(false);

    const checkout = await checkoutOf(checkoutId);
    expect(checkout).toMatchObject({ state: "CLOSED", amount: 30, donation: { state: "done" } });
    const payments = await server.get(`/api/v1/payments/?donation_id=${checkout.donation.id}`, tenant.token);
    const states = payments.body.items.map((payment: { state: string }) => payment.state).sort();
    // The decline wrote no payment (nor supporter): it is a checkout attempt only.
    expect(states).toEqual(["PAID"]);
    await context.close();
  });

  it("after a processor timeout, pressing Donate again reuses the key and shows the gift, charged once", async () => {
    const { context, page } = await openPage();
    await fillDonor(page, { card: "4000 0000 0000 0119" });
    const timedOut = await submit(page);
    expect(timedOut.status).toBe(503);
    expect(timedOut.body.code).toBe("processor_unavailable");
    await expect(page.getByRole("alert").first().textContent()).resolves.toBe(
      "The payment service did not answer. Please try again: you will not be charged twice.",
    );
    const checkoutId = Number(/\/checkouts\/(\d+)\/complete$/.exec(timedOut.request.url())?.[1]);

    const retried = await submit(page);
    expect(retried.status).toBe(200);
    expect(retried.request.headers()["idempotency-key"]).toBe(timedOut.request.headers()["idempotency-key"]);
    expect(retried.body.checkout_id).toBe(checkoutId);
    await page.locator("#success").waitFor({ state: "visible" });
    const charges = await server.database.db
      .select()
      .from(sandboxCharges)
      .where(like(sandboxCharges.idempotencyKey, `checkout:${checkoutId}:attempt:%`));
    expect(charges.map((charge) => charge.state)).toEqual(["PAID"]);
    expect(retried.body.payment.processor_intent_id).toBe(charges[0]?.intentId);
    await context.close();
  });

  it("asks for the ALTCHA proof of work while the form is protected: the widget solves it by itself, then the gift completes", async () => {
    const db = server.database.db;
    const guarded = await fakeTenant(db);
    const guardedCampaign = await fakeCampaign(db, guarded.organizationId, {
      slug: `guarded-${unique(6)}`,
      hasOneOff: true,
      hasSubscription: false,
      allowCustomAmount: true,
      shownFields: ["first_name", "last_name", "email", "city"],
      requiredFields: ["first_name", "last_name"],
      archiveDate: null,
    });
    await db.insert(checkoutProtection).values({ organizationId: guarded.organizationId, challengeForced: true });
    const pageErrors: string[] = [];
    const { context, page, cspViolations } = await openPage(
      { viewport: { width: 390, height: 844 }, userAgent: IPHONE_UA },
      `/donate/${guarded.slug}/${guardedCampaign.slug}`,
    );
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const widget = page.locator("altcha-widget");
    await widget.waitFor({ state: "attached" });
    await expect(page.locator("#challenge").isVisible()).resolves.toBe(true);
    // The widget fetches a challenge from our API and solves it in a web worker, without a click.
    await page.locator("altcha-widget [data-state=verified]").waitFor({ state: "attached", timeout: 30_000 });

    await page.getByLabel("Other amount").fill("20");
    await page.getByLabel("Other amount").press("Tab");
    await fillDonor(page);
    const { status, body, request } = await submit(page);
    expect(status).toBe(200);
    expect(typeof JSON.parse(request.postData() ?? "{}").altcha).toBe("string");
    await page.locator("#success").waitFor({ state: "visible" });
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
    const checkout = await server.get(`/api/v1/checkouts/${body.checkout_id}`, guarded.token);
    expect(checkout.body).toMatchObject({ state: "CLOSED", amount: 20, payment: { state: "PAID" } });
    await context.close();
  });

  it("records a gift from a phone as a mobile donation, in a layout that fits the screen", async () => {
    const { context, page } = await openPage({
      viewport: { width: 390, height: 844 },
      userAgent: IPHONE_UA,
      isMobile: true,
      hasTouch: true,
      deviceScaleFactor: 3,
    });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await fillDonor(page);
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    await expect(checkoutOf(body.checkout_id)).resolves.toMatchObject({
      amount: 25,
      donation: { device: "mobile", state: "done" },
    });
    await context.close();
  });

  it("shows the bank transfer instructions for a manual one-off gift", async () => {
    const { context, page } = await openPage();
    await page.getByRole("radio", { name: "Bank transfer" }).check();
    expect(await page.getByLabel("Card number").isVisible()).toBe(false);
    await page.getByLabel("First name").fill("Grace");
    await page.getByLabel("Last name").fill("Hopper");
    await page.getByRole("textbox", { name: "Email" }).fill(`grace-${unique(6)}@example.org`);
    await page.getByLabel("I have read the privacy notice").check();
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    expect(body.result).toBe("pending");
    await page.locator("#transfer").waitFor({ state: "visible" });
    await expect(page.locator("#transfer-reference").textContent()).resolves.toBe(body.donation.code);
    await expect(page.locator("#transfer-iban").textContent()).resolves.toBe("IT60 X054 2811 1010 0000 0123 456");
    await expect(page.locator("#transfer-bic").textContent()).resolves.toBe("BPMOIT22XXX");
    await expect(page.locator("#transfer-payee").textContent()).resolves.toBe("School Kits Foundation");
    expect(body.bank_transfer).toEqual({
      account_name: "School Kits Foundation",
      iban: "IT60X0542811101000000123456",
      bic: "BPMOIT22XXX",
      reference: body.donation.code,
    });
    expect(await page.locator("#transfer-contact").isVisible()).toBe(false);
    expect(await page.locator("#receipt").isVisible()).toBe(false);
    await expect(checkoutOf(body.checkout_id)).resolves.toMatchObject({
      state: "CLOSED",
      payment_method_label: "Bank transfer",
      payment: { state: "PENDING" },
    });
    await context.close();
  });

  it("asks bank transfer donors to get in touch when the organization has no IBAN yet", async () => {
    const other = await fakeTenant(server.database.db);
    const plain = await fakeCampaign(server.database.db, other.organizationId, {
      hasOneOff: true,
      allowCustomAmount: true,
      defaultAmount: 25,
      archiveDate: null,
    });
    const { context, page } = await openPage({}, `/donate/${other.slug}/${plain.slug}`);
    await page.getByRole("radio", { name: "Bank transfer" }).check();
    await page.getByRole("textbox", { name: "Email" }).fill(`grace-${unique(6)}@example.org`);
    await page.getByLabel("I have read the privacy notice").check();
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    expect(body).toMatchObject({ result: "pending", bank_transfer: null });
    await page.locator("#transfer-contact").waitFor({ state: "visible" });
    expect(await page.locator("#transfer").isVisible()).toBe(false);
    const text = await page.locator("#transfer-contact-text").textContent();
    expect(text).toMatch(/^Please contact Org \S+ for their bank details, and quote the reference /);
    expect(text).toContain(body.donation.code);
    await context.close();
  });

  it("offers to cover the processing fee with the exact cents the server then charges", async () => {
    const covering = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `cover-${unique(6)}`,
      defaultAmount: 25,
      shownFields: ["first_name", "last_name", "email", "city"],
      requiredFields: [],
      allowCoverFee: true,
      archiveDate: null,
    });
    const { context, page } = await openPage({}, `/donate/${tenant.slug}/${covering.slug}`);
    const box = page.getByRole("checkbox", { name: "Add €1.03 to cover processing fees" });
    expect(await box.isChecked()).toBe(false);
    await page.getByRole("radio", { name: "€10" }).check();
    await page.getByRole("checkbox", { name: "Add €0.59 to cover processing fees" }).check();
    await expect(page.getByRole("button", { name: /^Donate/ }).textContent()).resolves.toBe("Donate €10.59");
    await fillDonor(page);
    const { status, body, request } = await submit(page);
    expect(status).toBe(200);
    expect(request.postDataJSON()).toMatchObject({ amount: 10, cover_fee: true });
    expect(body.donation).toMatchObject({ amount: 10, covered_fee: 0.59 });
    expect(body.payment.amount).toBe(10.59);
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(page.locator("#success-summary").textContent()).resolves.toContain(
      "Thank you for also covering €0.59 of processing fees.",
    );
    await context.close();
  });

  it("explains missing fields inline without calling the API", async () => {
    const { context, page } = await openPage();
    let completions = 0;
    page.on("request", (request) => {
      if (request.url().endsWith("/complete")) completions++;
    });
    await page.getByRole("button", { name: /^Donate/ }).click();
    await expect(page.getByRole("alert").first().textContent()).resolves.toBe("Please check the highlighted fields.");
    await expect(page.getByLabel("First name").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(page.locator("#e-consent-privacy").textContent()).resolves.toBe("Please tick this box to continue");
    // The first invalid field takes the focus, so a keyboard user lands where the problem is.
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("f-supporter-first-name");
    // Suggested amounts are a radio group: arrow keys move the choice.
    await page.getByRole("radio", { name: "€25" }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("radio", { name: "€50" }).isChecked()).toBe(true);
    await expect(page.getByRole("button", { name: /^Donate/ }).textContent()).resolves.toBe("Donate €50");
    await page.getByLabel("Other amount").fill("1");
    await page.getByLabel("Other amount").press("Tab");
    await expect(page.locator("#e-amount").textContent()).resolves.toBe("The smallest gift is €5");
    expect(completions).toBe(0);
    await context.close();
  });

  it("answers an unknown campaign with a 404 HTML page", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${server.url}/donate/${tenant.slug}/no-such-campaign`);
    expect(response?.status()).toBe(404);
    expect(response?.headers()["content-type"]).toBe("text/html; charset=utf-8");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Campaign not found");
    await context.close();
  });
});

describe("hosted donation page HTML", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(() => server?.close());

  it("escapes campaign text and runs under a nonce-only Content-Security-Policy", async () => {
    const hostile = `<script>alert("x")</script>`;
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      title: `Kits ${hostile} & more`,
      privacyNote: `Note ${hostile}`,
      costExampleAmount: 10,
      costExampleLabel: `kit ${hostile}`,
      archiveDate: null,
    });
    const response = await fetch(`${server.url}/donate/${tenant.slug}/${campaign.slug}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("<h1>Kits &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more</h1>");
    expect(html).toContain("Note &lt;script&gt;");
    expect(html).toContain('"label":"kit \\u003cscript\\u003ealert(\\"x\\")\\u003c/script\\u003e"');

    const csp = response.headers.get("content-security-policy") ?? "";
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const scriptTags = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    expect(scriptTags.length).toBe(2);
    for (const tag of scriptTags) expect(tag).toContain(`nonce="${nonce}"`);
    // Nothing loaded from elsewhere; the one link out is the organization's privacy notice (a navigation).
    const anchors = [...html.matchAll(/<a\b[^>]*>/g)].map((match) => match[0]);
    expect(anchors.filter((anchor) => /href="(?:https?:)?\/\//.test(anchor))).toEqual([
      '<a href="https://charity.example.org/privacy" target="_blank" rel="noopener" id="privacy-link">',
    ]);
    expect(html.replace(/<a\b[^>]*>/g, "")).not.toMatch(/\sstyle="|(?:src|href)="(?:https?:)?\/\//);

    const again = await fetch(`${server.url}/donate/${tenant.slug}/${campaign.slug}`);
    expect(again.headers.get("content-security-policy")).not.toBe(csp);
  });

  it("answers an ended campaign with 410 and an unknown organization with 404, both as HTML", async () => {
    const ended = await fakeCampaign(server.database.db, tenant.organizationId, { archiveDate: new Date() });
    const gone = await fetch(`${server.url}/donate/${tenant.slug}/${ended.slug}`);
    expect(gone.status).toBe(410);
    expect(gone.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await gone.text()).toContain("<h1>This campaign has ended</h1>");

    const unknown = await fetch(`${server.url}/donate/no-such-org-${unique()}/${ended.slug}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("<h1>Campaign not found</h1>");
    const tooLong = await fetch(`${server.url}/donate/${tenant.slug}/${"x".repeat(150)}`);
    expect(tooLong.status).toBe(404);
    expect(tooLong.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });
});
