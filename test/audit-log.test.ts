import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;
type Auth = { cookie?: string; token?: string; organization?: string };

const LOG = `query ($actor_type: String, $actor_id: Int, $type: [String!], $resource_type: String, $resource_id: Int, $from: String, $to: String, $first: Int, $after: String) {
  auditLog(actor_type: $actor_type, actor_id: $actor_id, type: $type, resource_type: $resource_type, resource_id: $resource_id, from: $from, to: $to, first: $first, after: $after) {
    items { id create_date type summary resource_type resource_id actor_type actor_id actor_label request_id ip user_agent changes { field before after } }
    next_cursor has_more
  }
}`;

/**
 * The audit log, read from the events: every write by a member, an application or the platform, with
 * who, what (before/after), when and from where; filters, pages and CSV for owners and admins only.
 */
describe("the audit log", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Auth & { email: string; userId: number };
  let admin: Auth & { email: string; userId: number };
  let member: Auth & { email: string; userId: number };

  const graphql = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "audit-test/2.0",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
        ...(auth.organization ? { "x-donata-organization": auth.organization } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as Json;
  };
  const log = async (variables: Record<string, unknown> = {}, auth: Auth = owner) => {
    const answer = await graphql(LOG, variables, auth);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data.auditLog as { items: Json[]; next_cursor: string | null; has_more: boolean };
  };
  const signIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
    return { cookie, organization, email, userId: user.id };
  };
  const csv = async (query: string, auth: Auth = owner) => {
    const response = await fetch(`${server.url}/admin/export/audit.csv?organization=${tenant.slug}&${query}`, {
      headers: { cookie: auth.cookie ?? "" },
    });
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
  };

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    owner = await signIn(tenant.slug, "owner");
    admin = await signIn(tenant.slug, "admin");
    member = await signIn(tenant.slug, "member");
  });
  afterAll(() => server?.close());

  it("records who changed a supporter, from where, and each field before and after", async () => {
    const created = await graphql(
      `mutation ($input: SupporterInput!) { createSupporter(input: $input) { id } }`,
      { input: { first_name: "Ada", city: "London", email: `ada-${unique(6)}@example.test` } },
      admin,
    );
    const id = created.data.createSupporter.id;
    const patched = await fetch(`${server.url}/api/v1/supporters/${id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({ city: "Paris", last_name: "Lovelace" }),
    });
    expect(patched.status).toBe(200);

    const { items } = await log({ resource_type: "supporter", resource_id: id });
    expect(items.map((entry) => [entry.type, entry.actor_type, entry.actor_label])).toEqual([
      ["supporter.updated", "application", `application ${tenant.applicationId}`],
      ["supporter.created", "user", admin.email],
    ]);
    expect(items[0]).toMatchObject({
      summary: `Changed supporter #${id}: city, last_name`,
      resource_type: "supporter",
      resource_id: id,
      actor_id: tenant.applicationId,
      request_id: expect.stringMatching(/^req_/),
      ip: "127.0.0.1",
      user_agent: "node",
    });
    expect(items[0].changes).toEqual([
      { field: "city", before: '"London"', after: '"Paris"' },
      { field: "last_name", before: null, after: '"Lovelace"' },
    ]);
    expect(items[1]).toMatchObject({ actor_id: admin.userId, ip: "127.0.0.1", user_agent: "audit-test/2.0" });
  });

  it("records memberships, installations and the organization's settings, by whom", async () => {
    const email = `new-${unique(6)}@example.test`;
    const added = await graphql(
      `mutation ($email: String!) { addMember(email: $email, role: "member", password: "long enough password") { member { user_id } } }`,
      { email },
      owner,
    );
    const userId = added.data.addMember.member.user_id;
    await graphql(
      `mutation ($id: Int!) { changeMemberRole(user_id: $id, role: "admin") { role } }`,
      { id: userId },
      owner,
    );
    await graphql(`mutation ($id: Int!) { removeMember(user_id: $id) }`, { id: userId }, owner);
    const app = await createApplication(server.database.db, {
      name: `Reports ${unique(4)}`,
      applicationUrl: "https://reports.example.test/",
      callbackUrls: ["https://reports.example.test/callback"],
    });
    const install = `mutation ($id: String!) { installApplication(client_id: $id) { application { client_id } } }`;
    expect((await graphql(install, { id: app.client_id }, admin)).errors).toBeUndefined();
    const uninstall = `mutation ($id: String!) { uninstallApplication(client_id: $id) { revoked_tokens } }`;
    expect((await graphql(uninstall, { id: app.client_id }, admin)).errors).toBeUndefined();
    const bank = await graphql(
      `mutation { updateOrganizationBankTransfer(iban: "IT60 X054 2811 1010 0000 0123 456", account_name: "Charity Trust") { id } }`,
      {},
      owner,
    );
    expect(bank.errors).toBeUndefined();

    const { items } = await log({
      type: [
        "membership.created",
        "membership.updated",
        "membership.deleted",
        "application.installed",
        "application.uninstalled",
        "organization.updated",
      ],
      first: 6,
    });
    expect(items.map((entry) => [entry.summary, entry.actor_label]).reverse()).toEqual([
      [`Added ${email} as member`, owner.email],
      [`Changed the role of ${email}: member → admin`, owner.email],
      [`Removed ${email} (admin)`, owner.email],
      [`Installed the application ${app.name}`, admin.email],
      [`Uninstalled the application ${app.name}`, admin.email],
      ["Changed the organization's settings: bank_transfer", owner.email],
    ]);
    expect(items[0].changes).toEqual([
      {
        field: "bank_transfer",
        before: null,
        after: expect.stringContaining('"iban":"IT60X0542811101000000123456"'),
      },
    ]);
  });

  it("filters by actor, type, record and time, pages with a cursor, and refuses bad filters with their name", async () => {
    const all = await log({ first: 100 });
    expect(all.items.length).toBeGreaterThan(8);
    const byAdmin = await log({ actor_type: "user", actor_id: admin.userId, first: 100 });
    expect(byAdmin.items.length).toBeGreaterThan(0);
    expect(new Set(byAdmin.items.map((entry) => entry.actor_label))).toEqual(new Set([admin.email]));
    const apps = await log({ actor_type: "application", first: 100 });
    expect(new Set(apps.items.map((entry) => entry.actor_id))).toEqual(new Set([tenant.applicationId]));

    // Newest first, pages that neither repeat nor skip.
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof log>> = await log({ first: 3, after });
      seen.push(...page.items.map((entry) => entry.id));
      after = page.next_cursor;
      expect(page.has_more).toBe(after !== null);
    } while (after);
    expect(seen).toEqual(all.items.map((entry) => entry.id));

    const newest = all.items[0];
    const to = new Date(new Date(newest.create_date).getTime() + 1).toISOString();
    expect((await log({ from: newest.create_date, to, first: 100 })).items.map((entry) => entry.id)).toContain(
      newest.id,
    );
    expect((await log({ from: "2999-01-01" })).items).toEqual([]);

    for (const [variables, field] of [
      [{ actor_type: "robot" }, "actor_type"],
      [{ type: ["supporter.exploded"] }, "type"],
      [{ resource_type: "spaceship" }, "resource_type"],
      [{ from: "yesterday" }, "from"],
      [{ from: "2026-02-01", to: "2026-01-01" }, "to"],
      [{ after: "bm90IGEgY3Vyc29y" }, "after"],
      [{ first: 0 }, "first"],
    ] as const) {
      const answer = await graphql(LOG, variables, owner);
      expect(answer.data).toBeNull();
      expect(answer.errors[0].extensions.code).toBe("invalid_request");
      expect(JSON.stringify(answer.errors[0].extensions.errors)).toContain(`"${field}"`);
    }
    // Another organization's cursor is refused, not read.
    const theirs = (await log({ first: 1 }, await signIn(other.slug, "owner"))).next_cursor;
    if (theirs)
      expect((await graphql(LOG, { after: theirs }, owner)).errors[0].extensions.code).toBe("invalid_request");
  });

  it("is for owners and admins only: members and applications are refused, other organizations see their own", async () => {
    expect((await graphql(LOG, {}, member)).errors[0].extensions.code).toBe("insufficient_scope");
    expect((await graphql(LOG, {}, { token: tenant.token })).errors[0].extensions.code).toBe("insufficient_scope");
    const otherOwner = await signIn(other.slug, "owner");
    const theirs = await log({ first: 100 }, otherOwner);
    expect(theirs.items.every((entry) => entry.actor_label !== owner.email && entry.actor_label !== admin.email)).toBe(
      true,
    );
    expect((await graphql(LOG, {}, { ...otherOwner, organization: tenant.slug })).errors[0].extensions.code).toBe(
      "not_a_member",
    );
    expect((await csv("", member)).status).toBe(403);
    expect((await csv("", { cookie: otherOwner.cookie })).status).toBe(403);
    expect((await csv("", {})).status).toBe(401);
  });

  it("exports the filtered log as CSV, a row per change, formulas defused", async () => {
    const exported = await csv("type=membership.created,membership.deleted");
    expect(exported.status).toBe(200);
    expect(exported.type).toBe("text/csv; charset=utf-8");
    const lines = exported.text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "id,create_date,type,summary,actor_type,actor_id,actor_label,resource_type,resource_id,ip,user_agent,request_id,changes",
    );
    const memberships = (await log({ type: ["membership.created", "membership.deleted"], first: 100 })).items;
    expect(lines).toHaveLength(memberships.length + 1);
    expect(lines[1]).toContain(memberships[0].id);
    expect(lines[1]).toContain(",membership.deleted,Removed ");
    const bad = await csv("type=nothing.real");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ code: "invalid_request" });
  });

  it("keeps no personal data of an erased supporter: neither in the log nor in its CSV", async () => {
    const email = `grace-${unique(6)}@example.test`;
    const created = await graphql(
      `mutation ($input: SupporterInput!) { createSupporter(input: $input) { id } }`,
      { input: { first_name: "Grace", last_name: `Hopper${unique(4)}`, email } },
      owner,
    );
    const id = created.data.createSupporter.id;
    await graphql(
      `mutation ($id: ID!) { updateSupporter(id: $id, input: { phone: "+39 333 7654321" }) { id } }`,
      { id },
      owner,
    );
    await graphql(`mutation ($id: ID!) { exportSupporter(id: $id) { export_date } }`, { id }, owner);
    expect(JSON.stringify(await log({ resource_type: "supporter", resource_id: id }))).toContain("333 7654321");
    await graphql(`mutation ($id: ID!) { eraseSupporter(id: $id) { id } }`, { id }, owner);

    const entries = (await log({ resource_type: "supporter", resource_id: id })).items;
    expect(entries.map((entry) => entry.type)).toEqual([
      "supporter.erased",
      "supporter.exported",
      "supporter.updated",
      "supporter.created",
    ]);
    // Which fields changed stays; what they held does not.
    expect(entries[2].changes).toEqual([{ field: "phone", before: null, after: null }]);
    const everything = JSON.stringify(entries) + (await csv(`resource_type=supporter&resource_id=${id}`)).text;
    for (const personal of [email, "Grace", "7654321"]) expect(everything).not.toContain(personal);
  });

  it("tells each change in the reader's language: the saved choice, else Accept-Language; CSV too", async () => {
    const italian = await signIn(tenant.slug, "owner");
    await server.database.db.update(users).set({ locale: "it" }).where(eq(users.id, italian.userId));
    const created = await graphql(
      `mutation ($input: SupporterInput!) { createSupporter(input: $input) { id } }`,
      { input: { first_name: "Lingua", email: `lingua-${unique(6)}@example.test` } },
      owner,
    );
    const id = created.data.createSupporter.id;
    const filter = { resource_type: "supporter", resource_id: id };
    expect((await log(filter)).items.map((entry) => entry.summary)).toEqual([`Created supporter #${id}`]);
    expect((await log(filter, italian)).items.map((entry) => entry.summary)).toEqual([
      `Creato il sostenitore n. ${id}`,
    ]);
    // No saved choice: the browser's languages decide.
    const byHeader = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: owner.cookie ?? "", "accept-language": "it-IT,it;q=0.9" },
      body: JSON.stringify({ query: LOG, variables: filter }),
    }).then((response) => response.json());
    expect(byHeader.data.auditLog.items[0].summary).toBe(`Creato il sostenitore n. ${id}`);
    // The type and the codes stay English: they are for programs.
    expect(byHeader.data.auditLog.items[0].type).toBe("supporter.created");
    const file = await csv(`resource_type=supporter&resource_id=${id}`, italian);
    expect(file.text).toContain(`Creato il sostenitore n. ${id}`);
  });
});
