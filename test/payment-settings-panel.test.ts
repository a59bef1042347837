import { and, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processorAccounts } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

const PASSWORD = "a long enough password";

/** Settings → Payments in the admin panel, in chromium, against the real server and the Stripe stand-in. */
describe("admin panel: Settings → Payments", () => {
  let standIn: StripeStandIn;
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let memberEmail: string;

  const signIn = (email: string): Promise<Page> =>
    signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: tenant.slug });

  const stripeRow = async () =>
    (
      await server.database.db
        .select()
        .from(processorAccounts)
        .where(
          and(eq(processorAccounts.organizationId, tenant.organizationId), eq(processorAccounts.processor, "stripe")),
        )
    )[0];

  beforeAll(async () => {
    standIn = await startStripeStandIn();
    server = await startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}` });
    tenant = await fakeTenant(server.database.db);
    owner = `owner-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(server.database.db, {
      email: owner,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    await createUser(server.database.db, {
      email: memberEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "member",
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await standIn?.close();
  });

  it("saves Stripe test keys (a refused key shown on its field), then shows the test-mode banner on every page", async () => {
    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    const processor = page.locator('[data-testid="payment-processor"]');
    await expect(processor.textContent()).resolves.toContain("Sandbox");
    await expect(page.locator('[data-testid="webhook-url"]').textContent()).resolves.toBe(
      `${server.config.baseUrl}/webhooks/stripe/${tenant.slug}`,
    );
    await expect(page.locator('[data-testid="test-mode-banner"]').count()).resolves.toBe(0);

    const secretKey = `sk_test_${unique(24)}`;
    const webhookSecret = `whsec_${unique(32)}`;
    await page.getByLabel("Secret key").fill(`sk_test_unknown${unique(8)}`);
    await page.getByLabel("Publishable key").fill(`pk_test_${unique(24)}`);
    await page.getByLabel("Webhook signing secret").fill(webhookSecret);
    await page.click('[data-testid="save-stripe-keys"]');
    await expect(page.locator('[data-field-error="secret_key"]').textContent()).resolves.toBe(
      "Stripe does not know this key",
    );
    await expect(page.getByLabel("Secret key").getAttribute("aria-invalid")).resolves.toBe("true");
    expect(await stripeRow()).toBeUndefined();

    await page.getByLabel("Secret key").fill(secretKey);
    await page.click('[data-testid="save-stripe-keys"]');
    await page.getByText("Stripe connected in test mode. Donors now pay with Stripe.").waitFor();
    await expect(page.locator('[data-testid="payment-mode"]').textContent()).resolves.toBe("Test mode");
    await expect(page.locator('[data-testid="secret-key-last4"]').textContent()).resolves.toBe(
      `…${secretKey.slice(-4)}`,
    );
    const banner = page.locator('[data-testid="test-mode-banner"]');
    await expect(banner.textContent()).resolves.toContain("Test mode.");
    await expect(page.locator('[data-testid="table-payment-history"]').textContent()).resolves.toContain(
      `${owner}Connected Stripe (test mode, secret key ending ${secretKey.slice(-4)}`,
    );
    // The form is emptied: the page holds no secret once saved.
    await expect(page.getByLabel("Secret key").inputValue()).resolves.toBe("");
    const html = await page.content();
    expect(html).not.toContain(secretKey);
    expect(html).not.toContain(webhookSecret);
    const row = await stripeRow();
    expect(row).toMatchObject({ mode: "test", secretKeyLast4: secretKey.slice(-4) });

    // Every page of the organization carries the banner, for every member.
    await page.click('nav[aria-label="Main"] >> text=Donations');
    await page.waitForURL(/\/donations/);
    await expect(page.locator('[data-testid="test-mode-banner"]').isVisible()).resolves.toBe(true);
    const memberPage = await signIn(memberEmail);
    await memberPage.locator('[data-testid="test-mode-banner"]').waitFor();
    await memberPage.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await memberPage.getByText("Only owners and admins can change the payment processor.").waitFor();
    await expect(memberPage.getByLabel("Secret key").count()).resolves.toBe(0);
    await memberPage.context().close();

    // Disconnecting goes back to the sandbox; the banner goes away.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.click('[data-testid="disconnect-stripe"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await page.getByText("Stripe disconnected. Donors pay with the sandbox again (no real money).").waitFor();
    await page.locator('[data-testid="payment-processor"]', { hasText: "Sandbox" }).waitFor();
    await page.locator('[data-testid="test-mode-banner"]').waitFor({ state: "detached" });
    expect(await stripeRow()).toBeUndefined();

    // Test mode (the sandbox, explicitly): the banner on every page until it is switched off.
    await page.click('[data-testid="toggle-test-mode"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await page.getByText("Test mode is on: no real money moves, and every page shows a test banner.").waitFor();
    await page.locator('[data-testid="payment-processor"]', { hasText: "Test mode (sandbox)" }).waitFor();
    await page.locator('[data-testid="test-mode-banner"]', { hasText: "Test mode — no real money moves." }).waitFor();
    await page.click('nav[aria-label="Main"] >> text=Donations');
    await page.waitForURL(/\/donations/);
    await page.locator('[data-testid="test-mode-banner"]', { hasText: "Test mode — no real money moves." }).waitFor();
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.click('[data-testid="toggle-test-mode"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await page.getByText("Test mode is off.").waitFor();
    await page.locator('[data-testid="test-mode-banner"]').waitFor({ state: "detached" });
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
