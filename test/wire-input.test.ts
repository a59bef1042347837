import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/modules/users/users.service.js";
import {
  fakeCampaign,
  fakeCompletedCheckout,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** Integers on the wire are `^-?[0-9]+$` within range; JSON bodies take JSON types only (issue 11, hole 4). */
describe("wire input: strict integers and JSON types", () => {
  let server: TestServer;
  let tenant: Tenant;
  let campaign: { id: number; slug: string | null };
  let supporter: { id: number };
  let cookie: string;

  const postJson = async (path: string, body: unknown, token?: string, contentType = "application/json") => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      body: text ? JSON.parse(text) : null,
    };
  };
  const invalid = (where: "query parameter" | "field", name: string, message: string) => ({
    type: "urn:donata:problem:invalid_request",
    title: "Bad Request",
    status: 400,
    code: "invalid_request",
    detail: `Invalid ${where} "${name}": ${message}`,
    errors: [{ [where === "field" ? "field" : "parameter"]: name, message }],
  });

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    for (let i = 0; i < 3; i++) await fakeCompletedCheckout(db, tenant.organizationId);
    campaign = await fakeCampaign(db, tenant.organizationId, { minAmount: 1, maxAmount: 5000 });
    supporter = await fakeSupporter(db, tenant.organizationId);
    const email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: "a long enough password", organization: tenant.slug, role: "owner" });
    const signIn = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "a long enough password" }),
    });
    cookie =
      (signIn.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "").split(";")[0] ?? "";
  });
  afterAll(() => server?.close());

  it("refuses non-decimal and non-finite integers in query strings with a 400 naming the parameter", async () => {
    const cases: [string, string, string][] = [
      ["limit", "-Infinity", "must be an integer"],
      ["limit", "Infinity", "must be an integer"],
      ["limit", "0x10", "must be an integer"],
      ["limit", "1e2", "must be an integer"],
      ["limit", " 5", "must be an integer"],
      ["limit", "5.0", "must be an integer"],
      ["limit", "+5", "must be an integer"],
      ["limit", "", "must be an integer"],
      ["offset", "1e309", "must be an integer"],
      ["offset", "-0x1", "must be an integer"],
      ["offset", "NaN", "must be an integer"],
      ["campaign_id", "Infinity", "must be an integer"],
      ["campaign_id", "0b11", "must be an integer"],
      ["frequency", "1e1", "must be an integer"],
      ["frequency", "0x0c", "must be an integer"],
    ];
    for (const [name, value, message] of cases) {
      for (const collection of ["donations", "checkouts"]) {
        const path = `/api/v1/${collection}/?${name}=${encodeURIComponent(value)}`;
        const response = await server.get(path, tenant.token);
        expect(response.status, path).toBe(400);
        expect(response.headers.get("content-type"), path).toContain("application/problem+json");
        expect(response.body, path).toEqual(invalid("query parameter", name, message));
      }
    }
    // Decimal integers out of range: the range check names the bound.
    expect((await server.get("/api/v1/checkouts/?limit=1001", tenant.token)).body).toEqual(
      invalid("query parameter", "limit", "must be <= 1000"),
    );
    expect((await server.get("/api/v1/checkouts/?limit=-5", tenant.token)).body).toEqual(
      invalid("query parameter", "limit", "must be >= 1"),
    );
    expect((await server.get("/api/v1/checkouts/?offset=99999999999999999999", tenant.token)).body).toEqual(
      invalid("query parameter", "offset", `must be <= ${Number.MAX_SAFE_INTEGER}`),
    );
    // Booleans: true or false only.
    expect((await server.get("/api/v1/campaigns/?archived=1", tenant.token)).body).toEqual(
      invalid("query parameter", "archived", "must be of type boolean"),
    );
    // A parameter given twice is not one integer.
    expect((await server.get("/api/v1/checkouts/?limit=1&limit=2", tenant.token)).body).toEqual(
      invalid("query parameter", "limit", "must be an integer"),
    );
    // Well-formed values still work.
    const page = await server.get("/api/v1/checkouts/?limit=2&offset=0&archived", tenant.token);
    expect(page.status).toBe(400); // archived is not a checkout parameter
    const ok = await server.get("/api/v1/checkouts/?limit=2&offset=1", tenant.token);
    expect(ok.status).toBe(200);
    expect(ok.body.items).toHaveLength(2);
    expect((await server.get("/api/v1/campaigns/?archived=false&limit=1", tenant.token)).status).toBe(200);
  });

  it("single reads keep answering 404 for ids that are not positive integers", async () => {
    for (const id of ["Infinity", "-Infinity", "1e3", "0x10", "1.0", "-1", "0"]) {
      const response = await server.get(`/api/v1/donations/${encodeURIComponent(id)}`, tenant.token);
      expect(response.status, id).toBe(404);
      expect(response.body.code, id).toBe("not_found");
    }
  });

  it("applies the same rules to the CSV export", async () => {
    const base = `${server.url}/admin/export/checkouts.csv?organization=${tenant.slug}`;
    for (const [name, value] of [
      ["campaign_id", "Infinity"],
      ["campaign_id", "0x10"],
      ["frequency", "1e1"],
      ["supporter_id", "-Infinity"],
    ] as const) {
      const response = await fetch(`${base}&${name}=${encodeURIComponent(value)}`, { headers: { cookie } });
      expect(response.status, `${name}=${value}`).toBe(400);
      expect(await response.json()).toEqual(invalid("query parameter", name, "must be an integer"));
    }
    expect((await fetch(`${base}&campaign_id=${campaign.id}`, { headers: { cookie } })).status).toBe(200);
  });

  it("refuses GraphQL list arguments out of range and non-integer ids", async () => {
    const graphql = async (query: string, variables = "{}") => {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body: `{"query": ${JSON.stringify(query)}, "variables": ${variables}}`,
      });
      return { status: response.status, body: await response.json() };
    };
    const listQuery = "query ($l: Int) { donations(limit: $l) { count } }";
    for (const value of ["1e309", "-1e309", '"0x10"', '"Infinity"', "2147483648", "1.5"]) {
      const response = await graphql(listQuery, `{"l": ${value}}`);
      expect(response.body.errors?.[0]?.extensions?.code, value).toBe("invalid_request");
      expect(response.body.data ?? null, value).toBeNull();
    }
    const negative = await graphql("{ donations(limit: -5) { count } }");
    expect(negative.body.errors?.[0]?.extensions?.code).toBe("invalid_request");
    expect(negative.body.errors?.[0]?.message).toBe('Invalid argument "limit": must be >= 1');
    const id = await graphql('{ donation(id: "Infinity") { id } }');
    expect(id.body).toEqual({ data: { donation: null } });
  });

  it("fuzz findings: a GraphQL literal nested thousands deep and a null non-null variable are request errors", async () => {
    const graphql = async (body: string) => {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body,
      });
      return { status: response.status, body: await response.json() };
    };
    // It overflowed graphql-js's recursive parser: 200 with internal_error.
    const deep = `{ donations(tag: ${"[".repeat(5000)}${"]".repeat(5000)}) { count } }`;
    const nested = await graphql(JSON.stringify({ query: deep }));
    // Answered like any other document that does not parse (graphql-yoga's status for a syntax error).
    const syntax = await graphql(JSON.stringify({ query: "{ donations(" }));
    expect(syntax.body.errors[0].extensions.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(nested.status).toBe(syntax.status);
    expect(nested.body).toEqual({
      errors: [{ message: "The document is nested too deeply", extensions: { code: "invalid_request" } }],
    });
    // graphql-js's variable errors had no extensions.code at all.
    const missing = await graphql(
      JSON.stringify({ query: "query ($id: ID!) { donation(id: $id) { id } }", variables: {} }),
    );
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toMatchObject([
      { message: 'Variable "$id" of required type "ID!" was not provided.', extensions: { code: "invalid_request" } },
    ]);
  });

  it("takes only JSON numbers for amounts and integers of the allowed set for frequencies", async () => {
    const start = (body: unknown) =>
      postJson(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`, body);
    for (const amount of ["0x32", "5e1", "50", " 50", "Infinity", true, [50], { value: 50 }]) {
      const response = await start({ amount, frequency: 0 });
      expect(response.status, JSON.stringify(amount)).toBe(400);
      expect(response.type).toContain("application/problem+json");
      expect(response.body.code).toBe("invalid_request");
      expect(response.body.errors[0].field, JSON.stringify(amount)).toBe("amount");
    }
    for (const frequency of [true, "12", 12.5, "0x0c"]) {
      expect((await start({ amount: 50, frequency })).body, JSON.stringify(frequency)).toEqual({
        ...invalid("field", "frequency", "must be an integer"),
        errors: [
          { field: "frequency", message: "must be an integer" },
          { field: "frequency", message: "must be one of: 0, 12, 1" },
        ],
      });
    }
    // 1e309 parses to Infinity in JSON.parse: out of range, never a 5xx.
    const infinite = await start('{"amount": 1e309, "frequency": 0}');
    expect(infinite.status).toBe(400);
    expect(infinite.body.errors[0].field).toBe("amount");
    // More than 2 decimals is the documented campaign rule (422 invalid_amount, docs/giving.md).
    const cents = await start({ amount: 12.345, frequency: 0 });
    expect(cents.status).toBe(422);
    expect(cents.body.code).toBe("invalid_amount");
    const good = await start({ amount: 50, frequency: 12 });
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({ amount: 50, frequency: 12 });

    const completed = await postJson(`/api/v1/public/organizations/${tenant.slug}/checkouts/${good.body.id}/complete`, {
      client_secret: good.body.client_secret,
      amount: "5e1",
      frequency: 0,
      processor: "sandbox",
      supporter: { first_name: "Ada", email: `ada-${unique(6)}@example.test` },
      consents: { privacy: "true" },
    });
    expect(completed.status).toBe(400);
    expect(completed.body.errors).toEqual([
      { field: "amount", message: "must be of type number" },
      { field: "consents.privacy", message: "must be of type boolean" },
    ]);

    const offline = await postJson(
      "/api/v1/donations/",
      { supporter_id: String(supporter.id), campaign_id: campaign.id, amount: "0x32" },
      tenant.token,
    );
    expect(offline.status).toBe(400);
    expect(offline.body.errors).toEqual([
      { field: "supporter_id", message: "must be an integer" },
      { field: "amount", message: "must be of type number" },
    ]);
  });

  it("parses form-encoded bodies with the same strict rules", async () => {
    const path = `/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`;
    const form = "application/x-www-form-urlencoded";
    for (const [body, field, message] of [
      ["amount=0x32&frequency=0", "amount", "must be of type number"],
      ["amount=5e1&frequency=0", "amount", "must be of type number"],
      ["amount=Infinity&frequency=0", "amount", "must be of type number"],
      ["amount=50&frequency=true", "frequency", "must be an integer"],
      ["amount=50&frequency=1e1", "frequency", "must be an integer"],
    ] as const) {
      const response = await postJson(path, body, undefined, form);
      expect(response.body, body).toEqual(invalid("field", field, message));
    }
    const good = await postJson(path, "amount=25.50&frequency=12", undefined, form);
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({ amount: 25.5, frequency: 12 });
  });
});
