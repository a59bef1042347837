import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkouts } from "../src/db/schema.js";
import { csvCell } from "../src/http/csv.js";
import { createApplication, installApplication } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeCampaign, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

describe("admin panel server", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: { email: string; cookie: string; id: number };

  const signIn = async (email: string, password = PASSWORD) => {
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith("donata_session="));
    return { response, body: await response.json(), cookie: cookie?.split(";")[0] ?? "" };
  };

  const member = async (organization: string, role: "owner" | "admin" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization, role });
    const { cookie } = await signIn(email);
    return { email, cookie, id: user.id };
  };

  const graphql = async (cookie: string, organization: string, query: string, variables: object = {}) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-donata-organization": organization },
      body: JSON.stringify({ query, variables }),
    });
    return response.json();
  };

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
    owner = await member(tenant.slug, "owner");
  });
  afterAll(() => server?.close());

  describe("session", () => {
    it("signs in with JSON, reports the user's organizations, and signs out", async () => {
      const signedOut = await server.get("/admin/api/session");
      expect(signedOut.status).toBe(200);
      expect(signedOut.headers.get("cache-control")).toBe("no-store");
      expect(signedOut.body).toEqual({ signed_in: false });
      const email = `multi-${unique(6)}@example.test`;
      await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role: "admin" });
      await createUser(server.database.db, { email, organization: other.slug, role: "member" });
      const signedIn = await signIn(email.toUpperCase());
      expect(signedIn.response.status).toBe(200);
      expect(signedIn.response.headers.get("set-cookie")).toMatch(/HttpOnly/i);
      expect(signedIn.response.headers.get("set-cookie")).toMatch(/SameSite=Lax/i);
      expect(signedIn.body.user.email).toBe(email);
      expect(signedIn.body.organizations.map((o: { slug: string; role: string }) => [o.slug, o.role]).sort()).toEqual(
        [
          [tenant.slug, "admin"],
          [other.slug, "member"],
        ].sort(),
      );
      const session = await server.get("/admin/api/session", undefined, { cookie: signedIn.cookie });
      expect(session.status).toBe(200);
      expect(session.body.organizations[0]).toMatchObject({ currency: "EUR", time_zone: "UTC" });

      const out = await fetch(`${server.url}/admin/api/session`, {
        method: "DELETE",
        headers: { cookie: signedIn.cookie },
      });
      expect(out.status).toBe(204);
      const after = await server.get("/admin/api/session", undefined, { cookie: signedIn.cookie });
      expect(after.status).toBe(200);
      expect(after.body).toEqual({ signed_in: false });
    });

    it("refuses a wrong password, a form post and a malformed body without creating a session", async () => {
      const wrong = await signIn(owner.email, "not the password");
      expect(wrong.response.status).toBe(401);
      expect(wrong.body.code).toBe("invalid_credentials");
      expect(wrong.cookie).toBe("");
      const form = await fetch(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `email=${encodeURIComponent(owner.email)}&password=${encodeURIComponent(PASSWORD)}`,
      });
      expect(form.status).toBe(415);
      expect(form.headers.getSetCookie()).toEqual([]);
      const malformed = await fetch(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: owner.email }),
      });
      expect(malformed.status).toBe(400);
    });
  });

  describe("dashboard", () => {
    it("adds up this month's and this year's PAID gifts of the organization only", async () => {
      const campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
        slug: `dash-${unique(6)}`,
        minAmount: 1,
        maxAmount: 1000,
        allowCustomAmount: true,
        allowCustomSubscriptionAmount: true,
        hasOneOff: true,
        hasSubscription: true,
        archiveDate: null,
        shownFields: null,
        requiredFields: null,
      });
      const query = `{ dashboard(months: 2) { currency raised_this_month raised_this_year active_monthly_amount
        donations_over_time { period amount count } recurring_revenue { period monthly yearly }
        top_campaigns { campaign { id } raised donations } } }`;
      const before = (await graphql(owner.cookie, tenant.slug, query)).data.dashboard;
      for (const [amount, frequency] of [
        [10.5, 0],
        [20, 12],
      ] as const) {
        const started = await fetch(
          `${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`,
          { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
        ).then((r) => r.json());
        const done = await fetch(
          `${server.url}/api/v1/public/organizations/${tenant.slug}/checkouts/${started.id}/complete`,
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              client_secret: started.client_secret,
              amount,
              frequency,
              processor: "sandbox",
              card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
              supporter: { email: `d-${unique(6)}@example.test` },
              consents: { privacy: true },
            }),
          },
        );
        expect(done.status).toBe(200);
      }
      const after = (await graphql(owner.cookie, tenant.slug, query)).data.dashboard;
      expect(after.currency).toBe("EUR");
      expect(after.raised_this_month).toBeCloseTo(before.raised_this_month + 30.5, 2);
      expect(after.raised_this_year).toBeCloseTo(before.raised_this_year + 30.5, 2);
      expect(after.active_monthly_amount).toBeCloseTo(before.active_monthly_amount + 20, 2);
      expect(after.donations_over_time).toHaveLength(2);
      const thisMonth = after.donations_over_time[1];
      expect(thisMonth.period).toBe(new Date().toISOString().slice(0, 7));
      expect(thisMonth.count).toBe(before.donations_over_time[1].count + 2);
      expect(after.recurring_revenue[1].monthly).toBeCloseTo(before.recurring_revenue[1].monthly + 20, 2);
      expect(after.top_campaigns.map((row: { campaign: { id: number } }) => row.campaign.id)).toContain(campaign.id);

      const elsewhere = await member(other.slug, "owner");
      const foreign = (await graphql(elsewhere.cookie, other.slug, query)).data.dashboard;
      expect(foreign.raised_this_year).toBe(0);
      const bad = await graphql(owner.cookie, tenant.slug, "{ dashboard(months: 0) { currency } }");
      expect(bad.errors[0].extensions.code).toBe("invalid_request");
      // A variable of the wrong type is the client's error, named as such (not an internal error).
      const coerced = await graphql(
        owner.cookie,
        tenant.slug,
        "query($m: Int) { dashboard(months: $m) { currency } }",
        {
          m: "twelve",
        },
      );
      expect(coerced.errors[0].extensions.code).toBe("invalid_request");
      expect(coerced.errors[0].message).toMatch(/Int cannot represent/);
    });
  });

  describe("members", () => {
    const ADD = `mutation($email: String!, $role: String!, $password: String) {
      addMember(email: $email, role: $role, password: $password) { member { user_id email role } temporary_password } }`;
    const CHANGE = `mutation($id: Int!, $role: String!) { changeMemberRole(user_id: $id, role: $role) { role } }`;
    const REMOVE = `mutation($id: Int!) { removeMember(user_id: $id) }`;

    it("adds a new person with a one-time password they can sign in with, and refuses duplicates", async () => {
      const email = `new-${unique(6)}@example.test`;
      const added = await graphql(owner.cookie, tenant.slug, ADD, { email, role: "admin" });
      expect(added.data.addMember.member).toMatchObject({ email, role: "admin" });
      const password = added.data.addMember.temporary_password;
      expect(password).toEqual(expect.any(String));
      expect((await signIn(email, password)).response.status).toBe(200);
      const again = await graphql(owner.cookie, tenant.slug, ADD, { email, role: "member" });
      expect(again.errors[0].extensions.code).toBe("already_member");
      const list = await graphql(owner.cookie, tenant.slug, "{ members { email role } }");
      expect(list.data.members).toContainEqual({ email, role: "admin" });
      const existing = await graphql(owner.cookie, tenant.slug, ADD, {
        email: (await member(other.slug, "member")).email,
        role: "member",
      });
      expect(existing.data.addMember.temporary_password).toBeNull();
    });

    it("lets only owners grant owner, keeps the last owner, and refuses members and applications", async () => {
      const admin = await member(tenant.slug, "admin");
      const plain = await member(tenant.slug, "member");
      const soloOrg = await fakeTenant(server.database.db);
      const solo = await member(soloOrg.slug, "owner");

      const promote = await graphql(admin.cookie, tenant.slug, CHANGE, { id: plain.id, role: "owner" });
      expect(promote.errors[0].extensions.code).toBe("insufficient_role");
      const demoteOwner = await graphql(admin.cookie, tenant.slug, CHANGE, { id: owner.id, role: "member" });
      expect(demoteOwner.errors[0].extensions.code).toBe("insufficient_role");
      const byMember = await graphql(plain.cookie, tenant.slug, ADD, { email: `x-${unique()}@e.test`, role: "member" });
      expect(byMember.errors[0].extensions.code).toBe("insufficient_role");
      const badRole = await graphql(admin.cookie, tenant.slug, CHANGE, { id: plain.id, role: "king" });
      expect(badRole.errors[0].extensions.code).toBe("invalid_request");

      expect((await graphql(admin.cookie, tenant.slug, CHANGE, { id: plain.id, role: "admin" })).data).toEqual({
        changeMemberRole: { role: "admin" },
      });
      const lastDemote = await graphql(solo.cookie, soloOrg.slug, CHANGE, { id: solo.id, role: "admin" });
      expect(lastDemote.errors[0].extensions.code).toBe("last_owner");
      const lastRemove = await graphql(solo.cookie, soloOrg.slug, REMOVE, { id: solo.id });
      expect(lastRemove.errors[0].extensions.code).toBe("last_owner");
      const foreign = await graphql(solo.cookie, soloOrg.slug, REMOVE, { id: plain.id });
      expect(foreign.errors[0].extensions.code).toBe("not_found");

      expect((await graphql(owner.cookie, tenant.slug, REMOVE, { id: plain.id })).data.removeMember).toBe(true);
      const gone = await graphql(plain.cookie, tenant.slug, "{ members { email } }");
      expect(gone.errors[0].extensions.code).toBe("not_a_member");

      const byApp = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body: JSON.stringify({ query: "{ members { email } }" }),
      }).then((r) => r.json());
      expect(byApp.errors[0].extensions.code).toBe("insufficient_scope");
    });
  });

  describe("CSV export", () => {
    it("streams the filtered list in the API's order across pages", async () => {
      const db = server.database.db;
      const campaign = await fakeCampaign(db, tenant.organizationId);
      const rows = Array.from({ length: 2300 }, (_, index) => ({
        organizationId: tenant.organizationId,
        campaignId: campaign.id,
        state: index % 3 === 0 ? "OPEN" : "CLOSED",
        amount: 10 + (index % 50),
        frequency: 0,
        costExampleQuantity: 0,
        createDate: new Date(Date.UTC(2025, 0, 1) + index * 60_000),
      }));
      for (let i = 0; i < rows.length; i += 500) await db.insert(checkouts).values(rows.slice(i, i + 500));
      const query = `campaign_id=${campaign.id}&state=CLOSED&order=-amount`;
      const response = await fetch(`${server.url}/admin/export/checkouts.csv?organization=${tenant.slug}&${query}`, {
        headers: { cookie: owner.cookie },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/csv");
      expect(response.headers.get("content-disposition")).toMatch(/attachment; filename=".*-checkouts-.*\.csv"/);
      const lines = (await response.text()).trimEnd().split("\r\n");
      const header = lines[0]?.split(",") ?? [];
      expect(header.slice(0, 4)).toEqual(["id", "create_date", "update_date", "campaign_id"]);
      const ids = lines.slice(1).map((line) => Number(line.split(",")[0]));
      const api: number[] = [];
      for (let offset = 0; ; offset += 1000) {
        const page = await server.get(`/api/v1/checkouts/?${query}&limit=1000&offset=${offset}`, tenant.token);
        api.push(...page.body.items.map((item: { id: number }) => item.id));
        if (offset + 1000 >= page.body.count) break;
      }
      expect(api).toHaveLength(1533);
      expect(ids).toEqual(api);
    });

    it("needs a session and membership, validates like the API, and defuses spreadsheet formulas", async () => {
      const url = `${server.url}/admin/export/supporters.csv?organization=${tenant.slug}`;
      expect((await fetch(url)).status).toBe(401);
      const outsider = await member(other.slug, "owner");
      expect((await fetch(url, { headers: { cookie: outsider.cookie } })).status).toBe(403);
      const bad = await fetch(`${url}&limit=5`, { headers: { cookie: owner.cookie } });
      expect(bad.status).toBe(400);
      expect((await fetch(`${url}&order=nope`, { headers: { cookie: owner.cookie } })).status).toBe(400);

      const supporter = await fakeSupporter(server.database.db, tenant.organizationId, {
        firstName: '=HYPERLINK("http://evil")',
        lastName: 'Quote, "Comma"',
      });
      const csv = await fetch(`${url}&q=${encodeURIComponent(supporter.email as string)}`, {
        headers: { cookie: owner.cookie },
      }).then((r) => r.text());
      expect(csv).toContain(`"'=HYPERLINK(""http://evil"")"`);
      expect(csv).toContain(`"Quote, ""Comma"""`);
      expect(csvCell(-5)).toBe("-5");
      expect(csvCell(["a", "b"])).toBe("a; b");
      expect(csvCell(null)).toBe("");
    });
  });

  describe("pages", () => {
    it("frames exactly the organization's installed applications, and nothing for others", async () => {
      const app = await createApplication(server.database.db, {
        name: `Framed ${unique(4)}`,
        applicationUrl: `https://framed-${unique(6)}.example.test/app?x=1`,
        callbackUrls: ["https://framed.example.test/cb"],
        ownerOrganizationId: tenant.organizationId,
      });
      await installApplication(server.database.db, app.client_id, tenant.slug);
      const origin = new URL(app.application_url).origin;
      const csp = async (path: string, cookie?: string) => {
        const response = await fetch(`${server.url}${path}`, { headers: cookie ? { cookie } : {} });
        expect(response.status).toBe(200);
        expect(await response.text()).toContain('<div id="root"');
        return response.headers.get("content-security-policy") ?? "";
      };
      const mine = await csp(`/admin/o/${tenant.slug}/apps`, owner.cookie);
      const frameSrc = /frame-src ([^;]*)/.exec(mine)?.[1]?.split(" ");
      // fakeTenant installs one application of its own (https://app.example.test); a framed app
      // sends the user to the authorization server (here the same origin) to connect.
      expect(frameSrc).toEqual(["https://app.example.test", origin, server.url].sort());
      expect(mine).toContain("frame-ancestors 'none'");
      expect(mine).not.toMatch(/frame-src[^;]*\*/);
      expect(await csp(`/admin/o/${other.slug}/apps`, owner.cookie)).toContain("frame-src 'none'");
      expect(await csp(`/admin/o/${tenant.slug}/apps`)).toContain("frame-src 'none'");
      expect(await csp("/admin/sign-in")).toContain("frame-src 'none'");
    });
  });
});
