import AxeBuilder from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxMessages } from "../src/db/schema.js";
import { enqueueEmail, updateMessage } from "../src/email/outbox.repo.js";
import { findOrganizationBySlug } from "../src/modules/organizations/organizations.repo.js";
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
import { flushOutbox } from "./helpers/smtp.js";

const PASSWORD = "a long enough password";
const REJECTED = "550 5.1.1 <gone@example.test>: Recipient address rejected";

/** The Outbox and Settings → Email in the admin panel, in chromium, against the real server (captured mode). */
describe("admin panel: Outbox and Settings → Email", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let memberEmail: string;
  let capturedId: number;
  let failedId: number;
  let scriptedId: number;

  const signIn = (email: string): Promise<Page> =>
    signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: tenant.slug });

  /** axe's WCAG A/AA rules over the page (the email itself, in its frame, is the templates' own test). */
  const axeViolations = async (page: Page) => {
    const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).exclude("iframe").analyze();
    return result.violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target).join(", ")}`,
    );
  };

  const stateOf = async (id: number) =>
    (
      await server.database.db
        .select({ state: outboxMessages.state })
        .from(outboxMessages)
        .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.id, id)))
    )[0]?.state;

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    owner = `owner-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(db, { email: owner, password: PASSWORD, organization: tenant.slug, role: "owner" });
    await createUser(db, { email: memberEmail, password: PASSWORD, organization: tenant.slug, role: "member" });

    // A real message, rendered and captured by the delivery (no SMTP_URL).
    capturedId =
      (await enqueueEmail(db, {
        organizationId: tenant.organizationId,
        kind: "donor_sign_in",
        to: "donor@example.test",
        data: { url: `${server.config.baseUrl}/donor/${tenant.slug}/enter?token=panel${unique(6)}` },
      })) ?? 0;
    await flushOutbox(server, tenant.organizationId);
    // One the mail server refused, and one whose HTML tries to run a script.
    failedId =
      (await enqueueEmail(db, { organizationId: tenant.organizationId, kind: "receipt", to: "gone@example.test" })) ??
      0;
    await updateMessage(db, tenant.organizationId, failedId, {
      state: "failed",
      attempts: 1,
      lastError: REJECTED,
      subject: "Your receipt",
      html: "<p>Receipt</p>",
      text: "Receipt",
      headers: {},
    });
    scriptedId =
      (await enqueueEmail(db, { organizationId: tenant.organizationId, kind: "receipt", to: "x@example.test" })) ?? 0;
    await updateMessage(db, tenant.organizationId, scriptedId, {
      state: "captured",
      attempts: 1,
      subject: "Scripted",
      html: `<html><body><p id="shown">Harmless text</p><script>document.body.setAttribute("data-ran", "yes"); parent.document.title = "pwned";</script></body></html>`,
      text: "Scripted",
      headers: {},
      sentDate: new Date(),
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("lists emails with their state, shows a captured one's HTML in a sandboxed frame, retries and cancels", async () => {
    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.click('nav[aria-label="Main"] >> text=Outbox');
    await page.waitForURL(/\/outbox$/);
    const table = page.locator('[data-testid="table-outbox"]');
    await table.waitFor();
    await expect(table.locator("tbody tr").count()).resolves.toBe(3);
    await expect(table.locator(`tr[data-id="${failedId}"]`).textContent()).resolves.toContain("failed");
    await expect(table.locator(`tr[data-id="${capturedId}"]`).textContent()).resolves.toContain("captured");
    // Captured on a server not in production: no warning, the page says what captured means.
    expect(await page.locator('[data-testid="mail-not-delivered"]').count()).toBe(0);

    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("State").selectOption("failed");
    await page.waitForURL(/\?state=failed$/);
    await table.locator(`tr[data-id="${capturedId}"]`).waitFor({ state: "detached" });
    await expect(table.locator("tbody tr").count()).resolves.toBe(1);
    await page.getByLabel("State").selectOption("");

    // The captured sign-in email, as the donor would get it.
    await table.locator(`tr[data-id="${capturedId}"] a`).click();
    await page.waitForURL(new RegExp(`/outbox/${capturedId}$`));
    const frame = page.locator('[data-testid="email-frame"]');
    await expect(frame.getAttribute("sandbox")).resolves.toBe("");
    const name = (await findOrganizationBySlug(server.database.db, tenant.slug))?.name ?? "";
    const inside = page.frameLocator('[data-testid="email-frame"]');
    await inside.getByText("Sign in", { exact: true }).waitFor();
    await expect(inside.locator("body").textContent()).resolves.toContain(name);
    await expect(page.locator('[data-testid="email-text"]').textContent()).resolves.toContain("/enter?token=panel");
    await expect(page.locator('[data-testid="table-headers"]').textContent()).resolves.toContain("Auto-Submitted");
    await expect
      .poll(() => page.locator("h1").textContent(), { timeout: 15_000 })
      .toBe(`Your sign-in link for ${name}`);
    expect(await axeViolations(page)).toEqual([]);
    // Captured: nothing to retry or cancel.
    await expect(page.locator('[data-testid="retry-message"], [data-testid="cancel-message"]').count()).resolves.toBe(
      0,
    );

    // An email's own script never runs in the panel.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/outbox/${scriptedId}`);
    const scripted = page.frameLocator('[data-testid="email-frame"]');
    await scripted.locator("#shown").waitFor();
    await expect(scripted.locator("body").getAttribute("data-ran")).resolves.toBeNull();
    expect(await page.title()).not.toBe("pwned");

    // A refused one: the server's answer, then Retry (back to the queue), then Cancel.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/outbox/${failedId}`);
    await expect(page.locator('[data-testid="last-error"]').textContent()).resolves.toContain(REJECTED);
    await page.click('[data-testid="retry-message"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await page.getByText("Back in the queue: it is sent within a few seconds.").waitFor();
    expect(await stateOf(failedId)).toBe("queued");
    await page.click('[data-testid="cancel-message"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await page.getByText("Cancelled: this email will not be sent.").waitFor();
    expect(await stateOf(failedId)).toBe("cancelled");
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("finds an email by its recipient, from a search box kept in the URL", async () => {
    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/outbox`);
    const table = page.locator('[data-testid="table-outbox"]');
    await table.waitFor();
    const rows = () =>
      table.locator("tr[data-id]").evaluateAll((found) => found.map((row) => Number(row.getAttribute("data-id"))));
    await expect.poll(rows).toEqual([scriptedId, failedId, capturedId]);

    // Part of the address, in any case: applied as one types, kept in the URL.
    const search = page.getByLabel("Recipient");
    await expect(search.getAttribute("type")).resolves.toBe("search");
    await search.fill("GONE@");
    await page.waitForURL(/\?recipient=GONE%40$/);
    await expect.poll(rows).toEqual([failedId]);
    await expect(page.locator('[data-testid="pagination-range"]').textContent()).resolves.toBe("1 message");
    expect(await axeViolations(page)).toEqual([]);

    // With the other filters, and from the URL alone (a bookmark, a shared link).
    await page.getByLabel("State").selectOption("captured");
    await page.waitForURL(/recipient=GONE%40&state=captured$/);
    await page.getByText("No message matches these filters.").waitFor();
    const shared = await page.context().newPage();
    await shared.goto(`${server.url}/admin/o/${tenant.slug}/outbox?recipient=donor%40example`);
    await expect(shared.getByLabel("Recipient").inputValue()).resolves.toBe("donor@example");
    await expect
      .poll(() =>
        shared
          .locator('[data-testid="table-outbox"] tr[data-id]')
          .evaluateAll((found) => found.map((row) => Number(row.getAttribute("data-id")))),
      )
      .toEqual([capturedId]);
    await shared.close();

    // Cleared: every email again, and nothing left in the URL.
    await page.getByLabel("State").selectOption("");
    await search.fill("");
    await page.waitForURL(/\/outbox$/);
    await expect.poll(rows).toEqual([scriptedId, failedId, capturedId]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("Settings → Email: field errors, saved settings, a preview per message and language, yearly statements", async () => {
    const db = server.database.db;
    const year = new Date().getUTCFullYear() - 1;
    for (const month of ["03", "07"]) {
      const supporter = await fakeSupporter(db, tenant.organizationId);
      const campaign = await fakeCampaign(db, tenant.organizationId);
      const donation = await fakeDonation(db, tenant.organizationId, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "done",
      });
      await fakePayment(db, tenant.organizationId, {
        donationId: donation.id,
        state: "PAID",
        paymentDate: new Date(`${year}-${month}-10T10:00:00Z`),
      });
    }

    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.click('nav[aria-label="Main"] >> text=Email');
    await page.waitForURL(/\/settings\/email$/);

    await page.getByLabel("Organization email").fill("not an email");
    await page.getByLabel("Tell us about new gifts").selectOption("daily");
    await page.click('[data-testid="save-email-settings"]');
    await expect(page.locator('[data-field-error="email"]').textContent()).resolves.toBe(
      "must be an email address, like donations@example.org",
    );
    await expect(page.getByLabel("Organization email").getAttribute("aria-invalid")).resolves.toBe("true");

    await page.getByLabel("Organization email").fill("gifts@example.org");
    await page.getByLabel("Language of emails").selectOption("it");
    await page.click('[data-testid="save-email-settings"]');
    await page.getByText("Email settings saved.").waitFor();
    expect(await findOrganizationBySlug(db, tenant.slug)).toMatchObject({
      email: "gifts@example.org",
      locale: "it",
      giftNotifications: "daily",
    });

    // The preview follows the organization's language; another can be chosen.
    const name = (await findOrganizationBySlug(db, tenant.slug))?.name ?? "";
    const historyLength = await page.evaluate(() => history.length);
    await page.getByLabel("Message", { exact: true }).selectOption("donor_sign_in");
    const subject = page.locator('[data-testid="preview-subject"]');
    await page.getByText(`Il tuo link di accesso per ${name}`).waitFor();
    const preview = page.frameLocator('[data-testid="preview-frame"]');
    await preview.getByText("Accedi", { exact: true }).waitFor();
    await expect(preview.locator("body").textContent()).resolves.toContain("gifts@example.org");
    await expect(page.locator('[data-testid="preview-frame"]').getAttribute("sandbox")).resolves.toBe("");
    await page.getByLabel("Language", { exact: true }).selectOption("en");
    await page.getByText(`Your sign-in link for ${name}`).waitFor();
    await expect(subject.textContent()).resolves.toBe(`Your sign-in link for ${name}`);
    await preview.getByText("Sign in", { exact: true }).waitFor();
    // Each preview is a new frame, not a navigation of the old one: Back still leaves the page.
    expect(await page.evaluate(() => history.length)).toBe(historyLength);

    expect(await axeViolations(page)).toEqual([]);
    // Yearly statements: queued once; sending again queues nothing.
    await page.getByLabel("Year", { exact: true }).fill(String(year));
    await page.click('[data-testid="send-statements-button"]');
    const result = page.locator('[data-testid="statements-result"]');
    await expect(result.textContent()).resolves.toBe(
      `${year}: 2 statements queued, 0 already sent, 0 supporters without an email.`,
    );
    // Each donor's statement is issued as its email is delivered: the year's statements then download as one ZIP of PDFs.
    await flushOutbox(server, tenant.organizationId);
    const zipLink = page.locator('[data-testid="download-statements-zip"]');
    await expect(zipLink.textContent()).resolves.toBe(`Download the ${year} statements (ZIP of PDFs)`);
    const zip = await page.request.get(`${server.url}${await zipLink.getAttribute("href")}`);
    expect(zip.headers()["content-type"]).toBe("application/zip");
    const files = Object.keys(unzipSync(new Uint8Array(await zip.body())));
    expect(files).toHaveLength(2);
    for (const file of files) expect(file).toMatch(new RegExp(`^statement-${year}-S\\d{6}\\.pdf$`));
    await page.click('[data-testid="send-statements-button"]');
    await page.getByText(`${year}: 0 statements queued, 2 already sent, 0 supporters without an email.`).waitFor();
    await page.getByLabel("Year", { exact: true }).fill("1999");
    await page.click('[data-testid="send-statements-button"]');
    await expect(page.locator('[data-field-error="year"]').textContent()).resolves.toMatch(
      /^use a year from 2000 to \d{4}$/,
    );
    expect(errors).toEqual([]);

    // Members see the settings and previews, not the form's button nor the statements.
    const memberPage = await signIn(memberEmail);
    await memberPage.goto(`${server.url}/admin/o/${tenant.slug}/settings/email`);
    await memberPage.getByText("Only owners and admins can change these settings.").waitFor();
    await expect(memberPage.locator('[data-testid="send-statements"]').count()).resolves.toBe(0);
    await memberPage.getByLabel("Message", { exact: true }).selectOption("donor_sign_in");
    await memberPage.frameLocator('[data-testid="preview-frame"]').getByText("Accedi", { exact: true }).waitFor();
    await memberPage.context().close();
    await page.context().close();
  });
});

describe("admin panel: a production server without SMTP_URL", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer({ production: true, allowHttp: true, smtpUrl: undefined }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("warns on the Outbox that email is not being delivered, and that card giving is not set up", async () => {
    const tenant = await fakeTenant(server.database.db);
    const email = `owner-${unique(6)}@example.test`;
    await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role: "member" });
    const page = await signInToPanel(browser, {
      url: server.url,
      email,
      password: PASSWORD,
      organization: tenant.slug,
    });
    await page.goto(`${server.url}/admin/o/${tenant.slug}/outbox`);
    const warning = page.locator('[data-testid="mail-not-delivered"]');
    await warning.waitFor();
    await expect(warning.textContent()).resolves.toContain(
      "Email is not being delivered. This server has no mail server (SMTP_URL): donors get no receipts, sign-in links or any other email.",
    );
    // Nor is the sandbox offered in production: the organization, with no processor, is told what to do.
    const noProcessor = page.locator('[data-testid="no-processor-banner"]');
    await noProcessor.waitFor();
    await expect(noProcessor.textContent()).resolves.toContain(
      "Online giving by card is not set up. Donors cannot give by card yet. Connect Stripe in Settings → Payments",
    );
    await page.context().close();
  });
});
