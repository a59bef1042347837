import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, sessions, userFactors } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Authenticator } from "./helpers/authenticator.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;
type Member = { cookie: string; userId: number; email: string; password: string };

const PASSWORD = "long enough password";
const IBAN_A = "IT60X0542811101000000123456";
const IBAN_B = "DE89370400440532013000";
const BANK = `mutation ($iban: String, $account_name: String) {
  updateOrganizationBankTransfer(iban: $iban, account_name: $account_name) { bank_transfer { iban } }
}`;
const ADD_MEMBER = `mutation ($email: String!, $role: String!) {
  addMember(email: $email, role: $role, password: "another long password") { member { user_id role } }
}`;
const CHANGE_ROLE = `mutation ($user_id: Int!, $role: String!) { changeMemberRole(user_id: $user_id, role: $role) { role } }`;
const CONNECT = `mutation ($input: ConnectStripeInput!) { connectStripe(input: $input) { processor } }`;
const RULE = `mutation ($on: Boolean!) { updateOrganizationSecondFactorRule(require_second_factor: $on) { require_second_factor } }`;
const LEGAL = `mutation ($input: LegalProfileInput!) { updateLegalProfile(input: $input) { iban legal_name } }`;

/**
 * Step-up through the real server: sensitive changes (a processor connected, new payout details, a new
 * owner) made by a member whose session was last checked more than 10 minutes ago are refused with
 * `step_up_required` and change nothing; the same change without anything sensitive in it (the same IBAN,
 * a member rather than an owner) goes through; confirming with the password (an account without a
 * second factor) makes the session's check recent, and the change then passes. Wrong passwords are
 * refused and counted by the sign-in throttle.
 */
