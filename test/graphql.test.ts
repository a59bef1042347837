import { readFileSync } from "node:fs";
import { auditServer } from "graphql-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { printedSchema } from "../src/graphql/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeCheckout, fakeCompletedCheckout, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const CHECKOUT_FIELDS = `id create_date update_date state amount completed_date frequency cost_example_quantity
  payment_method_processor payment_method_label payment_method_id
  campaign { id title slug goal asks tags }
  supporter { id first_name last_name email privacy tags }
  donation { id code state amount frequency supporter { id } campaign { id } }
  payment { id state amount processor_intent_id payment_method { id processor label } donation { id } }`;

describe("GraphQL admin interface", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let memberCookie: string;
  let adminCookie: string;

  const graphql = async (
    query: string,
    variables: Record<string, unknown> = {},
    auth: { token?: string; cookie?: string; organization?: string } = { token: tenant.token },
  ) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/graphql-response+json",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
        ...(auth.organization ? { "x-donata-organization": auth.organization } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    [tenant, other] = await Promise.all([fakeTenant(db), fakeTenant(db)]);
    for (let i = 0; i < 6; i++) await fakeCompletedCheckout(db, tenant.organizationId);
    for (let i = 0; i < 4; i++) await fakeCheckout(db, tenant.organizationId, { state: "OPEN" });
    await fakeCompletedCheckout(db, other.organizationId);
    const member = await createUser(db, {
      email: `member-${unique(6)}@example.test`,
      password: "member password",
      organization: tenant.slug,
      role: "member",
    });
    memberCookie = `${SESSION_COOKIE}=${await createSession(db, server.config, member.id)}`;
    const admin = await createUser(db, {
      email: `admin-${unique(6)}@example.test`,
      password: "admin password",
      organization: tenant.slug,
      role: "admin",
    });
    await createUser(db, { email: admin.email, organization: other.slug, role: "owner" });
    adminCookie = `${SESSION_COOKIE}=${await createSession(db, server.config, admin.id)}`;
  });
  afterAll(() => server?.close());

  it("keeps the committed schema.graphql in step with the code", () => {
    const committed = readFileSync(new URL("../src/graphql/schema.graphql", import.meta.url), "utf8");
    expect(committed, "run npm run graphql:print and commit the result").toBe(printedSchema());
  });

  it("passes the graphql-http server audit in full", async () => {
    const results = await auditServer({
      url: `${server.url}/admin/graphql/`,
      fetchFn: (input: RequestInfo, init: RequestInit = {}) =>
        fetch(input, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${tenant.token}` },
        }),
    });
    const failures = results.filter((result) => result.status !== "ok");
    expect(failures.map((failure) => `${failure.name}: ${"reason" in failure ? failure.reason : ""}`)).toEqual([]);
  });

  it("serves every query field", async () => {
    const { body } = await graphql(`{
      organization { id slug name currency time_zone create_date }
      viewer { kind email role application_id permissions }
      campaigns { count items { id title } }
      supporters { count items { id email } }
      donations { count items { id code supporter { id } campaign { id } } }
      payments { count items { id state payment_method { id } donation { id } } }
      checkouts(limit: 5) { count items { ${CHECKOUT_FIELDS} } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data.organization).toMatchObject({ id: tenant.organizationId, slug: tenant.slug, currency: "EUR" });
    expect(body.data.viewer).toMatchObject({ kind: "application", email: null, application_id: tenant.applicationId });
    expect(body.data.checkouts.count).toBe(10);
    expect(body.data.campaigns.count).toBe(6);
    const first = body.data.donations.items[0];
    const single = await graphql(
      `query ($id: ID!) {
        donation(id: $id) { id code }
        campaign(id: $id) { id }
        supporter(id: $id) { id }
        payment(id: $id) { id }
        checkout(id: $id) { id }
      }`,
      { id: String(first.id) },
    );
    expect(single.body.data.donation).toEqual({ id: first.id, code: first.code });
    const checkoutId = body.data.checkouts.items[0].id;
    const one = await graphql(`query ($id: ID!) { checkout(id: $id) { ${CHECKOUT_FIELDS} } }`, {
      id: String(checkoutId),
    });
    expect(one.body.data.checkout).toEqual(body.data.checkouts.items[0]);
  });

  it("lists the same ids in the same order as REST for the same parameters, with the same fields", async () => {
    const OBJECT_LISTS = new Set(["answers", "ask_impacts", "questions"]);
    const cases: [string, string, Record<string, unknown>][] = [
      ["checkouts", "", {}],
      ["checkouts", "order=amount&limit=3&offset=2", { order: "amount", limit: 3, offset: 2 }],
      ["checkouts", "order=-payment_method_label", { order: "-payment_method_label" }],
      ["checkouts", "state=OPEN", { state: "OPEN" }],
      ["donations", "order=-amount&limit=4", { order: "-amount", limit: 4 }],
      ["payments", "order=payment_date", { order: "payment_date" }],
      ["supporters", "order=email", { order: "email" }],
      ["campaigns", "order=-title&offset=1", { order: "-title", offset: 1 }],
    ];
    for (const [collection, query, args] of cases) {
      const rest = await server.get(`/api/v1/${collection}/?${query}`, tenant.token);
      const names = Object.keys(args);
      const signature = names.length ? `(${names.map((name) => `${name}: $${name}`).join(", ")})` : "";
      const declarations = names.length
        ? `(${names.map((name) => `$${name}: ${typeof args[name] === "number" ? "Int" : "String"}`).join(", ")})`
        : "";
      // Lists of objects (a donation's answers, a campaign's impact lines and questions) have subfields to select:
      // test/tribute-answers.test.ts and test/campaign-content.test.ts compare them.
      const fields = Object.keys(rest.body.items[0] ?? { id: 1 }).filter(
        (field) =>
          !OBJECT_LISTS.has(field) &&
          (typeof rest.body.items[0]?.[field] !== "object" || Array.isArray(rest.body.items[0]?.[field])),
      );
      const { body } = await graphql(
        `query ${declarations} { ${collection}${signature} { count items { ${fields.join(" ")} } } }`,
        args,
      );
      expect(body.errors, `${collection}?${query}`).toBeUndefined();
      expect(body.data[collection].count, `${collection}?${query}`).toBe(rest.body.count);
      const scalars = (item: Record<string, unknown>) =>
        Object.fromEntries(fields.map((field) => [field, item[field]]));
      expect(body.data[collection].items, `${collection}?${query}`).toEqual(rest.body.items.map(scalars));
    }
  });

  it("validates list arguments like REST and names the argument", async () => {
    const { body } = await graphql(`{ checkouts(limit: 0) { count } }`);
    expect(body.data).toBeNull();
    expect(body.errors[0].extensions).toEqual({
      code: "invalid_request",
      errors: [{ parameter: "limit", message: "must be >= 1" }],
    });
    const order = await graphql(`{ donations(order: "nope") { count } }`);
    expect(order.body.errors[0].extensions.errors[0].parameter).toBe("order");
    const date = await graphql(`{ checkouts(create_date_from: "2026-02-30") { count } }`);
    expect(date.body.errors[0].extensions).toMatchObject({ code: "invalid_request" });
    expect(date.body.errors[0].message).toContain("create_date_from");
  });

  it("never reaches another organization: lists, counts and id lookups", async () => {
    const theirs = await server.get("/api/v1/checkouts/", other.token);
    const foreignId = theirs.body.items[0].id;
    const { body } = await graphql(
      `query ($id: ID!) { checkout(id: $id) { id } donation(id: $id) { id } checkouts(limit: 1000) { count items { id } } }`,
      { id: String(foreignId) },
    );
    expect(body.data.checkout).toBeNull();
    expect(body.data.checkouts.count).toBe(10);
    expect(body.data.checkouts.items.map((item: { id: number }) => item.id)).not.toContain(foreignId);
    const foreignDonation = theirs.body.items[0].donation.id;
    const lookup = await graphql(`query ($id: ID!) { donation(id: $id) { id } payment(id: $id) { id } }`, {
      id: String(foreignDonation),
    });
    expect(lookup.body.data).toEqual({ donation: null, payment: null });
  });

  it("limits applications to their permissions", async () => {
    const limited = await fakeTenant(server.database.db, { permissions: ["checkouts:read"] });
    await fakeCompletedCheckout(server.database.db, limited.organizationId);
    const { body } = await graphql(`{ checkouts { items { id supporter { id } } } }`, {}, { token: limited.token });
    expect(body.errors[0].extensions.code).toBe("insufficient_scope");
    expect(body.errors[0].path).toEqual(["checkouts", "items", 0, "supporter"]);
    const denied = await graphql(`{ donations { count } }`, {}, { token: limited.token });
    expect(denied.body.errors[0]).toMatchObject({
      message: 'This application was not granted the "donations:read" permission',
      extensions: { code: "insufficient_scope" },
    });
  });

  it("lets signed-in members read their organization, choosing it by header", async () => {
    const member = await graphql(
      `{ viewer { kind role } organization { slug } checkouts { count } }`,
      {},
      { cookie: memberCookie },
    );
    expect(member.body).toEqual({
      data: {
        viewer: { kind: "member", role: "member" },
        organization: { slug: tenant.slug },
        checkouts: { count: 10 },
      },
    });
    const switched = await graphql(
      `{ organization { slug } checkouts { count } }`,
      {},
      {
        cookie: adminCookie,
        organization: other.slug,
      },
    );
    expect(switched.body.data).toEqual({ organization: { slug: other.slug }, checkouts: { count: 1 } });
    const foreign = await graphql(`{ organization { slug } }`, {}, { cookie: memberCookie, organization: other.slug });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0].extensions.code).toBe("not_a_member");
  });

  it("refuses cookie-authenticated requests that a cross-site form could send", async () => {
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"]) {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": type, cookie: memberCookie },
        body: type.startsWith("multipart") ? "--x--" : "query=%7B__typename%7D",
      });
      // Nothing runs either way: no parser for multipart (415), a refusal for the others (403).
      if (type.startsWith("multipart")) {
        expect(response.status).toBe(415);
        continue;
      }
      expect(response.status, type).toBe(403);
      expect((await response.json()).errors[0].extensions.code).toBe("csrf_refused");
    }
    const get = await fetch(`${server.url}/admin/graphql/?query=${encodeURIComponent("{ organization { slug } }")}`, {
      headers: { cookie: memberCookie, accept: "application/json" },
    });
    expect(get.status).toBe(200);
  });

  it("answers 401 with WWW-Authenticate without credentials or with a bad token", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer nope-not-a-real-token" },
      { cookie: `${SESSION_COOKIE}=forged` },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ query: "{ organization { slug } }" }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
      expect((await response.json()).errors[0].extensions.code).toBe("invalid_token");
    }
  });

  it("refuses queries nested beyond the depth limit, and lets real ones through", async () => {
    const real = `fragment F on Donation { supporter { id } campaign { id } }
      { checkouts { items { payment { payment_method { id } donation { ...F } } } } }`;
    expect((await graphql(real)).body.errors).toBeUndefined();
    // No data query of this schema nests beyond 8; introspection's own limit is its fixed shape (15).
    const ofTypes = (n: number): string => (n === 0 ? "name" : `ofType { ${ofTypes(n - 1)} }`);
    const deep = `{ __schema { types { fields { type { ${ofTypes(12)} } } } } }`;
    const refused = await graphql(deep);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({
      message: "The query is nested too deeply: at most 15 levels are allowed",
      extensions: { code: "query_too_deep" },
    });
  });

  it("refuses queries whose estimated cost is too high", async () => {
    const aliases = (n: number) =>
      Array.from({ length: n }, (_, i) => `a${i}: checkouts(limit: 1000) { items { id amount } }`).join(" ");
    expect((await graphql(`{ ${aliases(2)} }`)).body.errors).toBeUndefined();
    const expensive = await graphql(`{ ${aliases(17)} }`);
    expect(expensive.status).toBe(400);
    expect(expensive.body.errors[0].extensions).toMatchObject({ code: "query_too_expensive", max_cost: 50000 });
    const viaVariable = await graphql(
      `query ($n: Int) { ${Array.from({ length: 17 }, (_, i) => `a${i}: checkouts(limit: $n) { items { id amount } }`).join(" ")} }`,
      { n: 1 },
    );
    expect(viaVariable.body.errors[0].extensions.code).toBe("query_too_expensive");
  });

  it("resolves a page of 100 checkouts with every relation in a constant number of queries", async () => {
    const db = server.database.db;
    const bulk = await fakeTenant(db);
    for (let i = 0; i < 100; i++) await fakeCompletedCheckout(db, bulk.organizationId);
    const count = async (limit: number) => {
      server.queries.length = 0;
      const { body } = await graphql(
        `{ checkouts(limit: ${limit}) { count items { ${CHECKOUT_FIELDS} } } }`,
        {},
        {
          token: bulk.token,
        },
      );
      expect(body.errors).toBeUndefined();
      expect(body.data.checkouts.items.length).toBe(limit);
      return server.queries.length;
    };
    // The token's first request also takes the lease of its rate limit, a write the next ones skip.
    await count(1);
    const forTen = await count(10);
    const forHundred = await count(100);
    expect(forHundred).toBe(forTen);
    expect(forHundred).toBeLessThanOrEqual(6);
  });

  it("shows GraphiQL to a browser, with no asset from another origin", async () => {
    const response = await fetch(`${server.url}/admin/graphql/`, { headers: { accept: "text/html" } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("GraphiQL");
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="https?:\/\//);
  });
});
