import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCollectionContract } from "../../../test/helpers/collection-contract.js";
import { fakeCampaign, fakeTenant, type Tenant } from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { CAMPAIGN_ORDER_FIELDS } from "./campaigns.schemas.js";

const SPEC_FIELDS = [
  "id",
  "create_date",
  "update_date",
  "title",
  "slug",
  "code",
  "type",
  "goal",
  "is_goal_enabled",
  "has_one_off",
  "has_subscription",
  "allow_custom_amount",
  "allow_custom_subscription_amount",
  "default_amount",
  "default_subscription_amount",
  "min_amount",
  "max_amount",
  "min_subscription_amount",
  "max_subscription_amount",
  "asks",
  "asks_subscription",
  "shown_fields",
  "required_fields",
  "privacy_note",
  "tags",
];

// docs/campaigns.md: the page's content, its dates, impact lines, questions and tribute gifts.
const CONTENT_FIELDS = [
  "story",
  "cover_image_url",
  "status",
  "start_date",
  "end_date",
  "ask_impacts",
  "questions",
  "allow_tribute",
];

describeCollectionContract({
  collection: "campaigns",
  orderFields: CAMPAIGN_ORDER_FIELDS,
  wireFields: [
    ...SPEC_FIELDS,
    "cost_example_amount",
    "cost_example_label",
    "allow_cover_fee",
    "archive_date",
    ...CONTENT_FIELDS,
  ],
  async populate(db, organizationId, count, sharedDate) {
    for (let index = 0; index < count; index++) {
      await fakeCampaign(db, organizationId, index % 3 === 0 ? { createDate: sharedDate } : {});
    }
  },
});

describe("campaigns: filters", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    const db = server.database.db;
    await fakeCampaign(db, tenant.organizationId, { title: "Clean Water 2026", type: "donation", tags: ["water"] });
    await fakeCampaign(db, tenant.organizationId, { title: "School kits", type: "event", tags: [] });
    await fakeCampaign(db, tenant.organizationId, { title: "water wells", type: "donation", tags: ["water", "x"] });
  });
  afterAll(() => server?.close());

  it("filters by q, type and tag, and counts under each filter", async () => {
    const cases: [string, string[]][] = [
      ["q=WATER", ["Clean Water 2026", "water wells"]],
      ["q=100%25", []],
      ["type=event", ["School kits"]],
      ["tag=water", ["Clean Water 2026", "water wells"]],
      ["tag=x&type=donation", ["water wells"]],
    ];
    for (const [query, titles] of cases) {
      const response = await server.get(`/api/v1/campaigns/?${query}&order=title`, tenant.token);
      expect(response.status, query).toBe(200);
      expect(response.body.items.map((item: { title: string }) => item.title).sort(), query).toEqual(titles.sort());
      expect(response.body.count, query).toBe(titles.length);
    }
  });

  it("returns money as exact JSON numbers", async () => {
    await fakeCampaign(server.database.db, tenant.organizationId, {
      title: "exact",
      goal: 1234.5,
      asks: ["0.10", "19.99"],
    });
    const response = await server.get("/api/v1/campaigns/?q=exact", tenant.token);
    expect(response.body.items[0].goal).toBe(1234.5);
    expect(response.body.items[0].asks).toEqual([0.1, 19.99]);
  });
});
