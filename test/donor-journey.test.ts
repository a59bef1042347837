import { AxeBuilder } from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { ParsedMail } from "mailparser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type campaigns, organizations } from "../src/db/schema.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

/**
 * The whole donor journey, end to end through the real server, a real SMTP server, the real
 * database and chromium: give monthly on the hosted donation page → the receipt and the welcome
 * email arrive → the receipt's link signs the donor in to the portal → change the amount, update
 * the card, cancel → the confirmation emails arrive, every link of every email works, and the
 * admin's API sees each change.
 */

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

describe("donor journey: give monthly, then manage the gift from the emails", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let browser: Browser;
  let tenant: Tenant;
  let campaign: typeof campaigns.$inferSelect;

  beforeAll(async () => {
    // Default limits (a real donor is never blocked by them); only the proof of work is made light.
    const cardTesting = { ...loadConfig({}).cardTesting, challengeCost: 10, challengeMaxNumber: 200 };
    smtp = await startSmtpServer();
    [server, browser] = await Promise.all([startTestServer({ cardTesting, smtpUrl: smtp.url }), launchChromium()]);
    tenant = await fakeTenant(server.database.db);
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
      shownFields: ["first_name", "last_name", "email"],
      requiredFields: ["first_name", "last_name", "email"],
      privacyNote: "We use your data only to process your gift.",
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  /** The admin's (an app's) view of the donation through REST. */
  async function apiDonation(id: number) {
    const response = await server.get(`/api/v1/donations/${id}`, tenant.token);
    expect(response.status).toBe(200);
    return response.body;
  }

  /** What REST leaves out of a donation (the card, who cancelled and why), through GraphQL with the app's token. */
  async function graphqlDonation(id: number) {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/graphql-response+json",
        authorization: `Bearer ${tenant.token}`,
      },
      body: JSON.stringify({
        query:
          "query($id: ID!) { donation(id: $id) { state amount payment_method { label } cancelled_by cancel_reason } }",
        variables: { id },
      }),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body.data.donation;
  }

  async function expectAccessible(page: Page) {
    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
  }

  /** Presses Tab until the element is focused: the portal is used with the keyboard. */
  async function tabTo(page: Page, selector: string) {
    for (let press = 0; press < 80; press++) {
      if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector)) return;
      await page.keyboard.press("Tab");
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  /** The one mail of this kind to the donor (the X-Donata-Message header names the kind). */
  function mailOf(email: string, kind: string, index = 0): ParsedMail {
    const mails = smtp.to(email).filter((mail) => mail.headers.get("x-donata-message") === kind);
    const mail = mails[index];
    if (!mail) throw new Error(`no ${kind} mail #${index} to ${email}: ${smtp.to(email).map((m) => m.subject)}`);
    return mail;
  }

  it("gives monthly, follows the receipt's link, changes the amount and the card, cancels: all confirmed by email", async () => {
    const email = `journey-${unique(8)}@example.test`;
    const [organization] = await server.database.db
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    const organizationName = organization?.name as string;
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();

    // 1. Give €10 a month on the hosted donation page with the sandbox test card.
    expect((await page.goto(`${server.url}/donate/${tenant.slug}/${campaign.slug}`))?.status()).toBe(200);
    await page.getByRole("radio", { name: "Monthly" }).check();
    await page.getByRole("radio", { name: "€10" }).check();
    await page.getByLabel("First name").fill("Ada");
    await page.getByLabel("Last name").fill("Lovelace");
    await page.getByRole("textbox", { name: "Email" }).fill(email);
    await page.getByLabel("I have read the privacy notice").check();
    await page.getByLabel("Card number").fill("4242 4242 4242 4242");
    await page.getByLabel("Expiry month").fill("12");
    await page.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
    await page.getByLabel("Security code").fill("123");
    const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
    await page.getByRole("button", { name: "Donate €10 monthly" }).click();
    const completed = await completion;
    expect(completed.status()).toBe(200);
    const { checkout_id: checkoutId } = await completed.json();
    await page.locator("#success").waitFor({ state: "visible" });
    const checkout = (await server.get(`/api/v1/checkouts/${checkoutId}`, tenant.token)).body;
    const donationId = checkout.donation.id as number;
    expect(await apiDonation(donationId)).toMatchObject({ state: "active", frequency: 12, amount: 10 });
    expect(await graphqlDonation(donationId)).toMatchObject({ payment_method: { label: "Visa •••• 4242" } });

    // 2. The job runner delivers the outbox: the receipt and the welcome email reach the SMTP server.
    await flushOutbox(server, tenant.organizationId);
    const receipt = mailOf(email, "receipt");
    const welcome = mailOf(email, "recurring_welcome");
    expect(receipt.subject).toBe(`Your receipt for your gift to ${organizationName}`);
    expect(welcome.subject).toBe(`Thank you for your regular gift to ${organizationName}`);
    expect(receipt.text).toContain("€10.00");
    const receiptLinks = linksOf(receipt.html);
    const portalLink = receiptLinks.find((link) => link.includes(`/donor/${tenant.slug}/enter?token=`));
    // The payment's issued receipt (numbered, docs/receipts.md) and its PDF.
    const receiptLink = receiptLinks.find((link) => /\/documents\/tax-receipts\/\d+\/\d+\/[\w-]+$/.test(link));
    expect(portalLink).toBeDefined();
    expect(receiptLink).toBeDefined();
    expect(receiptLinks).toContain(`${receiptLink}/pdf`);

    // 3. The receipt's portal link signs the donor in; the portal home lists the gift (phone size, axe-clean).
    await page.goto(portalLink as string);
    expect(new URL(page.url()).pathname).toBe(`/donor/${tenant.slug}/`);
    await page.waitForSelector("h1:has-text('Hello Ada')");
    const gifts = page.locator("section[aria-labelledby='gifts-title']");
    expect(await gifts.innerText()).toContain("€10.00");
    expect(await gifts.innerText()).toContain(checkout.donation.code);
    await expectAccessible(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // 4. Open the gift's page from the list, with the keyboard.
    const giftPath = `/donor/${tenant.slug}/gifts/${donationId}`;
    await tabTo(page, `a[href="${giftPath}"]`);
    await page.keyboard.press("Enter");
    await page.waitForURL(`**${giftPath}`);
    expect(await page.locator("h1").innerText()).toBe("Clean water wells");
    await expectAccessible(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // 5. Change the amount to €25 a month through the form, by keyboard; the API sees it.
    await tabTo(page, "#field-amount");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("25");
    await page.keyboard.press("Enter");
    await page.waitForURL(`**${giftPath}?done=amount`);
    expect(await page.locator(".notice").isVisible()).toBe(true);
    expect(await page.locator(".amount").innerText()).toBe("€25.00 a month");
    expect(await apiDonation(donationId)).toMatchObject({ state: "active", frequency: 12, amount: 25 });

    // 6. Update the card with the sandbox card form; the next payments use the new card.
    await tabTo(page, `a[href="${giftPath}/payment-method"]`);
    await page.keyboard.press("Enter");
    await page.waitForURL(`**${giftPath}/payment-method`);
    await expectAccessible(page);
    await page.getByLabel("Card number").fill("5555 5555 5555 4444");
    await page.getByLabel("Expiry month (MM)").fill("11");
    await page.getByLabel("Expiry year (YYYY)").fill(String(new Date().getUTCFullYear() + 3));
    await page.getByLabel("Security code").fill("321");
    await page.getByLabel("Security code").press("Enter");
    await page.waitForURL(`**${giftPath}?done=payment_method`);
    expect(await page.getByText("Paid with Mastercard •••• 4444").isVisible()).toBe(true);
    expect(await apiDonation(donationId)).toMatchObject({ state: "active", amount: 25 });
    expect(await graphqlDonation(donationId)).toMatchObject({ payment_method: { label: "Mastercard •••• 4444" } });

    // 7. Cancel, giving a reason; the API sees the gift revoked.
    await tabTo(page, `a[href="${giftPath}/cancel"]`);
    await page.keyboard.press("Enter");
    await page.waitForURL(`**${giftPath}/cancel`);
    await expectAccessible(page);
    await tabTo(page, "#field-reason");
    await page.keyboard.type("Moving abroad");
    await page.getByRole("button", { name: "Yes, cancel my gift" }).press("Enter");
    await page.waitForURL(`**${giftPath}?done=cancel`);
    expect(await page.locator(".notice").innerText()).toBe(
      "Your gift is cancelled. We sent you a confirmation by email.",
    );
    expect(await page.locator(".badge").innerText()).toBe("Stopped");
    expect(await apiDonation(donationId)).toMatchObject({ state: "revoked", amount: 25 });
    expect(await graphqlDonation(donationId)).toEqual({
      state: "revoked",
      amount: 25,
      payment_method: { label: "Mastercard •••• 4444" },
      cancelled_by: "donor",
      cancel_reason: "Moving abroad",
    });
    await context.close();

    // 8. The confirmations arrive: amount, payment method, cancellation, with the right subjects.
    await flushOutbox(server, tenant.organizationId);
    const amountMail = mailOf(email, "donor_change", 0);
    const methodMail = mailOf(email, "donor_change", 1);
    const cancelled = mailOf(email, "recurring_cancelled");
    expect(amountMail.subject).toBe(`The amount of your gift to ${organizationName} was changed`);
    expect(amountMail.text).toContain("€25.00");
    expect(methodMail.subject).toBe(`Your payment method for ${organizationName} was updated`);
    expect(cancelled.subject).toBe(`Your regular gift to ${organizationName} has stopped`);
    expect(cancelled.text).toContain("Reason given: Moving abroad");
    expect(smtp.to(email).map((mail) => mail.headers.get("x-donata-message"))).toEqual([
      "receipt",
      "recurring_welcome",
      "donor_change",
      "donor_change",
      "recurring_cancelled",
    ]);

    // 9. Every link of every email of the journey works, for a client without a session: the receipt
    // shows this donation, the receipt's sign-in link signs in (303 to the portal), gift links send
    // to the sign-in page and back to the gift (303).
    const signInOf = (path: string) => `/donor/${tenant.slug}/?next=${encodeURIComponent(path)}`;
    for (const mail of smtp.to(email)) {
      const links = linksOf(mail.html);
      expect(links.length, mail.subject).toBeGreaterThan(0);
      // Both parts, automatic mail, and the plain-text part carries the same links as the HTML one.
      expect(mail.headers.get("auto-submitted"), mail.subject).toBe("auto-generated");
      const textLinks = [...new Set(mail.text?.match(/https?:\/\/\S+/g) ?? [])];
      expect(textLinks.length, mail.subject).toBeGreaterThan(0);
      expect(links, mail.subject).toEqual(expect.arrayContaining(textLinks));
      for (const link of links) {
        expect(link.startsWith(server.url), link).toBe(true);
        const response = await fetch(link, { redirect: "manual" });
        const { pathname } = new URL(link);
        if (/^\/documents\/tax-receipts\/\d+\/\d+\/[\w-]+$/.test(pathname)) {
          expect(response.status, link).toBe(200);
          const body = await response.text();
          expect(body).toContain(checkout.donation.code);
          expect(body).toContain("€10.00");
        } else if (pathname === `/donor/${tenant.slug}/enter`) {
          expect(response.status, link).toBe(303);
          expect(response.headers.get("location"), link).toBe(`/donor/${tenant.slug}/`);
          expect(response.headers.get("set-cookie"), link).toMatch(/^donata_donor=/);
        } else if (pathname === giftPath) {
          expect(response.status, link).toBe(303);
          expect(response.headers.get("location"), link).toBe(signInOf(`gifts/${donationId}`));
          const signIn = await fetch(`${server.url}${response.headers.get("location")}`);
          expect(signIn.status, link).toBe(200);
        } else {
          expect(response.status, link).toBe(200);
        }
      }
    }
  });
});
