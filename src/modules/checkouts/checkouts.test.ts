import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCollectionContract } from "../../../test/helpers/collection-contract.js";
import {
  fakeCampaign,
  fakeCheckout,
  fakeCompletedCheckout,
  fakePayment,
  fakeTenant,
  type Tenant,
} from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { CHECKOUT_ORDER_FIELDS } from "./checkouts.schemas.js";

const SPEC_FIELDS = [
  "id",
  "create_date",
  "update_date",
  "campaign",
  "supporter",
  "donation",
  "payment",
  "state",
  "amount",
  "completed_date",
  "frequency",
  "cost_example_quantity",
  "payment_method_processor",
  "payment_method_label",
  "payment_method_id",
];

describeCollectionContract({
  collection: "checkouts",
  orderFields: CHECKOUT_ORDER_FIELDS,
  wireFields: SPEC_FIELDS,
  async populate(db, organizationId, count, sharedDate) {
    for (let index = 0; index < count; index++) {
      const createDate = index % 3 === 0 ? sharedDate : new Date(Date.UTC(2026, 0, 1 + index, 12));
      if (index % 2 === 0) await fakeCompletedCheckout(db, organizationId, { checkout: { createDate } });
      else await fakeCheckout(db, organizationId, { createDate, state: "OPEN" });
    }
  },
});

