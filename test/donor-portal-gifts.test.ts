import { randomBytes } from "node:crypto";
import { AxeBuilder } from "@axe-core/playwright";
import { and, asc, eq } from "drizzle-orm";
import type { Browser as Chromium, Page as ChromiumPage } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { donations, donorSessions, jobs, outboxMessages, paymentMethods } from "../src/db/schema.js";
import { hashSecret } from "../src/identity/secrets.js";
import { queueRenewal } from "../src/jobs/jobs.repo.js";
import { DONOR_COOKIE } from "../src/modules/donor-portal/donor-session.js";
import { createUser } from "../src/modules/users/users.service.js";
import { loadProcessorRegistry } from "../src/payments/processors/index.js";
import { Browser, type Page } from "./helpers/browser.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  connectFakeStripeAccount,
  type FakeStripeAccount,
  fakeCampaign,
  fakeDonation,
  fakePaymentMethod,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";
import { serveStripeJs } from "./helpers/stripe-js-stand-in.js";
import { type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

/**
 * The donor portal's recurring-gift pages over the real server and database: a donor manages only
 * their own gifts, every change goes through the admin's services (visible through REST), and a new
 * payment method is a sandbox card or a Stripe SetupIntent confirmed at the Stripe stand-in.
 */

const text = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, "")
    .replace(/<script[^>]*>[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

describe("donor portal: recurring gifts", () => {
  let server: TestServer;
  let standIn: StripeStandIn;
  let smtp: TestSmtpServer;
  let tenant: Tenant;
  let other: Tenant;
  let stripeTenant: Tenant;
  let stripeAccount: FakeStripeAccount;

  const db = () => server.database.db;

  beforeAll(async () => {
    [standIn, smtp] = await Promise.all([startStripeStandIn(), startSmtpServer()]);
    server = await startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}`, smtpUrl: smtp.url });
    [tenant, other, stripeTenant] = await Promise.all([fakeTenant(db()), fakeTenant(db()), fakeTenant(db())]);
    const processors = loadProcessorRegistry(db(), server.config);
    stripeAccount = await connectFakeStripeAccount(db(), stripeTenant.organizationId, processors.secrets);
  });
  afterAll(async () => {
    await server?.close();
    await standIn?.close();
    await smtp?.close();
  });

  /** The mails delivered to this address (any case), after delivering the organization's outbox now. */
  async function mailsTo(organizationId: number, address: string) {
    await flushOutbox(server, organizationId);
    return smtp.messages.filter((mail) =>
      (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.text.toLowerCase() === address.toLowerCase()),
    );
  }

  /** A browser signed in to the organization's portal as this email (a live donor session). */
  async function signedIn(target: Pick<Tenant, "slug" | "organizationId">, email: string) {
    const token = randomBytes(24).toString("base64url");
    await db()
      .insert(donorSessions)
      .values({
        organizationId: target.organizationId,
        tokenHash: hashSecret(token),
        email: email.toLowerCase(),
        csrfToken: randomBytes(16).toString("hex"),
        expiresDate: new Date(Date.now() + 3600_000),
      });
    const browser = new Browser(server.url);
    browser.cookies.set(DONOR_COOKIE, token);
    return browser;
  }

  /** An active monthly gift with a sandbox card, its first renewal queued a month ahead. */
  async function monthlyGift(
    target: Pick<Tenant, "organizationId">,
    options: { email?: string; state?: string; processor?: string; reference?: string; label?: string } = {},
  ) {
    const campaign = await fakeCampaign(db(), target.organizationId, {
      title: `Wells ${unique(4)}`,
      hasSubscription: true,
      allowCustomSubscriptionAmount: true,
      minSubscriptionAmount: 5,
      maxSubscriptionAmount: 500,
    });
    const email = options.email ?? `Donor.${unique(6)}@Example.test`;
    const supporter = await fakeSupporter(db(), target.organizationId, { email, eraseDate: null });
    const method = await fakePaymentMethod(db(), target.organizationId, {
      supporterId: supporter.id,
      processor: options.processor ?? "sandbox",
      label: options.label ?? "Visa •••• 4242",
      processorReference: options.reference ?? `sbx_pm_ok_${unique(16)}`,
    });
    const completed = new Date(Date.now() - 86_400_000);
    const next = new Date(completed.getTime() + 30 * 86_400_000);
    const donation = await fakeDonation(db(), target.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: options.state ?? "active",
      amount: 15,
      frequency: 12,
      completedDate: completed,
      nextChargeDate: next,
      paymentMethodId: method.id,
    });
    await queueRenewal(db(), {
      organizationId: target.organizationId,
      donationId: donation.id,
      cycle: 1,
      runDate: next,
    });
    return { campaign, supporter, method, donation, email };
  }

  const csrfOf = (page: Page) => /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] as string;
  const giftPath = (slug: string, id: number, rest = "") => `/donor/${slug}/gifts/${id}${rest ? `/${rest}` : ""}`;

  function post(browser: Browser, path: string, fields: Record<string, string>) {
    return browser.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }

  async function rest(target: Tenant, id: number) {
    const response = await server.get(`/api/v1/donations/${id}`, target.token);
    expect(response.status).toBe(200);
    return response.body;
  }

  async function outboxOf(organizationId: number, donationId: number) {
    const rows = await db()
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, organizationId), eq(outboxMessages.donationId, donationId)))
      .orderBy(asc(outboxMessages.id));
    return rows.map((row) => ({ kind: row.kind, to: row.toAddress, data: row.data }));
  }

  async function donationRow(organizationId: number, id: number) {
    const [row] = await db()
      .select()
      .from(donations)
      .where(and(eq(donations.organizationId, organizationId), eq(donations.id, id)));
    return row;
  }

  describe("who sees which gift", () => {
    it("shows the donor's own gift (email in any case) with its forms", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const page = await browser.get(giftPath(tenant.slug, donation.id));
      expect(page.status).toBe(200);
      const shown = text(page.html);
      expect(shown).toContain("€15.00 a month · Monthly · Active");
      expect(shown).toContain("Paid with Visa •••• 4242");
      for (const action of ["amount", "frequency", "pause", "payment-method", "cancel"]) {
        expect(page.html).toContain(`/donor/${tenant.slug}/gifts/${donation.id}/${action}`);
      }
      expect(page.headers.get("cache-control")).toBe("no-store");
    });

    it("answers 404 for another donor's gift, another organization's gift and a malformed id", async () => {
      const mine = await monthlyGift(tenant);
      const someoneElse = await monthlyGift(tenant);
      const foreign = await monthlyGift(other, { email: mine.email });
      const browser = await signedIn(tenant, mine.email);
      for (const path of [
        giftPath(tenant.slug, someoneElse.donation.id),
        giftPath(tenant.slug, foreign.donation.id),
        giftPath(tenant.slug, someoneElse.donation.id, "payment-method"),
        giftPath(tenant.slug, foreign.donation.id, "cancel"),
        `/donor/${tenant.slug}/gifts/abc`,
        `/donor/${tenant.slug}/gifts/0`,
      ]) {
        const page = await browser.get(path);
        expect(page.status, path).toBe(404);
        expect(text(page.html), path).toContain("There is no such gift under your email address.");
      }
      const cancel = await post(browser, giftPath(tenant.slug, someoneElse.donation.id, "cancel"), {
        csrf: csrfOf(await browser.get(giftPath(tenant.slug, mine.donation.id))),
      });
      expect(cancel.status).toBe(404);
      expect((await rest(tenant, someoneElse.donation.id)).state).toBe("active");
      // The session of organization A is no session at organization B's portal: sign in there first
      // (and come back to the gift asked for).
      const elsewhere = await browser.get(giftPath(other.slug, foreign.donation.id));
      expect(elsewhere.status).toBe(303);
      expect(elsewhere.location).toBe(
        `/donor/${other.slug}/?next=${encodeURIComponent(`gifts/${foreign.donation.id}`)}`,
      );
    });

    it("refuses a form without the session's CSRF token", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const page = await post(browser, giftPath(tenant.slug, donation.id, "amount"), { amount: "20", csrf: "nope" });
      expect(page.status).toBe(403);
      expect(text(page.html)).toContain("This form expired or was not sent from this site.");
      expect((await rest(tenant, donation.id)).amount).toBe(15);
    });
  });

  describe("changes", () => {
    it("changes the amount, or shows the campaign's rule inline", async () => {
      const { donation, email, supporter } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const csrf = csrfOf(await browser.get(giftPath(tenant.slug, donation.id)));
      const low = await post(browser, giftPath(tenant.slug, donation.id, "amount"), { amount: "2", csrf });
      expect(low.status).toBe(422);
      expect(low.html).toContain('<a href="#field-amount">The smallest recurring gift is €5.00</a>');
      expect(low.html).toMatch(/id="field-amount" name="amount" value="2"[^>]*aria-invalid="true"/);
      const words = await post(browser, giftPath(tenant.slug, donation.id, "amount"), { amount: "ten", csrf });
      expect(words.status).toBe(422);
      expect(text(words.html)).toContain("Enter an amount such as 15 or 12.50");
      expect(await outboxOf(tenant.organizationId, donation.id)).toEqual([]);

      const changed = await post(browser, giftPath(tenant.slug, donation.id, "amount"), { amount: "25,50", csrf });
      expect(changed.status).toBe(303);
      expect(changed.location).toBe(`${giftPath(tenant.slug, donation.id)}?done=amount`);
      expect((await rest(tenant, donation.id)).amount).toBe(25.5);
      const after = await browser.get(changed.location as string);
      expect(text(after.html)).toContain("The amount was changed. We sent you a confirmation by email.");
      expect(await outboxOf(tenant.organizationId, donation.id)).toMatchObject([
        { kind: "donor_change", to: supporter.email, data: { change: "amount", before: 15, after: 25.5 } },
      ]);
      const [mail] = await mailsTo(tenant.organizationId, email);
      expect(mail?.subject).toMatch(/^The amount of your gift to Org \w+ was changed$/);
      expect(mail?.text).toContain("€25.50");
      const giftLink = linksOf(mail?.html).find((link) => link.includes(`/gifts/${donation.id}`));
      expect(giftLink).toBe(`${server.url}${giftPath(tenant.slug, donation.id)}`);
      expect((await browser.get(new URL(giftLink as string).pathname)).status).toBe(200);
    });

    it("tells the donor nothing changed when the gift already has the amount or frequency, and sends nothing", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const csrf = csrfOf(await browser.get(giftPath(tenant.slug, donation.id)));
      const before = await rest(tenant, donation.id);
      for (const [form, body] of [
        ["amount", { amount: "15.00", csrf }],
        ["frequency", { frequency: "12", csrf }],
      ] as const) {
        const same = await post(browser, giftPath(tenant.slug, donation.id, form), body);
        expect(same.status).toBe(303);
        expect(same.location).toBe(`${giftPath(tenant.slug, donation.id)}?done=unchanged`);
        const page = text((await browser.get(same.location as string)).html);
        expect(page).toContain("Nothing changed: your gift was already set that way.");
        expect(page).not.toContain("We sent you a confirmation");
      }
      expect(await rest(tenant, donation.id)).toEqual(before);
      expect(await outboxOf(tenant.organizationId, donation.id)).toEqual([]);
    });

    it("switches to yearly, pauses for 2 months and resumes", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const csrf = csrfOf(await browser.get(giftPath(tenant.slug, donation.id)));
      const paused = await post(browser, giftPath(tenant.slug, donation.id, "pause"), { cycles: "2", csrf });
      expect(paused.status).toBe(303);
      const row = await donationRow(tenant.organizationId, donation.id);
      expect(row?.pausedUntil).not.toBeNull();
      const page = await browser.get(giftPath(tenant.slug, donation.id));
      expect(text(page.html)).toContain("Your gift is paused until");
      const resumed = await post(browser, giftPath(tenant.slug, donation.id, "resume"), { csrf });
      expect(resumed.status).toBe(303);
      expect((await donationRow(tenant.organizationId, donation.id))?.pausedUntil).toBeNull();

      const badPause = await post(browser, giftPath(tenant.slug, donation.id, "pause"), { cycles: "4", csrf });
      expect(badPause.status).toBe(400);
      expect(badPause.html).toContain('<a href="#field-cycles">Choose how many payments to skip: 1 to 3</a>');

      const yearly = await post(browser, giftPath(tenant.slug, donation.id, "frequency"), { frequency: "1", csrf });
      expect(yearly.status).toBe(303);
      expect((await rest(tenant, donation.id)).frequency).toBe(1);
      expect((await outboxOf(tenant.organizationId, donation.id)).map((message) => message.data)).toMatchObject([
        { change: "pause", before: null, after: row?.pausedUntil?.toISOString() },
        { change: "pause", before: row?.pausedUntil?.toISOString(), after: null },
        { change: "frequency", before: 12, after: 1 },
      ]);
    });

    it("cancels after a confirmation step, keeping the donor's reason", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const confirm = await browser.get(giftPath(tenant.slug, donation.id, "cancel"));
      expect(confirm.status).toBe(200);
      expect(text(confirm.html)).toContain("Cancel your gift?");
      const csrf = csrfOf(confirm);
      const long = await post(browser, giftPath(tenant.slug, donation.id, "cancel"), {
        reason: "x".repeat(501),
        csrf,
      });
      expect(long.status).toBe(400);
      expect(long.html).toContain('<a href="#field-reason">Write at most 500 characters</a>');
      const done = await post(browser, giftPath(tenant.slug, donation.id, "cancel"), { reason: "Too expensive", csrf });
      expect(done.status).toBe(303);
      expect((await rest(tenant, donation.id)).state).toBe("revoked");
      expect(await donationRow(tenant.organizationId, donation.id)).toMatchObject({
        cancelledBy: "donor",
        cancelReason: "Too expensive",
      });
      expect((await outboxOf(tenant.organizationId, donation.id)).at(-1)).toMatchObject({
        kind: "recurring_cancelled",
        data: { by: "donor", reason: "Too expensive" },
      });
      const mails = await mailsTo(tenant.organizationId, email);
      expect(mails).toHaveLength(1);
      expect(mails[0]?.text).toContain("Too expensive");
      const page = await browser.get(giftPath(tenant.slug, donation.id));
      expect(text(page.html)).toContain("Stopped");
      expect(page.html).not.toContain(`gifts/${donation.id}/cancel`);
      for (const path of [
        giftPath(tenant.slug, donation.id, "cancel"),
        giftPath(tenant.slug, donation.id, "payment-method"),
      ]) {
        const stopped = await browser.get(path);
        expect(stopped.status, path).toBe(409);
        expect(text(stopped.html), path).toContain("This gift has stopped; it can no longer be changed.");
      }
      const twice = await post(browser, giftPath(tenant.slug, donation.id, "cancel"), { csrf });
      expect(twice.status).toBe(409);
      expect(text(twice.html)).toContain("This gift has stopped; it can no longer be changed.");
    });
  });

  describe("in chromium", () => {
    async function expectAccessible(page: ChromiumPage) {
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
    }

    async function tabTo(page: ChromiumPage, selector: string) {
      for (let press = 0; press < 60; press++) {
        await page.keyboard.press("Tab");
        if (await page.locator(selector).evaluate((element) => element === document.activeElement)) return;
      }
      throw new Error(`${selector} never took the focus`);
    }

    it("the gift pages are axe-clean on a phone and work with the keyboard only: amount, then cancel", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const signed = await signedIn(tenant, email);
      let chromium: Chromium | undefined;
      try {
        chromium = await launchChromium();
        const context = await chromium.newContext({ viewport: { width: 375, height: 740 }, isMobile: true });
        const url = new URL(server.url);
        await context.addCookies([
          {
            name: DONOR_COOKIE,
            value: signed.cookies.get(DONOR_COOKIE) as string,
            domain: url.hostname,
            path: `/donor/${tenant.slug}/`,
          },
        ]);
        const page = await context.newPage();
        await page.goto(`${server.url}${giftPath(tenant.slug, donation.id)}`);
        await expectAccessible(page);
        // A refused amount: the error summary and the field's error are accessible too.
        await tabTo(page, "#field-amount");
        await page.keyboard.press("ControlOrMeta+a");
        await page.keyboard.type("2");
        await page.keyboard.press("Enter");
        await page.waitForSelector(".error-summary");
        await expectAccessible(page);
        await tabTo(page, "#field-amount");
        await page.keyboard.press("ControlOrMeta+a");
        await page.keyboard.type("30");
        await page.keyboard.press("Enter");
        await page.waitForURL(`**${giftPath(tenant.slug, donation.id)}?done=amount`);
        expect((await rest(tenant, donation.id)).amount).toBe(30);

        await tabTo(page, `a[href$="/gifts/${donation.id}/payment-method"]`);
        await page.keyboard.press("Enter");
        await page.waitForURL(`**/gifts/${donation.id}/payment-method`);
        await expectAccessible(page);
        await page.goBack();

        await tabTo(page, `a[href$="/gifts/${donation.id}/cancel"]`);
        await page.keyboard.press("Enter");
        await page.waitForURL(`**/gifts/${donation.id}/cancel`);
        await expectAccessible(page);
        await tabTo(page, "#field-reason");
        await page.keyboard.type("Changing charity");
        await tabTo(page, 'button[type="submit"]:text("Yes, cancel my gift")');
        await page.keyboard.press("Enter");
        await page.waitForURL(`**${giftPath(tenant.slug, donation.id)}?done=cancel`);
        await expectAccessible(page);
        expect(await donationRow(tenant.organizationId, donation.id)).toMatchObject({
          state: "revoked",
          cancelledBy: "donor",
          cancelReason: "Changing charity",
        });

        // The organization sees who stopped the gift and why on the donation's page in the panel.
        const admin = { email: `admin-${unique(6)}@example.test`, password: "long enough password" };
        await createUser(db(), { ...admin, organization: tenant.slug, role: "admin" });
        const panel = await signInToPanel(chromium, { url: server.url, ...admin, organization: tenant.slug });
        await panel.goto(`${server.url}/admin/o/${tenant.slug}/donations/${donation.id}`);
        const fields = panel.locator("#donation dl");
        await fields.getByText("Changing charity").waitFor();
        expect(await fields.innerText()).toMatch(
          /Cancelled by\s+The donor \(donor portal\)\s+Cancel reason\s+Changing charity/,
        );
      } finally {
        await chromium?.close();
      }
    });
  });

  describe("payment method", () => {
    it("saves a sandbox card and retries a past_due gift at once", async () => {
      const { donation, email } = await monthlyGift(tenant, { state: "past_due" });
      const browser = await signedIn(tenant, email);
      const form = await browser.get(giftPath(tenant.slug, donation.id, "payment-method"));
      expect(form.status).toBe(200);
      expect(text(form.html)).toContain("We will try the last payment again right away.");
      const csrf = csrfOf(form);
      const card = { exp_month: "12", exp_year: "2031", cvc: "123", csrf };
      const wrong = await post(browser, giftPath(tenant.slug, donation.id, "payment-method"), {
        ...card,
        card_number: "4242424242424241",
      });
      expect(wrong.status).toBe(422);
      expect(wrong.html).toContain('<a href="#field-card_number">The card number is not valid</a>');
      const before = Date.now();
      const saved = await post(browser, giftPath(tenant.slug, donation.id, "payment-method"), {
        ...card,
        card_number: "5555 5555 5555 4444",
      });
      expect(saved.status).toBe(303);
      const row = await donationRow(tenant.organizationId, donation.id);
      const [method] = await db()
        .select()
        .from(paymentMethods)
        .where(
          and(
            eq(paymentMethods.organizationId, tenant.organizationId),
            eq(paymentMethods.id, row?.paymentMethodId as number),
          ),
        );
      expect(method).toMatchObject({ processor: "sandbox", label: "Mastercard •••• 4444", expiryYear: 2031 });
      const [job] = await db()
        .select()
        .from(jobs)
        .where(and(eq(jobs.kind, "renewal"), eq(jobs.subjectId, donation.id), eq(jobs.state, "queued")));
      expect(job?.runDate.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(job?.runDate.getTime()).toBeLessThanOrEqual(Date.now());
      expect((await outboxOf(tenant.organizationId, donation.id)).at(-1)).toMatchObject({
        kind: "donor_change",
        data: { change: "payment_method", before: "Visa •••• 4242", after: "Mastercard •••• 4444" },
      });
    });

    it("confirms a new card whose label is the old one's (the same card, a new expiry)", async () => {
      const { donation, email } = await monthlyGift(tenant);
      const browser = await signedIn(tenant, email);
      const csrf = csrfOf(await browser.get(giftPath(tenant.slug, donation.id, "payment-method")));
      const before = await donationRow(tenant.organizationId, donation.id);
      const saved = await post(browser, giftPath(tenant.slug, donation.id, "payment-method"), {
        card_number: "4242 4242 4242 4242",
        exp_month: "11",
        exp_year: "2033",
        cvc: "123",
        csrf,
      });
      expect(saved.status).toBe(303);
      const after = await donationRow(tenant.organizationId, donation.id);
      expect(after?.paymentMethodId).not.toBe(before?.paymentMethodId);
      expect(await outboxOf(tenant.organizationId, donation.id)).toMatchObject([
        {
          kind: "donor_change",
          data: { change: "payment_method", before: before?.paymentMethodId, after: after?.paymentMethodId },
        },
      ]);
    });

    /** A Stripe customer at the stand-in with the gift's method saved on it. */
    async function stripeGift() {
      const response = await fetch(`http://127.0.0.1:${standIn.api.port}/v1/customers`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${stripeAccount.secretKey}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: "email=donor%40example.test",
      });
      const customer = ((await response.json()) as { id: string }).id;
      const gift = await monthlyGift(stripeTenant, {
        processor: "stripe",
        reference: `${customer}/pm_card_chargeCustomerFail`,
        label: "Visa •••• 0341",
      });
      return { ...gift, customer };
    }

    /** What Stripe.js's confirmSetup does with the publishable key in the donor's browser. */
    async function confirmAtStandIn(clientSecret: string, paymentMethod = "pm_card_visa") {
      const id = clientSecret.replace(/_secret_.*$/, "");
      const response = await fetch(`http://127.0.0.1:${standIn.api.port}/v1/setup_intents/${id}/confirm`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${stripeAccount.publishableKey}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ client_secret: clientSecret, payment_method: paymentMethod }).toString(),
      });
      return { status: response.status, id };
    }

    const clientSecretOf = (page: Page) =>
      JSON.parse(
        /<script type="application\/json" id="setup-config">([^<]*)<\/script>/.exec(page.html)?.[1] ?? "{}",
      ) as {
        client_secret: string;
        publishable_key: string;
      };

    it("with Stripe: a SetupIntent for the donor's customer, checked with Stripe, becomes the gift's method", async () => {
      const { donation, email, customer } = await stripeGift();
      const browser = await signedIn(stripeTenant, email);
      const page = await browser.get(giftPath(stripeTenant.slug, donation.id, "payment-method"));
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("https://js.stripe.com");
      expect(page.html).toContain('<script src="https://js.stripe.com/v3/" id="stripe-js"');
      const config = clientSecretOf(page);
      expect(config.publishable_key).toBe(stripeAccount.publishableKey);
      const setupId = config.client_secret.replace(/_secret_.*$/, "");
      expect(standIn.setupIntents.get(setupId)).toMatchObject({
        customer,
        usage: "off_session",
        metadata: {
          donata_organization_id: String(stripeTenant.organizationId),
          donata_donation_id: String(donation.id),
        },
      });
      const csrf = csrfOf(page);

      // Not confirmed yet: refused, nothing saved.
      const early = await post(browser, giftPath(stripeTenant.slug, donation.id, "payment-method"), {
        setup_intent: setupId,
        csrf,
      });
      expect(early.status).toBe(422);
      expect(text(early.html)).toContain("The new payment method was not confirmed; try again");

      expect((await confirmAtStandIn(config.client_secret)).status).toBe(200);
      const saved = await post(browser, giftPath(stripeTenant.slug, donation.id, "payment-method"), {
        setup_intent: setupId,
        csrf,
      });
      expect(saved.status).toBe(303);
      const row = await donationRow(stripeTenant.organizationId, donation.id);
      const [method] = await db()
        .select()
        .from(paymentMethods)
        .where(
          and(
            eq(paymentMethods.organizationId, stripeTenant.organizationId),
            eq(paymentMethods.id, row?.paymentMethodId as number),
          ),
        );
      const savedMethod = standIn.setupIntents.get(setupId)?.payment_method as string;
      expect(method).toMatchObject({
        processor: "stripe",
        label: "Visa •••• 4242",
        processorReference: `${customer}/${savedMethod}`,
        expiryMonth: 12,
      });
      // The same SetupIntent sent again saves nothing more.
      const again = await post(browser, giftPath(stripeTenant.slug, donation.id, "payment-method"), {
        setup_intent: setupId,
        csrf,
      });
      expect(again.status).toBe(303);
      expect((await donationRow(stripeTenant.organizationId, donation.id))?.paymentMethodId).toBe(method?.id);
    });

    it("with Stripe: refuses another gift's SetupIntent, and a made-up id", async () => {
      const mine = await stripeGift();
      const theirs = await stripeGift();
      const theirBrowser = await signedIn(stripeTenant, theirs.email);
      const theirPage = await theirBrowser.get(giftPath(stripeTenant.slug, theirs.donation.id, "payment-method"));
      const theirSecret = clientSecretOf(theirPage).client_secret;
      await confirmAtStandIn(theirSecret);
      const browser = await signedIn(stripeTenant, mine.email);
      const csrf = csrfOf(await browser.get(giftPath(stripeTenant.slug, mine.donation.id)));
      const stolen = await post(browser, giftPath(stripeTenant.slug, mine.donation.id, "payment-method"), {
        setup_intent: theirSecret.replace(/_secret_.*$/, ""),
        csrf,
      });
      expect(stolen.status).toBe(422);
      expect(text(stolen.html)).toContain("This payment method was not set up for this gift");
      const madeUp = await post(browser, giftPath(stripeTenant.slug, mine.donation.id, "payment-method"), {
        setup_intent: "seti_doesnotexist",
        csrf,
      });
      expect(madeUp.status).toBe(422);
      expect(text(madeUp.html)).toContain("Stripe does not know this payment method setup");
      expect((await donationRow(stripeTenant.organizationId, mine.donation.id))?.paymentMethodId).toBe(mine.method.id);
    });

    it("with Stripe in chromium: the Payment Element in setup mode saves the new card", async () => {
      const { donation, email, customer } = await stripeGift();
      const browser = await signedIn(stripeTenant, email);
      let chromium: Chromium | undefined;
      try {
        chromium = await launchChromium();
        const context = await chromium.newContext();
        const hosts = await serveStripeJs(context, { standIn, publishableKey: stripeAccount.publishableKey });
        const url = new URL(server.url);
        await context.addCookies([
          {
            name: DONOR_COOKIE,
            value: browser.cookies.get(DONOR_COOKIE) as string,
            domain: url.hostname,
            path: `/donor/${stripeTenant.slug}/`,
          },
        ]);
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("console", (message) => {
          if (message.type() === "error") problems.push(message.text());
        });
        await page.goto(`${server.url}${giftPath(stripeTenant.slug, donation.id, "payment-method")}`);
        await page.locator("#stripe-stand-in-method").selectOption("card_ok");
        await page.getByRole("button", { name: "Save the payment method" }).click();
        await page.waitForURL(`**${giftPath(stripeTenant.slug, donation.id)}?done=payment_method`);
        expect(await page.getByRole("status").textContent()).toContain("Your payment method was updated.");
        expect(problems).toEqual([]);
        expect(hosts.unexpected).toEqual([]);
        const row = await donationRow(stripeTenant.organizationId, donation.id);
        const [method] = await db()
          .select()
          .from(paymentMethods)
          .where(
            and(
              eq(paymentMethods.organizationId, stripeTenant.organizationId),
              eq(paymentMethods.id, row?.paymentMethodId as number),
            ),
          );
        expect(method?.label).toBe("Visa •••• 4242");
        expect(method?.processorReference?.startsWith(`${customer}/pm_`)).toBe(true);
      } finally {
        await chromium?.close();
      }
    });
  });
});
