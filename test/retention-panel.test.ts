import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/** The Retention page and the dashboard's retention rate in chromium against the real server, in English and Italian. */
describe("admin panel: retention", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  // This year of the organization's time zone (Rome), as the panel shows by default.
  const year = Number(new Intl.DateTimeFormat("en", { timeZone: "Europe/Rome", year: "numeric" }).format(new Date()));
  const names: Record<string, string> = {};

  const giver = async (key: string, years: number[]) => {
    const db = server.database.db;
    const campaign = await fakeCampaign(db, tenant.organizationId);
    const supporter = await fakeSupporter(db, tenant.organizationId, { firstName: key, lastName: unique(6) });
    names[key] = `${supporter.firstName} ${supporter.lastName}`;
    for (const when of years) {
      const donation = await fakeDonation(db, tenant.organizationId, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        amount: 25,
        frequency: 0,
        state: "done",
      });
      await fakePayment(db, tenant.organizationId, {
        donationId: donation.id,
        amount: 25,
        state: "PAID",
        paymentDate: new Date(`${when}-01-02T12:00:00Z`),
      });
    }
  };

  const member = async (locale: "en" | "it") => {
    const email = `owner-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, {
      email,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: tenant.slug });
  };

  const axe = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map((v) => v.id);

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { timeZone: "Europe/Rome", currency: "EUR" });
    await giver("alice", [year - 1, year]);
    await giver("bob", [year - 1]);
    await giver("carol", [year - 3]);
    await giver("dan", [year]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the rate and the three lists in English, by year, with working CSV links; the dashboard shows the rate", async () => {
    const page = await member("en");
    const dashboardRate = page.locator('[data-testid="retention-rate"]');
    await dashboardRate.waitFor();
    await expect(dashboardRate.textContent()).resolves.toBe(
      `Retention rate ${year}50%1 of 2 donors of ${year - 1} gave again`,
    );

    await page.getByRole("link", { name: "Retention", exact: true }).click();
    await page.waitForURL(/\/retention$/);
    await page.locator('[data-testid="table-retention-lybunt"]').waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Retention");
    await expect(page.locator('main [data-testid="retention-rate"] .stat-value').textContent()).resolves.toBe("50%");
    const rowsOf = (segment: string) =>
      page.locator(`[data-testid="table-retention-${segment}"] tbody tr td:first-child`).allTextContents();
    await expect(rowsOf("lybunt")).resolves.toEqual([names.bob]);
    await expect(rowsOf("sybunt")).resolves.toEqual([names.carol]);
    await expect(rowsOf("first_time")).resolves.toEqual([names.dan]);
    await expect(page.locator('[data-testid="table-retention-lybunt"] tbody tr').textContent()).resolves.toContain(
      "€25.00",
    );
    expect(await axe(page)).toEqual([]);

    const href = await page.locator('[data-testid="download-retention-lybunt"]').getAttribute("href");
    expect(href).toBe(`/admin/export/retention-lybunt.csv?organization=${tenant.slug}&year=${year}`);
    const text = await page.evaluate(async (url) => (await fetch(url ?? "")).text(), href);
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "supporter_id,name,email,first_gift_date,last_gift_date,last_year_total,lifetime_total,currency",
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,${names.bob},`);
    expect(lines[1]).toContain(",25.00,25.00,EUR");

    // Last year: nobody gave the year before, so no rate; alice and bob were new.
    await page.getByLabel("Year", { exact: true }).selectOption(String(year - 1));
    await page.waitForURL(new RegExp(`year=${year - 1}`));
    await page.waitForFunction(
      () => document.querySelector('main [data-testid="retention-rate"] .stat-value')?.textContent === "—",
    );
    expect((await rowsOf("first_time")).sort()).toEqual([names.alice, names.bob].sort());
    expect(await axe(page)).toEqual([]);
    await page.context().close();
  });

  it("speaks Italian: words, the rate and the dashboard's figure", async () => {
    const page = await member("it");
    const dashboardRate = page.locator('[data-testid="retention-rate"]');
    await dashboardRate.waitFor();
    await expect(dashboardRate.textContent()).resolves.toBe(
      `Tasso di fidelizzazione ${year}50%1 donatore su 2 del ${year - 1} ha donato di nuovo`,
    );
    await page.getByRole("link", { name: "Fidelizzazione", exact: true }).click();
    await page.waitForURL(/\/retention$/);
    await page.locator('[data-testid="table-retention-lybunt"]').waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Fidelizzazione");
    await expect(page.locator("#retention-lybunt-title").textContent()).resolves.toBe("Persi l’anno scorso (LYBUNT)");
    await expect(page.locator('[data-testid="download-retention-sybunt"]').textContent()).resolves.toBe("Scarica CSV");
    // Italian money: a comma and the euro sign after a no-break space.
    await expect(page.locator('[data-testid="table-retention-lybunt"] tbody tr').textContent()).resolves.toMatch(
      /25,00\u00a0€/,
    );
    expect(await axe(page)).toEqual([]);
    await page.context().close();
  });
});
