import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installations, memberships } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createApplication, createInstallationToken } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser } from "./helpers/browser.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";
const CORS_HEADERS = ["access-control-allow-origin", "access-control-allow-credentials"];

const corsOf = (headers: Headers) =>
  Object.fromEntries(CORS_HEADERS.flatMap((name) => (headers.has(name) ? [[name, headers.get(name)]] : [])));

/** Cookies never get CORS; cookie routes refuse state changes from other origins; tokens get CORS for their app. */
describe("cross-origin requests", () => {
  let server: TestServer;
  let tenant: Tenant;
  let ownerId: number;
  let ownerCookie: string;
  let appOrigin: string;
  let otherAppOrigin: string;
  let appToken: string;
  /** Another port of the same host: same site (SameSite cookies go there), another origin. */
  let sameSiteOrigin: string;

  const refusal = (origin: string) => ({
    type: "urn:donata:problem:cross_origin_refused",
    title: "Forbidden",
    status: 403,
    detail: `This request came from another origin (${origin}); requests made with the session cookie are accepted only from ${server.url}`,
    code: "cross_origin_refused",
  });

  const ownerCount = async () =>
    (await server.database.db.select().from(memberships).where(eq(memberships.organizationId, tenant.organizationId)))
      .length;

  const adminGraphql = (query: string, headers: Record<string, string>, variables: Record<string, unknown> = {}) =>
    fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", cookie: ownerCookie, ...headers },
      body: JSON.stringify({ query, variables }),
    });

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    tenant = await fakeTenant(db);
    await fakeCampaign(db, tenant.organizationId, { slug: `c-${unique(6)}`, title: "Clean water" });
    const owner = await createUser(db, {
      email: `owner-${unique(6)}@example.test`,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    ownerId = owner.id;
    ownerCookie = `${SESSION_COOKIE}=${await createSession(db, server.config, owner.id)}`;
    appOrigin = `https://spa-${unique(8)}.example.test`;
    otherAppOrigin = `https://other-${unique(8)}.example.test`;
    const spa = await createApplication(db, {
      name: "Browser app",
      applicationUrl: `${appOrigin}/`,
      callbackUrls: [`${appOrigin}/callback`],
    });
    await createApplication(db, {
      name: "Another app",
      applicationUrl: `${otherAppOrigin}/`,
      callbackUrls: [`${otherAppOrigin}/callback`],
    });
    await db.insert(installations).values({ organizationId: tenant.organizationId, applicationId: spa.id });
    appToken = (
      await createInstallationToken(
        db,
        { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86400 },
        spa.client_id,
        tenant.slug,
      )
    ).access_token;
    const port = Number(new URL(server.url).port);
    sameSiteOrigin = `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}`;
  });
  afterAll(() => server?.close());

  describe("session (cookie) requests", () => {
    it("answers a preflight from a foreign origin with no CORS header", async () => {
      for (const origin of [sameSiteOrigin, "https://evil.example", "null"]) {
        const response = await fetch(`${server.url}/admin/graphql/`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
          },
        });
        expect(response.status, origin).toBe(204);
        expect(corsOf(response.headers), origin).toEqual({});
      }
    });

    it("gives a credentialed read from a foreign origin no CORS header", async () => {
      const read = await fetch(`${server.url}/admin/graphql/?query=${encodeURIComponent("{ members { email } }")}`, {
        headers: {
          cookie: ownerCookie,
          origin: sameSiteOrigin,
          "sec-fetch-site": "same-site",
          accept: "application/json",
        },
      });
      expect(corsOf(read.headers)).toEqual({});
      const session = await server.get("/admin/api/session", undefined, {
        cookie: ownerCookie,
        origin: sameSiteOrigin,
      });
      expect(session.status).toBe(200);
      expect(corsOf(session.headers)).toEqual({});
    });

    it("refuses a GraphQL POST with the cookie from another port of the same host, and changes nothing", async () => {
      const before = await ownerCount();
      const add = await adminGraphql(
        `mutation ($email: String!) { addMember(email: $email, role: "owner") { member { user_id } } }`,
        { origin: sameSiteOrigin, "sec-fetch-site": "same-site" },
        { email: `intruder-${unique(6)}@example.test` },
      );
      expect(add.status).toBe(403);
      expect(add.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await add.json()).toEqual(refusal(sameSiteOrigin));
      expect(corsOf(add.headers)).toEqual({});
      const read = await adminGraphql("{ members { email } }", { origin: sameSiteOrigin });
      expect(read.status).toBe(403);
      expect(await ownerCount()).toBe(before);
    });

    it("refuses a cross-site POST that sends no Origin but says where it comes from (Sec-Fetch-Site)", async () => {
      const response = await adminGraphql("{ members { email } }", { "sec-fetch-site": "cross-site" });
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual(refusal("Sec-Fetch-Site: cross-site"));
    });

    it("accepts the admin panel's own origin, and clients that are not browsers", async () => {
      const own = await adminGraphql("{ members { email } }", { origin: server.url, "sec-fetch-site": "same-origin" });
      expect(own.status).toBe(200);
      expect((await own.json()).data.members.length).toBe(1);
      const script = await adminGraphql("{ organization { slug } }", {});
      expect((await script.json()).data).toEqual({ organization: { slug: tenant.slug } });
    });

    it("refuses sign-in and sign-out of the admin API from another origin", async () => {
      const email = `signin-${unique(6)}@example.test`;
      await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role: "member" });
      const signIn = await fetch(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: sameSiteOrigin },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(signIn.status).toBe(403);
      expect(signIn.headers.get("set-cookie")).toBeNull();
      expect(await signIn.json()).toEqual(refusal(sameSiteOrigin));
      const signOut = await fetch(`${server.url}/admin/api/session`, {
        method: "DELETE",
        headers: { cookie: ownerCookie, origin: "https://evil.example" },
      });
      expect(signOut.status).toBe(403);
      expect(await signOut.json()).toEqual(refusal("https://evil.example"));
      expect((await server.get("/admin/api/session", undefined, { cookie: ownerCookie })).status).toBe(200);
      const own = await fetch(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.url },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(own.status).toBe(200);
    });

    it("refuses the OAuth sign-in, consent and sign-out forms posted from another origin", async () => {
      const browser = new Browser(server.url);
      browser.cookies.set(SESSION_COOKIE, ownerCookie.split("=")[1] as string);
      const fields = new URLSearchParams({ email: "x@example.test", password: PASSWORD });
      for (const path of ["/oauth/login/", "/oauth/authorize/", "/oauth/logout/"]) {
        const response = await browser.request(path, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin: sameSiteOrigin },
          body: fields.toString(),
        });
        expect(response.status, path).toBe(403);
        expect(JSON.parse(response.html), path).toEqual(refusal(sameSiteOrigin));
      }
      const logout = await fetch(`${server.url}/oauth/logout/`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: ownerCookie, origin: "null" },
        body: "csrf=x",
      });
      expect(logout.status).toBe(403);
      // Our own pages post with "Origin: null" (Referrer-Policy: no-referrer): Sec-Fetch-Site decides.
      const opaque = await fetch(`${server.url}/oauth/logout/`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: ownerCookie,
          origin: "null",
          "sec-fetch-site": "cross-site",
        },
        body: "csrf=x",
      });
      expect(opaque.status).toBe(403);
      expect(await opaque.json()).toEqual(refusal("null"));
      // The client-authenticated endpoints take no cookie: they answer in OAuth form from anywhere.
      const token = await fetch(`${server.url}/oauth/token/`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
        body: "grant_type=refresh_token&refresh_token=x&client_id=nope&client_secret=nope",
      });
      expect(token.status).toBe(401);
      expect((await token.json()).error).toBe("invalid_client");
      expect((await server.get("/admin/api/session", undefined, { cookie: ownerCookie })).status).toBe(200);
    });
  });

  describe("bearer-token requests", () => {
    it("grants a preflight to an origin a registered application declares, without credentials", async () => {
      for (const path of ["/admin/graphql/", "/api/v1/campaigns/"]) {
        for (const origin of [appOrigin, otherAppOrigin]) {
          const response = await fetch(`${server.url}${path}`, {
            method: "OPTIONS",
            headers: {
              origin,
              "access-control-request-method": "POST",
              "access-control-request-headers": "authorization, content-type",
            },
          });
          expect(response.status).toBe(204);
          expect(corsOf(response.headers)).toEqual({ "access-control-allow-origin": origin });
          expect(response.headers.get("access-control-allow-headers")).toContain("authorization");
          expect(response.headers.get("vary")).toContain("Origin");
        }
        const undeclared = await fetch(`${server.url}${path}`, {
          method: "OPTIONS",
          headers: { origin: "https://undeclared.example.test", "access-control-request-method": "GET" },
        });
        expect(corsOf(undeclared.headers)).toEqual({});
      }
    });

    it("names the origin only when it belongs to the token's own application", async () => {
      const rest = (origin: string) => server.get("/api/v1/campaigns/", appToken, { origin });
      const own = await rest(appOrigin);
      expect(own.status).toBe(200);
      expect(corsOf(own.headers)).toEqual({ "access-control-allow-origin": appOrigin });
      for (const origin of [otherAppOrigin, "https://undeclared.example.test", sameSiteOrigin]) {
        const foreign = await rest(origin);
        expect(foreign.status).toBe(200);
        expect(corsOf(foreign.headers), origin).toEqual({});
      }
      const graphql = (origin: string) =>
        fetch(`${server.url}/admin/graphql/`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${appToken}`, origin },
          body: JSON.stringify({ query: "{ campaigns { count } }" }),
        });
      const ownGraphql = await graphql(appOrigin);
      expect(ownGraphql.status).toBe(200);
      expect(await ownGraphql.json()).toEqual({ data: { campaigns: { count: 1 } } });
      expect(corsOf(ownGraphql.headers)).toEqual({ "access-control-allow-origin": appOrigin });
      const otherGraphql = await graphql(otherAppOrigin);
      expect(otherGraphql.status).toBe(200);
      expect(corsOf(otherGraphql.headers)).toEqual({});
    });

    it("never lets a bearer request carry the cookie's authority", async () => {
      // A foreign page that adds a bogus token gets a 401, not the session's data.
      const response = await adminGraphql("{ members { email } }", {
        origin: "https://evil.example",
        authorization: "Bearer forged",
      });
      expect(response.status).toBe(401);
      expect(corsOf(response.headers)).toEqual({});
    });
  });

  describe("public giving", () => {
    it("keeps the donate page and the public checkout API working from its own origin", async () => {
      const campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
        slug: `give-${unique(6)}`,
        title: "Give",
      });
      const page = await fetch(`${server.url}/donate/${tenant.slug}/${campaign.slug}`);
      expect(page.status).toBe(200);
      const described = await server.get(`/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}`);
      expect(described.status).toBe(200);
      const started = await fetch(
        `${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`,
        {
          method: "POST",
          headers: { "content-type": "application/json", origin: server.url },
          body: JSON.stringify({ amount: 25, frequency: 0 }),
        },
      );
      expect(started.status).toBe(201);
      expect(corsOf(started.headers)).toEqual({});
      expect(ownerId).toBeGreaterThan(0);
    });
  });
});
