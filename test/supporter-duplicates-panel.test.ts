import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * The possible duplicates page of the admin panel (Debian's chromium, the real server): reached from
 * the supporters list, it shows each group with its reason and links to each supporter's page, in
 * English and Italian; an organization without duplicates reads the empty text; axe finds nothing.
 */
describe("admin panel: possible duplicates", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let empty: Tenant;
  let owner: string;
  let loner: string;
  const ids: number[] = [];

  const signIn = async (email: string, slug: string, locale = "en-US"): Promise<Page> => {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    empty = await fakeTenant(server.database.db);
    const mail = `ada-${unique(6)}@example.org`;
    for (const email of [mail, mail.toUpperCase()]) {
      const row = await fakeSupporter(server.database.db, tenant.organizationId, {
        firstName: "Ada",
        lastName: "Lovelace",
        email,
      });
      ids.push(row.id);
    }
    owner = `owner-${unique(6)}@example.test`;
    loner = `owner-${unique(6)}@example.test`;
    // One after the other: users are rows of reference tables on a cluster.
    await createUser(server.database.db, {
      email: owner,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    await createUser(server.database.db, { email: loner, password: PASSWORD, organization: empty.slug, role: "owner" });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("lists a group from the supporters list, with its reason and a link to each supporter, in English", async () => {
    const page = await signIn(owner, tenant.slug);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters`);
    await page.getByRole("link", { name: "Possible duplicates" }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/duplicates$`));
    const group = page.locator('[data-testid="duplicate-group"]');
    await group.waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Possible duplicates");
    await expect(page.locator("section h2").allTextContents()).resolves.toEqual(["Same email"]);
    await expect(page.locator('[data-testid="duplicates-count"]').textContent()).resolves.toBe("1 group");
    const links = group.getByRole("link", { name: "Ada Lovelace" });
    await expect(links.evaluateAll((anchors) => anchors.map((anchor) => anchor.getAttribute("href")))).resolves.toEqual(
      ids.map((id) => `/admin/o/${tenant.slug}/supporters/${id}`),
    );
    expect(await axeViolations(page)).toEqual([]);
    await links.first().click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/${ids[0]}$`));
    expect(errors).toEqual([]);
  });

  it("speaks Italian, and axe finds nothing there", async () => {
    const page = await signIn(owner, tenant.slug, "it-IT");
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters`);
    await page.getByRole("link", { name: "Possibili doppioni" }).click();
    await page.locator('[data-testid="duplicate-group"]').waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Possibili doppioni");
    await expect(page.locator("section h2").allTextContents()).resolves.toEqual(["Stessa email"]);
    await expect(page.locator('[data-testid="duplicates-count"]').textContent()).resolves.toBe("1 gruppo");
    expect(await axeViolations(page)).toEqual([]);
  });

  it("an organization without duplicates reads the empty text", async () => {
    const page = await signIn(loner, empty.slug);
    await page.goto(`${server.url}/admin/o/${empty.slug}/supporters/duplicates`);
    await expect(page.locator('[data-testid="duplicates-empty"]').textContent()).resolves.toBe(
      "No possible duplicates: no two supporters share an email, or a name and postal code.",
    );
    expect(await axeViolations(page)).toEqual([]);
  });
});
