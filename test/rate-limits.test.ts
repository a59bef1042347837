import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "../src/config.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { testDatabaseUrl } from "./helpers/database.js";
import { fakeTenant, unique } from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";

/** The default rules with some of them replaced, e.g. { token: "4/1m" }. */
function limits(rules: Partial<Record<keyof Config["rateLimits"], string>>): Partial<Config> {
  return {
    rateLimits: loadConfig({
      RATE_LIMIT_TOKEN: rules.token,
      RATE_LIMIT_SESSION: rules.session,
      RATE_LIMIT_IP: rules.ip,
    }).rateLimits,
  };
}

interface Sent {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field
  body: any;
}

async function send(url: string, init: RequestInit = {}): Promise<Sent> {
  return readResponse(await fetch(url, { redirect: "manual", ...init }));
}

function expectRefused(response: Sent, what: string, points: number) {
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(response.status).toBe(429);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.body).toEqual({
    type: "urn:donata:problem:rate_limited",
    title: "Too Many Requests",
    status: 429,
    detail: `Too many requests from ${what}: at most ${points} per 60 seconds. Retry in ${retryAfter} seconds.`,
    code: "rate_limited",
  });
}

const remaining = (response: Sent) => Number(/;r=(\d+);/.exec(response.headers.get("ratelimit") ?? "")?.[1]);

