import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type campaigns, checkoutProtection } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { updateEmbedOrigins } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { createSecretBox, parseEncryptionKey } from "../src/secrets/secret-box.js";
import { auditRowsOf } from "./helpers/audit.js";
import { launchChromium } from "./helpers/chromium.js";
import { connectFakeStripeAccount, fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from "./helpers/server.js";
import { serveStripeJs, stripeJsCalls } from "./helpers/stripe-js-stand-in.js";
import { type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = Record<string, any>;

const READ = "{ organization { embed_origins } }";
const SAVE = "mutation ($origins: [String!]!) { updateOrganizationEmbedOrigins(origins: $origins) { embed_origins } }";

/** A host page on another origin (another port): the charity's own website, with the embed snippet. */
async function startHostSite(): Promise<{ server: Server; port: number; pages: Map<string, string> }> {
  const pages = new Map<string, string>();
  const server = createServer((request, response) => {
    const page = pages.get((request.url ?? "/").split("?")[0] ?? "/");
    if (page === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, pages };
}

/** Which origins a page's CSP lets frame it. */
const frameAncestors = (csp: string | null) => /frame-ancestors ([^;]+)/.exec(csp ?? "")?.[1];

describe("embedding the donation page on the charity's site", () => {
  let server: TestServer;
  /** Stripe's API, for the organization that takes payments with Stripe (Stripe.js is served in the browser). */
  let standIn: StripeStandIn;
  let tenant: Tenant;
  let other: Tenant;
  let campaign: typeof campaigns.$inferSelect;
  let browser: Browser;
  let host: Awaited<ReturnType<typeof startHostSite>>;
  /** The host site as the browser reaches it: "localhost" is another origin than the server's 127.0.0.1. */
  let hostOrigin: string;
  let owner: { cookie: string };
  let member: { cookie: string };

  const graphql = async (query: string, variables: Json, auth: { cookie: string }) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: auth.cookie },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  const signIn = async (organization: string, role: "owner" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    return { cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}` };
  };

  const pagePath = () => `/donate/${tenant.slug}/${campaign.slug}`;

  beforeAll(async () => {
    // The proof of work is made light, as in the donation page's own tests.
    const cardTesting = { ...loadConfig({}).cardTesting, challengeCost: 10, challengeMaxNumber: 200 };
    standIn = await startStripeStandIn();
    [server, browser, host] = await Promise.all([
      startTestServer({ cardTesting, stripeApiUrl: `http://127.0.0.1:${standIn.api.port}` }),
      launchChromium(),
      startHostSite(),
    ]);
    hostOrigin = `http://localhost:${host.port}`;
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `wells-${unique(6)}`,
      title: "Clean water for Kisumu",
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      minAmount: 5,
      maxAmount: 5000,
      asks: ["10", "25", "50"],
      defaultAmount: 25,
      isGoalEnabled: true,
      goal: 1000,
      shownFields: ["first_name", "last_name", "email"],
      requiredFields: ["first_name"],
      archiveDate: null,
    });
    owner = await signIn(tenant.slug, "owner");
    member = await signIn(tenant.slug, "member");
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => host?.server.close(resolve));
    await server?.close();
    await standIn?.close();
  });

  describe("allowed origins (GraphQL)", () => {
    it("are empty by default, and the page may then be framed by nobody", async () => {
      const read = await graphql(READ, {}, owner);
      expect(read.body).toEqual({ data: { organization: { embed_origins: [] } } });
      const page = await fetch(`${server.url}${pagePath()}`);
      expect(page.status).toBe(200);
      expect(frameAncestors(page.headers.get("content-security-policy"))).toBe("'none'");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
    });

    it("are saved normalized (lowercase, no trailing slash, no default port) and audited", async () => {
      const saved = await graphql(
        SAVE,
        { origins: [" https://Www.Example.ORG/ ", "https://shop.example.org:443", "http://localhost:8080"] },
        owner,
      );
      expect(saved.body).toEqual({
        data: {
          updateOrganizationEmbedOrigins: {
            embed_origins: ["https://www.example.org", "https://shop.example.org", "http://localhost:8080"],
          },
        },
      });
      const rows = await auditRowsOf(server.database.db, tenant.organizationId, ["organization.updated"]);
      expect(rows.at(-1)?.changes).toEqual({
        embed_origins: {
          before: [],
          after: ["https://www.example.org", "https://shop.example.org", "http://localhost:8080"],
        },
      });
      // Saving the same list again changes nothing and records nothing.
      await graphql(
        SAVE,
        { origins: ["https://www.example.org", "https://shop.example.org", "http://localhost:8080"] },
        owner,
      );
      expect(await auditRowsOf(server.database.db, tenant.organizationId, ["organization.updated"])).toHaveLength(
        rows.length,
      );
      const page = await fetch(`${server.url}${pagePath()}`);
      expect(frameAncestors(page.headers.get("content-security-policy"))).toBe(
        "https://www.example.org https://shop.example.org http://localhost:8080",
      );
      // X-Frame-Options knows no list: it would forbid what the CSP allows, so it is left out.
      expect(page.headers.get("x-frame-options")).toBeNull();
      // The other organization's pages are not affected.
      const otherCampaign = await fakeCampaign(server.database.db, other.organizationId, { archiveDate: null });
      const otherPage = await fetch(`${server.url}/donate/${other.slug}/${otherCampaign.slug}`);
      expect(frameAncestors(otherPage.headers.get("content-security-policy"))).toBe("'none'");
    });

    it("refuses bad origins all at once, by field and code (the panel words them), and saves nothing", async () => {
      const before = await graphql(READ, {}, owner);
      const bad = [
        "https://example.org/donate",
        "http://example.org",
        "https://*.example.org",
        "example.org",
        "ftp://example.org",
        "https://user:pw@example.org",
        "https://a;b.example.org",
        "https://ok.example.org",
        "https://OK.example.org/",
        "",
      ];
      const refused = await graphql(SAVE, { origins: bad }, owner);
      expect(refused.body.data).toBeNull();
      const [error] = refused.body.errors;
      expect(error.extensions.code).toBe("invalid_request");
      expect(
        error.extensions.errors.map((issue: Json) => [issue.field, issue.code, issue.values?.origin ?? null]),
      ).toEqual([
        ["origins.0", "embed_origin_path", "https://example.org/donate"],
        ["origins.1", "embed_origin_https", "http://example.org"],
        ["origins.2", "embed_origin_wildcard", "https://*.example.org"],
        ["origins.3", "embed_origin_form", "example.org"],
        ["origins.4", "embed_origin_form", "ftp://example.org"],
        ["origins.5", "embed_origin_form", "https://user:pw@example.org"],
        ["origins.6", "embed_origin_form", "https://a;b.example.org"],
        ["origins.8", "embed_origin_duplicate", "https://ok.example.org"],
        ["origins.9", "required", null],
      ]);
      expect(error.extensions.errors[0].message).toBe(
        '"https://example.org/donate" has a path, query or fragment: keep only https://host or https://host:port',
      );
      const tooMany = await graphql(
        SAVE,
        { origins: Array.from({ length: 21 }, (_, index) => `https://site${index}.example.org`) },
        owner,
      );
      expect(tooMany.body.errors[0].extensions.errors).toEqual([
        expect.objectContaining({ field: "origins", code: "embed_origins_too_many", values: { max: 20 } }),
      ]);
      expect(await graphql(READ, {}, owner)).toEqual(before);
    });

    it("are set by owners and admins only", async () => {
      const refused = await graphql(SAVE, { origins: ["https://evil.example"] }, member);
      expect(refused.body.errors[0].extensions.code).toBe("insufficient_scope");
      const read = await graphql(READ, {}, owner);
      expect(read.body.data.organization.embed_origins).not.toContain("https://evil.example");
    });

    it("frame the page of an organization that takes payments with Stripe the same way, beside Stripe's sources", async () => {
      const stripeTenant = await fakeTenant(server.database.db);
      await connectFakeStripeAccount(
        server.database.db,
        stripeTenant.organizationId,
        createSecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
      );
      const stripeCampaign = await fakeCampaign(server.database.db, stripeTenant.organizationId, { archiveDate: null });
      const path = `/donate/${stripeTenant.slug}/${stripeCampaign.slug}`;
      const before = await fetch(`${server.url}${path}`);
      expect(frameAncestors(before.headers.get("content-security-policy"))).toBe("'none'");
      await updateEmbedOrigins(server.database.db, stripeTenant.organizationId, ["https://charity.example"]);
      const page = await fetch(`${server.url}${path}`);
      const csp = page.headers.get("content-security-policy");
      expect(csp).toContain("script-src 'nonce-");
      expect(csp).toContain("https://js.stripe.com");
      expect(frameAncestors(csp)).toBe("https://charity.example");
      expect(page.headers.get("x-frame-options")).toBeNull();
    });

    it("frame an ended campaign's page too, so the host's frame says it has ended", async () => {
      const ended = await fakeCampaign(server.database.db, tenant.organizationId, {
        archiveDate: new Date(Date.now() - 86400_000),
      });
      const page = await fetch(`${server.url}/donate/${tenant.slug}/${ended.slug}`);
      expect(page.status).toBe(410);
      expect(frameAncestors(page.headers.get("content-security-policy"))).toContain("https://www.example.org");
      const unknown = await fetch(`${server.url}/donate/org-${unique()}/nothing`);
      expect(unknown.status).toBe(404);
      expect(frameAncestors(unknown.headers.get("content-security-policy"))).toBe("'none'");
    });
  });

  describe("/embed.js", () => {
    it("is JavaScript any site may load, cached five minutes and revalidated by its ETag", async () => {
      const response = await fetch(`${server.url}/embed.js`, { headers: { origin: "https://www.example.org" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("public, max-age=300");
      expect(response.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      const body = await response.text();
      // The words of each language come from the catalogs.
      expect(body).toContain('"it":{"button":"Dona","form":"Modulo di donazione","close":"Chiudi"}');
      const etag = response.headers.get("etag") as string;
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await fetch(`${server.url}/embed.js`, { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
    });
  });

  describe("in a browser, on a host page of another origin", () => {
    const hostPage = (
      options: { lang?: string; mode?: string; organization?: string; campaign?: string } = {},
    ) => `<!doctype html>
<html lang="${options.lang ?? "en"}">
<head><meta charset="utf-8"><title>Friends of Kisumu</title>
<style>button { all: unset; color: red; } iframe { display: none; } dialog { display: none; }</style></head>
<body>
<main>
<h1>Friends of Kisumu</h1>
<p>Every well we dig serves a village for decades. <a href="#about" id="about-link">About us</a></p>
<script src="${server.url}/embed.js" data-organization="${options.organization ?? tenant.slug}" data-campaign="${options.campaign ?? campaign.slug}"${options.mode ? ` data-mode="${options.mode}"` : ""} async></script>
</main>
<script>
window.donations = [];
window.addEventListener("donata:donation_completed", (event) => window.donations.push(event.detail));
</script>
</body>
</html>`;

    let context: BrowserContext;
    const consoleErrors: string[] = [];

    /**
     * Opens a host page, the same site on either of its names: localhost (allowed) or 127.0.0.1 (not);
     * `prepare` readies the context first (Stripe's hosts played by the stand-ins).
     */
    async function openHost(
      path: string,
      html: string,
      origin = hostOrigin,
      prepare?: (context: BrowserContext) => Promise<unknown>,
    ): Promise<Page> {
      host.pages.set(path, html);
      context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
      await prepare?.(context);
      const page = await context.newPage();
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      await page.goto(`${origin}${path}`);
      return page;
    }

    /** The donation page's frame, once it has loaded the page. */
    async function donationFrame(page: Page): Promise<Frame> {
      const handle = await page.locator("donata-embed iframe").elementHandle();
      const frame = await handle?.contentFrame();
      if (!frame) throw new Error("no frame");
      // A new iframe is about:blank, "loaded", until its navigation to the form begins.
      await frame.waitForURL((url) => url.pathname.startsWith("/donate/"));
      await frame.waitForLoadState("load");
      return frame;
    }

    /** What has the focus, through the shadow roots: the host element's tag and, inside it, the element's class. */
    const focused = (page: Page) =>
      page.evaluate(() => {
        const outer = document.activeElement;
        const inner = outer?.shadowRoot?.activeElement;
        const hosts = [...document.querySelectorAll("donata-embed")];
        return {
          host: outer ? hosts.indexOf(outer) : -2,
          inner: inner ? `${inner.tagName.toLowerCase()}${inner.className ? `.${inner.className}` : ""}` : null,
        };
      });

    beforeAll(async () => {
      await graphql(SAVE, { origins: ["https://www.example.org", hostOrigin] }, owner);
    });
    afterAll(() => context?.close());

    it("opens the overlay from the Donate button: a labelled modal dialog, focus inside, scroll locked", async () => {
      const page = await openHost("/overlay", hostPage());
      const button = page.getByRole("button", { name: "Donate" });
      await button.waitFor();
      // The host page's CSS (button { all: unset }, dialog { display: none }) does not reach it.
      await expect(button.evaluate((node) => getComputedStyle(node).backgroundColor)).resolves.toBe(
        "rgb(15, 118, 110)",
      );
      await button.click();
      const dialog = page.getByRole("dialog", { name: "Donation form" });
      await dialog.waitFor();
      await expect(dialog.getAttribute("aria-modal")).resolves.toBe("true");
      await expect(page.locator("donata-embed iframe").getAttribute("allow")).resolves.toBe("payment");
      await expect(focused(page)).resolves.toEqual({ host: 1, inner: "button.close" });
      await expect(page.evaluate(() => document.documentElement.style.overflow)).resolves.toBe("hidden");
      const frame = await donationFrame(page);
      expect(frame.url()).toBe(`${server.url}/donate/${tenant.slug}/${campaign.slug}?embed=overlay&lang=en`);
      await frame.getByRole("heading", { level: 1, name: "Clean water for Kisumu" }).waitFor();

      const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
      expect(axe.violations.map((violation) => violation.id)).toEqual([]);

      // Tab goes through the form and back to the close button; never to the host page behind.
      await page.keyboard.press("Tab");
      let back = false;
      for (let press = 0; press < 120 && !back; press++) {
        await page.keyboard.press("Tab");
        const now = await focused(page);
        expect(now.host).toBe(1);
        back = now.inner === "button.close";
      }
      expect(back).toBe(true);
      // Shift+Tab from the close button goes into the form, not behind the dialog.
      await page.keyboard.press("Shift+Tab");
      await expect(focused(page)).resolves.toEqual({ host: 1, inner: "iframe" });

      // Escape pressed inside the form closes the overlay too; the focus is back on the button.
      await frame.getByRole("radio", { name: "€50" }).focus();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      await expect(focused(page)).resolves.toEqual({ host: 0, inner: "button.donate" });
      await expect(page.evaluate(() => document.documentElement.style.overflow)).resolves.toBe("");

      // Reopened, and closed with Escape on the dialog itself, then with its close button.
      await page.keyboard.press("Enter");
      await dialog.waitFor();
      await expect(focused(page)).resolves.toEqual({ host: 1, inner: "button.close" });
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      await expect(focused(page)).resolves.toEqual({ host: 0, inner: "button.donate" });
      await button.click();
      await page.getByRole("button", { name: "Close" }).click();
      await dialog.waitFor({ state: "hidden" });
      await expect(focused(page)).resolves.toEqual({ host: 0, inner: "button.donate" });
      await context.close();
    });

    it("completes a gift in the overlay, with the proof-of-work challenge on; the host page hears of it", async () => {
      await server.database.db
        .insert(checkoutProtection)
        .values({ organizationId: tenant.organizationId, challengeForced: true })
        .onConflictDoUpdate({ target: checkoutProtection.organizationId, set: { challengeForced: true } });
      const page = await openHost("/gift", hostPage());
      await page.getByRole("button", { name: "Donate" }).click();
      const frame = await donationFrame(page);
      const before = (await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`)).body;
      await frame.locator("altcha-widget [data-state=verified]").waitFor({ state: "attached", timeout: 30_000 });
      await frame.getByLabel("First name").fill("Ada");
      await frame.getByLabel("Last name").fill("Lovelace");
      await frame.getByRole("textbox", { name: "Email" }).fill(`ada-${unique(6)}@example.org`);
      await frame.getByLabel("I have read the privacy notice").check();
      await frame.getByLabel("Card number").fill("4242 4242 4242 4242");
      await frame.getByLabel("Expiry month").fill("12");
      await frame.getByLabel("Expiry year").fill(String(new Date().getUTCFullYear() + 2));
      await frame.getByLabel("Security code").fill("123");
      const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
      await frame.getByRole("button", { name: /^Donate/ }).click();
      const response = await completion;
      expect(response.status()).toBe(200);
      expect(typeof JSON.parse(response.request().postData() ?? "{}").altcha).toBe("string");
      await frame.locator("#success-title", { hasText: "Thank you, Ada!" }).waitFor();

      await page.waitForFunction(() => (window as unknown as { donations: unknown[] }).donations.length > 0);
      const donations = await page.evaluate(() => (window as unknown as { donations: unknown[] }).donations);
      expect(donations).toEqual([
        {
          amount: 25,
          currency: "EUR",
          frequency: 0,
          campaign: campaign.slug,
          organization: tenant.slug,
          pending: false,
        },
      ]);
      // The thank-you view's goal bar counts the new gift.
      const raised = before.raised + 25;
      const figure = new Intl.NumberFormat("en", { style: "currency", currency: "EUR", maximumFractionDigits: 0 });
      await frame
        .locator("#goal-label strong", { hasText: `${figure.format(raised)} raised of €1,000 goal` })
        .waitFor();
      await expect(frame.locator(".goal progress").evaluate((bar: HTMLProgressElement) => bar.value)).resolves.toBe(
        raised,
      );
      // The receipt opens in a tab of its own (its page is never framed).
      await expect(frame.locator("#receipt-link").getAttribute("target")).resolves.toBe("_blank");
      expect(consoleErrors.filter((text) => /Content Security Policy|Refused/i.test(text))).toEqual([]);
      await context.close();
    });

    it("takes a card gift through Stripe's Payment Element and its 3-D Secure frame inside the overlay, with the challenge on", async () => {
      const db = server.database.db;
      const stripeTenant = await fakeTenant(db);
      const { publishableKey } = await connectFakeStripeAccount(
        db,
        stripeTenant.organizationId,
        createSecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
      );
      const stripeCampaign = await fakeCampaign(db, stripeTenant.organizationId, {
        slug: `kits-${unique(6)}`,
        title: "School kits in Kisumu",
        hasOneOff: true,
        hasSubscription: false,
        asks: ["10", "25"],
        defaultAmount: 25,
        shownFields: ["first_name", "last_name", "email"],
        requiredFields: ["first_name"],
        archiveDate: null,
      });
      await updateEmbedOrigins(db, stripeTenant.organizationId, [hostOrigin]);
      await db
        .insert(checkoutProtection)
        .values({ organizationId: stripeTenant.organizationId, challengeForced: true })
        .onConflictDoUpdate({ target: checkoutProtection.organizationId, set: { challengeForced: true } });
      const errorsBefore = consoleErrors.length;
      let stripeHosts: { unexpected: string[] } = { unexpected: [] };
      const page = await openHost(
        "/stripe",
        hostPage({ organization: stripeTenant.slug, campaign: stripeCampaign.slug as string }),
        hostOrigin,
        async (fresh) => {
          stripeHosts = await serveStripeJs(fresh, { standIn, publishableKey });
        },
      );
      await page.getByRole("button", { name: "Donate" }).click();
      const frame = await donationFrame(page);
      // Stripe.js mounted the Payment Element in the framed page, in place of the sandbox's card fields.
      await frame.getByLabel("Test payment method").waitFor();
      expect(await frame.getByLabel("Card number").count()).toBe(0);
      await frame.locator("altcha-widget [data-state=verified]").waitFor({ state: "attached", timeout: 30_000 });
      await frame.getByLabel("First name").fill("Grace");
      await frame.getByLabel("Last name").fill("Hopper");
      await frame.getByRole("textbox", { name: "Email" }).fill(`grace-${unique(6)}@example.org`);
      await frame.getByLabel("I have read the privacy notice").check();
      await frame.getByLabel("Test payment method").selectOption("three_d_secure");
      const settled = page.waitForResponse(
        (response) => /\/checkouts\/\d+\/complete$/.test(response.url()) && response.status() !== 202,
      );
      await frame.getByRole("button", { name: /^Donate/ }).click();
      // The bank's challenge opens in Stripe's frame (hooks.stripe.com) inside the framed page.
      await frame
        .frameLocator('iframe[title="3-D Secure authentication"]')
        .getByRole("button", { name: "Complete authentication" })
        .click();
      const response = await settled;
      expect(response.status()).toBe(200);
      const sent = response.request().postDataJSON();
      expect(sent).toMatchObject({ processor: "stripe", amount: 25, frequency: 0 });
      expect(sent.confirmation_token).toMatch(/^ctoken_/);
      expect(typeof sent.altcha).toBe("string");
      await frame.locator("#success-title", { hasText: "Thank you, Grace!" }).waitFor();

      await page.waitForFunction(() => (window as unknown as { donations: unknown[] }).donations.length > 0);
      await expect(page.evaluate(() => (window as unknown as { donations: unknown[] }).donations)).resolves.toEqual([
        {
          amount: 25,
          currency: "EUR",
          frequency: 0,
          campaign: stripeCampaign.slug,
          organization: stripeTenant.slug,
          pending: false,
        },
      ]);
      const { checkout_id: checkoutId } = (await response.json()) as { checkout_id: number };
      const checkout = (await server.get(`/api/v1/checkouts/${checkoutId}`, stripeTenant.token)).body;
      expect(checkout).toMatchObject({
        state: "CLOSED",
        payment_method_processor: "stripe",
        donation: { state: "done", amount: 25 },
        payment: { state: "PAID", amount: 25 },
      });
      expect(standIn.paymentIntents.get(checkout.payment.processor_intent_id)).toMatchObject({
        status: "succeeded",
        amount: 2500,
        currency: "eur",
      });
      const calls = (await stripeJsCalls(frame)).map((call) => call.call).filter((name) => name !== "update");
      expect(calls).toEqual([
        "Stripe",
        "elements",
        "create",
        "mount",
        "submit",
        "createConfirmationToken",
        "handleNextAction",
      ]);
      expect(stripeHosts.unexpected).toEqual([]);
      expect(consoleErrors.slice(errorsBefore).filter((text) => /Content Security Policy|Refused/i.test(text))).toEqual(
        [],
      );
      await context.close();
    });

    it("is refused by the browser on a site the organization does not list", async () => {
      // The same host site under its other name: an origin not in the list.
      const page = await openHost("/elsewhere", hostPage(), `http://127.0.0.1:${host.port}`);
      await page.getByRole("button", { name: "Donate" }).click();
      const handle = await page.locator("donata-embed iframe").elementHandle();
      const frame = await handle?.contentFrame();
      await frame?.waitForLoadState("load");
      // Chromium shows its error page instead: the donation page never renders in the frame.
      await expect.poll(() => frame?.url()).toMatch(/^chrome-error:/);
      await expect(frame?.locator("#donate-form").count()).resolves.toBe(0);
      expect(consoleErrors.some((text) => /frame-ancestors/.test(text))).toBe(true);
      await context.close();
    });

    it("shows the page inline with data-mode=inline, as tall as its content, in Italian on an Italian page", async () => {
      const page = await openHost("/inline", hostPage({ mode: "inline", lang: "it-IT" }));
      const frame = await donationFrame(page);
      expect(frame.url()).toContain("?embed=inline&lang=it");
      await frame.getByRole("button", { name: /^Dona/ }).waitFor();
      const heights = async () => ({
        frame: await page.locator("donata-embed iframe").evaluate((node) => node.getBoundingClientRect().height),
        content: await frame.evaluate(() => document.documentElement.getBoundingClientRect().height),
      });
      await expect
        .poll(async () => {
          const h = await heights();
          return Math.abs(h.frame - h.content) <= 1;
        })
        .toBe(true);
      expect((await heights()).frame).toBeGreaterThan(700);
      const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
      expect(axe.violations.map((violation) => violation.id)).toEqual([]);
      await context.close();
    });

    it("labels its button and dialog in Italian on an Italian page (axe finds nothing)", async () => {
      const page = await openHost("/it", hostPage({ lang: "it" }));
      await page.getByRole("button", { name: "Dona" }).click();
      await page.getByRole("dialog", { name: "Modulo di donazione" }).waitFor();
      await page.getByRole("button", { name: "Chiudi" }).waitFor();
      const frame = await donationFrame(page);
      await frame.getByRole("button", { name: /^Dona/ }).waitFor();
      const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
      expect(axe.violations.map((violation) => violation.id)).toEqual([]);
      await context.close();
    });
  });
});