describe("checkouts: embedded records", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(() => server?.close());

  it("embeds campaign, supporter, donation and payment with its method, mirrored at the top level", async () => {
    const made = await fakeCompletedCheckout(server.database.db, tenant.organizationId);
    const response = await server.get(`/api/v1/checkouts/${made.checkout.id}`, tenant.token);
    expect(response.status).toBe(200);
    const checkout = response.body;
    expect(checkout.campaign.id).toBe(made.campaign.id);
    expect(checkout.campaign.title).toBe(made.campaign.title);
    expect(checkout.supporter).toMatchObject({ id: made.supporter.id, email: made.supporter.email });
    expect(checkout.donation).toMatchObject({ id: made.donation.id, code: made.donation.code, state: "done" });
    expect(checkout.payment).toMatchObject({ id: made.payment.id, state: "PAID", donation_id: made.donation.id });
    expect(checkout.payment.payment_method).toMatchObject({ id: made.method.id, label: made.method.label });
    expect(checkout.payment_method_id).toBe(made.method.id);
    expect(checkout.payment_method_processor).toBe(made.method.processor);
    expect(checkout.payment_method_label).toBe(made.method.label);
    expect(checkout.state).toBe("CLOSED");
    expect(checkout.create_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("shows a bare open checkout with null relations", async () => {
    const bare = await fakeCheckout(server.database.db, tenant.organizationId, {
      state: "OPEN",
      amount: null,
      frequency: null,
      costExampleQuantity: 0,
    });
    const response = await server.get(`/api/v1/checkouts/${bare.id}`, tenant.token);
    expect(response.body).toEqual({
      id: bare.id,
      create_date: bare.createDate.toISOString(),
      update_date: bare.updateDate.toISOString(),
      campaign: null,
      supporter: null,
      donation: null,
      payment: null,
      state: "OPEN",
      amount: null,
      completed_date: null,
      frequency: null,
      cost_example_quantity: 0,
      payment_method_processor: null,
      payment_method_label: null,
      payment_method_id: null,
    });
  });
});

describe("checkouts: embedded records equal their own collection's reads", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(() => server?.close());

  // The list builds the embedded records in SQL, in wire form; each must be exactly what the
  // record's own endpoint serves, for every field, null or not.
  it("embeds campaign, supporter, donation and payment as GET /api/v1/<collection>/{id} shows them", async () => {
    const db = server.database.db;
    const org = tenant.organizationId;
    const shared = await fakeCampaign(db, org, {
      goal: 1234.5,
      isGoalEnabled: true,
      defaultAmount: 20,
      defaultSubscriptionAmount: 7.25,
      maxSubscriptionAmount: 99.99,
      asks: ["10.50", "25", "1000000.01"],
      asksSubscription: null,
      shownFields: ["first_name", "email"],
      requiredFields: [],
      privacyNote: 'Quotes " and \\ backslashes, accents: àé, and "•"',
      tags: ["a", "b c", ""],
      costExampleAmount: 10,
      costExampleLabel: "one kit",
      archiveDate: new Date("2026-02-03T04:05:06.007Z"),
      createDate: new Date("0999-12-31T23:59:59.999Z"),
      updateDate: new Date("9999-12-31T23:59:59.999Z"),
    });
    const made = [
      await fakeCompletedCheckout(db, org, {
        supporter: { dateOfBirth: "1970-01-01", businessName: "ACME", note: "line\nbreak", sex: "FEMALE" },
      }),
      await fakeCompletedCheckout(db, org, { supporter: { eraseDate: new Date("2026-05-06T07:08:09.010Z") } }),
    ];
    const withShared = await fakeCompletedCheckout(db, org);
    await fakeCheckout(db, org, { campaignId: shared.id, state: "OPEN", createDate: new Date("2026-01-01T00:00:00Z") });
    await fakeCheckout(db, org, { campaignId: shared.id, supporterId: withShared.supporter.id, state: "OPEN" });
    // A payment without a method, and a checkout with no relation at all.
    const payment = await fakePayment(db, org, { donationId: withShared.donation.id, paymentMethodId: null });
    await fakeCheckout(db, org, { campaignId: shared.id, donationId: withShared.donation.id, paymentId: payment.id });
    await fakeCheckout(db, org, { state: "OPEN" });
    expect(made).toHaveLength(2);

    const list = await server.get("/api/v1/checkouts/?limit=1000", tenant.token);
    expect(list.status).toBe(200);
    type Method = { id: number; processor: string; label: string };
    type Embedded = { id: number; payment_method?: Method | null };
    const relations = ["campaign", "supporter", "donation", "payment"] as const;
    const collections = { campaign: "campaigns", supporter: "supporters", donation: "donations", payment: "payments" };
    const items = list.body.items as (Record<string, unknown> & Record<(typeof relations)[number], Embedded | null>)[];
    expect(items.length).toBe(7);
    expect(items.filter((item) => item.campaign?.id === shared.id)).toHaveLength(3);
    expect(items.some((item) => item.payment && item.payment.payment_method === null)).toBe(true);
    let compared = 0;
    for (const item of items) {
      const single = await server.get(`/api/v1/checkouts/${item.id}`, tenant.token);
      expect(single.body).toEqual(item);
      for (const field of relations) {
        const embedded = item[field];
        if (embedded === null) continue;
        const own = await server.get(`/api/v1/${collections[field]}/${embedded.id}`, tenant.token);
        expect(own.status).toBe(200);
        expect(embedded).toStrictEqual(own.body);
        compared++;
      }
      const method = item.payment?.payment_method;
      expect(item.payment_method_id).toBe(method?.id ?? null);
      expect(item.payment_method_processor).toBe(method?.processor ?? null);
      expect(item.payment_method_label).toBe(method?.label ?? null);
    }
    expect(compared).toBe(18);
  });
});

describe("checkouts: q, state and date filters", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  const ids: Record<string, number> = {};
  let graceCode = "";
  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    // A time zone ahead of UTC, so whole-day filters differ from UTC days.
    tenant = await fakeTenant(db, { timeZone: "Europe/Rome" });
    other = await fakeTenant(db);
    const org = tenant.organizationId;
    const ada = await fakeCompletedCheckout(db, org, {
      // Titles of their own: a random one (hex) could hold "ada" and match the search below.
      campaign: { title: "Spring Appeal" },
      donation: { code: "don-spring-0001" },
      supporter: { firstName: "Ada", lastName: "Lovelace", email: "ada@analytical.example", businessName: null },
      checkout: { createDate: new Date("2026-03-01T23:30:00.000Z"), updateDate: new Date("2026-03-05T10:00:00Z") },
    });
    ids.ada = ada.checkout.id;
    const grace = await fakeCompletedCheckout(db, org, {
      campaign: { title: "Summer Appeal" },
      donation: { code: "don-summer-0002" },
      supporter: { firstName: "Grace", lastName: "Hopper", email: "grace@navy.example", businessName: "Cobol Inc" },
      checkout: { createDate: new Date("2026-03-02T10:00:00.000Z"), updateDate: new Date("2026-03-02T10:00:00Z") },
    });
    ids.grace = grace.checkout.id;
    const campaign = await fakeCampaign(db, org, { title: "Winter Shelter Appeal" });
    const open = await fakeCheckout(db, org, {
      campaignId: campaign.id,
      state: "OPEN",
      createDate: new Date("2026-02-28T22:59:59.999Z"),
      updateDate: new Date("2026-02-28T22:59:59.999Z"),
    });
    ids.open = open.id;
    await fakeCompletedCheckout(db, other.organizationId, {
      supporter: { firstName: "Ada", lastName: "Lovelace", email: "ada@other.example" },
    });
    graceCode = grace.donation.code;
  });
  afterAll(() => server?.close());

  const expectIds = async (query: string, expected: number[]) => {
    const response = await server.get(`/api/v1/checkouts/?${query}`, tenant.token);
    expect(response.status, query).toBe(200);
    expect(response.body.items.map((item: { id: number }) => item.id).sort(), query).toEqual([...expected].sort());
    expect(response.body.count, query).toBe(expected.length);
  };

  it("matches q case-insensitively on names, business name, email, campaign title, donation code, and exact id", async () => {
    await expectIds("q=LOVELACE", [ids.ada as number]);
    await expectIds("q=ada", [ids.ada as number]);
    await expectIds("q=cobol", [ids.grace as number]);
    await expectIds("q=navy.example", [ids.grace as number]);
    await expectIds("q=shelter", [ids.open as number]);
    await expectIds(`q=${graceCode}`, [ids.grace as number]);
    // The open checkout has no supporter or donation and no digit in its campaign title: only its id matches.
    const byId = await server.get(`/api/v1/checkouts/?q=${ids.open}&limit=1000`, tenant.token);
    expect(byId.body.items.map((item: { id: number }) => item.id)).toContain(ids.open);
    const byOtherNumber = await server.get(`/api/v1/checkouts/?q=${(ids.open as number) + 1000000}`, tenant.token);
    expect(byOtherNumber.body.items.map((item: { id: number }) => item.id)).not.toContain(ids.open);
    await expectIds("q=%25", []);
    await expectIds("q=nobody-matches-this", []);
  });

  it("filters by state and counts exactly", async () => {
    await expectIds("state=OPEN", [ids.open as number]);
    await expectIds("state=CLOSED", [ids.ada as number, ids.grace as number]);
    await expectIds("state=CLOSED&q=grace", [ids.grace as number]);
  });

  it("takes whole days in the organization's time zone, both ends inclusive", async () => {
    // 2026-03-01T23:30Z is 2026-03-02 00:30 in Rome; 2026-02-28T22:59:59.999Z is 23:59:59.999 on 02-28.
    await expectIds("create_date_from=2026-03-02&create_date_to=2026-03-02", [ids.ada as number, ids.grace as number]);
    await expectIds("create_date_to=2026-02-28", [ids.open as number]);
    await expectIds("create_date_from=2026-03-01&create_date_to=2026-03-01", []);
    await expectIds("create_date_from=2026-03-03", []);
    await expectIds("update_date_from=2026-03-03", [ids.ada as number]);
    await expectIds("update_date_from=2026-03-02&update_date_to=2026-03-02", [ids.grace as number]);
  });

  it("takes full date-times as exact bounds", async () => {
    await expectIds("create_date_from=2026-03-01T23:30:00.000Z", [ids.ada as number, ids.grace as number]);
    await expectIds("create_date_from=2026-03-01T23:30:00.001Z", [ids.grace as number]);
    await expectIds("create_date_to=2026-03-02T11:00:00%2B01:00", [
      ids.open as number,
      ids.ada as number,
      ids.grace as number,
    ]);
    await expectIds("create_date_to=2026-03-02T10:59:59%2B01:00", [ids.open as number, ids.ada as number]);
  });

  it("refuses malformed dates", async () => {
    for (const value of ["2026-3-1", "2026-02-29", "20260301", "2026-03-01T25:00:00Z", "2026-03-01T10:00:00", "now"]) {
      const response = await server.get(`/api/v1/checkouts/?create_date_from=${value}`, tenant.token);
      expect(response.status, value).toBe(400);
      expect(response.body.errors).toEqual([
        {
          parameter: "create_date_from",
          message: response.body.errors[0].message,
        },
      ]);
    }
  });
});
