import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { campaigns } from "../src/db/schema.js";
import { loadProcessorRegistry } from "../src/payments/processors/index.js";
import { launchChromium } from "./helpers/chromium.js";
import { connectFakeStripeAccount, fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { type StripeJsCall, serveStripeJs, stripeJsCalls } from "./helpers/stripe-js-stand-in.js";
import { type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

/**
 * The hosted donation page of an organization that takes payments with Stripe, in Chromium:
 * Stripe.js is the stand-in of test/helpers/stripe-js-stand-in.ts (served at Stripe's URL),
 * Stripe's API is the local stand-in, the server and the database are real.
 */
describe("hosted donation page with Stripe", () => {
  let standIn: StripeStandIn;
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let publishableKey: string;
  let campaign: typeof campaigns.$inferSelect;

  beforeAll(async () => {
    standIn = await startStripeStandIn();
    [server, browser] = await Promise.all([
      startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}` }),
      launchChromium(),
    ]);
    tenant = await fakeTenant(server.database.db);
    const processors = loadProcessorRegistry(server.database.db, server.config);
    ({ publishableKey } = await connectFakeStripeAccount(
      server.database.db,
      tenant.organizationId,
      processors.secrets,
    ));
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `wells-${unique(6)}`,
      title: "Clean water wells",
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
      defaultSubscriptionAmount: 10,
      shownFields: ["first_name", "last_name", "email"],
      requiredFields: ["first_name", "last_name", "email"],
      allowCoverFee: true,
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await standIn?.close();
  });

  const pagePath = () => `/donate/${tenant.slug}/${campaign.slug}`;

  /**
   * A fresh context with Stripe.js and Stripe's hosts played by the stand-ins; `problems` collects
   * console errors, uncaught errors and CSP violations, which every test expects to stay empty.
   */
  async function openPage(path = pagePath()) {
    const context = await browser.newContext();
    const stripeHosts = await serveStripeJs(context, { standIn, publishableKey });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || /Content Security Policy/i.test(message.text())) {
        problems.push(message.text());
      }
    });
    page.on("pageerror", (error) => problems.push(error.message));
    const completions: Request[] = [];
    page.on("request", (request) => {
      if (/\/checkouts\/\d+\/complete$/.test(request.url())) completions.push(request);
    });
    const response = await page.goto(`${server.url}${path}`);
    expect(response?.status()).toBe(200);
    return { context, page, problems, completions, stripeHosts, csp: response?.headers()["content-security-policy"] };
  }

  async function fillDonorDetails(page: Page) {
    await page.getByLabel("First name").fill("Ada");
    await page.getByLabel("Last name").fill("Lovelace");
    await page.getByRole("textbox", { name: "Email" }).fill(`ada-${unique(6)}@example.org`);
    await page.getByLabel("I have read the privacy notice").check();
  }

  async function fillDonor(page: Page, method: string) {
    await fillDonorDetails(page);
    await chooseMethod(page, method);
  }

  const chooseMethod = (page: Page, method: string) => page.getByLabel("Test payment method").selectOption(method);

  /** Clicks Donate and returns the last completion response (after any 3-D Secure round). */
  async function submit(page: Page, options: { whileWaiting?: () => Promise<void> } = {}) {
    const settled = page.waitForResponse(
      (response) => /\/checkouts\/\d+\/complete$/.test(response.url()) && response.status() !== 202,
    );
    await page.getByRole("button", { name: /^Donate/ }).click();
    await options.whileWaiting?.();
    const response = await settled;
    return { status: response.status(), body: await response.json(), request: response.request() };
  }

  async function checkoutOf(id: number) {
    const response = await server.get(`/api/v1/checkouts/${id}`, tenant.token);
    expect(response.status).toBe(200);
    return response.body;
  }

  const callsNamed = (calls: StripeJsCall[], name: string) => calls.filter((call) => call.call === name);

  it("loads Stripe.js from js.stripe.com under a CSP with exactly Stripe's sources, and shows the test-mode banner", async () => {
    const { context, page, problems, csp, stripeHosts } = await openPage();
    const directives = Object.fromEntries(
      (csp ?? "").split(/;\s*/).map((directive) => {
        const [name, ...sources] = directive.split(" ");
        return [name, sources];
      }),
    );
    expect(directives["default-src"]).toEqual(["'none'"]);
    expect(directives["script-src"]?.slice(1)).toEqual(["https://js.stripe.com", "https://*.js.stripe.com"]);
    expect(directives["script-src"]?.[0]).toMatch(/^'nonce-[A-Za-z0-9+/]{22}=='$/);
    expect(directives["frame-src"]).toEqual([
      "https://js.stripe.com",
      "https://*.js.stripe.com",
      "https://hooks.stripe.com",
    ]);
    expect(directives["connect-src"]).toEqual(["'self'", "https://api.stripe.com"]);
    expect(directives["style-src"]).toEqual(directives["script-src"]?.slice(0, 1));
    expect(directives["frame-ancestors"]).toEqual(["'none'"]);
    const scriptTag = await page.locator("script[src]").evaluate((script: HTMLScriptElement) => ({
      src: script.src,
      async: script.async,
      nonce: script.nonce !== "",
    }));
    expect(scriptTag).toEqual({ src: "https://js.stripe.com/v3/", async: true, nonce: true });

    const banner = page.getByRole("note", { name: "Test mode" });
    expect(await banner.isVisible()).toBe(true);
    await expect(banner.textContent()).resolves.toContain("Test mode — no real money moves");
    // Stripe's Payment Element replaces the sandbox card fields.
    await page.getByLabel("Test payment method").waitFor();
    expect(await page.getByLabel("Card number").count()).toBe(0);
    expect(await page.getByRole("radio", { name: "Card or bank debit" }).isChecked()).toBe(true);
    const calls = await stripeJsCalls(page);
    expect(calls.slice(0, 4)).toEqual([
      { call: "Stripe", publishableKey },
      { call: "elements", options: { mode: "payment", currency: "eur", amount: 2500 } },
      { call: "create", type: "payment", options: { layout: "tabs" } },
      { call: "mount", target: "#payment-element" },
    ]);
    expect(stripeHosts.unexpected).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("says so when Stripe.js cannot be loaded, and sends nothing", async () => {
    const context = await browser.newContext();
    await serveStripeJs(context, { standIn, publishableKey });
    const page = await context.newPage();
    // Stripe unreachable from the donor's network (page routes win over the context's).
    await page.route("https://js.stripe.com/**", (route) => route.abort("connectionrefused"));
    let requests = 0;
    page.on("request", (request) => {
      if (/\/checkouts\//.test(request.url())) requests++;
    });
    await page.goto(`${server.url}${pagePath()}`);
    await page.locator("#e-stripe").waitFor({ state: "visible" });
    await expect(page.locator("#e-stripe").textContent()).resolves.toContain(
      "The secure payment form could not be loaded",
    );
    await fillDonorDetails(page);
    await page.getByRole("button", { name: /^Donate/ }).click();
    await expect(page.getByRole("alert").first().textContent()).resolves.toBe(
      "The secure payment form could not be loaded. Please reload the page.",
    );
    expect(requests).toBe(0);
    await context.close();
  });

  it("keeps the strict CSP and the sandbox card fields for an organization without Stripe", async () => {
    const other = await fakeTenant(server.database.db);
    const plain = await fakeCampaign(server.database.db, other.organizationId, {
      hasOneOff: true,
      defaultAmount: 25,
      archiveDate: null,
    });
    const response = await fetch(`${server.url}/donate/${other.slug}/${plain.slug}`);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).not.toContain("stripe");
    expect(csp).not.toContain("frame-src");
    expect(csp).toMatch(/script-src 'nonce-[^']+';/);
    const html = await response.text();
    expect(html).not.toMatch(/<script[^>]* src=/);
    expect(html).not.toContain("Test mode —");
    expect(html).toContain('id="f-card-number"');
  });

  it("completes a one-off card gift through a confirmation token and shows the receipt link", async () => {
    const { context, page, problems } = await openPage();
    await fillDonor(page, "card_ok");
    const { status, body, request } = await submit(page);
    expect(status).toBe(200);
    const sent = request.postDataJSON();
    expect(sent).toMatchObject({ processor: "stripe", amount: 25, frequency: 0 });
    expect(sent.confirmation_token).toMatch(/^ctoken_/);
    expect(sent.card).toBeUndefined();
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(page.locator("#success-title").textContent()).resolves.toBe("Thank you, Ada!");
    const receipt = page.getByRole("link", { name: "Download your receipt" });
    await expect(receipt.getAttribute("href")).resolves.toBe(body.receipt_url);
    expect((await fetch(body.receipt_url)).status).toBe(200);

    const calls = await stripeJsCalls(page);
    const [token] = callsNamed(calls, "createConfirmationToken");
    expect(token).toMatchObject({
      method: "card_ok",
      params: { payment_method_data: { billing_details: { name: "Ada Lovelace", email: sent.supporter.email } } },
    });
    // elements.submit() runs first, while the click is still the donor's gesture (wallet sheets need it).
    expect(calls.map((call) => call.call).filter((name) => name !== "update")).toEqual([
      "Stripe",
      "elements",
      "create",
      "mount",
      "submit",
      "createConfirmationToken",
    ]);
    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({
      state: "CLOSED",
      amount: 25,
      payment_method_processor: "stripe",
      donation: { state: "done", amount: 25 },
      payment: { state: "PAID", amount: 25 },
    });
    const intent = standIn.paymentIntents.get(checkout.payment.processor_intent_id);
    expect(intent).toMatchObject({ status: "succeeded", amount: 2500, currency: "eur", setup_future_usage: null });
    expect(problems).toEqual([]);
    await context.close();
  });

  it("passes the charged amount (gift plus covered fee) and setupFutureUsage off_session for a monthly gift", async () => {
    const { context, page, problems } = await openPage();
    await page.getByLabel("Test payment method").waitFor();
    await page.getByRole("radio", { name: "€10" }).check();
    await page.getByRole("checkbox", { name: "Add €0.59 to cover processing fees" }).check();
    await page.getByRole("radio", { name: "Monthly" }).check();
    await page.getByRole("radio", { name: "€10" }).check();
    await expect(page.getByRole("button", { name: /^Donate/ }).textContent()).resolves.toBe("Donate €10.59 monthly");
    const updates = callsNamed(await stripeJsCalls(page), "update").map((call) => call.options);
    expect(updates).toEqual([
      { amount: 1000, setupFutureUsage: null },
      { amount: 1059, setupFutureUsage: null },
      { amount: 1059, setupFutureUsage: "off_session" },
    ]);
    await fillDonor(page, "card_ok");
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    await page.locator("#success").waitFor({ state: "visible" });
    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({
      state: "CLOSED",
      frequency: 12,
      donation: { state: "active", frequency: 12, amount: 10, covered_fee: 0.59 },
      payment: { state: "PAID", amount: 10.59 },
    });
    const intent = standIn.paymentIntents.get(checkout.payment.processor_intent_id);
    expect(intent).toMatchObject({ status: "succeeded", amount: 1059, setup_future_usage: "off_session" });
    expect(intent?.customer).toMatch(/^cus_/);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows a decline under the payment form, keeps the checkout open, and succeeds on retry", async () => {
    const { context, page, problems } = await openPage();
    await fillDonor(page, "card_declined");
    const declined = await submit(page);
    expect(declined.status).toBe(402);
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain("declined");
    await expect(page.locator("#e-stripe").textContent()).resolves.toContain("Try another card or payment method.");
    expect(await page.locator("#success").isVisible()).toBe(false);
    const checkoutId = Number(/\/checkouts\/(\d+)\/complete$/.exec(declined.request.url())?.[1]);
    await expect(checkoutOf(checkoutId)).resolves.toMatchObject({ state: "OPEN" });

    await chooseMethod(page, "card_ok");
    const retried = await submit(page);
    expect(retried.status).toBe(200);
    expect(retried.body.checkout_id).toBe(checkoutId);
    expect(retried.request.headers()["idempotency-key"]).not.toBe(declined.request.headers()["idempotency-key"]);
    // A confirmation token is used once: the retry sends a new one.
    expect(retried.request.postDataJSON().confirmation_token).not.toBe(
      declined.request.postDataJSON().confirmation_token,
    );
    await page.locator("#success").waitFor({ state: "visible" });
    expect(await page.locator("#form-error").isVisible()).toBe(false);
    await expect(checkoutOf(checkoutId)).resolves.toMatchObject({ state: "CLOSED", payment: { state: "PAID" } });
    // The console shows the 402 of the declined completion; nothing else.
    expect(problems.filter((problem) => !/status of 402/.test(problem))).toEqual([]);
    await context.close();
  });

  it("completes 3-D Secure in the page: handleNextAction, then the same body under the same key", async () => {
    const { context, page, problems, completions } = await openPage();
    await fillDonor(page, "three_d_secure");
    const challenge = page.frameLocator('iframe[title="3-D Secure authentication"]');
    const { status, body } = await submit(page, {
      whileWaiting: () => challenge.getByRole("button", { name: "Complete authentication" }).click(),
    });
    expect(status).toBe(200);
    await page.locator("#success").waitFor({ state: "visible" });
    expect(completions).toHaveLength(2);
    const [first, second] = completions as [Request, Request];
    expect(second.headers()["idempotency-key"]).toBe(first.headers()["idempotency-key"]);
    expect(second.postData()).toBe(first.postData());
    const firstAnswer = await (await first.response())?.json();
    expect(firstAnswer).toMatchObject({ result: "requires_action", checkout_id: body.checkout_id });
    const calls = await stripeJsCalls(page);
    expect(callsNamed(calls, "handleNextAction")).toEqual([
      { call: "handleNextAction", clientSecret: firstAnswer.client_secret },
    ]);
    expect(await page.locator('iframe[title="3-D Secure authentication"]').count()).toBe(0);
    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({ state: "CLOSED", payment: { state: "PAID" } });
    expect(standIn.paymentIntents.get(checkout.payment.processor_intent_id)?.status).toBe("succeeded");
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows a failed 3-D Secure challenge as a decline and lets the donor pay with another card", async () => {
    const { context, page, problems, completions } = await openPage();
    await fillDonor(page, "three_d_secure");
    const challenge = page.frameLocator('iframe[title="3-D Secure authentication"]');
    const failed = await submit(page, {
      whileWaiting: () => challenge.getByRole("button", { name: "Fail authentication" }).click(),
    });
    expect(failed.status).toBe(402);
    expect(completions).toHaveLength(2);
    expect(completions[1]?.headers()["idempotency-key"]).toBe(completions[0]?.headers()["idempotency-key"]);
    await expect(page.locator("#e-stripe").textContent()).resolves.toContain("Try another card or payment method.");
    expect(await page.locator("#success").isVisible()).toBe(false);

    await chooseMethod(page, "card_ok");
    const retried = await submit(page);
    expect(retried.status).toBe(200);
    expect(retried.request.headers()["idempotency-key"]).not.toBe(failed.request.headers()["idempotency-key"]);
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(checkoutOf(retried.body.checkout_id)).resolves.toMatchObject({ payment: { state: "PAID" } });
    expect(problems.filter((problem) => !/status of 402/.test(problem))).toEqual([]);
    await context.close();
  });

  it("after a lost answer, pressing Donate again sends the same token under the same key: one charge", async () => {
    const { context, page, problems } = await openPage();
    const requestsBefore = standIn.requests.length;
    let dropped = 0;
    // The request reaches the server and is charged; the answer never reaches the page.
    await page.route(/\/checkouts\/\d+\/complete$/, async (route) => {
      if (dropped++ > 0) return route.fallback();
      await route.fetch();
      return route.abort("connectionreset");
    });
    await fillDonor(page, "card_ok");
    const lost = page.waitForEvent("requestfailed", (request) => /\/complete$/.test(request.url()));
    await page.getByRole("button", { name: /^Donate/ }).click();
    const first = await lost;
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain("you will not be charged twice");

    const again = await submit(page);
    expect(again.status).toBe(200);
    expect(again.request.headers()["idempotency-key"]).toBe(first.headers()["idempotency-key"]);
    expect(again.request.postData()).toBe(first.postData());
    await page.locator("#success").waitFor({ state: "visible" });
    const calls = await stripeJsCalls(page);
    expect(callsNamed(calls, "createConfirmationToken")).toHaveLength(1);
    const checkout = await checkoutOf(again.body.checkout_id);
    expect(checkout).toMatchObject({ state: "CLOSED", payment: { state: "PAID" } });
    // One PaymentIntent create (one Stripe key) for both presses of Donate.
    const creates = standIn.requests
      .slice(requestsBefore)
      .filter((request) => request.method === "POST" && request.path === "/v1/payment_intents");
    expect(new Set(creates.map((request) => request.idempotencyKey)).size).toBe(1);
    expect(standIn.paymentIntents.get(checkout.payment.processor_intent_id)?.status).toBe("succeeded");
    expect(problems.filter((problem) => !/ERR_CONNECTION_RESET/.test(problem))).toEqual([]);
    await context.close();
  });

  it("shows a SEPA Direct Debit as processing, with the mandate text shown by the element", async () => {
    const { context, page, problems } = await openPage();
    await fillDonor(page, "sepa");
    expect(await page.locator("#stripe-stand-in-mandate").isVisible()).toBe(true);
    const { status, body } = await submit(page);
    expect(status).toBe(200);
    expect(body.result).toBe("pending");
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(page.locator("#success-title").textContent()).resolves.toBe("Almost done, Ada!");
    await expect(page.locator("#success-summary").textContent()).resolves.toContain(
      "is processing: the bank debit takes a few business days. Your receipt follows once it clears.",
    );
    expect(await page.locator("#transfer").isVisible()).toBe(false);
    expect(await page.locator("#transfer-contact").isVisible()).toBe(false);
    const checkout = await checkoutOf(body.checkout_id);
    expect(checkout).toMatchObject({ payment: { state: "PENDING" } });
    expect(standIn.paymentIntents.get(checkout.payment.processor_intent_id)?.status).toBe("processing");
    expect(problems).toEqual([]);
    await context.close();
  });
});
