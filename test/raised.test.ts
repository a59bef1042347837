import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** An instant on the calendar and clock of a time zone: year, month (1–12), day, hour, minute, second. */
function calendarOf(timeZone: string, at: number) {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  return parts as Record<"year" | "month" | "day" | "hour" | "minute" | "second", number>;
}

/** The instant midnight of the 1st of a month begins in a time zone (its offset that day, summer time included). */
function monthStartIn(timeZone: string, year: number, month: number): number {
  const wall = Date.UTC(year, month - 1, 1);
  const offsetAt = (at: number) => {
    const c = calendarOf(timeZone, at);
    return Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second) - at;
  };
  return wall - offsetAt(wall - offsetAt(wall));
}

/**
 * One definition of "raised" (docs/campaigns.md#raised): PAID payments less refunds and lost disputes,
 * test payments left out; the same figure on the donation page, the public API, the campaign's GraphQL
 * field and the dashboard, all time and per period of the organization's time zone.
 */
describe("raised", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let browser: Browser | undefined;
  let givenTo = 0;

  beforeAll(async () => {
    server = await startTestServer();
    // A time zone far from UTC: "this year" and "this month" are the organization's.
    tenant = await fakeTenant(server.database.db, { timeZone: "Pacific/Kiritimati" });
    other = await fakeTenant(server.database.db);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const graphql = async (token: string, query: string) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a GraphQL answer read field by field
    return (await response.json()) as { data?: Record<string, any>; errors?: { extensions: { code: string } }[] };
  };

  it("is paid less refunded and lost disputes, without test payments, everywhere it is shown", async () => {
    const db = server.database.db;
    const org = tenant.organizationId;
    const campaign = await fakeCampaign(db, org, {
      slug: `raised-${unique(6)}`,
      goal: 1000,
      isGoalEnabled: true,
      archiveDate: null,
    });
    givenTo = campaign.id;
    const supporter = await fakeSupporter(db, org);
    const second = await fakeSupporter(db, org);
    const gift = (supporterId = supporter.id) =>
      fakeDonation(db, org, { supporterId, campaignId: campaign.id, state: "done", frequency: 0 });
    const now = new Date();
    const lastYear = new Date(now.getTime() - 400 * 86_400_000);
    const pay = async (values: Omit<Parameters<typeof fakePayment>[2], "donationId">, supporterId?: number) =>
      fakePayment(db, org, { donationId: (await gift(supporterId)).id, paymentDate: now, ...values });

    const before = await graphql(tenant.token, "{ dashboard(months: 1) { raised { all_time this_year this_month } } }");
    await pay({ state: "PAID", amount: 50 });
    await pay({ state: "PAID", amount: 30, amountRefunded: 10 });
    await pay({ state: "PAID", amount: 20, disputeStatus: "lost", disputeAmount: 20 });
    await pay({ state: "PAID", amount: 40, disputeStatus: "won", disputeAmount: 40 }, second.id);
    await pay({ state: "PAID", amount: 99, test: true });
    await pay({ state: "REFUNDED", amount: 25, amountRefunded: 25 });
    await pay({ state: "FAILED", amount: 60 });
    await pay({ state: "PENDING", amount: 70 });
    await pay({ state: "PAID", amount: 5, paymentDate: lastYear });
    // 50 + (30 − 10) + 0 (lost dispute) + 40 (won) + 5 (last year) = 115; this year: 110.

    const page = await fetch(`${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`);
    const publicCampaign = (await page.json()) as { raised: number };
    expect(publicCampaign.raised).toBe(115);

    const html = await (await fetch(`${server.url}/donate/${tenant.slug}/${campaign.slug}`)).text();
    expect(html).toContain("€115");
    expect(html).toMatch(/<progress max="1000" value="115"/);

    const read = await graphql(
      tenant.token,
      `{ campaign(id: "${campaign.id}") { raised { all_time this_year this_month donors } } }`,
    );
    expect(read.errors).toBeUndefined();
    // The organization's month may differ from UTC's near a month's edge: this_month is this_year's 110 or 0.
    const raised = read.data?.campaign.raised;
    expect(raised.all_time).toBe(115);
    expect(raised.this_year).toBe(110);
    expect([110, 0]).toContain(raised.this_month);
    expect(raised.donors).toBe(2);

    const after = await graphql(tenant.token, "{ dashboard(months: 1) { raised { all_time this_year this_month } } }");
    expect(after.data?.dashboard.raised.all_time).toBeCloseTo(before.data?.dashboard.raised.all_time + 115, 2);
    expect(after.data?.dashboard.raised.this_year).toBeCloseTo(before.data?.dashboard.raised.this_year + 110, 2);

    // Another organization's campaign is not found, and its dashboard counts none of it.
    const foreign = await graphql(other.token, `{ campaign(id: "${campaign.id}") { raised { all_time } } }`);
    expect(foreign.data?.campaign).toBeNull();
    const elsewhere = await graphql(other.token, "{ dashboard(months: 1) { raised { all_time } } }");
    expect(elsewhere.data?.dashboard.raised.all_time).toBe(0);
  });

  it("counts a payment in the period of the organization's time zone, not UTC's, at a month's and a year's edge", async () => {
    const db = server.database.db;
    const timeZone = "America/Los_Angeles";
    const pacific = await fakeTenant(db, { timeZone });
    const org = pacific.organizationId;
    const campaign = await fakeCampaign(db, org, { slug: `edges-${unique(6)}`, archiveDate: null });
    const supporter = await fakeSupporter(db, org);
    const today = calendarOf(timeZone, Date.now());
    const monthStart = monthStartIn(timeZone, today.year, today.month);
    const yearStart = monthStartIn(timeZone, today.year, 1);
    // Midnight in Los Angeles is 07:00 or 08:00 UTC: a minute either side of it is the same UTC day,
    // so whichever month UTC is in, a UTC count gets at least one of each pair wrong.
    const minute = 60_000;
    const dated: [number, number][] = [
      [monthStart + minute, 1],
      [monthStart - minute, 2],
      [yearStart + minute, 4],
      [yearStart - minute, 8],
    ];
    for (const [at, amount] of dated) {
      const donation = await fakeDonation(db, org, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "done",
        frequency: 0,
      });
      await fakePayment(db, org, { donationId: donation.id, state: "PAID", amount, paymentDate: new Date(at) });
    }
    const sumFrom = (start: number) => dated.reduce((sum, [at, amount]) => (at >= start ? sum + amount : sum), 0);
    // Outside January: 1 this month, 1 + 2 + 4 this year; in January both are 1 + 4.
    const thisMonth = sumFrom(monthStart);
    const thisYear = sumFrom(yearStart);
    expect([thisMonth, thisYear]).toEqual(today.month === 1 ? [5, 5] : [1, 7]);

    const read = await graphql(
      pacific.token,
      `{ dashboard(months: 1) { raised_this_month raised_this_year raised { all_time this_year this_month } }
         campaign(id: "${campaign.id}") { raised { all_time this_year this_month } } }`,
    );
    expect(read.errors).toBeUndefined();
    expect(read.data?.dashboard).toEqual({
      raised_this_month: thisMonth,
      raised_this_year: thisYear,
      raised: { all_time: 15, this_year: thisYear, this_month: thisMonth },
    });
    expect(read.data?.campaign.raised).toEqual({ all_time: 15, this_year: thisYear, this_month: thisMonth });
  });

  it("is zero for a campaign nothing was given to, and needs donations:read", async () => {
    const db = server.database.db;
    const campaign = await fakeCampaign(db, tenant.organizationId, { slug: `empty-${unique(6)}`, archiveDate: null });
    const read = await graphql(tenant.token, `{ campaign(id: "${campaign.id}") { raised { all_time donors } } }`);
    expect(read.data?.campaign.raised).toEqual({ all_time: 0, donors: 0 });

    const campaignsOnly = await fakeTenant(db, { permissions: ["campaigns:read"] });
    const own = await fakeCampaign(db, campaignsOnly.organizationId, { slug: `own-${unique(6)}` });
    const refused = await graphql(campaignsOnly.token, `{ campaign(id: "${own.id}") { title raised { all_time } } }`);
    expect(refused.errors?.[0]?.extensions.code).toBe("insufficient_scope");
  });

  it("shows on the panel's campaign page and the dashboard", async () => {
    const email = `raised-${unique(6)}@example.test`;
    const password = "raised-panel-2026";
    await createUser(server.database.db, { email, password, organization: tenant.slug, role: "member" });
    browser = await launchChromium();
    const page = await signInToPanel(browser, { url: server.url, email, password, organization: tenant.slug });
    // The dashboard: this year's 110 and the 115 of all time (this organization has no other gifts).
    const thisYear = page.locator('[data-testid="raised-this-year"]');
    await expect.poll(() => thisYear.textContent()).toBe("Raised this year€110.00€115.00 since the first gift");
    await page.goto(`${server.url}/admin/o/${tenant.slug}/campaigns/${givenTo}`);
    const raised = page.locator('[data-testid="campaign-raised"]', { hasText: "from 2 donors" });
    await raised.waitFor();
    expect(await raised.textContent()).toMatch(
      /€115\.00 raised, €110\.00 this year, from 2 donors · 11% of the €1,000\.00 goal/,
    );
  });
});
