import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import AxeBuilder from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applications, checkoutAttempts, checkoutProtection, organizations, payments } from "../src/db/schema.js";
import { enqueueEmail, updateMessage } from "../src/email/outbox.repo.js";
import { createInstallationToken } from "../src/modules/applications/applications.service.js";
import { updatePaymentDispute } from "../src/modules/payments/payments.repo.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  fakeCampaign,
  fakeCheckout,
  fakeCompletedCheckout,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/** The admin panel in Debian's chromium, against the real server and database. */
describe("admin panel in a browser", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let memberEmail: string;
  let framedApp: Server;
  let framedOrigin: string;

  const signIn = (email: string): Promise<Page> =>
    signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: tenant.slug });

  const rowIds = async (page: Page, collection: string) => {
    const table = page.locator(`[data-testid="table-${collection}"]`);
    await table.waitFor();
    return (
      await table.locator("tr[data-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id")))
    ).map(Number);
  };

  /** axe's WCAG A/AA rules over the page. */
  const axeViolations = async (page: Page) => {
    const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    return result.violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target).join(", ")}`,
    );
  };

  /** Where a table's last column header is, against its scrolling region and the window. */
  const lastColumn = (page: Page, testId: string) =>
    page.locator(`[data-testid="${testId}"]`).evaluate((table) => {
      const region = table.closest(".table-scroll") as HTMLElement;
      const headers = table.querySelectorAll("thead th");
      const last = (headers[headers.length - 1] as HTMLElement).getBoundingClientRect();
      const box = region.getBoundingClientRect();
      return {
        lastRight: last.right,
        regionLeft: box.left,
        regionRight: box.right,
        windowWidth: window.innerWidth,
        scrollWidth: region.scrollWidth,
        clientWidth: region.clientWidth,
        tabIndex: region.tabIndex,
        name: region.getAttribute("aria-label"),
      };
    });

  /** The labels of a chart's money axis, as drawn. */
  const moneyTicks = async (page: Page, testId: string) => {
    const canvas = page.locator(`[data-testid="${testId}"] canvas[data-money-ticks]`);
    await canvas.waitFor();
    return JSON.parse((await canvas.getAttribute("data-money-ticks")) as string) as string[];
  };

  const apiIds = async (path: string) => {
    const response = await server.get(path, tenant.token);
    expect(response.status).toBe(200);
    return (response.body.items as { id: number }[]).map((item) => item.id);
  };

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    owner = `owner-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(db, { email: owner, password: PASSWORD, organization: tenant.slug, role: "owner" });
    await createUser(db, { email: memberEmail, password: PASSWORD, organization: tenant.slug, role: "member" });
    for (let i = 0; i < 23; i++) await fakeCompletedCheckout(db, tenant.organizationId);
    for (let i = 0; i < 4; i++) await fakeCheckout(db, tenant.organizationId, { state: "OPEN" });
    framedApp = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<!doctype html><title>Framed</title><h1>Hello from the app</h1>");
    });
    await new Promise<void>((resolve) => framedApp.listen(0, "127.0.0.1", resolve));
    framedOrigin = `http://127.0.0.1:${(framedApp.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    framedApp?.close();
    await server?.close();
  });

  it("shows the sign-in form to a signed-out visitor without a console error or a failed request", async () => {
    for (const start of ["/admin/", `/admin/o/${tenant.slug}/`]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      const sessionProbes: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console: ${message.text()}`);
      });
      page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
      page.on("requestfailed", (request) => problems.push(`failed: ${request.url()}`));
      page.on("response", (response) => {
        if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
        if (new URL(response.url()).pathname === "/admin/api/session") sessionProbes.push(response.request().method());
      });
      await page.goto(`${server.url}${start}`);
      await page.locator('[data-testid="sign-in-form"] #email').waitFor();
      expect(new URL(page.url()).pathname).toBe("/admin/sign-in");
      expect({ start, problems }).toEqual({ start, problems: [] });
      expect({ start, sessionProbes }).toEqual({ start, sessionProbes: ["GET"] });
      await context.close();
    }
  });

  it("signs in and renders the dashboard with its chart", async () => {
    const page = await signIn(owner);
    await page.locator('[data-testid="dashboard-chart"] canvas').waitFor();
    await expect(page.locator('[data-testid="top-campaigns"]').count()).resolves.toBe(1);
    await page.context().close();
  });

  it("reads an empty dashboard's money axes as distinct amounts (no €1 €1 … €0 €0)", async () => {
    const db = server.database.db;
    const empty = await fakeTenant(db);
    const email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: PASSWORD, organization: empty.slug, role: "owner" });
    const page = await signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: empty.slug });
    for (const chart of ["dashboard-chart", "recurring-chart"]) {
      const labels = await moneyTicks(page, chart);
      expect(labels[0]).toBe("€0");
      expect(labels.length).toBeGreaterThan(1);
      expect(new Set(labels).size).toBe(labels.length);
    }
    await page.context().close();

    // With gifts, every label still says a different amount.
    const full = await signIn(owner);
    const labels = await moneyTicks(full, "dashboard-chart");
    expect(labels.length).toBeGreaterThan(2);
    expect(new Set(labels).size).toBe(labels.length);
    await full.context().close();
  });

  it("at 1280×800 shows every column of the Outbox, donations and dashboard tables; narrower, scrolls to them by keyboard", async () => {
    const db = server.database.db;
    const seeded: [string, string][] = [
      [
        "giovanna.maria.bianchi-ferrari@posta-certificata.example.org",
        "Ricevuta della tua donazione ad Amici della Biblioteca Civica di Sant'Agata",
      ],
      [
        "alessandro.de.santis+donazioni@studio-associato.example.it",
        "Your yearly statement of gifts to the Friends of the Civic Library",
      ],
    ];
    for (const [to, subject] of seeded) {
      const id = (await enqueueEmail(db, { organizationId: tenant.organizationId, kind: "receipt", to })) as number;
      await updateMessage(db, tenant.organizationId, id, {
        state: "captured",
        attempts: 1,
        subject,
        sentDate: new Date(),
      });
    }
    const page = await signIn(owner);
    await page.setViewportSize({ width: 1280, height: 800 });
    const pages: [string, string[]][] = [
      ["", ["recent-checkouts", "open-checkouts"]],
      ["donations", ["table-donations"]],
      ["outbox", ["table-outbox"]],
    ];
    for (const [where, tables] of pages) {
      await page.goto(`${server.url}/admin/o/${tenant.slug}/${where}`);
      for (const table of tables) {
        await page.locator(`[data-testid="${table}"] tbody tr`).first().waitFor();
        const place = await lastColumn(page, table);
        expect(place.lastRight, `${table}: last column's right edge`).toBeLessThanOrEqual(place.regionRight + 1);
        expect(place.regionRight, `${table}: its region's right edge`).toBeLessThanOrEqual(place.windowWidth);
        expect(place.scrollWidth, `${table}: nothing to scroll`).toBeLessThanOrEqual(place.clientWidth + 1);
      }
      expect(await axeViolations(page)).toEqual([]);
    }

    // Where the columns cannot fit, the table scrolls inside its region, which the keyboard reaches.
    await page.setViewportSize({ width: 900, height: 800 });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/donations`);
    await page.locator('[data-testid="table-donations"] tbody tr').first().waitFor();
    const before = await lastColumn(page, "table-donations");
    expect(before.scrollWidth).toBeGreaterThan(before.clientWidth);
    expect(before.lastRight).toBeGreaterThan(before.regionRight);
    expect(before.tabIndex).toBe(0);
    expect(before.name).toMatch(/^Donations/);
    await page.locator('.table-scroll:has([data-testid="table-donations"])').focus();
    for (let press = 0; press < 40; press++) await page.keyboard.press("ArrowRight");
    // Chromium animates keyboard scrolling: on a busy machine the last presses are still gliding.
    await expect
      .poll(async () => {
        const place = await lastColumn(page, "table-donations");
        return place.lastRight - place.regionRight;
      })
      .toBeLessThanOrEqual(1);
    const after = await lastColumn(page, "table-donations");
    expect(after.regionRight).toBeLessThanOrEqual(after.windowWidth);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it("filters, orders and paginates a table exactly like the API, with the state in the URL", async () => {
    const page = await signIn(owner);
    const query = "state=CLOSED&order=-amount&limit=10";
    await page.goto(`${server.url}/admin/o/${tenant.slug}/checkouts?${query}`);
    expect(await rowIds(page, "checkouts")).toEqual(await apiIds(`/api/v1/checkouts/?${query}`));
    await expect(page.locator('[data-testid="pagination-range"]').innerText()).resolves.toMatch(/1.10 of 23/);

    await page.click('[data-testid="page-next"]');
    await page.waitForURL(/offset=10/);
    const second = await apiIds(`/api/v1/checkouts/?${query}&offset=10`);
    await expect.poll(() => rowIds(page, "checkouts")).toEqual(second);

    // The URL alone restores the view (bookmark or shared link).
    const shared = page.url();
    const other = await page.context().newPage();
    await other.goto(shared);
    expect(await rowIds(other, "checkouts")).toEqual(second);

    // The filter form changes the URL and the rows.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/checkouts`);
    await page.selectOption("#filter-state", "OPEN");
    await page.waitForURL(/state=OPEN/);
    await expect.poll(() => rowIds(page, "checkouts")).toEqual(await apiIds("/api/v1/checkouts/?state=OPEN"));
    const csv = await page.locator('[data-testid="download-csv"]').getAttribute("href");
    expect(csv).toContain("state=OPEN");
    await page.context().close();
  });

  it("refunds a payment from its page; shows its refunds and the dispute the processor reported", async () => {
    const db = server.database.db;
    const { payment } = await fakeCompletedCheckout(db, tenant.organizationId);
    await updatePaymentDispute(db, tenant.organizationId, payment.id, {
      id: "dp_panel_1",
      status: "needs_response",
      reason: "product_not_received",
      amount: payment.amount,
      date: new Date("2026-03-04T10:00:00Z"),
    });
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/payments/${payment.id}`);
    const dispute = page.locator("#payment-dispute");
    await expect.poll(() => dispute.textContent()).toContain("dp_panel_1");
    expect(await dispute.textContent()).toContain("product not received");
    // A partial refund first: typed in the dialog; the payment stays PAID for what is kept.
    await page.click(`[data-testid="refund-${payment.id}"]`);
    const amountField = page.locator(`[data-testid="refund-amount-${payment.id}"]`);
    expect(await amountField.inputValue()).toBe(payment.amount.toFixed(2));
    await amountField.fill("too much");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect.poll(() => page.locator("dialog").textContent()).toContain("Enter the amount to refund");
    await amountField.fill("1");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect.poll(() => page.locator(".flash").textContent()).toContain(`of payment #${payment.id} refunded.`);
    const [partly] = await db
      .select({ state: payments.state, amountRefunded: payments.amountRefunded })
      .from(payments)
      .where(and(eq(payments.organizationId, tenant.organizationId), eq(payments.id, payment.id)));
    expect(partly).toEqual({ state: "PAID", amountRefunded: 1 });
    // Then the rest: the dialog offers what is left.
    await page.click(`[data-testid="refund-${payment.id}"]`);
    expect(await amountField.inputValue()).toBe((payment.amount - 1).toFixed(2));
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect
      .poll(async () => (await server.get(`/api/v1/payments/${payment.id}`, tenant.token)).body.state)
      .toBe("REFUNDED");
    const refundsList = page.locator('[data-testid="payment-refunds"]');
    await expect.poll(() => refundsList.textContent()).toContain("SUCCEEDED");
    expect(await page.locator(".flash").textContent()).toBe(`Payment #${payment.id} refunded.`);
    await page.context().close();
  });

  it("edits a campaign, and the API serves the change", async () => {
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId, { archiveDate: null });
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/campaigns/${campaign.id}/edit`);
    const title = `Edited in the panel ${unique(4)}`;
    await page.locator('input[name="title"]').fill(title);
    await page.click('[data-testid="save-campaign"]');
    await expect
      .poll(async () => (await server.get(`/api/v1/campaigns/${campaign.id}`, tenant.token)).body.title)
      .toBe(title);
    await page.context().close();
  });

  it("registers, installs and opens an application in the iframe; uninstalling revokes its token", async () => {
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/developers`);
    await page.fill("#app-name", `Framed app ${unique(4)}`);
    await page.fill("#app-url", `${framedOrigin}/app?tab=1`);
    await page.fill("#app-callbacks", `${framedOrigin}/callback`);
    await page.check('input[name="permissions"][value="checkouts:read"]');
    await page.click('[data-testid="register-app"]');
    const clientId = (await page.locator('[data-testid="client-id"]').innerText()).trim();
    expect(clientId).toMatch(/^dnt_app_/);
    await expect(page.locator('[data-testid="client-secret"]').innerText()).resolves.toMatch(/^dnt_cs_/);

    await page.goto(`${server.url}/admin/o/${tenant.slug}/apps`);
    await page.fill("#install-client-id", clientId);
    // The application's permissions are shown before anything is installed.
    await page.click('[data-testid="look-up-app"]');
    await page.locator('[data-testid="install-permissions"] li').first().waitFor();
    await expect(page.locator('[data-testid="install-permissions"] li').count()).resolves.toBe(1);
    await page.click('[data-testid="confirm-install"]');
    await page.locator(`[data-testid="open-app-${clientId}"]`).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/apps/${clientId}$`));
    const iframe = page.locator('[data-testid="app-iframe"]');
    const src = new URL((await iframe.getAttribute("src")) as string);
    expect(src.origin).toBe(framedOrigin);
    expect(src.searchParams.get("__organization")).toBe(tenant.slug);
    expect(src.searchParams.get("tab")).toBe("1");
    const frame = page.frameLocator('[data-testid="app-iframe"]');
    await expect(frame.locator("h1").innerText()).resolves.toBe("Hello from the app");
    // Served from this machine (as the demo's application): the panel says who has to start it.
    await expect(page.locator('[data-testid="app-frame-note"]').innerText()).resolves.toBe(
      `This app is served from ${framedOrigin}, on your own machine, not by Donata: if the frame stays empty, ` +
        "start it there. The demo's application is npm run example, run in a terminal beside npm start.",
    );

    const tokens = await createInstallationToken(server.database.db, server.config, clientId, tenant.slug);
    expect((await server.get("/api/v1/checkouts/?limit=1", tokens.access_token)).status).toBe(200);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/apps`);
    await page.click(`[data-testid="uninstall-${clientId}"]`);
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect
      .poll(async () => (await server.get("/api/v1/checkouts/?limit=1", tokens.access_token)).status)
      .toBe(401);
    await page.context().close();
  });

  it("registers a public client: no secret shown, nothing to rotate", async () => {
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/developers`);
    const name = `Pocket app ${unique(4)}`;
    await page.fill("#app-name", name);
    await page.fill("#app-url", "https://pocket.example.test/");
    await page.fill("#app-callbacks", "https://pocket.example.test/callback");
    await page.check('input[name="permissions"][value="checkouts:read"]');
    await page.check('[data-testid="public-client"]');
    await page.click('[data-testid="register-app"]');
    const clientId = (await page.locator('[data-testid="client-id"]').innerText()).trim();
    expect(clientId).toMatch(/^dnt_app_/);
    await page.locator('[data-testid="public-client-note"]').waitFor();
    expect(await page.locator('[data-testid="client-secret"]').count()).toBe(0);
    const [row] = await server.database.db
      .select({ clientType: applications.clientType, secretHash: applications.clientSecretHash })
      .from(applications)
      .where(eq(applications.clientId, clientId));
    expect(row).toEqual({ clientType: "public", secretHash: null });
    const item = page.locator(`[data-id="${clientId}"]`);
    await expect(item.innerText()).resolves.toContain("Public (no secret, PKCE)");
    expect(await page.locator(`[data-testid="rotate-${clientId}"]`).count()).toBe(0);
    await page.context().close();
  });

  it("saves the bank transfer details in Settings, shows a checksum error inline, and stores them; the fee formula too", async () => {
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.locator('[data-testid="bank-transfer"]').waitFor();
    await page.getByLabel("IBAN").fill("IT61 X054 2811 1010 0000 0123 456");
    await page.click('[data-testid="save-bank-transfer"]');
    await expect(page.getByRole("alert").first().textContent()).resolves.toContain("the check digits do not match");
    await page.getByLabel("Account holder").fill("Panel Trust");
    await page.getByLabel("IBAN").fill("IT60 X054 2811 1010 0000 0123 456");
    await page.getByLabel("BIC (optional)").fill("BPMOIT22");
    await page.click('[data-testid="save-bank-transfer"]');
    await page.getByText("Bank details saved.").waitFor();
    const [row] = await server.database.db
      .select({ name: organizations.bankAccountName, iban: organizations.iban, bic: organizations.bic })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    expect(row).toEqual({ name: "Panel Trust", iban: "IT60X0542811101000000123456", bic: "BPMOIT22" });

    await expect(page.getByLabel("Percent of the gift").inputValue()).resolves.toBe("2.9");
    await page.getByLabel("Percent of the gift").fill("1.4");
    await page.getByLabel("Fixed amount").fill("0.25");
    await page.click('[data-testid="save-cover-fee"]');
    await page.getByText("Fee formula saved.").waitFor();
    const [fees] = await server.database.db
      .select({ percent: organizations.coverFeePercent, fixed: organizations.coverFeeFixed })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    expect(fees).toEqual({ percent: 1.4, fixed: 0.25 });
    await page.context().close();
  });

  it("does not let a member without admin rights install applications", async () => {
    const page = await signIn(memberEmail);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/apps`);
    await page.locator('[data-testid="install-not-allowed"]').waitFor();
    expect(await page.locator('[data-testid="install-form"]').count()).toBe(0);
    await page.context().close();
  });

  it("shows the card-testing notice, and lets an owner (not a member) turn the form's challenge off", async () => {
    const db = server.database.db;
    const now = Date.now();
    const open = await fakeCheckout(db, tenant.organizationId, { state: "OPEN", amount: 25 });
    for (let i = 0; i < 3; i++) {
      await db.insert(checkoutAttempts).values({
        organizationId: tenant.organizationId,
        checkoutId: open.id,
        amount: 25,
        processor: "sandbox",
        failureCode: "card_declined",
        cardLabel: "Visa •••• 0002",
      });
    }
    await db.insert(checkoutProtection).values({
      organizationId: tenant.organizationId,
      challengeUntil: new Date(now + 3600_000),
      lastSpikeDate: new Date(now),
    });

    const memberPage = await signIn(memberEmail);
    await memberPage.locator('[data-testid="under-attack"]').waitFor();
    expect(await memberPage.locator('[data-testid="toggle-challenge"]').count()).toBe(0);
    await memberPage.context().close();

    const page = await signIn(owner);
    const notice = page.locator('[data-testid="under-attack"]');
    await notice.waitFor();
    await expect(notice.textContent()).resolves.toContain("Your donation form is under a card-testing attack.");
    await expect(notice.textContent()).resolves.toContain("3 declined payments in the last hour");
    await expect(page.getByRole("heading", { name: /Donation form protection/ }).textContent()).resolves.toBe(
      "Donation form protection: challenge on",
    );
    await page.locator('[data-testid="toggle-challenge"]').click();
    await page.getByRole("dialog").getByRole("button", { name: "Turn off" }).click();
    await page.getByRole("heading", { name: "Donation form protection: challenge off" }).waitFor();
    expect(await notice.count()).toBe(0);
    await expect(page.locator('[data-testid="protection-status"]').textContent()).resolves.toContain(
      `Last changed by ${owner}`,
    );
    const [row] = await db
      .select()
      .from(checkoutProtection)
      .where(eq(checkoutProtection.organizationId, tenant.organizationId));
    expect(row).toMatchObject({ challengeForced: false, challengeUntil: null, changedDate: expect.any(Date) });

    await page.locator('[data-testid="toggle-challenge"]').click();
    await page.getByRole("dialog").getByRole("button", { name: "Turn on" }).click();
    await page.getByRole("heading", { name: "Donation form protection: challenge on" }).waitFor();
    await page.locator('[data-testid="toggle-challenge"]').click();
    await page.getByRole("dialog").getByRole("button", { name: "Turn off" }).click();
    await page.getByRole("heading", { name: "Donation form protection: challenge off" }).waitFor();
    await page.context().close();
  });
});
