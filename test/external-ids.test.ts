import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyKeys, supporters } from "../src/db/schema.js";
import { importSupporters } from "../src/modules/imports/supporter-import.service.js";
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

/** External ids (docs/api.md): read-only fields set by an import, and exact list filters, on REST and GraphQL alike. */
describe("external ids on the API", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  const externalId = `gb-${unique(8)}`;
  let imported: number;
  let plain: number;
  let campaignId: number;
  let gift: { id: number; externalId: string };
  let charge: { id: number; externalId: string };
  let plainGift: number;
  let plainCharge: number;

  const graphql = async (query: string, variables: Record<string, unknown> = {}, token = tenant.token) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };
  const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const ids = (body: { items: { id: number }[] }) => body.items.map((item) => item.id);

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    other = await fakeTenant(db);
    const csv = `Contact ID,Email,First Name\n${externalId},ada-${unique(6)}@example.test,Ada\n`;
    for (const organizationId of [tenant.organizationId, other.organizationId]) {
      const result = await importSupporters(db, {
        organizationId,
        fileName: "contacts.csv",
        content: csv,
        preset: "givebutter",
        dryRun: false,
      });
      expect(result).toMatchObject({ created: 1, refused: 0 });
    }
    const [row] = await db
      .select({ id: supporters.id })
      .from(supporters)
      .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.externalId, externalId)));
    imported = row?.id as number;
    plain = (await fakeSupporter(db, tenant.organizationId)).id;
    campaignId = (await fakeCampaign(db, tenant.organizationId)).id;
    const base = { supporterId: imported, campaignId };
    const donation = await fakeDonation(db, tenant.organizationId, {
      ...base,
      state: "pending",
      frequency: 12,
      externalId: `gift-${unique(6)}`,
      activation: "awaiting",
    });
    gift = { id: donation.id, externalId: donation.externalId as string };
    const payment = await fakePayment(db, tenant.organizationId, {
      donationId: donation.id,
      state: "PAID",
      externalId: `charge-${unique(6)}`,
    });
    charge = { id: payment.id, externalId: payment.externalId as string };
    plainGift = (await fakeDonation(db, tenant.organizationId, base)).id;
    plainCharge = (await fakePayment(db, tenant.organizationId, { donationId: plainGift })).id;
  });
  afterAll(() => server?.close());

  it("shows an imported supporter's external id on REST, finds exactly it by the filter, and null for others", async () => {
    const read = await server.get(`/api/v1/supporters/${imported}`, tenant.token);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: imported, first_name: "Ada", external_id: externalId });
    expect((await server.get(`/api/v1/supporters/${plain}`, tenant.token)).body.external_id).toBeNull();

    const found = await server.get(`/api/v1/supporters/?external_id=${externalId}`, tenant.token);
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ items: [read.body], count: 1 });
    // Exact: neither a prefix nor another case matches; another organization's twin stays its own.
    for (const near of [externalId.slice(0, -1), externalId.toUpperCase()]) {
      expect((await server.get(`/api/v1/supporters/?external_id=${near}`, tenant.token)).body).toEqual({
        items: [],
        count: 0,
      });
    }
    const theirs = await server.get(`/api/v1/supporters/?external_id=${externalId}`, other.token);
    expect(theirs.body.count).toBe(1);
    expect(theirs.body.items[0].id).not.toBe(imported);
    // Orderable as any scalar: nulls last ascending.
    const ordered = await server.get("/api/v1/supporters/?order=external_id", tenant.token);
    expect(ids(ordered.body)).toEqual([imported, plain]);
  });

  it("shows the same on GraphQL: the field, the list argument and the single read", async () => {
    const response = await graphql(
      `query ($external: String, $id: ID!, $plain: ID!) {
        supporters(external_id: $external) { count items { id external_id } }
        supporter(id: $id) { external_id }
        plain: supporter(id: $plain) { external_id }
      }`,
      { external: externalId, id: String(imported), plain: String(plain) },
    );
    expect(response.body).toEqual({
      data: {
        supporters: { count: 1, items: [{ id: imported, external_id: externalId }] },
        supporter: { external_id: externalId },
        plain: { external_id: null },
      },
    });
  });

  it("shows donations' external id and activation, and payments' external id, null when made here", async () => {
    const donation = await server.get(`/api/v1/donations/${gift.id}`, tenant.token);
    expect(donation.body).toMatchObject({ external_id: gift.externalId, activation: "awaiting" });
    expect((await server.get(`/api/v1/donations/${plainGift}`, tenant.token)).body).toMatchObject({
      external_id: null,
      activation: null,
    });
    const payment = await server.get(`/api/v1/payments/${charge.id}`, tenant.token);
    expect(payment.body.external_id).toBe(charge.externalId);
    expect((await server.get(`/api/v1/payments/${plainCharge}`, tenant.token)).body.external_id).toBeNull();

    expect((await server.get(`/api/v1/donations/?external_id=${gift.externalId}`, tenant.token)).body).toEqual({
      items: [donation.body],
      count: 1,
    });
    expect((await server.get(`/api/v1/payments/?external_id=${charge.externalId}`, tenant.token)).body).toEqual({
      items: [payment.body],
      count: 1,
    });
    const byActivation = await server.get("/api/v1/donations/?order=-activation", tenant.token);
    expect(ids(byActivation.body)).toEqual([plainGift, gift.id]);

    const response = await graphql(
      `query ($gift: ID!, $plainGift: ID!, $charge: ID!, $plainCharge: ID!, $external: String) {
        gift: donation(id: $gift) { external_id activation }
        plainGift: donation(id: $plainGift) { external_id activation }
        charge: payment(id: $charge) { external_id }
        plainCharge: payment(id: $plainCharge) { external_id }
        donations(external_id: $external) { count items { id } }
      }`,
      {
        gift: String(gift.id),
        plainGift: String(plainGift),
        charge: String(charge.id),
        plainCharge: String(plainCharge),
        external: gift.externalId,
      },
    );
    expect(response.body).toEqual({
      data: {
        gift: { external_id: gift.externalId, activation: "awaiting" },
        plainGift: { external_id: null, activation: null },
        charge: { external_id: charge.externalId },
        plainCharge: { external_id: null },
        donations: { count: 1, items: [{ id: gift.id }] },
      },
    });
  });

  it("refuses a bad filter value with a 400 naming the parameter, on REST and GraphQL", async () => {
    for (const collection of ["supporters", "donations", "payments"]) {
      const response = await server.get(`/api/v1/${collection}/?external_id=${"x".repeat(201)}`, tenant.token);
      expect(response.status, collection).toBe(400);
      expect(response.body, collection).toEqual({
        type: "urn:donata:problem:invalid_request",
        title: "Bad Request",
        status: 400,
        detail: 'Invalid query parameter "external_id": must NOT have more than 200 characters',
        code: "invalid_request",
        errors: [{ parameter: "external_id", message: "must NOT have more than 200 characters" }],
      });
      expect((await server.get(`/api/v1/${collection}/?external_id=`, tenant.token)).status, collection).toBe(400);
    }
    const response = await graphql(`{ supporters(external_id: "${"x".repeat(201)}") { count } }`);
    expect(response.body.errors[0].extensions).toMatchObject({
      code: "invalid_request",
      errors: [{ parameter: "external_id", message: "must NOT have more than 200 characters" }],
    });
  });

  it("is read-only: a write that names it is refused and changes nothing", async () => {
    const created = await send("POST", "/api/v1/supporters/", { first_name: "Grace", external_id: "mine" });
    expect(created.status).toBe(400);
    expect(created.body.errors).toEqual([{ field: "external_id", message: "is not a known parameter" }]);
    const patched = await send("PATCH", `/api/v1/supporters/${imported}`, { external_id: "mine" });
    expect(patched.status).toBe(400);
    expect(patched.body.errors).toEqual([{ field: "external_id", message: "is not a known parameter" }]);
    const mutation = await graphql(
      `mutation ($id: ID!) { updateSupporter(id: $id, input: { external_id: "mine" }) { id } }`,
      { id: String(imported) },
    );
    expect(mutation.body.errors[0].message).toMatch(/external_id/);
    expect((await server.get(`/api/v1/supporters/${imported}`, tenant.token)).body.external_id).toBe(externalId);
  });

  it("carries it in the events as GET returns the supporter", async () => {
    const events = await server.get("/api/v1/events/?type=supporter.created&limit=100", tenant.token);
    const event = events.body.items.find((item: { resource: { id: number } }) => item.resource.id === imported);
    expect(event.data).toEqual((await server.get(`/api/v1/supporters/${imported}`, tenant.token)).body);
    expect(event.data.external_id).toBe(externalId);
  });

  it("is cleared when the supporter is erased: it identifies them on the other platform", async () => {
    const db = server.database.db;
    const id = `gb-${unique(8)}`;
    const result = await importSupporters(db, {
      organizationId: tenant.organizationId,
      fileName: "erase.csv",
      content: `Contact ID,Email,First Name\n${id},erase-${unique(6)}@example.test,Eva\n`,
      preset: "givebutter",
      dryRun: false,
    });
    const supporterId = result.results[0]?.supporter_id as number;
    expect((await server.get(`/api/v1/supporters/${supporterId}`, tenant.token)).body.external_id).toBe(id);
    const erased = await graphql(`mutation ($id: ID!) { eraseSupporter(id: $id) { id external_id erase_date } }`, {
      id: supporterId,
    });
    expect(erased.body.data.eraseSupporter).toMatchObject({ id: supporterId, external_id: null });
    expect((await server.get(`/api/v1/supporters/${supporterId}`, tenant.token)).body.external_id).toBeNull();
  });

  it("replays answers stored before the fields existed in today's shape", async () => {
    const db = server.database.db;
    // The stored answer as it was kept before the fields existed (edited in JS: Citus refuses jsonb functions in an UPDATE).
    const forget = async (scope: string, key: string, strip: (body: Record<string, unknown>) => void) => {
      const where = and(
        eq(idempotencyKeys.organizationId, tenant.organizationId),
        eq(idempotencyKeys.scope, scope),
        eq(idempotencyKeys.key, key),
      );
      const [row] = await db.select({ body: idempotencyKeys.body }).from(idempotencyKeys).where(where);
      const body = structuredClone(row?.body) as Record<string, unknown>;
      strip(body);
      await db.update(idempotencyKeys).set({ body }).where(where);
    };

    const supporterKey = `key-${unique(8)}`;
    const supporter = { first_name: "Grace", email: `grace-${unique(6)}@example.test` };
    const first = await send("POST", "/api/v1/supporters/", supporter, { "idempotency-key": supporterKey });
    expect(first.status).toBe(201);
    await forget("supporters:create", supporterKey, (body) => delete body.external_id);
    const replayed = await send("POST", "/api/v1/supporters/", supporter, { "idempotency-key": supporterKey });
    expect(replayed).toEqual(first);

    const giftKey = `key-${unique(8)}`;
    const offline = { supporter_id: plain, campaign_id: campaignId, amount: 20 };
    const recorded = await send("POST", "/api/v1/donations/", offline, { "idempotency-key": giftKey });
    expect(recorded.status).toBe(201);
    expect(recorded.body.donation).toMatchObject({ external_id: null, activation: null });
    expect(recorded.body.payment.external_id).toBeNull();
    await forget("donations:offline", giftKey, (body) => {
      const { donation, payment } = body as Record<string, Record<string, unknown>>;
      delete donation?.external_id;
      delete donation?.activation;
      delete payment?.external_id;
    });
    const again = await send("POST", "/api/v1/donations/", offline, { "idempotency-key": giftKey });
    expect(again).toEqual(recorded);
  });
});