describe("rate limits", () => {
  // Trusts 127.0.0.1 as its proxy, so each test is its own client address through X-Forwarded-For.
  let server: TestServer;
  let addresses = 0;
  const newAddress = () => `203.0.113.${++addresses}`;

  beforeAll(async () => {
    server = await startTestServer({
      ...limits({ token: "4/1m", session: "4/1m", ip: "6/1m" }),
      trustProxy: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("limits each access token across REST and GraphQL, with RateLimit fields on every answer", async () => {
    const tenant = await fakeTenant(server.database.db);
    const other = await fakeTenant(server.database.db);
    const bearer = (token: string) => ({ authorization: `Bearer ${token}`, "x-forwarded-for": newAddress() });
    const rest = (token = tenant.token) => send(`${server.url}/api/v1/campaigns/?limit=1`, { headers: bearer(token) });
    const graphql = (token = tenant.token) =>
      send(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: JSON.stringify({ query: "{ __typename }" }),
      });
    const answers = [await rest(), await rest(), await graphql(), await rest()];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((answer) => answer.headers.get("ratelimit-policy"))).toEqual(
      Array(4).fill('"api_token";q=4;w=60'),
    );
    expect(answers.map(remaining)).toEqual([3, 2, 1, 0]);
    expect(answers[0]?.headers.get("ratelimit")).toMatch(/^"api_token";r=3;t=([1-9]|[1-5]\d|60)$/);
    expectRefused(await rest(), "this access token", 4);
    const refusedGraphql = await graphql();
    expectRefused(refusedGraphql, "this access token", 4);
    expect(refusedGraphql.headers.get("ratelimit")).toMatch(/^"api_token";r=0;t=\d+$/);
    // Another application's token has a budget of its own.
    expect((await rest(other.token)).status).toBe(200);
  });

  it("limits each admin session across the panel's API, GraphQL with the cookie and CSV export", async () => {
    const slug = `org-${unique(6)}`;
    await createOrganization(server.database.db, { slug, name: "Org" });
    const email = `admin-${unique(6)}@example.test`;
    await createUser(server.database.db, { email, password: PASSWORD, organization: slug, role: "admin" });
    const address = newAddress();
    const signIn = await send(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    // Signed out, the sign-in counted against the client address.
    expect(signIn.headers.get("ratelimit")).toMatch(/^"client_ip";r=5;t=\d+$/);
    const cookie = (signIn.headers.getSetCookie()[0] ?? "").split(";")[0] as string;
    const headers = { cookie, "x-forwarded-for": address };
    const answers = [
      await send(`${server.url}/admin/api/session`, { headers }),
      await send(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query: "{ __typename }" }),
      }),
      await send(`${server.url}/admin/export/campaigns.csv?organization=${slug}`, { headers }),
      await send(`${server.url}/admin/`, { headers }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, answers[3]?.status]);
    expect(answers.map((answer) => answer.headers.get("ratelimit-policy"))).toEqual(
      Array(4).fill('"session";q=4;w=60'),
    );
    expect(answers.map(remaining)).toEqual([3, 2, 1, 0]);
    expectRefused(
      await send(`${server.url}/admin/export/campaigns.csv?organization=${slug}`, { headers }),
      "this session",
      4,
    );
    expectRefused(await send(`${server.url}/admin/api/session`, { headers }), "this session", 4);
  });

  it("limits each client address on the unauthenticated endpoints, the OAuth ones answering 429 problem+json", async () => {
    const headers = { "x-forwarded-for": newAddress() };
    const form = { ...headers, "content-type": "application/x-www-form-urlencoded" };
    const answers = [
      await send(`${server.url}/oauth/token/`, { method: "POST", headers: form, body: "grant_type=refresh_token" }),
      await send(`${server.url}/oauth/authorize/?client_id=nobody`, { headers }),
      await send(`${server.url}/api/v1/public/organizations/none/campaigns/none`, { headers }),
      await send(`${server.url}/donate/none/none`, { headers }),
      await send(`${server.url}/documents/receipts/1/nosignature`, { headers }),
      // A request with no credentials to an authenticated API counts against its address as well.
      await send(`${server.url}/api/v1/campaigns/`, { headers }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([401, 400, 404, 404, 404, 401]);
    expect(answers.map((answer) => answer.headers.get("ratelimit-policy"))).toEqual(
      Array(6).fill('"client_ip";q=6;w=60'),
    );
    expect(answers.map(remaining)).toEqual([5, 4, 3, 2, 1, 0]);
    for (const path of ["/oauth/token/", "/oauth/revoke/", "/oauth/introspect/"]) {
      expectRefused(
        await send(`${server.url}${path}`, { method: "POST", headers: form, body: "token=x" }),
        "this client address",
        6,
      );
    }
    // A bearer header does not move a public endpoint off the address's budget.
    const withToken = await send(`${server.url}/api/v1/public/organizations/none/campaigns/none`, {
      headers: { ...headers, authorization: "Bearer anything" },
    });
    expectRefused(withToken, "this client address", 6);
    expectRefused(await send(`${server.url}/donate/none/none`, { headers }), "this client address", 6);
    expectRefused(await send(`${server.url}/documents/receipts/1/nosignature`, { headers }), "this client address", 6);
  });

  it("never limits the health endpoints, and puts RateLimit fields on every other answer (also 404 and docs)", async () => {
    const headers = { "x-forwarded-for": newAddress() };
    for (let i = 0; i < 10; i++) {
      for (const path of ["/healthz", "/readyz"]) {
        const health = await send(`${server.url}${path}`, { headers });
        expect(health.status).toBe(200);
        expect(health.headers.get("ratelimit")).toBeNull();
      }
    }
    const others = [
      await send(`${server.url}/no/such/route`, { headers }),
      await send(`${server.url}/api/v1/openapi.json`, { headers }),
      await send(`${server.url}/.well-known/oauth-authorization-server`, { headers }),
    ];
    expect(others.map((answer) => answer.status)).toEqual([404, 200, 200]);
    expect(others.map(remaining)).toEqual([5, 4, 3]);
  });

  it("reads the client address from X-Forwarded-For only when TRUST_PROXY names the proxy", async () => {
    const untrusting = await startTestServer(limits({ ip: "6/1m" }));
    try {
      const from = (target: TestServer, address: string) =>
        send(`${target.url}/.well-known/oauth-authorization-server`, { headers: { "x-forwarded-for": address } });
      // No TRUST_PROXY: the socket's address, whatever the header claims.
      const ignored = [
        await from(untrusting, "192.0.2.1"),
        await from(untrusting, "192.0.2.2"),
        await from(untrusting, "192.0.2.3"),
      ];
      expect(ignored.map(remaining)).toEqual([5, 4, 3]);
      // TRUST_PROXY=127.0.0.1: the address the proxy forwarded, each with a budget of its own.
      const trusted = [
        await from(server, newAddress()),
        await from(server, newAddress()),
        await from(server, newAddress()),
      ];
      expect(trusted.map(remaining)).toEqual([5, 5, 5]);
      // Only the hop next to the trusted proxy counts: a client cannot prepend addresses of its own choosing.
      const address = newAddress();
      expect(remaining(await from(server, `10.9.9.9, ${address}`))).toBe(5);
      expect(remaining(await from(server, `10.9.9.8, ${address}`))).toBe(4);
    } finally {
      await untrusting.close();
    }
  });

  it("parses the limits and the trusted proxies from the environment", () => {
    const config = loadConfig({
      RATE_LIMIT_TOKEN: "100/1s",
      RATE_LIMIT_SESSION: "2000/5m",
      RATE_LIMIT_IP: "50/1h",
      TRUST_PROXY: "10.0.0.1, 192.168.0.0/16,::1,loopback",
    });
    // The request limits are leased, 10 % of their points at a time; a lease under 2 points is none.
    expect(config.rateLimits.token).toEqual({ name: "api_token", points: 100, durationSeconds: 1, lease: 10 });
    expect(config.rateLimits.session).toEqual({ name: "session", points: 2000, durationSeconds: 300, lease: 200 });
    expect(config.rateLimits.ip).toEqual({ name: "client_ip", points: 50, durationSeconds: 3600, lease: 5 });
    expect(loadConfig({ RATE_LIMIT_IP: "19/1m" }).rateLimits.ip).toEqual({
      name: "client_ip",
      points: 19,
      durationSeconds: 60,
    });
    const exact = loadConfig({ RATE_LIMIT_LEASE_PERCENT: "0" }).rateLimits;
    expect([exact.token, exact.session, exact.ip].map((rule) => rule.lease)).toEqual([undefined, undefined, undefined]);
    expect(loadConfig({ RATE_LIMIT_LEASE_PERCENT: "50" }).rateLimits.token.lease).toBe(3000);
    for (const bad of ["51", "-1", "0.1", "ten"]) {
      expect(() => loadConfig({ RATE_LIMIT_LEASE_PERCENT: bad })).toThrow(
        `RATE_LIMIT_LEASE_PERCENT must be an integer between 0 and 50, got "${bad}"`,
      );
    }
    expect(config.trustProxy).toBe("10.0.0.1,192.168.0.0/16,::1,loopback");
    const defaults = loadConfig({});
    expect(defaults.trustProxy).toBeUndefined();
    expect(
      Object.fromEntries(
        Object.entries(defaults.rateLimits).map(([name, rule]) => [name, `${rule.points}/${rule.durationSeconds}`]),
      ),
    ).toEqual({
      token: "6000/60",
      session: "1200/60",
      ip: "600/60",
      invalidCredentials: "300/60",
      signInAccount: "5/900",
      signInAddress: "30/900",
      passwordResetEmail: "5/3600",
      passwordResetAddress: "20/3600",
    });
    // Credential throttles count every attempt in the store.
    expect(Object.fromEntries(Object.entries(defaults.rateLimits).map(([name, rule]) => [name, rule.lease]))).toEqual({
      token: 600,
      session: 120,
      ip: 60,
      invalidCredentials: undefined,
      signInAccount: undefined,
      signInAddress: undefined,
      passwordResetEmail: undefined,
      passwordResetAddress: undefined,
    });
    for (const bad of ["0/1m", "10", "10/0s", "10/25h", "-1/1m", "1e3/1m", "10/1d"]) {
      expect(() => loadConfig({ RATE_LIMIT_IP: bad })).toThrow(
        `RATE_LIMIT_IP must be "<requests>/<window>" such as "600/1m" (window in s, m or h, at most 24h), got "${bad}"`,
      );
    }
    for (const bad of ["10.0.0.300", "10.0.0.0/33", "proxy.example", "10.0.0.1/8/1", "*"]) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(
        `TRUST_PROXY must list proxy addresses or CIDR ranges separated by commas (e.g. "10.0.0.1,192.168.0.0/16"), got "${bad}"`,
      );
    }
  });
});

describe("rate limits shared by several processes", () => {
  const race = async (servers: TestServer[], requests: number) => {
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, i) =>
        send(`${(servers[i % servers.length] as TestServer).url}/.well-known/oauth-authorization-server`),
      ),
    );
    return answers.map((answer) => answer.status).filter((status) => status === 200).length;
  };
  /** Each server in turn answers until it refuses: the budget it held leased and unused. */
  const drain = async (servers: TestServer[]) => {
    let served = 0;
    for (const each of servers) {
      while ((await send(`${each.url}/.well-known/oauth-authorization-server`)).status === 200) served++;
    }
    return served;
  };
  const counterWrites = (target: TestServer) =>
    target.queries.filter((query) => /^insert into "rate_limits"/i.test(query)).length;

  it("writes a leased limit's counter once per lease, its RateLimit fields counting every request", async () => {
    const server = await startTestServer(limits({ ip: "100/1m" }));
    try {
      const before = counterWrites(server);
      const answers = [];
      for (let i = 0; i < 30; i++) answers.push(await send(`${server.url}/.well-known/oauth-authorization-server`));
      expect(answers.map(remaining)).toEqual(Array.from({ length: 30 }, (_, i) => 99 - i));
      expect(answers.map((answer) => answer.headers.get("ratelimit-policy"))).toEqual(
        Array(30).fill('"client_ip";q=100;w=60'),
      );
      // Leases of 10 (RATE_LIMIT_LEASE_PERCENT's default 10 %): 3 writes for 30 requests.
      expect(counterWrites(server) - before).toBe(3);
    } finally {
      await server.close();
    }
  });

  it.runIf(testDatabaseUrl())(
    "never lets two leasing servers on one PostgreSQL database pass the limit together",
    async () => {
      const namespace = `shared${randomBytes(4).toString("hex")}:`;
      const servers = [
        await startTestServer(limits({ ip: "100/1m" }), { limitNamespace: namespace }),
        await startTestServer(limits({ ip: "100/1m" }), { limitNamespace: namespace }),
      ];
      try {
        const raced = await race(servers, 300);
        // At most the other server's unused lease (10) is refused early, and it still serves it.
        expect(raced).toBeLessThanOrEqual(100);
        expect(raced).toBeGreaterThanOrEqual(90);
        expect(raced + (await drain(servers))).toBe(100);
      } finally {
        await Promise.all(servers.map((each) => each.close()));
      }
    },
  );

  it.runIf(testDatabaseUrl())("splits one budget between two servers on one PostgreSQL database", async () => {
    const namespace = `shared${randomBytes(4).toString("hex")}:`;
    const servers = [
      await startTestServer(limits({ ip: "10/1m" }), { limitNamespace: namespace }),
      await startTestServer(limits({ ip: "10/1m" }), { limitNamespace: namespace }),
    ];
    try {
      expect(await race(servers, 30)).toBe(10);
    } finally {
      await Promise.all(servers.map((each) => each.close()));
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)("splits one budget between two servers on one Redis (REDIS_URL)", async () => {
    const namespace = `shared${randomBytes(4).toString("hex")}:`;
    const overrides = { ...limits({ ip: "10/1m" }), redisUrl: process.env.TEST_REDIS_URL };
    const servers = [
      await startTestServer(overrides, { limitNamespace: namespace }),
      await startTestServer(overrides, { limitNamespace: namespace }),
    ];
    try {
      expect(await race(servers, 30)).toBe(10);
    } finally {
      await Promise.all(servers.map((each) => each.close()));
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)(
    "never lets two leasing servers on one Redis pass the limit together",
    async () => {
      const namespace = `shared${randomBytes(4).toString("hex")}:`;
      const overrides = { ...limits({ ip: "100/1m" }), redisUrl: process.env.TEST_REDIS_URL };
      const servers = [
        await startTestServer(overrides, { limitNamespace: namespace }),
        await startTestServer(overrides, { limitNamespace: namespace }),
      ];
      try {
        const raced = await race(servers, 300);
        expect(raced).toBeLessThanOrEqual(100);
        expect(raced).toBeGreaterThanOrEqual(90);
        expect(raced + (await drain(servers))).toBe(100);
      } finally {
        await Promise.all(servers.map((each) => each.close()));
      }
    },
  );
});

describe("an unreachable counter store", () => {
  it("serves the API uncounted, and refuses sign-in with 503 + Retry-After rather than checking a password uncounted", async () => {
    // Nothing listens on this port: every Redis command fails after one quick retry.
    const server = await startTestServer({ redisUrl: "redis://127.0.0.1:1" });
    try {
      const slug = `org-${unique()}`;
      const email = `${unique()}@example.org`;
      await createOrganization(server.database.db, { slug, name: "Org" });
      await createUser(server.database.db, { email, password: PASSWORD, organization: slug, role: "admin" });
      const metadata = await send(`${server.url}/.well-known/oauth-authorization-server`);
      expect(metadata.status).toBe(200);
      const signIn = await send(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(signIn.status).toBe(503);
      expect(signIn.headers.get("retry-after")).toBe("5");
      expect(signIn.body).toMatchObject({ code: "sign_in_unavailable", status: 503 });
    } finally {
      await server.close();
    }
  });
});

describe("made-up credentials", () => {
  it("counts 401s per client address: past the limit they become 429s, while valid tokens from there still work", async () => {
    const server = await startTestServer({
      rateLimits: loadConfig({ RATE_LIMIT_INVALID_CREDENTIALS: "3/1m" }).rateLimits,
      trustProxy: "127.0.0.1",
    });
    try {
      const tenant = await fakeTenant(server.database.db);
      const attacker = { "x-forwarded-for": "198.51.100.7" };
      const statuses: number[] = [];
      // Each request a fresh made-up token: without the address count, each would get its own budget.
      for (let i = 0; i < 6; i++) {
        const answer = await send(`${server.url}/api/v1/campaigns/`, {
          headers: { ...attacker, authorization: `Bearer dnt_at_${unique(32)}` },
        });
        statuses.push(answer.status);
        if (answer.status === 429) {
          expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
          expect(answer.headers.get("www-authenticate")).toBeNull();
          expect(answer.body).toEqual({
            type: "urn:donata:problem:rate_limited",
            title: "Too Many Requests",
            status: 429,
            detail: `Too many requests with invalid credentials from this client address: at most 3 per 60 seconds. Retry in ${answer.headers.get("retry-after")} seconds.`,
            code: "rate_limited",
          });
        }
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
      // A made-up session cookie counts the same way.
      const withCookie = await send(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { ...attacker, "content-type": "application/json", cookie: `donata_session=${unique(32)}` },
        body: JSON.stringify({ query: "{ __typename }" }),
      });
      expect(withCookie.status).toBe(429);
      // A valid token from the same address (a shared network), and other addresses, are unaffected.
      for (const address of ["198.51.100.7", "198.51.100.8"]) {
        const valid = await send(`${server.url}/api/v1/campaigns/`, {
          headers: { "x-forwarded-for": address, authorization: `Bearer ${tenant.token}` },
        });
        expect(valid.status).toBe(200);
      }
    } finally {
      await server.close();
    }
  });
});
