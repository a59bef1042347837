import AxeBuilder from "@axe-core/playwright";
import { and, asc, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { donations, outboxMessages } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { cycleDueDate } from "../src/payments/schedule.js";
import { auditRowsOf } from "./helpers/audit.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import {
  fakeAppToken,
  fakeCampaign,
  fakeDonation,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

const PASSWORD = "a long enough password";
const ACTIONS = ["change-amount", "change-frequency", "pause-donation", "resume-donation", "cancel-donation"];

/**
 * The admin panel's changes to a recurring gift (the services the donor portal uses), in chromium against
 * the real server: each change is read back through REST as an application sees it, with its audit
 * event and the donor's email in the outbox.
 */
describe("admin panel: changing a recurring donation", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let other: Tenant;
  let appToken: string;
  let adminEmail: string;
  let memberEmail: string;
  let campaignSlug: string;

  const db = () => server.database.db;
  const signIn = (email: string): Promise<Page> =>
    signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: tenant.slug });
  const donationPath = (id: number) => `${server.url}/admin/o/${tenant.slug}/donations/${id}`;

  async function post(path: string, body: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return readResponse(response);
  }

  /** A donor gives monthly through the public checkout API with a sandbox card. */
  async function give(amount = 15) {
    const started = await post(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaignSlug}/checkouts/`, {
      amount,
      frequency: 12,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const first = unique(8);
    const completed = await post(`/api/v1/public/organizations/${tenant.slug}/checkouts/${started.body.id}/complete`, {
      client_secret: started.body.client_secret,
      amount,
      frequency: 12,
      processor: "sandbox",
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" },
      supporter: { email: `${first}@example.org`, first_name: first, last_name: "Donor" },
      consents: { privacy: true },
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    return completed.body.donation as { id: number; supporter_id: number; completed_date: string };
  }

  /** The donation as an application reads it: `GET /api/v1/donations/:id`. */
  async function restDonation(id: number) {
    const response = await server.get(`/api/v1/donations/${id}`, appToken);
    expect(response.status).toBe(200);
    return response.body as Json;
  }

  /** The recurring-gift columns the REST shape leaves out. */
  async function recurringRow(id: number) {
    const [row] = await db()
      .select({
        nextChargeDate: donations.nextChargeDate,
        pausedUntil: donations.pausedUntil,
        cancelledBy: donations.cancelledBy,
        cancelReason: donations.cancelReason,
      })
      .from(donations)
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, id)));
    return row;
  }

  async function auditOf(donationId: number) {
    const rows = await auditRowsOf(db(), tenant.organizationId, ["donation.updated"]);
    // What members and applications did (the donor's checkout and the worker's renewals are events too).
    return rows
      .filter((row) => (row.data as { id: number }).id === donationId)
      .filter((row) => ["user", "application"].includes((row.actor as { type: string }).type))
      .map((row) => ({ actor: (row.actor as { label: string }).label, changes: row.changes }));
  }

  async function outboxOf(donationId: number) {
    const rows = await db()
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.donationId, donationId)))
      .orderBy(asc(outboxMessages.id));
    return rows.map((row) => ({ kind: row.kind, to: row.toAddress, data: row.data as Json }));
  }

  const field = (page: Page, label: string) => page.locator(`.field:has(dt:text-is("${label}")) dd`);
  /** Waits for the page's flash to say this (an earlier action's flash may still be shown until then). */
  const flashed = (page: Page, text: string | RegExp) => page.locator(".flash", { hasText: text }).waitFor();
  const visibleActions = async (page: Page) => {
    const shown: string[] = [];
    for (const action of ACTIONS) if ((await page.locator(`[data-testid="${action}"]`).count()) > 0) shown.push(action);
    return shown;
  };

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(db()), fakeTenant(db())]);
    appToken = await fakeAppToken(db(), tenant, ["donations:read"]);
    adminEmail = `admin-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(db(), { email: adminEmail, password: PASSWORD, organization: tenant.slug, role: "admin" });
    await createUser(db(), { email: memberEmail, password: PASSWORD, organization: tenant.slug, role: "member" });
    const campaign = await fakeCampaign(db(), tenant.organizationId, {
      slug: `recurring-${unique()}`,
      hasOneOff: true,
      hasSubscription: true,
      allowCustomSubscriptionAmount: true,
      minSubscriptionAmount: 5,
      maxSubscriptionAmount: 500,
    });
    campaignSlug = campaign.slug as string;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an admin changes the amount (a too-small one refused on its field), switches to yearly, pauses, resumes and cancels with a reason", async () => {
    const donation = await give(15);
    const completed = new Date(donation.completed_date);
    const page = await signIn(adminEmail);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(donationPath(donation.id));
    await page.locator("h1", { hasText: "monthly donation" }).waitFor();
    expect(await visibleActions(page)).toEqual([
      "change-amount",
      "change-frequency",
      "pause-donation",
      "cancel-donation",
    ]);

    // Amount: below the campaign's minimum, the server's answer sits on the field and nothing changes.
    await page.click('[data-testid="change-amount"]');
    const dialog = page.locator('[data-testid="confirm-dialog"]');
    await expect(dialog.getByLabel("New amount (EUR)").inputValue()).resolves.toBe("15.00");
    await dialog.getByLabel("New amount (EUR)").fill("2");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect(page.locator('[data-field-error="amount"]').textContent()).resolves.toBe(
      "The smallest recurring gift is 5",
    );
    await expect(dialog.getByLabel("New amount (EUR)").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(dialog.locator(".inline-error").textContent()).resolves.toBe(
      "Nothing was changed; see the field above.",
    );
    const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);
    expect((await restDonation(donation.id)).amount).toBe(15);

    await dialog.getByLabel("New amount (EUR)").fill("25");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, /^Amount changed to .?25\.00.? monthly, from the next renewal on/);
    await page.locator("h1", { hasText: "25.00" }).waitFor();
    expect(await restDonation(donation.id)).toMatchObject({
      id: donation.id,
      state: "active",
      amount: 25,
      frequency: 12,
    });

    // Monthly → yearly: the next charge is the first yearly date.
    await page.click('[data-testid="change-frequency"]');
    await expect(dialog.getByLabel("Renews").inputValue()).resolves.toBe("1");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, /^Now yearly: the next charge is on /);
    await page.locator("h1", { hasText: "yearly donation" }).waitFor();
    await expect(field(page, "Frequency").textContent()).resolves.toBe("Yearly");
    // The page shows the re-planned next charge, the date the flash names.
    const nextCharge = (await field(page, "Next charge").textContent()) ?? "";
    await expect(page.locator(".flash").textContent()).resolves.toBe(
      `Now yearly: the next charge is on ${nextCharge}.`,
    );
    expect(await restDonation(donation.id)).toMatchObject({ state: "active", amount: 25, frequency: 1 });
    const yearly = cycleDueDate(completed, 1, 1);
    expect((await recurringRow(donation.id))?.nextChargeDate?.toISOString()).toBe(yearly.toISOString());

    // Pause for 2 cycles: nothing is charged before the third yearly date; Resume replaces Pause.
    await page.click('[data-testid="pause-donation"]');
    await dialog.getByLabel("Renewals to skip").selectOption("2");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, /^Paused: no renewal is charged before /);
    await page.locator('[data-testid="resume-donation"]').waitFor();
    const resumeDate = cycleDueDate(completed, 1, 3);
    expect(await recurringRow(donation.id)).toMatchObject({ pausedUntil: resumeDate, nextChargeDate: resumeDate });
    await expect(field(page, "Paused until").count()).resolves.toBe(1);
    expect(await visibleActions(page)).toEqual([
      "change-amount",
      "change-frequency",
      "resume-donation",
      "cancel-donation",
    ]);
    expect((await restDonation(donation.id)).state).toBe("active");

    await page.click('[data-testid="resume-donation"]');
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, /^Resumed: the next charge is on /);
    await page.locator('[data-testid="pause-donation"]').waitFor();
    await field(page, "Paused until").waitFor({ state: "detached" });
    expect(await recurringRow(donation.id)).toMatchObject({ pausedUntil: null, nextChargeDate: yearly });

    // Cancel, saying why: the page shows who stopped it and the reason; no action is left.
    const reason = "Asked by phone: gives through payroll now";
    await page.click('[data-testid="cancel-donation"]');
    await dialog.getByLabel("Reason (optional)").fill(reason);
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, "Recurring donation cancelled: no further charges.");
    await expect(field(page, "Cancel reason").textContent()).resolves.toBe(reason);
    await expect(field(page, "Cancelled by").textContent()).resolves.toBe("The organization");
    expect(await visibleActions(page)).toEqual([]);
    expect(await restDonation(donation.id)).toMatchObject({ state: "revoked", amount: 25, frequency: 1 });
    expect(await recurringRow(donation.id)).toMatchObject({
      cancelledBy: "admin",
      cancelReason: reason,
      nextChargeDate: null,
      pausedUntil: null,
    });

    // One recorded change per change, by the admin; the refused amount left none.
    const audit = await auditOf(donation.id);
    expect(audit.map((event) => event.actor)).toEqual(Array(5).fill(adminEmail));
    expect(audit.map((event) => event.changes)).toEqual([
      { amount: { before: 15, after: 25 } },
      expect.objectContaining({ frequency: { before: 12, after: 1 } }),
      expect.objectContaining({ paused_until: { before: null, after: resumeDate.toISOString() } }),
      expect.objectContaining({
        paused_until: { before: resumeDate.toISOString(), after: null },
        next_charge_date: { before: resumeDate.toISOString(), after: yearly.toISOString() },
      }),
      {
        state: { before: "active", after: "revoked" },
        cancelled_by: { before: null, after: "admin" },
        cancel_reason: { before: null, after: reason },
      },
    ]);
    // The donor's confirmations, after the new gift's own emails.
    const changes = (await outboxOf(donation.id)).filter(
      (message) => message.kind === "donor_change" || message.kind === "recurring_cancelled",
    );
    expect(changes.map((message) => [message.kind, message.data.change ?? message.data.by])).toEqual([
      ["donor_change", "amount"],
      ["donor_change", "frequency"],
      ["donor_change", "pause"],
      ["donor_change", "pause"],
      ["recurring_cancelled", "admin"],
    ]);
    expect(changes[0]?.data).toMatchObject({ change: "amount", before: 15, after: 25 });
    expect(changes[4]?.data).toMatchObject({ by: "admin", reason });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("a past_due gift offers only a new amount and cancelling; another organization's donation is not found", async () => {
    const donation = await give(15);
    await db()
      .update(donations)
      .set({ state: "past_due" })
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, donation.id)));
    const page = await signIn(adminEmail);
    await page.goto(donationPath(donation.id));
    await page.locator("h1", { hasText: "monthly donation" }).waitFor();
    expect(await visibleActions(page)).toEqual(["change-amount", "cancel-donation"]);
    await page.click('[data-testid="change-amount"]');
    await page.locator('[data-testid="confirm-dialog"]').getByLabel("New amount (EUR)").fill("12.50");
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await flashed(page, /^Amount changed to .?12\.50.? monthly/);
    expect(await restDonation(donation.id)).toMatchObject({ state: "past_due", amount: 12.5 });

    // The same id path with another organization's recurring donation: not found, no action.
    const supporter = await fakeSupporter(db(), other.organizationId);
    const campaign = await fakeCampaign(db(), other.organizationId);
    const foreign = await fakeDonation(db(), other.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
      completedDate: new Date(),
    });
    await page.goto(donationPath(foreign.id));
    await page.locator("h1", { hasText: "Donation not found" }).waitFor();
    expect(await visibleActions(page)).toEqual([]);
    await page.context().close();
  });

  it("a member sees the gift but no action, and the server refuses a member's change", async () => {
    const donation = await give(15);
    const page = await signIn(memberEmail);
    await page.goto(donationPath(donation.id));
    await page.locator("h1", { hasText: "monthly donation" }).waitFor();
    await field(page, "Next charge").waitFor();
    expect(await visibleActions(page)).toEqual([]);
    const answer = await page.evaluate(
      async ({ slug, id }) => {
        const response = await fetch("/admin/graphql/", {
          method: "POST",
          headers: { "content-type": "application/json", "x-donata-organization": slug },
          body: JSON.stringify({
            query: "mutation ($id: ID!) { changeDonationAmount(id: $id, amount: 20) { id } }",
            variables: { id },
          }),
        });
        return (await response.json()) as Json;
      },
      { slug: tenant.slug, id: donation.id },
    );
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: 'Your role (member) does not allow "donations:write"',
        extensions: { code: "insufficient_scope" },
      }),
    ]);
    expect((await restDonation(donation.id)).amount).toBe(15);
    await page.context().close();
  });

  it("a supporter's page links to the Outbox filtered on their emails", async () => {
    const donation = await give(15);
    const page = await signIn(memberEmail);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/${donation.supporter_id}`);
    await page.click('[data-testid="supporter-emails"]');
    await page.waitForURL(new RegExp(`/outbox\\?supporter_id=${donation.supporter_id}$`));
    const table = page.locator('[data-testid="table-outbox"]');
    await table.waitFor();
    const expected = await db()
      .select({ id: outboxMessages.id, to: outboxMessages.toAddress })
      .from(outboxMessages)
      .where(
        and(
          eq(outboxMessages.organizationId, tenant.organizationId),
          eq(outboxMessages.supporterId, donation.supporter_id),
        ),
      );
    expect(expected.length).toBeGreaterThan(0);
    await expect(table.locator("tbody tr").count()).resolves.toBe(expected.length);
    const shown = await table.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id")));
    expect(shown.map(Number).sort((a, b) => a - b)).toEqual(expected.map((row) => row.id).sort((a, b) => a - b));
    await page.getByText(`Supporter #${donation.supporter_id}`).waitFor();
    await page.context().close();
  });
});
