import { existsSync } from "node:fs";
import { createServer } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../examples/app/example-app.js";
import { ADMIN_DIST } from "../src/admin/admin-pages.routes.js";
import { webhookSenderDeps } from "../src/jobs/webhook.job.js";
import { createApplication, installApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { deliverWebhooks } from "../src/modules/webhooks/webhook-delivery.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCheckout, fakeCompletedCheckout, givePrivacyNotice, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";
const ACCESS_TOKEN_TTL = 2;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ids of the checkout rows the example renders, in order. */
const renderedCheckoutIds = (scope: Pick<Page, "locator">) =>
  scope
    .locator("tr[data-checkout-id]")
    .evaluateAll((rows) => rows.map((row) => Number((row as HTMLElement).dataset.checkoutId)));

describe("example application, driven in chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let example: ExampleApp;
  let clientId: string;
  const refreshes: string[] = [];
  const email = `owner-${unique(6)}@example.test`;
  const slugs = { top: `top-${unique(6)}`, framed: `framed-${unique(6)}` };

  /** The checkouts of an organization as the REST API lists them, with the token the example holds. */
  async function apiCheckoutIds(slug: string): Promise<number[]> {
    const tokens = await example.client.tokenStore.get(slug);
    const response = await server.get("/api/v1/checkouts/", tokens?.accessToken);
    expect(response.status).toBe(200);
    return response.body.items.map((checkout: { id: number }) => checkout.id);
  }

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer({ accessTokenTtlSeconds: ACCESS_TOKEN_TTL, webhookAllowPrivateNetworks: true }),
      launchChromium(),
    ]);
    const db = server.database.db;
    for (const slug of [slugs.top, slugs.framed]) {
      const organization = await createOrganization(db, { slug, name: `Org ${slug}` });
      await givePrivacyNotice(db, organization.id);
      for (let index = 0; index < 4; index++) await fakeCompletedCheckout(db, organization.id);
      for (let index = 0; index < 8; index++) await fakeCheckout(db, organization.id);
    }
    await createUser(db, { email, password: PASSWORD, organization: slugs.top, role: "owner" });
    await createUser(db, { email, organization: slugs.framed, role: "owner" });

    const port = await freePort();
    const exampleUrl = `http://127.0.0.1:${port}`;
    const application = await createApplication(db, {
      name: "Example app",
      applicationUrl: `${exampleUrl}/`,
      callbackUrls: [`${exampleUrl}/callback`],
    });
    clientId = application.client_id;
    example = await startExampleApp({
      port,
      publicUrl: exampleUrl,
      donataUrl: server.url,
      clientId,
      clientSecret: application.client_secret,
      fetch: async (input, init) => {
        if (init?.body instanceof URLSearchParams && init.body.get("grant_type") === "refresh_token") {
          refreshes.push(String(input));
        }
        return fetch(input, init);
      },
    });
  });
  afterAll(async () => {
    await Promise.allSettled([example?.close(), browser?.close()]);
    await server?.close();
  });

  it("refuses a callback with an unknown state and a visit without an organization, framed only by the panel", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const forged = await page.goto(`${example.url}/callback?code=dnt_ac_forged&state=forged`);
    expect(forged?.status()).toBe(400);
    expect(await page.locator("h1").textContent()).toBe("Invalid authorization response");
    expect(forged?.headers()["content-security-policy"]).toContain(`frame-ancestors ${server.url}`);
    const bare = await page.goto(`${example.url}/`);
    expect(bare?.status()).toBe(400);
    await context.close();
  });

  it("authorizes top-level, lists the checkouts like the API, and keeps working through a refresh", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${example.url}/?__organization=${slugs.top}`);
    // Donata's sign-in page, then the consent page (first authorization installs the app).
    expect(new URL(page.url()).origin).toBe(server.url);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForSelector("button[name=decision][value=allow]");
    await page.click("button[name=decision][value=allow]");
    await page.waitForSelector("table[data-testid=checkouts]");
    expect(page.url()).toBe(`${example.url}/?__organization=${slugs.top}`);

    const ids = await apiCheckoutIds(slugs.top);
    expect(ids).toHaveLength(12);
    expect(await renderedCheckoutIds(page)).toEqual(ids);
    expect(await page.locator("tr[data-donation-id]").count()).toBe(4);
    const firstToken = (await example.client.tokenStore.get(slugs.top))?.accessToken;

    // Past the access token's lifetime: the page still loads, through one refresh.
    const before = refreshes.length;
    await sleep(ACCESS_TOKEN_TTL * 1000 + 300);
    expect((await server.get("/api/v1/checkouts/", firstToken)).status).toBe(401);
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(200);
    expect(refreshes.length).toBe(before + 1);
    expect((await example.client.tokenStore.get(slugs.top))?.accessToken).not.toBe(firstToken);
    expect(await renderedCheckoutIds(page)).toEqual(await apiCheckoutIds(slugs.top));
    await context.close();
  });

  it("subscribes to payment.paid and shows each payment live as its webhook arrives, verified", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL((url) => !url.pathname.startsWith("/admin/sign-in"));
    await page.goto(`${example.url}/?__organization=${slugs.top}`);
    const allow = page.locator("button[name=decision][value=allow]");
    const table = page.locator("table[data-testid=checkouts]");
    await Promise.race([allow.waitFor(), table.waitFor()]);
    if (await allow.isVisible()) await allow.click();
    await table.waitFor();
    expect(await page.locator("[data-testid=webhook-problem]").count()).toBe(0);
    expect(await page.locator("#payments li").count()).toBe(0);

    // The app's endpoint, made with its own token: payment.paid only.
    const api = example.client.forOrganization(slugs.top);
    const [endpoint] = await api.webhookEndpoints.list();
    expect(endpoint).toMatchObject({ event_types: ["payment.paid"], status: "enabled" });
    expect(endpoint?.url).toBe(`${example.url}/webhooks/donata?__organization=${slugs.top}`);

    const organizationId = (
      await server.database.db.query.organizations.findFirst({
        where: (organizations, { eq }) => eq(organizations.slug, slugs.top),
      })
    )?.id as number;
    const supporter = await api.supporters.create({ first_name: "Live" });
    const campaign = await api.campaigns.create({ title: `Live ${unique(6)}` });
    const gift = await api.donations.createOffline(
      { supporter_id: supporter.id, campaign_id: campaign.id, amount: 12.5, label: "Cash" },
      { idempotencyKey: `live-${unique(8)}` },
    );
    const pass = await deliverWebhooks(server.database.db, webhookSenderDeps(server.config), {
      organizationIds: [organizationId],
    });
    expect(pass).toMatchObject({ succeeded: 1, failed: 0, retried: 0 });
    // Without a reload: the page polls the app, which has the verified event.
    await page.locator(`#payments li`).first().waitFor({ timeout: 10_000 });
    expect(await page.locator("#payments li").first().textContent()).toBe(`Payment #${gift.payment.id}: 12.50 EUR`);

    // A forged delivery is refused by the app (no signature of its secret).
    const forged = await fetch(endpoint?.url ?? "", {
      method: "POST",
      headers: {
        "webhook-id": "evt_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,AAAA",
      },
      body: "{}",
    });
    expect(forged.status).toBe(400);
    await context.close();
  });

  const panelBuilt = existsSync(`${ADMIN_DIST}index.html`);

  /** The admin panel's frame-src, as served to a signed-in member on the app page. */
  async function panelFrameSrc(): Promise<string[]> {
    const signIn = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const response = await fetch(`${server.url}/admin/o/${slugs.framed}/apps/${clientId}`, { headers: { cookie } });
    const csp = response.headers.get("content-security-policy") ?? "";
    return (/frame-src ([^;]+)/.exec(csp)?.[1] ?? "").trim().split(/\s+/);
  }

  // The framed app redirects to the authorization server, so the panel's frame-src allows it as well as the app.
  it.skipIf(!panelBuilt)("frames the installed app and the authorization server", async () => {
    await installApplication(server.database.db, clientId, slugs.framed).catch(() => undefined);
    const frameSrc = await panelFrameSrc();
    expect(frameSrc).toContain(new URL(`${example.url}/`).origin);
    expect(frameSrc).toContain(new URL(server.config.authUrl).origin);
  });

  it.skipIf(!panelBuilt)("opens inside the admin panel's iframe and authorizes there", async () => {
    await installApplication(server.database.db, clientId, slugs.framed).catch(() => undefined);
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${server.url}/admin/sign-in`);
      await page.fill("#email", email);
      await page.fill("#password", PASSWORD);
      await page.click("button[type=submit]");
      await page.waitForURL((url) => !url.pathname.startsWith("/admin/sign-in"));

      // Already signed in to Donata and installed: the authorization completes inside the frame at once.
      await page.goto(`${server.url}/admin/o/${slugs.framed}/apps/${clientId}`);
      const frame = page.frameLocator("[data-testid=app-iframe]");
      await frame.locator("table[data-testid=checkouts]").waitFor({ timeout: 20_000 });
      const rendered = await renderedCheckoutIds(frame);
      expect(rendered).toHaveLength(12);
      expect(rendered).toEqual(await apiCheckoutIds(slugs.framed));

      const before = refreshes.length;
      await sleep(ACCESS_TOKEN_TTL * 1000 + 300);
      await page.reload();
      await frame.locator("table[data-testid=checkouts]").waitFor({ timeout: 20_000 });
      expect(refreshes.length).toBe(before + 1);
      expect(await renderedCheckoutIds(frame)).toEqual(await apiCheckoutIds(slugs.framed));
    } finally {
      await browser.close();
    }
  });
});
