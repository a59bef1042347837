import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeCampaign, fakeCompletedCheckout, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

type Auth = { token?: string; cookie?: string };

const post = async (server: TestServer, body: unknown, auth: Auth, accept = "application/graphql-response+json") => {
  const response = await fetch(`${server.url}/admin/graphql/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept,
      ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
      ...(auth.cookie ? { cookie: auth.cookie } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

describe("GraphQL limits", () => {
  let server: TestServer;
  let tenant: Tenant;
  let readOnly: Tenant;
  let memberCookie: string;

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    readOnly = await fakeTenant(db, { permissions: ["campaigns:read"] });
    await fakeCampaign(db, readOnly.organizationId, { title: "zN water" });
    for (let i = 0; i < 3; i++) await fakeCompletedCheckout(db, tenant.organizationId);
    const member = await createUser(db, {
      email: `member-${unique(6)}@example.test`,
      password: "member password",
      organization: tenant.slug,
      role: "member",
    });
    memberCookie = `${SESSION_COOKIE}=${await createSession(db, server.config, member.id)}`;
  });
  afterAll(() => server?.close());

  /** Statements a request runs before GraphQL starts (authentication) are the baseline. */
  const statementsFor = async (query: string, auth: Auth) => {
    server.queries.length = 0;
    const response = await post(server, { query }, auth);
    return { ...response, statements: server.queries.length };
  };

  it("refuses 5,000 aliases of a searched count before running any SQL", async () => {
    // A token's first request also takes the lease of its rate limit, a write the next ones skip.
    await statementsFor("{ __typename }", { token: readOnly.token });
    const baseline = await statementsFor("{ __typename }", { token: readOnly.token });
    expect(baseline.body).toEqual({ data: { __typename: "Query" } });
    const aliases = Array.from({ length: 5000 }, (_, i) => `a${i}: campaigns(limit: 1, q: "zN") { count }`).join(" ");
    const refused = await statementsFor(`{ ${aliases} }`, { token: readOnly.token });
    expect(refused.status).toBe(400);
    expect(refused.body.data).toBeUndefined();
    expect(
      refused.body.errors.map((error: { message: string; extensions: unknown }) => [error.message, error.extensions]),
    ).toEqual([
      [
        "The operation asks for 5000 top-level fields; at most 20 are allowed (split it)",
        { code: "too_many_root_fields", max_root_fields: 20 },
      ],
      [
        "The operation uses 5000 aliases; at most 30 are allowed (split it)",
        { code: "too_many_aliases", max_aliases: 30 },
      ],
      [
        "The query is too expensive: its estimated cost is 160000, at most 50000 is allowed (lower the limits or ask for fewer fields)",
        { code: "query_too_expensive", cost: 160000, max_cost: 50000 },
      ],
    ]);
    expect(refused.statements).toBe(baseline.statements);
  });

  it("costs what reaches the database: counts, searches and relations, not only fields", async () => {
    // 20 root fields, no alias over the cap, but each a page, a count and a search of 1,000 rows.
    const searches = Array.from(
      { length: 20 },
      (_, i) =>
        `a${i}: checkouts(limit: 1000, q: "no such text") { count items { id supporter { id } campaign { id } } }`,
    ).join(" ");
    const refused = await post(server, { query: `{ ${searches} }` }, { token: tenant.token });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors[0].extensions).toEqual({ code: "query_too_expensive", cost: 141020, max_cost: 50000 });
    const one = await post(
      server,
      {
        query: `{ checkouts(limit: 1000, q: "no such text") { count items { id supporter { id } campaign { id } } } }`,
      },
      { token: tenant.token },
    );
    expect(one.body).toEqual({ data: { checkouts: { count: 0, items: [] } } });
  });

  it("lets the admin panel's own queries through", async () => {
    const panel = [
      `query DashboardCheckouts {
        recent: checkouts(limit: 8, order: "-create_date") { count items { id state amount supporter { id first_name } campaign { id title } } }
        open: checkouts(limit: 8, order: "-create_date", state: "OPEN") { count items { id state amount supporter { id } campaign { id title } } }
      }`,
      `query Dashboard { dashboard(months: 12) { currency raised_this_month donations_over_time { period amount count }
        top_campaigns { campaign { id title goal } raised donations } } }`,
      `query List($offset: Int, $order: String, $q: String) {
        checkouts(limit: 100, offset: $offset, order: $order, q: $q) { count items { id state amount frequency payment_method_label
          completed_date create_date supporter { id first_name last_name email } campaign { id title } } } }`,
      `query CampaignOptions { campaigns(limit: 500, order: "title") { items { id title archive_date } } }`,
      `query Members { members { user_id email name role create_date } }`,
    ];
    for (const query of panel) {
      const response = await post(server, { query }, { cookie: memberCookie });
      expect(response.body.errors, query).toBeUndefined();
      expect(response.status).toBe(200);
    }
  });

  it("bounds the SQL statements one request may run, answered as a GraphQL error", async () => {
    const bounded = await startTestServer({
      graphqlLimits: { ...server.config.graphqlLimits, maxStatements: 3 },
    });
    try {
      const other = await fakeTenant(bounded.database.db);
      await post(bounded, { query: "{ __typename }" }, { token: other.token });
      bounded.queries.length = 0;
      await post(bounded, { query: "{ __typename }" }, { token: other.token });
      const authentication = bounded.queries.length;
      bounded.queries.length = 0;
      const query = `{ a: campaigns { count } b: supporters { count } c: donations { count } d: payments { count } }`;
      const response = await post(bounded, { query }, { token: other.token });
      expect(response.status).toBe(200);
      expect(bounded.queries.length).toBeLessThanOrEqual(authentication + 3);
      const codes = new Set(
        response.body.errors.map((error: { extensions: { code: string } }) => error.extensions.code),
      );
      expect([...codes]).toEqual(["too_many_statements"]);
      expect(response.body.errors[0].message).toBe(
        "This request needs more than 3 database statements; ask for fewer fields or aliases, or split it",
      );
      // The next request has a fresh budget.
      const next = await post(bounded, { query: "{ campaigns { count } }" }, { token: other.token });
      expect(next.body).toEqual({ data: { campaigns: { count: 0 } } });
      const health = await fetch(`${bounded.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await bounded.close();
    }
  });

  describe("introspection", () => {
    it("answers graphql-js's standard introspection query to members and applications", async () => {
      for (const auth of [{ cookie: memberCookie }, { token: readOnly.token }]) {
        for (const query of [
          getIntrospectionQuery(),
          getIntrospectionQuery({
            descriptions: true,
            specifiedByUrl: true,
            directiveIsRepeatable: true,
            schemaDescription: true,
            inputValueDeprecation: true,
            oneOf: true,
          }),
        ]) {
          const response = await post(server, { query, operationName: "IntrospectionQuery" }, auth);
          expect(response.status).toBe(200);
          expect(response.body.errors).toBeUndefined();
          expect(response.body.data.__schema.queryType).toMatchObject({ name: "Query" });
          const names = response.body.data.__schema.types.map((type: { name: string }) => type.name);
          expect(names).toEqual(expect.arrayContaining(["Query", "Mutation", "Checkout", "Campaign"]));
        }
      }
    });

    it("depth-checks introspection against its own fixed shape, and data queries against the data limit", async () => {
      const ofTypes = (n: number): string => (n === 0 ? "name" : `ofType { ${ofTypes(n - 1)} }`);
      const tooDeep = `{ __schema { types { fields { type { ${ofTypes(12)} } } } } }`;
      const refused = await post(server, { query: tooDeep }, { token: tenant.token });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        errors: [
          {
            message: "The query is nested too deeply: at most 15 levels are allowed",
            locations: [{ line: 1, column: 1 }],
            extensions: { code: "query_too_deep" },
          },
        ],
      });
      const shallow = await startTestServer({ graphqlLimits: { ...server.config.graphqlLimits, maxDepth: 3 } });
      try {
        const other = await fakeTenant(shallow.database.db);
        const data = await post(
          shallow,
          { query: "{ checkouts { items { campaign { id } } } }" },
          { token: other.token },
        );
        expect(data.status).toBe(400);
        expect(data.body.errors[0]).toMatchObject({
          message: "The query is nested too deeply: at most 3 levels are allowed",
          extensions: { code: "query_too_deep" },
        });
        const introspection = await post(shallow, { query: getIntrospectionQuery() }, { token: other.token });
        expect(introspection.body.errors).toBeUndefined();
      } finally {
        await shallow.close();
      }
    });
  });

  describe("malformed parameters", () => {
    const refusal = (message: string) => ({ errors: [{ message, extensions: { code: "invalid_request" } }] });
    const QUERY = "query ($q: String) { campaigns(q: $q) { count } }";

    it("refuses variables that are not a JSON object, with 400 and invalid_request", async () => {
      for (const variables of ["{bad", '{"q":"x"}', [1], 5, true]) {
        for (const accept of ["application/json", "application/graphql-response+json"]) {
          const response = await post(server, { query: QUERY, variables }, { token: tenant.token }, accept);
          expect(response.status, JSON.stringify(variables)).toBe(400);
          expect(response.body).toEqual(refusal('The "variables" parameter must be a JSON object'));
        }
      }
      const get = (variables: string) =>
        fetch(
          `${server.url}/admin/graphql/?query=${encodeURIComponent(QUERY)}&variables=${encodeURIComponent(variables)}`,
          { headers: { authorization: `Bearer ${tenant.token}`, accept: "application/json" } },
        );
      const badJson = await get("{bad");
      expect(badJson.status).toBe(400);
      expect(await badJson.json()).toEqual(refusal('The "variables" parameter is not valid JSON'));
      const array = await get("[1]");
      expect(array.status).toBe(400);
      expect(await array.json()).toEqual(refusal('The "variables" parameter must be a JSON object'));
    });

    it("refuses a NUL in variables or in a string argument, and runs nothing", async () => {
      const variable = await post(server, { query: QUERY, variables: { q: "a\u0000b" } }, { token: tenant.token });
      expect(variable.status).toBe(400);
      expect(variable.body).toEqual(
        refusal('The "variables" parameter contains a NUL character, which no field accepts'),
      );
      const viaGet = await fetch(
        `${server.url}/admin/graphql/?query=${encodeURIComponent(QUERY)}&variables=${encodeURIComponent('{"q":"a\\u0000"}')}`,
        { headers: { authorization: `Bearer ${tenant.token}`, accept: "application/json" } },
      );
      expect(viaGet.status).toBe(400);
      expect(await viaGet.json()).toEqual(
        refusal('The "variables" parameter contains a NUL character, which no field accepts'),
      );
      const literal = await post(server, { query: '{ campaigns(q: "a\\u0000b") { count } }' }, { token: tenant.token });
      expect(literal.status).toBe(400);
      expect(literal.body).toEqual({
        errors: [
          {
            message: "A string argument contains a NUL character, which no field accepts",
            locations: [{ line: 1, column: 16 }],
            extensions: { code: "invalid_request" },
          },
        ],
      });
    });

    it("refuses variables of the wrong type as invalid_request (400, or 200 for application/json as the spec says)", async () => {
      const body = { query: "query ($n: Int) { campaigns(limit: $n) { count } }", variables: { n: "0x10" } };
      const expected = {
        errors: [
          {
            message: 'Variable "$n" got invalid value "0x10"; Int cannot represent non-integer value: "0x10"',
            locations: [{ line: 1, column: 8 }],
            extensions: { code: "invalid_request" },
          },
        ],
      };
      const strict = await post(server, body, { token: tenant.token });
      expect(strict.status).toBe(400);
      expect(strict.body).toEqual(expected);
      const legacy = await post(server, body, { token: tenant.token }, "application/json");
      expect(legacy.status).toBe(200);
      expect(legacy.body).toEqual(expected);
    });
  });
});