describe("step-up for sensitive changes", () => {
  let server: TestServer;
  let tenant: Tenant;
  let owner: Member;

  const graphql = async (query: string, variables: Record<string, unknown>, member: Member) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: member.cookie, "x-donata-organization": tenant.slug },
      body: JSON.stringify({ query, variables }),
    });
    expect(response.status).toBeLessThan(500);
    return { body: (await response.json()) as Json };
  };
  const codeOf = (body: Json) => body.errors?.[0]?.extensions?.code as string | undefined;
  const signIn = async (role: "owner" | "admin" | "member"): Promise<Member> => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "step-up test" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(response.status).toBe(200);
    const token = /donata_session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
    return { cookie: `${SESSION_COOKIE}=${token}`, userId: user.id, email, password: PASSWORD };
  };
  /** The session's last check, `minutes` ago. */
  const checkedAgo = async (member: Member, minutes: number) => {
    await server.database.db
      .update(sessions)
      .set({ verifiedDate: sql`now() - make_interval(mins => ${minutes})` })
      .where(eq(sessions.userId, member.userId));
  };
  const verify = (member: Member, body: unknown) =>
    fetch(`${server.url}/admin/api/session/verify`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: member.cookie },
      body: JSON.stringify(body),
    });
  const storedIban = async () =>
    (
      await server.database.db
        .select({ iban: organizations.iban })
        .from(organizations)
        .where(eq(organizations.id, tenant.organizationId))
    )[0]?.iban;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    owner = await signIn("owner");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lets a recently checked member change the IBAN, and refuses a new one 11 minutes later until they confirm", async () => {
    const first = await graphql(BANK, { iban: IBAN_A }, owner);
    expect(first.body.errors).toBeUndefined();
    expect(await storedIban()).toBe(IBAN_A);

    await checkedAgo(owner, 11);
    const refused = await graphql(BANK, { iban: IBAN_B }, owner);
    expect(codeOf(refused.body)).toBe("step_up_required");
    expect(await storedIban()).toBe(IBAN_A);
    // The same IBAN (spaced as people write it) with another holder's name is no new payout account.
    const same = await graphql(BANK, { iban: "IT60 X054 2811 1010 0000 0123 456", account_name: "Holder" }, owner);
    expect(same.body.errors).toBeUndefined();

    const methods = await fetch(`${server.url}/admin/api/session/verify`, { headers: { cookie: owner.cookie } });
    expect(await methods.json()).toEqual({ methods: ["password"] });
    expect((await verify(owner, { password: "not my password" })).status).toBe(401);
    // An account without a second factor confirms with its password; a code is no proof here.
    expect((await verify(owner, { code: "123456" })).status).toBe(409);
    expect((await verify(owner, { password: PASSWORD })).status).toBe(204);
    const passed = await graphql(BANK, { iban: IBAN_B }, owner);
    expect(passed.body.errors).toBeUndefined();
    expect(await storedIban()).toBe(IBAN_B);
  });

  it("asks again before a new owner, not before a new member", async () => {
    await checkedAgo(owner, 11);
    const member = await graphql(ADD_MEMBER, { email: `m-${unique(6)}@example.test`, role: "member" }, owner);
    expect(member.body.errors).toBeUndefined();
    const newOwner = await graphql(ADD_MEMBER, { email: `o-${unique(6)}@example.test`, role: "owner" }, owner);
    expect(codeOf(newOwner.body)).toBe("step_up_required");
    const promoted = await graphql(
      CHANGE_ROLE,
      { user_id: member.body.data.addMember.member.user_id, role: "owner" },
      owner,
    );
    expect(codeOf(promoted.body)).toBe("step_up_required");
    const admin = await graphql(
      CHANGE_ROLE,
      { user_id: member.body.data.addMember.member.user_id, role: "admin" },
      owner,
    );
    expect(admin.body.errors).toBeUndefined();

    expect((await verify(owner, { password: PASSWORD })).status).toBe(204);
    const promotedNow = await graphql(
      CHANGE_ROLE,
      { user_id: member.body.data.addMember.member.user_id, role: "owner" },
      owner,
    );
    expect(promotedNow.body.data.changeMemberRole).toEqual({ role: "owner" });
  });

  it("asks again before connecting a processor or a new IBAN in the legal profile", async () => {
    await checkedAgo(owner, 11);
    const input = { publishable_key: "pk_test_x", secret_key: "sk_test_x", webhook_secret: "whsec_x" };
    const connect = await graphql(CONNECT, { input }, owner);
    expect(codeOf(connect.body)).toBe("step_up_required");
    const legal = await graphql(LEGAL, { input: { legal_name: "Step-up ETS", iban: IBAN_A } }, owner);
    expect(codeOf(legal.body)).toBe("step_up_required");
    expect(await storedIban()).toBe(IBAN_B);
    // Nothing sensitive in it: the legal name alone saves.
    const name = await graphql(LEGAL, { input: { legal_name: "Step-up ETS" } }, owner);
    expect(name.body.errors).toBeUndefined();
    await checkedAgo(owner, 9);
    const recent = await graphql(CONNECT, { input }, owner);
    expect(codeOf(recent.body)).not.toBe("step_up_required");
  });

  it("asks a member with a second factor for it (not the password), and before the rule is turned off", async () => {
    const second = await signIn("owner");
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { "content-type": "application/json", cookie: second.cookie },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const started = (await (await call("POST", "/admin/api/account/second-factor/totp", {})).json()) as Json;
    const app = new Authenticator(started.secret);
    const confirmed = await call("POST", "/admin/api/account/second-factor/totp/confirm", { code: await app.code() });
    expect(confirmed.status).toBe(200);
    const recovery = ((await confirmed.json()) as Json).recovery_codes as string[];
    const on = await graphql(RULE, { on: true }, second);
    expect(on.body.data.updateOrganizationSecondFactorRule).toEqual({ require_second_factor: true });

    await checkedAgo(second, 11);
    const off = await graphql(RULE, { on: false }, second);
    expect(codeOf(off.body)).toBe("step_up_required");
    // Turning it on again while on changes nothing, and asks nothing.
    expect((await graphql(RULE, { on: true }, second)).body.errors).toBeUndefined();
    const methods = await call("GET", "/admin/api/session/verify");
    expect(await methods.json()).toEqual({ methods: ["totp", "recovery_code"] });
    expect((await verify(second, { password: PASSWORD })).status).toBe(400);
    expect((await verify(second, { code: app.usedCode() })).status).toBe(401);
    expect((await verify(second, { code: await app.code() })).status).toBe(204);
    const [row] = await server.database.db
      .select({ secondFactor: sessions.secondFactor })
      .from(sessions)
      .where(eq(sessions.userId, second.userId));
    expect(row?.secondFactor).toBe(true);
    const offNow = await graphql(RULE, { on: false }, second);
    expect(offNow.body.data.updateOrganizationSecondFactorRule).toEqual({ require_second_factor: false });

    // A recovery code confirms too, once.
    await checkedAgo(second, 11);
    expect(codeOf((await graphql(BANK, { iban: IBAN_A }, second)).body)).toBe("step_up_required");
    expect((await verify(second, { recovery_code: recovery[0] })).status).toBe(204);
    expect((await graphql(BANK, { iban: IBAN_A }, second)).body.errors).toBeUndefined();
    await checkedAgo(second, 11);
    expect((await verify(second, { recovery_code: recovery[0] })).status).toBe(401);
  });

  it("asks again before a new second factor or new recovery codes (a stolen cookie plants none), not a session that must enrol", async () => {
    const member = await signIn("member");
    const account = async (who: Member, path: string) => {
      const response = await fetch(`${server.url}/admin/api/account/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: who.cookie },
        body: "{}",
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const factorsOf = (userId: number) =>
      server.database.db.select().from(userFactors).where(eq(userFactors.userId, userId));

    await checkedAgo(member, 11);
    for (const path of ["second-factor/totp", "passkeys/options"]) {
      expect(await account(member, path)).toMatchObject({ status: 403, body: { code: "step_up_required" } });
    }
    expect(await factorsOf(member.userId)).toEqual([]);
    expect((await verify(member, { password: PASSWORD })).status).toBe(204);
    const started = await account(member, "second-factor/totp");
    expect(started.status).toBe(200);
    const app = new Authenticator(started.body.secret);
    const confirm = await fetch(`${server.url}/admin/api/account/second-factor/totp/confirm`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: member.cookie },
      body: JSON.stringify({ code: await app.code() }),
    });
    expect(confirm.status).toBe(200);

    await checkedAgo(member, 11);
    expect(await account(member, "second-factor/recovery-codes")).toMatchObject({
      status: 403,
      body: { code: "step_up_required" },
    });
    expect((await verify(member, { code: await app.code() })).status).toBe(204);
    const codes = await account(member, "second-factor/recovery-codes");
    expect(codes.status).toBe(200);
    expect(codes.body.recovery_codes).toHaveLength(10);

    // An admin sent to set up the app by the organization's rule gave the password to get there.
    const strict = await fakeTenant(server.database.db);
    await server.database.db
      .update(organizations)
      .set({ requireSecondFactor: true })
      .where(eq(organizations.id, strict.organizationId));
    const email = `enrol-${unique(6)}@example.test`;
    const admin = await createUser(server.database.db, {
      email,
      password: PASSWORD,
      organization: strict.slug,
      role: "admin",
    });
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(await response.json()).toEqual({ signed_in: false, stage: "enrol", factors: [] });
    const enrolling = {
      cookie: `${SESSION_COOKIE}=${/donata_session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1]}`,
      userId: admin.id,
      email,
      password: PASSWORD,
    };
    await checkedAgo(enrolling, 11);
    expect((await account(enrolling, "second-factor/totp")).status).toBe(200);
  });

  it("refuses a proof without a session, and counts wrong passwords with the sign-in throttle", async () => {
    const anonymous = await fetch(`${server.url}/admin/api/session/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(anonymous.status).toBe(401);
    const form = await fetch(`${server.url}/admin/api/session/verify`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie },
      body: `password=${encodeURIComponent(PASSWORD)}`,
    });
    expect(form.status).toBe(415);
    const member = await signIn("member");
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => verify(member, { password: "wrong password here" })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    const limit = server.config.rateLimits.signInAccount.points;
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - limit);
  });
});
