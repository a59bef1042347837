import AxeBuilder from "@axe-core/playwright";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/** Settings → Audit log in chromium against the real server: the changes, filters, CSV, owners and admins only. */
describe("admin panel: the audit log", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let adminEmail: string;
  let memberEmail: string;
  let supporterId: number;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db);
    adminEmail = `admin-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(server.database.db, {
      email: adminEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "admin",
    });
    await createUser(server.database.db, {
      email: memberEmail,
      password: PASSWORD,
      organization: tenant.slug,
      role: "member",
    });
    // An application creates a supporter and changes their city.
    const created = await fetch(`${server.url}/api/v1/supporters/`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({ first_name: "Ada", city: "London" }),
    });
    supporterId = ((await created.json()) as { id: number }).id;
    const patched = await fetch(`${server.url}/api/v1/supporters/${supporterId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({ city: "Paris" }),
    });
    expect(patched.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows who changed what, before and after; filters by what and exports the same as CSV", async () => {
    const page = await signInToPanel(browser, {
      url: server.url,
      email: adminEmail,
      password: PASSWORD,
      organization: tenant.slug,
    });
    // A change made in the panel itself: the admin's own, from their browser.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.waitForURL(/\/audit$/);
    const table = page.locator('[data-testid="table-audit"]');
    await table.waitFor();
    const rows = table.locator("tbody tr");
    await expect(rows.first().textContent()).resolves.toContain(`Changed supporter #${supporterId}: city`);
    await expect(rows.first().textContent()).resolves.toContain(`application ${tenant.applicationId}`);
    await expect(rows.first().locator(".audit-changes").textContent()).resolves.toBe("city: London → Paris");
    await expect(page.locator("main").textContent()).resolves.toContain(`Added ${memberEmail} as member`);
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);

    await page.getByLabel("What").selectOption("Members");
    await page.waitForFunction(
      () => !document.querySelector('[data-testid="table-audit"]')?.textContent?.includes("supporter #"),
    );
    const members = await table.locator("tbody tr").allTextContents();
    expect(members).toHaveLength(2);
    for (const row of members) expect(row).toMatch(/Added .* as (admin|member)/);
    expect(page.url()).toContain("action=Members");

    // The CSV link carries the same filters.
    const href = await page.locator('[data-testid="download-audit-csv"]').getAttribute("href");
    expect(href).toContain("type=membership.created%2Cmembership.updated%2Cmembership.deleted");
    const text = await page.evaluate(async (url) => (await fetch(url ?? "")).text(), href);
    const lines = text.trim().split("\r\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain("membership.created");
    await page.context().close();
  });

  it("tells a member that only owners and admins see it, and asks the server nothing", async () => {
    const page = await signInToPanel(browser, {
      url: server.url,
      email: memberEmail,
      password: PASSWORD,
      organization: tenant.slug,
    });
    const asked: string[] = [];
    page.on("request", (request) => {
      if (request.postData()?.includes("auditLog")) asked.push(request.url());
    });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/audit`);
    await page.locator('[data-testid="audit-owners-only"]').waitFor();
    await expect(page.locator('[data-testid="audit-owners-only"]').textContent()).resolves.toContain(
      "Only owners and admins",
    );
    expect(asked).toEqual([]);
    await page.context().close();
  });
});
