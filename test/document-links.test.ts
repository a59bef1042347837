import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import {
  fakeAppToken,
  fakeCampaign,
  fakeCompletedCheckout,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const without = (...removed: string[]) => PERMISSIONS.filter((permission) => !removed.includes(permission));

/** Issue 11, hole 6: a link to a document follows the permissions of the personal data it opens. */
describe("document links follow the permissions of the data they open", () => {
  let server: TestServer;
  let tenant: Tenant;
  let gift: Awaited<ReturnType<typeof fakeCompletedCheckout>>;
  let noSupporters: string;
  let noDonations: string;

  const graphql = async (token: string, query: string) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
    return response.json();
  };

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    gift = await fakeCompletedCheckout(db, tenant.organizationId);
    noSupporters = await fakeAppToken(db, tenant, without("supporters:read"));
    noDonations = await fakeAppToken(db, tenant, without("donations:read"));
  });
  afterAll(() => server?.close());

  it("REST: receipt_url is null without supporters:read, certification_url null without donations:read", async () => {
    const { donation, supporter, checkout } = gift;
    const full = await server.get(`/api/v1/donations/${donation.id}`, tenant.token);
    expect(full.body.receipt_url).toBe(donation.receiptUrl);
    const limited = await server.get(`/api/v1/donations/${donation.id}`, noSupporters);
    expect(limited.status).toBe(200);
    expect(limited.body).toEqual({ ...full.body, receipt_url: null });
    const list = await server.get(`/api/v1/donations/?campaign_id=${gift.campaign.id}`, noSupporters);
    expect(list.body.items.map((item: { receipt_url: unknown }) => item.receipt_url)).toEqual([null]);

    // The checkout's embedded donation and supporter obey the same rule.
    const embedded = await server.get(`/api/v1/checkouts/${checkout.id}`, noSupporters);
    expect(embedded.body.donation.id).toBe(donation.id);
    expect(embedded.body.donation.receipt_url).toBeNull();
    expect((await server.get(`/api/v1/checkouts/${checkout.id}`, tenant.token)).body.donation.receipt_url).toBe(
      donation.receiptUrl,
    );
    const noDonationsCheckout = await server.get(`/api/v1/checkouts/${checkout.id}`, noDonations);
    expect(noDonationsCheckout.body.supporter.certification_url).toBeNull();
    expect(noDonationsCheckout.body.donation.receipt_url).toBeNull();

    const fullSupporter = await server.get(`/api/v1/supporters/${supporter.id}`, tenant.token);
    expect(fullSupporter.body.certification_url).toBe(supporter.certificationUrl);
    const limitedSupporter = await server.get(`/api/v1/supporters/${supporter.id}`, noDonations);
    expect(limitedSupporter.body).toEqual({ ...fullSupporter.body, certification_url: null });
  });

  it("REST writes: an offline donation recorded without supporters:read comes back without its receipt link", async () => {
    const campaign = await fakeCampaign(server.database.db, tenant.organizationId);
    const response = await fetch(`${server.url}/api/v1/donations/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${noSupporters}` },
      body: JSON.stringify({ supporter_id: gift.supporter.id, campaign_id: campaign.id, amount: 12.5 }),
    });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body.donation.receipt_url).toBeNull();
    const again = await server.get(`/api/v1/donations/${body.donation.id}`, tenant.token);
    expect(again.body.receipt_url).toMatch(/\/documents\/receipts\//);
  });

  it("GraphQL: the same fields are null for the same tokens, embedded objects included", async () => {
    const { donation, supporter, checkout } = gift;
    const query = `{
      donation(id: "${donation.id}") { receipt_url }
      donations(campaign_id: ${gift.campaign.id}) { items { receipt_url } }
      checkout(id: "${checkout.id}") { donation { receipt_url } }
    }`;
    expect(await graphql(tenant.token, query)).toEqual({
      data: {
        donation: { receipt_url: donation.receiptUrl },
        donations: { items: [{ receipt_url: donation.receiptUrl }] },
        checkout: { donation: { receipt_url: donation.receiptUrl } },
      },
    });
    expect(await graphql(noSupporters, query)).toEqual({
      data: {
        donation: { receipt_url: null },
        donations: { items: [{ receipt_url: null }] },
        checkout: { donation: { receipt_url: null } },
      },
    });
    const statement = `{ supporter(id: "${supporter.id}") { certification_url } checkout(id: "${checkout.id}") { supporter { certification_url } } }`;
    expect(await graphql(tenant.token, statement)).toEqual({
      data: {
        supporter: { certification_url: supporter.certificationUrl },
        checkout: { supporter: { certification_url: supporter.certificationUrl } },
      },
    });
    expect(await graphql(noDonations, statement)).toEqual({
      data: { supporter: { certification_url: null }, checkout: { supporter: { certification_url: null } } },
    });
  });

  it("members of the organization, who may read everything, still see the links", async () => {
    const email = `member-${unique(6)}@example.test`;
    await createUser(server.database.db, {
      email,
      password: "a long enough password",
      organization: tenant.slug,
      role: "member",
    });
    const signIn = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "a long enough password" }),
    });
    const cookie =
      (signIn.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "").split(";")[0] ?? "";
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-donata-organization": tenant.slug },
      body: JSON.stringify({ query: `{ donation(id: "${gift.donation.id}") { receipt_url } }` }),
    });
    expect(await response.json()).toEqual({ data: { donation: { receipt_url: gift.donation.receiptUrl } } });
  });

  it("CSV export (issue 11, hole 7): the formula guard covers every cell, list items included", async () => {
    const db = server.database.db;
    const code = unique(8);
    await fakeCampaign(db, tenant.organizationId, { code, tags: ["=1+1", "ok", "@SUM(A1)", "-2+3"] });
    const email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: "a long enough password", organization: tenant.slug, role: "owner" });
    const signIn = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "a long enough password" }),
    });
    const cookie =
      (signIn.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "").split(";")[0] ?? "";
    const response = await fetch(`${server.url}/admin/export/campaigns.csv?organization=${tenant.slug}&q=${code}`, {
      headers: { cookie },
    });
    expect(response.status).toBe(200);
    const [header, row] = (await response.text()).trimEnd().split("\r\n");
    expect((header ?? "").split(",")).toContain("tags");
    expect(row).toContain(",'=1+1; ok; '@SUM(A1); '-2+3,");
    expect(row).not.toMatch(/(^|,)[=+\-@]/);
  });
});
