import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCollectionContract } from "../../../test/helpers/collection-contract.js";
import {
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakePaymentMethod,
  fakeSupporter,
  fakeTenant,
  type Tenant,
} from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { PAYMENT_ORDER_FIELDS } from "./payments.schemas.js";

const SPEC_FIELDS = [
  "id",
  "donation_id",
  "state",
  "amount",
  "payment_date",
  "payment_method",
  "processor_intent_id",
  "create_date",
  "update_date",
];

describeCollectionContract({
  collection: "payments",
  orderFields: PAYMENT_ORDER_FIELDS,
  wireFields: [...SPEC_FIELDS, "currency", "test", "external_id"],
  orderValue: (item, field) =>
    field === "payment_method_id" ? ((item.payment_method as { id: number } | null)?.id ?? null) : item[field],
  async populate(db, organizationId, count, sharedDate) {
    const campaign = await fakeCampaign(db, organizationId);
    const supporter = await fakeSupporter(db, organizationId);
    const donation = await fakeDonation(db, organizationId, { supporterId: supporter.id, campaignId: campaign.id });
    const methods = [await fakePaymentMethod(db, organizationId), await fakePaymentMethod(db, organizationId)];
    for (let index = 0; index < count; index++) {
      await fakePayment(db, organizationId, {
        donationId: donation.id,
        paymentMethodId: index % 4 === 3 ? null : (methods[index % 2] as { id: number }).id,
        ...(index % 3 === 0 ? { createDate: sharedDate } : {}),
      });
    }
  },
});

describe("payments: embedded payment method and filters", () => {
  let server: TestServer;
  let tenant: Tenant;
  let donationId: number;
  let methodId: number;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    const db = server.database.db;
    const org = tenant.organizationId;
    const campaign = await fakeCampaign(db, org);
    const supporter = await fakeSupporter(db, org);
    const donation = await fakeDonation(db, org, { supporterId: supporter.id, campaignId: campaign.id });
    const other = await fakeDonation(db, org, { supporterId: supporter.id, campaignId: campaign.id });
    const method = await fakePaymentMethod(db, org, { processor: "sandbox", label: "Visa •••• 4242" });
    donationId = donation.id;
    methodId = method.id;
    await fakePayment(db, org, { donationId, paymentMethodId: method.id, state: "PAID", processorIntentId: "pi_1" });
    await fakePayment(db, org, { donationId, paymentMethodId: null, state: "FAILED", processorIntentId: "pi_2" });
    await fakePayment(db, org, { donationId: other.id, paymentMethodId: method.id, state: "PAID" });
  });
  afterAll(() => server?.close());

  it("embeds the payment method as an object, or null", async () => {
    const response = await server.get(
      `/api/v1/payments/?donation_id=${donationId}&order=processor_intent_id`,
      tenant.token,
    );
    expect(response.body.count).toBe(2);
    const [paid, failed] = response.body.items;
    expect(paid.payment_method).toEqual({
      id: methodId,
      create_date: expect.any(String),
      update_date: expect.any(String),
      processor: "sandbox",
      label: "Visa •••• 4242",
    });
    expect(failed.payment_method).toBeNull();
    const single = await server.get(`/api/v1/payments/${paid.id}`, tenant.token);
    expect(single.body).toEqual(paid);
  });

  it("filters by state, donation, payment method and processor intent", async () => {
    const cases: [string, number][] = [
      ["state=PAID", 2],
      ["state=FAILED", 1],
      [`donation_id=${donationId}`, 2],
      [`payment_method_id=${methodId}`, 2],
      ["processor_intent_id=pi_2", 1],
      [`state=PAID&donation_id=${donationId}`, 1],
    ];
    for (const [query, expected] of cases) {
      const response = await server.get(`/api/v1/payments/?${query}`, tenant.token);
      expect(response.status, query).toBe(200);
      expect(response.body.count, query).toBe(expected);
      expect(response.body.items.length, query).toBe(expected);
    }
  });
});
