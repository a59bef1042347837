import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type campaigns, organizations, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * The panel's side of embedding (Debian's chromium, the real server): Settings → Your website (the
 * sites allowed to frame the donation pages) and a campaign's Share card (link, QR code, snippet).
 */
describe("admin panel: allowed sites and a campaign's sharing", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let campaign: typeof campaigns.$inferSelect;

  const newUser = async (role: "owner" | "member", locale: "en" | "it" | null = null) => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return email;
  };

  const signIn = async (email: string): Promise<Page> => {
    const context = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const savedOrigins = async () =>
    (
      await server.database.db
        .select({ origins: organizations.embedOrigins })
        .from(organizations)
        .where(eq(organizations.id, tenant.organizationId))
    )[0]?.origins;

  const axeIds = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map((v) => v.id);

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db);
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `wells-${unique(6)}`,
      title: "Clean water",
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner lists the sites: bad lines are refused each on its line and nothing is saved; good ones are saved", async () => {
    const page = await signIn(await newUser("owner"));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    const card = page.locator("#embed");
    const field = card.getByLabel("Allowed sites");
    await field.waitFor();
    await expect(field.inputValue()).resolves.toBe("");
    expect(await axeIds(page)).toEqual([]);

    await field.fill("https://www.example.org/donate\nhttp://shop.example.org\n\nhttps://www.example.org/donate");
    await card.getByRole("button", { name: "Save allowed sites" }).click();
    await card.locator(".inline-error", { hasText: "Nothing was saved" }).waitFor();
    await expect(card.locator("[data-field-error=origins] li").allTextContents()).resolves.toEqual([
      'Line 1: "https://www.example.org/donate" has a path, query or fragment: keep only https://host or https://host:port',
      'Line 2: "http://shop.example.org" must start with https:// (http:// only for localhost and 127.0.0.1)',
      'Line 3: "https://www.example.org/donate" has a path, query or fragment: keep only https://host or https://host:port',
    ]);
    await expect(field.getAttribute("aria-invalid")).resolves.toBe("true");
    expect(await axeIds(page)).toEqual([]);
    expect(await savedOrigins()).toEqual([]);

    await field.fill("https://WWW.example.org/\nhttps://shop.example.org");
    await card.getByRole("button", { name: "Save allowed sites" }).click();
    await card.locator(".flash", { hasText: "Allowed sites saved." }).waitFor();
    expect(await savedOrigins()).toEqual(["https://www.example.org", "https://shop.example.org"]);
    // The form shows the saved (normalised) list once it has read it back: poll, the flash comes first.
    await expect
      .poll(() => card.getByLabel("Allowed sites").inputValue(), { timeout: 15_000 })
      .toBe("https://www.example.org\nhttps://shop.example.org");
    await page.context().close();
  });

  it("in Italian, with the problems in Italian; a member only reads the list", async () => {
    const page = await signIn(await newUser("owner", "it"));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    const card = page.locator("#embed");
    await card.getByRole("heading", { name: "Il tuo sito web" }).waitFor();
    await card.getByLabel("Siti autorizzati").fill("https://*.example.org");
    await card.getByRole("button", { name: "Salva i siti autorizzati" }).click();
    await card
      .locator("[data-field-error=origins] li", {
        hasText: 'Riga 1: "https://*.example.org" contiene un carattere jolly: indica ogni sito su una riga a sé',
      })
      .waitFor();
    expect(await axeIds(page)).toEqual([]);
    await page.context().close();

    const reader = await signIn(await newUser("member"));
    await reader.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    const field = reader.locator("#embed").getByLabel("Allowed sites");
    await field.waitFor();
    await expect(field.getAttribute("readonly")).resolves.toBe("");
    await expect(reader.locator("#embed").getByRole("button", { name: "Save allowed sites" }).count()).resolves.toBe(0);
    await reader.context().close();
  });

  it("a campaign's Share card: the link and the snippet to copy, a QR code of the link (SVG, PNG); in both languages", async () => {
    const page = await signIn(await newUser("owner"));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/campaigns/${campaign.id}`);
    const card = page.locator("#sharing");
    const url = `${server.url}/donate/${tenant.slug}/${campaign.slug}`;
    await card.getByRole("link", { name: url }).waitFor();
    await card.getByRole("button", { name: "Copy link" }).click();
    await card.getByRole("button", { name: "Copied" }).first().waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(url);

    const snippet = `<script src="${server.url}/embed.js" data-organization="${tenant.slug}" data-campaign="${campaign.slug}" async></script>`;
    await expect(card.getByLabel("Donate button for your website").inputValue()).resolves.toBe(snippet);
    await card.getByRole("button", { name: "Copy snippet" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);

    const qr = card.getByRole("img", { name: `QR code of the donation page ${url}` });
    await qr.waitFor();
    // The QR code is drawn (a real image of 160 px) and its SVG is the one downloaded.
    await expect(qr.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).resolves.toBe(
      true,
    );
    const svgHref = await card.getByRole("link", { name: "Download SVG" }).getAttribute("href");
    expect(Buffer.from(String(svgHref).split(",")[1] ?? "", "base64").toString()).toMatch(
      /^<svg[\s\S]*<path[\s\S]*<\/svg>\s*$/,
    );
    const download = page.waitForEvent("download");
    await card.getByRole("button", { name: "Download PNG" }).click();
    expect((await download).suggestedFilename()).toBe(`qr-${campaign.slug}.png`);
    expect(await axeIds(page)).toEqual([]);
    await page.context().close();

    const italian = await signIn(await newUser("owner", "it"));
    await italian.goto(`${server.url}/admin/o/${tenant.slug}/campaigns/${campaign.id}`);
    await italian.locator("#sharing").getByRole("heading", { name: "Condividi" }).waitFor();
    await italian
      .locator("#sharing")
      .getByRole("img", { name: `Codice QR della pagina di donazione ${url}` })
      .waitFor();
    expect(await axeIds(italian)).toEqual([]);
    await italian.context().close();
  });
});
