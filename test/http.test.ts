import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeCompletedCheckout, fakeTenant, type Tenant } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

describe("platform endpoints and robustness", () => {
  let server: TestServer;
  let tenant: Tenant;
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    await fakeCompletedCheckout(server.database.db, tenant.organizationId);
  });
  afterAll(() => server?.close());

  it("answers /healthz and /readyz", async () => {
    expect((await server.get("/healthz")).body).toEqual({ status: "ok" });
    expect((await server.get("/readyz")).body).toEqual({ status: "ready" });
  });

  it("serves an OpenAPI 3.1 document generated from the routes", async () => {
    const response = await server.get("/api/v1/openapi.json");
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe("3.1.0");
    for (const collection of ["supporters", "donations", "payments", "campaigns", "checkouts"]) {
      const list = document.paths[`/api/v1/${collection}/`].get;
      expect(list.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(
        expect.arrayContaining(["limit", "offset", "order"]),
      );
      expect(list.responses["200"]).toBeDefined();
      expect(list.responses["401"]).toBeDefined();
      expect(document.paths[`/api/v1/${collection}/{id}`].get.responses["404"]).toBeDefined();
    }
    const checkoutList = document.paths["/api/v1/checkouts/"].get;
    const limit = checkoutList.parameters.find((parameter: { name: string }) => parameter.name === "limit");
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 1000, default: 100 });
    const names = checkoutList.parameters.map((parameter: { name: string }) => parameter.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "q",
        "state",
        "create_date_from",
        "create_date_to",
        "update_date_from",
        "update_date_to",
      ]),
    );
    expect(document.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toMatch(/\/oauth\/token\/$/);
  });

  it("serves a browsable reference at /docs with no asset from another origin", async () => {
    const page = await fetch(`${server.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<html");
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source, source).not.toMatch(/^(https?:)?\/\//);
      const asset = await fetch(new URL(source, `${server.url}/docs/`));
      expect(asset.status, source).toBe(200);
    }
    const initializer = await (await fetch(`${server.url}/docs/static/swagger-initializer.js`)).text();
    const code = initializer.replace(/\/\/ .*$/gm, "");
    expect(code).not.toMatch(/https?:\/\//);
  });

  it("answers unknown routes and methods with problem details", async () => {
    const response = await server.get("/api/v1/nothing-here/");
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: "route_not_found", status: 404 });
    const post = await fetch(`${server.url}/api/v1/checkouts/`, { method: "POST" });
    expect(post.status).toBe(404);
  });

  it("never answers a 5xx to random query strings", async () => {
    const parameter = fc.constantFrom(
      "limit",
      "offset",
      "order",
      "q",
      "state",
      "create_date_from",
      "create_date_to",
      "update_date_from",
      "update_date_to",
      "campaign_id",
      "frequency",
      "x",
    );
    const value = fc.oneof(
      fc.string(),
      fc.integer().map(String),
      fc.double().map(String),
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.constantFrom("-create_date", "amount", "OPEN", "2026-01-01", "%", "\\", "'", "\u0000"),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(parameter, value), { maxLength: 4 }), async (pairs) => {
        const query = new URLSearchParams(pairs).toString();
        const response = await server.get(`/api/v1/checkouts/?${query}`, tenant.token);
        expect(response.status, query).toBeLessThan(500);
        if (response.status !== 200) expect(response.headers.get("content-type")).toMatch(/problem\+json/);
      }),
      { numRuns: 150 },
    );
  });

  it("never answers a 5xx to random ids", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), async (id) => {
        const response = await server.get(`/api/v1/checkouts/${encodeURIComponent(id)}`, tenant.token);
        expect([200, 404], id).toContain(response.status);
      }),
      { numRuns: 100 },
    );
  });
});

describe("readiness without a database", () => {
  it("answers 503 on /readyz when the database is gone", async () => {
    const server = await startTestServer();
    await server.database.close();
    const response = await server.get("/readyz");
    expect(response.status).toBe(503);
    expect(response.body.code).toBe("database_unavailable");
    await server.app.close();
  });
});

describe("malformed URLs", () => {
  it("answer a problem body, not the framework's own error shape", async () => {
    const server = await startTestServer();
    try {
      for (const [path, status, code] of [
        ["/api/v1/checkouts/%E0%A4%A", 400, "invalid_request"],
        // An over-long path segment is its own code: each code has one status.
        [`/api/v1/public/organizations/x/campaigns/${"a".repeat(300)}`, 414, "uri_too_long"],
      ] as const) {
        const response = await server.get(path);
        expect(response.status, path).toBe(status);
        expect(response.headers.get("content-type"), path).toContain("application/problem+json");
        expect(response.body.code, path).toBe(code);
      }
    } finally {
      await server.close();
    }
  });
});

describe("NUL characters", () => {
  it("are refused with a 4xx on every entry point, never a 5xx", async () => {
    const server = await startTestServer();
    try {
      const tenant = await fakeTenant(server.database.db);
      expect((await server.get("/api/v1/checkouts/?q=%00", tenant.token)).status).toBe(400);
      const graphql = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body: JSON.stringify({
          query: "query ($q: String) { checkouts(q: $q) { count } }",
          variables: { q: "a\u0000" },
        }),
      });
      expect(graphql.status).toBe(400);
      const token = await fetch(`${server.url}/oauth/token/`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=refresh_token&client_id=%00&client_secret=x&refresh_token=y",
      });
      expect(token.status).toBe(400);
      expect((await token.json()).error).toBe("invalid_request");

      // In a path segment too, on the public giving API, the pages and the documents.
      const start = await fetch(`${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/%00/checkouts/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(start.status).toBe(400);
      expect((await start.json()).code).toBe("invalid_request");
      expect((await server.get(`/donate/${tenant.slug}/%00`)).status).toBe(404);
      expect((await server.get("/documents/receipts/%00/x")).status).toBe(400);
      expect((await server.get("/api/v1/checkouts/%00", tenant.token)).status).toBe(400);
    } finally {
      await server.close();
    }
  });
});
