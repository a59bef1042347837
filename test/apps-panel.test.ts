import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplication, listInstallations } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/** Apps → Install an app in chromium against the real server: nothing is installed before the member confirms. */
describe("admin panel: installing an application by client ID", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let clientId: string;
  const appName = `Mailer Bridge ${unique(4)}`;

  const installed = async () =>
    (await listInstallations(server.database.db, tenant.organizationId)).map(
      (installation) => installation.application.client_id,
    );
  const permissionLines = (page: Page) =>
    page
      .locator('[data-testid="install-permissions"] li')
      .evaluateAll((items) => items.map((item) => item.textContent?.replace(/\s+/g, " ").trim()));
  const axe = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => violation.id,
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    const db = server.database.db;
    tenant = await fakeTenant(db);
    const developer = await fakeTenant(db);
    owner = `owner-${unique(6)}@example.test`;
    await createUser(db, { email: owner, password: PASSWORD, organization: tenant.slug, role: "owner" });
    // A third party's application: registered by another organization.
    const application = await createApplication(db, {
      name: appName,
      applicationUrl: "https://bridge.example.test/app",
      callbackUrls: ["https://bridge.example.test/callback"],
      permissions: ["campaigns:read", "supporters:write", "payments:write"],
      ownerOrganizationId: developer.organizationId,
    });
    clientId = application.client_id;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows what the application asks in English and Italian; Cancel installs nothing, Install installs", async () => {
    const page = await signInToPanel(browser, {
      url: server.url,
      email: owner,
      password: PASSWORD,
      organization: tenant.slug,
    });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/apps`);

    // An unknown client ID: said on the field, nothing to confirm.
    await page.fill("#install-client-id", "dnt_app_000000000000000000000000");
    await page.click('[data-testid="look-up-app"]');
    const fieldError = page.locator('[data-testid="install-client-id-error"]');
    await expect.poll(() => fieldError.textContent()).toBe("no application has this client ID");
    expect(await page.locator("#install-client-id").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator('[data-testid="install-confirm"]').count()).toBe(0);

    await page.fill("#install-client-id", ` ${clientId} `);
    await page.click('[data-testid="look-up-app"]');
    const card = page.locator('[data-testid="install-confirm"]');
    await card.waitFor();
    await expect(card.locator("h3").textContent()).resolves.toMatch(new RegExp(`^Install ${appName} in Org `));
    await expect(card.textContent()).resolves.toContain("https://bridge.example.test/app");
    await expect(card.textContent()).resolves.toContain(`${appName} will be able to:`);
    expect(await permissionLines(page)).toEqual([
      "Read campaigns campaigns:read",
      "Create and edit supporters, export and erase their personal data supporters:write",
      "Refund payments and mark bank transfers paid payments:write",
    ]);
    expect(await installed()).not.toContain(clientId);
    expect(await axe(page)).toEqual([]);

    // The same card in Italian, in the words of the OAuth consent page.
    await page.selectOption('[data-testid="language-switcher"]', "it");
    await expect.poll(() => card.textContent()).toContain(`${appName} potrà:`);
    expect(await permissionLines(page)).toEqual([
      "Leggere le campagne campaigns:read",
      "Creare e modificare i sostenitori, esportarne e cancellarne i dati personali supporters:write",
      "Rimborsare pagamenti e segnare come pagati i bonifici payments:write",
    ]);
    await expect(card.locator('[data-testid="confirm-install"]').textContent()).resolves.toBe("Installa");
    expect(await axe(page)).toEqual([]);

    // Cancel: back to the client ID, nothing installed.
    await page.click('[data-testid="cancel-install"]');
    await page.locator('[data-testid="install-form"]').waitFor();
    expect(await card.count()).toBe(0);
    await expect(page.locator("#install-client-id").inputValue()).resolves.toBe(` ${clientId} `);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("install-client-id");
    expect(await installed()).not.toContain(clientId);

    // Install: installed, in the table.
    await page.click('[data-testid="look-up-app"]');
    await card.waitFor();
    await page.click('[data-testid="confirm-install"]');
    await expect.poll(() => page.locator(".flash").textContent()).toBe(`${appName} installata.`);
    await page.locator(`[data-testid="open-app-${clientId}"]`).waitFor();
    expect(await installed()).toContain(clientId);
    expect(await page.locator("#install-client-id").inputValue()).toBe("");
    expect(await axe(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
