import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/modules/users/users.service.js";
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
const LIST = "count items { id name email first_gift_date last_gift_date last_year_total lifetime_total }";
const QUERY = `query($year: Int) { retention(year: $year) {
  year currency minor_unit_exponent time_zone
  rate { rate retained last_year_donors }
  lybunt { ${LIST} } sybunt { ${LIST} } first_time { ${LIST} }
} }`;

type Gift = { at: string; amount: number; state?: string; refunded?: number; test?: boolean };

/** Retention through the real server: GraphQL and the CSV downloads, one organization's gifts only. */
describe("retention: lapsed, new and retained donors", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let cookie: string;
  let otherCookie: string;
  const people: Record<string, { id: number; name: string; email: string }> = {};

  const signIn = async (organization: string) => {
    const email = `owner-${unique(6)}@example.test`;
    await createUser(server.database.db, { email, password: PASSWORD, organization, role: "owner" });
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    return (
      (response.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "").split(";")[0] ?? ""
    );
  };
  const graphql = async (session: string, organization: string, variables: object = {}, query = QUERY) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: session, "x-donata-organization": organization },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };
  const csv = async (segment: string, query: string, session = cookie, organization = tenant.slug) => {
    const response = await fetch(
      `${server.url}/admin/export/retention-${segment}.csv?organization=${organization}&${query}`,
      { headers: { cookie: session } },
    );
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
  };

  /** A supporter and their payments, each a one-off donation. */
  const giver = async (t: Tenant, key: string, gifts: Gift[]) => {
    const db = server.database.db;
    const campaign = await fakeCampaign(db, t.organizationId);
    const supporter = await fakeSupporter(db, t.organizationId, { firstName: key, lastName: "Rossi" });
    people[key] = { id: supporter.id, name: `${key} Rossi`, email: supporter.email ?? "" };
    for (const gift of gifts) {
      const donation = await fakeDonation(db, t.organizationId, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        amount: gift.amount,
        frequency: 0,
        state: "done",
      });
      await fakePayment(db, t.organizationId, {
        donationId: donation.id,
        amount: gift.amount,
        amountRefunded: gift.refunded ?? 0,
        state: gift.state ?? "PAID",
        paymentDate: new Date(gift.at),
        test: gift.test ?? false,
      });
    }
  };

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([
      fakeTenant(server.database.db, { timeZone: "Europe/Rome", currency: "EUR" }),
      fakeTenant(server.database.db, { timeZone: "Europe/Rome", currency: "EUR" }),
    ]);
    // One after the other: users and memberships are Citus reference tables, whose concurrent
    // writes in two transactions at once can deadlock across the workers.
    cookie = await signIn(tenant.slug);
    otherCookie = await signIn(other.slug);
    // Gave in 2024 and again in 2025 (a partly refunded gift still counts): retained.
    await giver(tenant, "alice", [
      { at: "2024-05-10T10:00:00Z", amount: 10 },
      { at: "2025-02-01T10:00:00Z", amount: 20, refunded: 5 },
    ]);
    // 2023 and 2024, not 2025 (a 2026 gift is after the year asked): LYBUNT.
    await giver(tenant, "bob", [
      { at: "2023-03-01T10:00:00Z", amount: 5 },
      { at: "2024-06-01T10:00:00Z", amount: 16, refunded: 0.5 },
      { at: "2026-01-15T10:00:00Z", amount: 99 },
    ]);
    // Only 2022: SYBUNT.
    await giver(tenant, "carol", [{ at: "2022-07-01T10:00:00Z", amount: 30 }]);
    // 23:30 UTC on 31 December 2024 is 00:30 on 1 January 2025 in Rome: a first gift in 2025.
    await giver(tenant, "dan", [{ at: "2024-12-31T23:30:00Z", amount: 7.25 }]);
    // 2024 paid; in 2025 only a refunded and a failed payment: LYBUNT.
    await giver(tenant, "erin", [
      { at: "2024-09-01T10:00:00Z", amount: 12 },
      { at: "2025-03-01T10:00:00Z", amount: 40, state: "REFUNDED", refunded: 40 },
      { at: "2025-04-01T10:00:00Z", amount: 41, state: "FAILED" },
    ]);
    // Refunded, failed, pending and test payments are no gifts.
    await giver(tenant, "frank", [
      { at: "2024-02-01T10:00:00Z", amount: 9, state: "REFUNDED", refunded: 9 },
      { at: "2025-02-01T10:00:00Z", amount: 9, state: "FAILED" },
      { at: "2025-02-02T10:00:00Z", amount: 9, state: "PENDING" },
    ]);
    await giver(tenant, "gina", [{ at: "2024-02-01T10:00:00Z", amount: 8, test: true }]);
    // Another organization's donor of 2024.
    await giver(other, "zed", [{ at: "2024-04-01T10:00:00Z", amount: 50 }]);
  });
  afterAll(() => server?.close());

  const row = (key: string, first: string, last: string, lastYear: number, lifetime: number) => ({
    id: people[key]?.id,
    name: people[key]?.name,
    email: people[key]?.email,
    first_gift_date: new Date(first).toISOString(),
    last_gift_date: new Date(last).toISOString(),
    last_year_total: lastYear,
    lifetime_total: lifetime,
  });

  it("lists lapsed, long-lapsed and new donors of a year with exact totals, and the retention rate", async () => {
    const { body } = await graphql(cookie, tenant.slug, { year: 2025 });
    expect(body.errors).toBeUndefined();
    expect(body.data.retention).toEqual({
      year: 2025,
      currency: "EUR",
      minor_unit_exponent: 2,
      time_zone: "Europe/Rome",
      rate: { rate: 1 / 3, retained: 1, last_year_donors: 3 },
      lybunt: {
        count: 2,
        items: [
          row("erin", "2024-09-01T10:00:00Z", "2024-09-01T10:00:00Z", 1200, 1200),
          row("bob", "2023-03-01T10:00:00Z", "2024-06-01T10:00:00Z", 1550, 2050),
        ],
      },
      sybunt: { count: 1, items: [row("carol", "2022-07-01T10:00:00Z", "2022-07-01T10:00:00Z", 0, 3000)] },
      first_time: { count: 1, items: [row("dan", "2024-12-31T23:30:00Z", "2024-12-31T23:30:00Z", 0, 725)] },
    });

    // 2024: alice, bob and erin gave; bob gave in 2023, so alice and erin are new; nobody of 2023's donors lapsed.
    const before = await graphql(cookie, tenant.slug, { year: 2024 });
    expect(before.body.data.retention.rate).toEqual({ rate: 1, retained: 1, last_year_donors: 1 });
    expect(before.body.data.retention.first_time.items.map((item: { id: number }) => item.id)).toEqual([
      people.erin?.id,
      people.alice?.id,
    ]);
    expect(before.body.data.retention.lybunt.count).toBe(0);
    expect(before.body.data.retention.sybunt.items.map((item: { id: number }) => item.id)).toEqual([people.carol?.id]);

    // Pages: limit and offset.
    const paged = await graphql(
      cookie,
      tenant.slug,
      { year: 2025 },
      "query($year: Int) { retention(year: $year) { lybunt(limit: 1, offset: 1) { count items { id } } } }",
    );
    expect(paged.body.data.retention.lybunt).toEqual({ count: 2, items: [{ id: people.bob?.id }] });

    // Nobody gave in 1999: no rate.
    const empty = await graphql(cookie, tenant.slug, { year: 2000 });
    expect(empty.body.data.retention.rate).toEqual({ rate: null, retained: 0, last_year_donors: 0 });
  });

  it("defaults to this year of the organization's time zone", async () => {
    const { body } = await graphql(cookie, tenant.slug);
    const year = Number(new Intl.DateTimeFormat("en", { timeZone: "Europe/Rome", year: "numeric" }).format(new Date()));
    expect(body.data.retention.year).toBe(year);
  });

  it("shows another organization nothing of this one's donors", async () => {
    const { body } = await graphql(otherCookie, other.slug, { year: 2025 });
    expect(body.data.retention.rate).toEqual({ rate: 0, retained: 0, last_year_donors: 1 });
    expect(body.data.retention.lybunt.items.map((item: { id: number }) => item.id)).toEqual([people.zed?.id]);
    expect(body.data.retention.sybunt.count).toBe(0);
    expect(body.data.retention.first_time.count).toBe(0);
    // This organization's session cannot name the other organization.
    const foreign = await graphql(cookie, other.slug, { year: 2025 });
    expect(foreign.body.data ?? null).toBeNull();
    expect(foreign.body.errors[0].extensions.code).toBe("not_a_member");
    expect((await csv("lybunt", "year=2025", cookie, other.slug)).status).toBe(403);
    const theirs = await csv("lybunt", "year=2025", otherCookie, other.slug);
    expect(theirs.text).not.toContain(people.bob?.email);
  });

  it("refuses a year out of range with a clear error", async () => {
    for (const year of [0, 10000, -1]) {
      const { status, body } = await graphql(cookie, tenant.slug, { year });
      expect(status).toBe(200);
      expect(body.data).toBeNull();
      expect(body.errors[0].message).toBe('Invalid argument "year": must be 1900 to 9999');
      expect(body.errors[0].extensions).toEqual({
        code: "invalid_request",
        errors: [{ parameter: "year", message: "must be 1900 to 9999" }],
      });
    }
    const page = await graphql(cookie, tenant.slug, {}, "{ retention(year: 2025) { lybunt(limit: 0) { count } } }");
    expect(page.body.errors[0].extensions.errors).toEqual([{ parameter: "limit", message: "must be 1 to 1000" }]);
    expect((await csv("lybunt", "year=0")).status).toBe(400);
    expect((await csv("lybunt", "year=10000")).status).toBe(400);
    expect((await csv("lybunt", "year=twenty")).status).toBe(400);
  });

  it("downloads each list as CSV, as the panel's session", async () => {
    const lybunt = await csv("lybunt", "year=2025");
    expect(lybunt.status).toBe(200);
    expect(lybunt.type).toBe("text/csv; charset=utf-8");
    expect(lybunt.text).toBe(
      "supporter_id,name,email,first_gift_date,last_gift_date,last_year_total,lifetime_total,currency\r\n" +
        `${people.erin?.id},erin Rossi,${people.erin?.email},2024-09-01T10:00:00.000Z,2024-09-01T10:00:00.000Z,12.00,12.00,EUR\r\n` +
        `${people.bob?.id},bob Rossi,${people.bob?.email},2023-03-01T10:00:00.000Z,2024-06-01T10:00:00.000Z,15.50,20.50,EUR\r\n`,
    );
    const sybunt = await csv("sybunt", "year=2025");
    expect(sybunt.text.trim().split("\r\n")).toHaveLength(2);
    expect(sybunt.text).toContain(`${people.carol?.id},carol Rossi`);
    const first = await csv("first_time", "year=2025");
    expect(first.text).toContain(",0.00,7.25,EUR\r\n");
    expect((await csv("lybunt", "year=2025", "")).status).toBe(401);
  });
});
