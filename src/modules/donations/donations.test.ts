import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCollectionContract } from "../../../test/helpers/collection-contract.js";
import { fakeCampaign, fakeDonation, fakeSupporter, fakeTenant, type Tenant } from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { DONATION_ORDER_FIELDS } from "./donations.schemas.js";

const SPEC_FIELDS = [
  "id",
  "supporter_id",
  "campaign_id",
  "code",
  "state",
  "amount",
  "receipt_url",
  "frequency",
  "note",
  "completed_date",
  "create_date",
  "update_date",
  "device",
  "tags",
];

/** Beyond the spec: the currency, the processing fee a donor covered (docs/payments.md), cycles skipped after an outage, the tribute and answers (docs/campaigns.md), the import's id and activation (docs/import.md). */
const ADDED_FIELDS = [
  "currency",
  "covered_fee",
  "skipped_cycles",
  "test",
  "tribute",
  "answers",
  "external_id",
  "activation",
];

describeCollectionContract({
  collection: "donations",
  orderFields: DONATION_ORDER_FIELDS,
  wireFields: [...SPEC_FIELDS, ...ADDED_FIELDS],
  async populate(db, organizationId, count, sharedDate) {
    const campaigns = [await fakeCampaign(db, organizationId), await fakeCampaign(db, organizationId)];
    const supporter = await fakeSupporter(db, organizationId);
    for (let index = 0; index < count; index++) {
      await fakeDonation(db, organizationId, {
        supporterId: supporter.id,
        campaignId: (campaigns[index % 2] as { id: number }).id,
        ...(index % 3 === 0 ? { createDate: sharedDate } : {}),
      });
    }
  },
});

describe("donations: filters", () => {
  let server: TestServer;
  let tenant: Tenant;
  let ids: { campaign: number; supporter: number; otherSupporter: number };
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    const db = server.database.db;
    const org = tenant.organizationId;
    const campaign = await fakeCampaign(db, org);
    const other = await fakeCampaign(db, org);
    const supporter = await fakeSupporter(db, org);
    const otherSupporter = await fakeSupporter(db, org);
    ids = { campaign: campaign.id, supporter: supporter.id, otherSupporter: otherSupporter.id };
    const base = { supporterId: supporter.id, campaignId: campaign.id };
    await fakeDonation(db, org, { ...base, state: "active", frequency: 12, code: "DON-A1", tags: ["gala"] });
    await fakeDonation(db, org, { ...base, state: "done", frequency: 0, code: "DON-B2" });
    await fakeDonation(db, org, { ...base, campaignId: other.id, state: "active", frequency: 1, code: "DON-C3" });
    await fakeDonation(db, org, {
      supporterId: otherSupporter.id,
      campaignId: other.id,
      state: "revoked",
      frequency: 0,
      code: "X-D4",
    });
  });
  afterAll(() => server?.close());

  it("filters by state, frequency, campaign, supporter, tag and q, counting under each", async () => {
    const cases: [string, string[]][] = [
      ["state=active", ["DON-A1", "DON-C3"]],
      ["frequency=0", ["DON-B2", "X-D4"]],
      ["frequency=12", ["DON-A1"]],
      [`campaign_id=${ids.campaign}`, ["DON-A1", "DON-B2"]],
      [`supporter_id=${ids.otherSupporter}`, ["X-D4"]],
      [`supporter_id=${ids.supporter}&state=active`, ["DON-A1", "DON-C3"]],
      ["tag=gala", ["DON-A1"]],
      ["q=don-", ["DON-A1", "DON-B2", "DON-C3"]],
      ["state=past_due", []],
    ];
    for (const [query, codes] of cases) {
      const response = await server.get(`/api/v1/donations/?${query}&order=code`, tenant.token);
      expect(response.status, query).toBe(200);
      expect(response.body.items.map((item: { code: string }) => item.code).sort(), query).toEqual(codes.sort());
      expect(response.body.count, query).toBe(codes.length);
    }
  });

  it("refuses unknown states and frequencies", async () => {
    for (const query of ["state=paid", "state=ACTIVE", "frequency=2", "frequency=monthly", "campaign_id=0"]) {
      const response = await server.get(`/api/v1/donations/?${query}`, tenant.token);
      expect(response.status, query).toBe(400);
    }
  });
});
