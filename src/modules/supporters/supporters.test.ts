import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCollectionContract } from "../../../test/helpers/collection-contract.js";
import { fakeSupporter, fakeTenant, type Tenant } from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { SUPPORTER_ORDER_FIELDS } from "./supporters.schemas.js";

const SPEC_FIELDS = [
  "id",
  "create_date",
  "image",
  "code",
  "business_name",
  "first_name",
  "last_name",
  "email",
  "phone",
  "mobile",
  "job",
  "sex",
  "date_of_birth",
  "place_of_birth",
  "ssn",
  "vat",
  "address",
  "address2",
  "city",
  "locality",
  "country",
  "postal_code",
  "certification_url",
  "privacy",
  "email_marketing",
  "phone_marketing",
  "sms_marketing",
  "postal_marketing",
  "profilation_marketing",
  "tags",
  "note",
];

describeCollectionContract({
  collection: "supporters",
  orderFields: SUPPORTER_ORDER_FIELDS,
  wireFields: [...SPEC_FIELDS, "update_date", "erase_date", "external_id"],
  async populate(db, organizationId, count, sharedDate) {
    for (let index = 0; index < count; index++) {
      await fakeSupporter(db, organizationId, index % 3 === 0 ? { createDate: sharedDate } : {});
    }
  },
});

describe("supporters: filters", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    const db = server.database.db;
    const org = tenant.organizationId;
    await fakeSupporter(db, org, { firstName: "Ada", lastName: "Lovelace", email: "Ada@Example.org", tags: ["board"] });
    await fakeSupporter(db, org, { firstName: "Alan", lastName: "Turing", email: "alan@example.org", country: "GB" });
    await fakeSupporter(db, org, { firstName: null, lastName: null, businessName: "Lovelace Ltd", email: null });
  });
  afterAll(() => server?.close());

  it("filters by q over names, business name and email; by exact email; by tag and country", async () => {
    const cases: [string, number][] = [
      ["q=lovelace", 2],
      ["q=EXAMPLE.ORG", 2],
      ["q=_", 0],
      ["email=ada@example.org", 1],
      ["email=ada", 0],
      ["tag=board", 1],
      ["country=GB", 1],
      ["q=a&country=GB", 1],
    ];
    for (const [query, expected] of cases) {
      const response = await server.get(`/api/v1/supporters/?${query}`, tenant.token);
      expect(response.status, query).toBe(200);
      expect(response.body.items.length, query).toBe(expected);
      expect(response.body.count, query).toBe(expected);
    }
  });

  it("shows consents and personal fields with null when unknown", async () => {
    const response = await server.get("/api/v1/supporters/?q=Lovelace%20Ltd", tenant.token);
    const [supporter] = response.body.items;
    expect(supporter.business_name).toBe("Lovelace Ltd");
    expect(supporter.first_name).toBeNull();
    expect(supporter.email).toBeNull();
    expect(supporter.privacy).toBe(true);
    expect(supporter.tags).toEqual(expect.any(Array));
  });
});
