import { createHash, randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, sessions, users } from "../src/db/schema.js";
import { systemOrigin } from "../src/events/origin.js";
import { createResetLink } from "../src/identity/one-time-links.service.js";
import { resetSecondFactors } from "../src/identity/second-factor.service.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { Authenticator } from "./helpers/authenticator.js";
import { Browser, hiddenFields } from "./helpers/browser.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";
const CALLBACK = "https://client.example.test/oauth/callback";
const RECOVERY_CODE = /^[2-9a-z]{4}-[2-9a-z]{4}-[2-9a-z]{2}$/;

const problem = (code: string, status: number, title: string, detail: string) => ({
  type: `urn:donata:problem:${code}`,
  title,
  status,
  detail,
  code,
});
const invalidCode = problem("invalid_code", 401, "Unauthorized", "The code is not correct, or it was already used.");
const tooManyAttempts = problem(
  "too_many_attempts",
  429,
  "Too Many Requests",
  "Too many failed sign-in attempts. Try again later.",
);
const notSignedIn = problem("not_signed_in", 401, "Unauthorized", "Sign in to the admin panel first");

/**
 * Two-step verification through the real server: enrolment in the panel with a code computed as an
 * authenticator app does, the second step at every sign-in (panel and OAuth login page), codes and
 * recovery codes that work once, every code counted by the credential throttle, and the organization's
 * rule that sends its owners and admins without a second factor to enrol before anything else.
 */
describe("two-step verification", () => {
  let server: TestServer;
  let slug: string;
  let organizationId: number;
  let clientId: string;
  let addresses = 0;
  // Each test signs in from its own client address (the server trusts 127.0.0.1 as a proxy).
  const newAddress = () => `203.0.${Math.floor(++addresses / 250)}.${1 + (addresses % 250)}`;

  /** A browser on the panel: its cookie jar and JSON calls. */
  class Panel {
    readonly browser = new Browser(server.url);
    constructor(readonly address = newAddress()) {}
    get cookie() {
      return this.browser.cookies.get("donata_session");
    }
    async call(method: string, path: string, body?: unknown) {
      const page = await this.browser.request(path, {
        method,
        headers: {
          "x-forwarded-for": this.address,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: page.status, headers: page.headers, body: page.html ? JSON.parse(page.html) : undefined };
    }
    signIn(email: string, password = PASSWORD) {
      return this.call("POST", "/admin/api/session", { email, password });
    }
    graphql(query: string, variables: Record<string, unknown> = {}) {
      return this.call("POST", "/admin/graphql/", { query, variables });
    }
  }

  const newMember = async (role: "owner" | "admin" | "member" = "owner", organization = slug) => {
    const email = `person-${unique(8)}@example.test`;
    await createUser(server.database.db, { email, password: PASSWORD, organization, role });
    return email;
  };

  /** A member who set up an authenticator app (signed in, active), with the app and their recovery codes. */
  const enrolled = async (role: "owner" | "admin" | "member" = "owner") => {
    const email = await newMember(role);
    const panel = new Panel();
    expect((await panel.signIn(email)).status).toBe(200);
    const started = await panel.call("POST", "/admin/api/account/second-factor/totp", {});
    expect(started.status).toBe(200);
    const app = new Authenticator(started.body.secret);
    const confirmed = await panel.call("POST", "/admin/api/account/second-factor/totp/confirm", {
      code: await app.code(),
    });
    expect(confirmed.status).toBe(200);
    return { email, panel, app, recoveryCodes: confirmed.body.recovery_codes as string[] };
  };

  beforeAll(async () => {
    server = await startTestServer({ trustProxy: "127.0.0.1" });
    slug = `org-${unique(6)}`;
    organizationId = (await createOrganization(server.database.db, { slug, name: "Two Step Org" })).id;
    const application = await createApplication(server.database.db, {
      name: "Client",
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK],
    });
    clientId = application.client_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("sets up an authenticator app with a code of it, then asks for a code after the password", async () => {
    const email = await newMember();
    const panel = new Panel();
    expect((await panel.signIn(email)).body.user.email).toBe(email);
    expect((await panel.call("GET", "/admin/api/account/second-factor")).body).toEqual({
      totp: null,
      recovery_codes_left: 0,
      required_by: [],
    });

    const started = await panel.call("POST", "/admin/api/account/second-factor/totp", {});
    expect(started.status).toBe(200);
    expect(started.headers.get("cache-control")).toBe("no-store");
    const { secret, uri, qr_svg: svg } = started.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const parsed = new URL(uri);
    expect(parsed.protocol).toBe("otpauth:");
    expect(parsed.host + decodeURIComponent(parsed.pathname)).toBe(`totp/Donata:${email}`);
    expect(Object.fromEntries(parsed.searchParams)).toMatchObject({
      issuer: "Donata",
      secret,
      digits: "6",
      period: "30",
    });
    expect(svg).toMatch(/<svg[\s\S]*<\/svg>/);
    // Only the sealed secret is stored.
    const stored = await server.database.db.query.userFactors.findFirst({
      where: (factor, { eq }) => eq(factor.totpSecretSealed, secret),
    });
    expect(stored).toBeUndefined();

    const app = new Authenticator(secret);
    const wrong = await panel.call("POST", "/admin/api/account/second-factor/totp/confirm", { code: "000000" });
    expect(wrong).toMatchObject({ status: 401, body: invalidCode });
    const confirmed = await panel.call("POST", "/admin/api/account/second-factor/totp/confirm", {
      code: await app.code(),
    });
    expect(confirmed.status).toBe(200);
    const codes = confirmed.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(RECOVERY_CODE);
    expect(new Set(codes).size).toBe(10);
    const status = (await panel.call("GET", "/admin/api/account/second-factor")).body;
    expect(status).toMatchObject({ totp: { confirmed_date: expect.any(String) }, recovery_codes_left: 10 });
    // A second app is refused while one is set up.
    expect((await panel.call("POST", "/admin/api/account/second-factor/totp", {})).body.code).toBe(
      "second_factor_exists",
    );
    const [added] = (await auditRowsOf(server.database.db, organizationId, ["user.second_factor_added"])).filter(
      (row) => (row.data as { email: string }).email === email,
    );
    expect(added?.data).toEqual({ user_id: expect.any(Number), email, kind: "totp" });
    expect(added?.actor).toMatchObject({ type: "user", label: email });

    // Next sign-in: the password opens a session at the second step, which signs in to nothing.
    const next = new Panel();
    const afterPassword = await next.signIn(email);
    expect(afterPassword.status).toBe(200);
    expect(afterPassword.body).toEqual({
      signed_in: false,
      stage: "second_factor",
      factors: ["totp", "recovery_code"],
    });
    expect((await next.call("GET", "/admin/api/session")).body).toEqual(afterPassword.body);
    const pendingCookie = next.cookie;
    expect(pendingCookie).toBeDefined();
    expect((await next.graphql("{ viewer { email } }")).status).toBe(401);
    expect((await next.call("GET", "/admin/api/account/second-factor")).body).toEqual(notSignedIn);
    expect((await next.call("POST", "/admin/api/account/second-factor/totp", {})).body).toEqual(notSignedIn);

    expect(await next.call("POST", "/admin/api/session/second-factor", { code: "123456" })).toMatchObject({
      status: 401,
      body: invalidCode,
    });
    const raised = await next.call("POST", "/admin/api/session/second-factor", { code: await app.code() });
    expect(raised.status).toBe(200);
    expect(raised.body.user.email).toBe(email);
    // A new session token on that step: the pending one is gone.
    expect(next.cookie).not.toBe(pendingCookie);
    const fresh = await server.database.db.select().from(sessions).where(eq(sessions.userId, raised.body.user.id));
    expect(fresh.find((row) => row.stage === "second_factor")).toBeUndefined();
    expect(fresh.some((row) => row.stage === "active" && row.secondFactor)).toBe(true);
    expect((await next.graphql("{ viewer { email } }")).body).toEqual({ data: { viewer: { email } } });

    // The same code cannot be used twice, nor an older one.
    const again = new Panel();
    await again.signIn(email);
    expect(await again.call("POST", "/admin/api/session/second-factor", { code: app.usedCode() })).toMatchObject({
      status: 401,
      body: invalidCode,
    });
    expect((await again.call("POST", "/admin/api/session/second-factor", { code: await app.code() })).status).toBe(200);
  });

  it("takes each recovery code once; new codes replace the old ones", async () => {
    const { email, panel, recoveryCodes } = await enrolled();
    const [first, second] = recoveryCodes as [string, string];
    const signIn = async () => {
      const browser = new Panel();
      expect((await browser.signIn(email)).body.stage).toBe("second_factor");
      return browser;
    };
    let browser = await signIn();
    // Typed loosely: upper case, spaces for dashes.
    const typed = first.toUpperCase().replace(/-/g, " ");
    expect((await browser.call("POST", "/admin/api/session/second-factor", { recovery_code: typed })).status).toBe(200);
    browser = await signIn();
    expect(await browser.call("POST", "/admin/api/session/second-factor", { recovery_code: first })).toMatchObject({
      status: 401,
      body: invalidCode,
    });
    expect((await panel.call("GET", "/admin/api/account/second-factor")).body.recovery_codes_left).toBe(9);

    const renewed = await panel.call("POST", "/admin/api/account/second-factor/recovery-codes", {});
    expect(renewed.status).toBe(200);
    const fresh = renewed.body.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(second);
    expect(await browser.call("POST", "/admin/api/session/second-factor", { recovery_code: second })).toMatchObject({
      status: 401,
      body: invalidCode,
    });
    expect(
      (await browser.call("POST", "/admin/api/session/second-factor", { recovery_code: fresh[0] })).body.user.email,
    ).toBe(email);
    const [regenerated] = (
      await auditRowsOf(server.database.db, organizationId, ["user.recovery_codes_regenerated"])
    ).filter((row) => (row.data as { email: string }).email === email);
    expect(regenerated?.data).toEqual({ user_id: expect.any(Number), email });
  });

  it("still asks for the code after a one-time link sets a new password", async () => {
    const { email, app } = await enrolled();
    const { token } = await createResetLink(server.database.db, email);
    const browser = new Browser(server.url);
    const address = newAddress();
    const form = await browser.request(`/admin/welcome?token=${token}`, { headers: { "x-forwarded-for": address } });
    expect(form.status).toBe(200);
    const chosen = await browser.request("/admin/welcome", {
      method: "POST",
      headers: { "x-forwarded-for": address, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, password: "a new long password", repeat: "a new long password" }).toString(),
    });
    expect(chosen.status).toBe(303);
    const session = await browser.request("/admin/api/session", { headers: { "x-forwarded-for": address } });
    expect(JSON.parse(session.html)).toEqual({
      signed_in: false,
      stage: "second_factor",
      factors: ["totp", "recovery_code"],
    });
    const raised = await browser.request("/admin/api/session/second-factor", {
      method: "POST",
      headers: { "x-forwarded-for": address, "content-type": "application/json" },
      body: JSON.stringify({ code: await app.code() }),
    });
    expect(JSON.parse(raised.html).user.email).toBe(email);
  });

  it("counts parallel wrong codes before checking them: the rule's five get 401, the rest 429, then the right one too", async () => {
    const { email, app } = await enrolled();
    const browser = new Panel();
    expect((await browser.signIn(email)).body.stage).toBe("second_factor");
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => browser.call("POST", "/admin/api/session/second-factor", { code: "000000" })),
    );
    expect(attempts.filter((attempt) => attempt.status === 401).map((attempt) => attempt.body)).toEqual(
      Array(5).fill(invalidCode),
    );
    const refused = attempts.filter((attempt) => attempt.status === 429);
    expect(refused).toHaveLength(15);
    for (const attempt of refused) {
      expect(attempt.body).toEqual(tooManyAttempts);
      expect(Number(attempt.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const right = await browser.call("POST", "/admin/api/session/second-factor", { code: await app.code() });
    expect(right).toMatchObject({ status: 429, body: tooManyAttempts });
    expect((await browser.call("GET", "/admin/api/session")).body.stage).toBe("second_factor");
  });

  it("removes the app with a code, a recovery code or the password; sign-in then asks for none", async () => {
    const { email, panel, app, recoveryCodes } = await enrolled();
    const remove = (body: unknown) => panel.call("POST", "/admin/api/account/second-factor/totp/remove", body);
    expect((await remove({ password: "not the password" })).body).toEqual(
      problem("invalid_credentials", 401, "Unauthorized", "The password is not correct."),
    );
    expect((await remove({ code: app.usedCode() })).body).toEqual(invalidCode);
    expect((await remove({ recovery_code: recoveryCodes[0] })).status).toBe(204);
    expect((await panel.call("GET", "/admin/api/account/second-factor")).body).toEqual({
      totp: null,
      recovery_codes_left: 0,
      required_by: [],
    });
    expect((await remove({ password: PASSWORD })).body.code).toBe("second_factor_not_set_up");
    const [removed] = (await auditRowsOf(server.database.db, organizationId, ["user.second_factor_removed"])).filter(
      (row) => (row.data as { email: string }).email === email,
    );
    expect(removed?.data).toEqual({ user_id: expect.any(Number), email, kind: "totp" });
    expect((await new Panel().signIn(email)).body.user.email).toBe(email);

    // Set up again, removed with the password this time.
    const started = await panel.call("POST", "/admin/api/account/second-factor/totp", {});
    const again = new Authenticator(started.body.secret);
    const confirmed = await panel.call("POST", "/admin/api/account/second-factor/totp/confirm", {
      code: await again.code(),
    });
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect((await remove({ password: PASSWORD })).status).toBe(204);
  });

  it("gives a member who lost the app and the codes a way back (`donata user reset-second-factor`): signed out, then the password alone, or enrolment where the rule asks", async () => {
    const { email, panel } = await enrolled();
    const signedIn = new Panel();
    await signedIn.signIn(email);
    expect(signedIn.cookie).toBeDefined();

    const reset = await resetSecondFactors(server.database.db, email.toUpperCase(), systemOrigin("cli"));
    expect(reset).toMatchObject({ email, totp: true, passkeys: 0, sessionsEnded: 2, enrol: [] });
    // Every session ended, the finished one and the one waiting for its second step.
    expect((await panel.call("GET", "/admin/api/session")).body).toEqual({ signed_in: false });
    expect((await signedIn.call("GET", "/admin/api/session")).body).toEqual({ signed_in: false });
    const back = new Panel();
    expect((await back.signIn(email)).body.user.email).toBe(email);
    expect((await back.call("GET", "/admin/api/account/second-factor")).body).toEqual({
      totp: null,
      recovery_codes_left: 0,
      required_by: [],
    });
    const removed = (await auditRowsOf(server.database.db, organizationId, ["user.second_factor_removed"])).filter(
      (row) => (row.data as { email: string }).email === email,
    );
    expect(removed.map((row) => [row.actor, row.data])).toEqual([
      [
        { type: "system", label: "cli" },
        { user_id: expect.any(Number), email, kind: "totp" },
      ],
    ]);

    // Where an organization requires a second factor, the next sign-in sets up a new one first.
    const strict = await createOrganization(server.database.db, { slug: `strict-${unique(6)}`, name: "Strict Reset" });
    await server.database.db
      .update(organizations)
      .set({ requireSecondFactor: true })
      .where(eq(organizations.id, strict.id));
    const admin = await enrolled("admin");
    await createUser(server.database.db, { email: admin.email, organization: strict.slug, role: "admin" });
    expect(await resetSecondFactors(server.database.db, admin.email, systemOrigin("cli"))).toMatchObject({
      totp: true,
      enrol: ["Strict Reset"],
    });
    expect((await new Panel().signIn(admin.email)).body).toEqual({ signed_in: false, stage: "enrol", factors: [] });
    await expect(
      resetSecondFactors(server.database.db, `nobody-${unique(6)}@example.test`, systemOrigin("cli")),
    ).rejects.toMatchObject({
      code: "user_not_found",
    });
  });

  it("lets owners require a second factor: owners and admins without one must enrol before anything else", async () => {
    const orgSlug = `rule-${unique(6)}`;
    const org = await createOrganization(server.database.db, { slug: orgSlug, name: "Strict Org" });
    const RULE =
      "mutation ($on: Boolean!) { updateOrganizationSecondFactorRule(require_second_factor: $on) { require_second_factor } }";
    const READ = "{ organization { require_second_factor } }";

    const owner = await newMember("owner", orgSlug);
    const ownerPanel = new Panel();
    await ownerPanel.signIn(owner);
    const inOrg = (panel: Panel, query: string, variables: Record<string, unknown> = {}) =>
      panel.browser
        .request("/admin/graphql/", {
          method: "POST",
          headers: { "content-type": "application/json", "x-donata-organization": orgSlug },
          body: JSON.stringify({ query, variables }),
        })
        .then((page) => ({ status: page.status, body: JSON.parse(page.html) }));

    // An owner without a second factor cannot turn the rule on.
    const refused = await inOrg(ownerPanel, RULE, { on: true });
    expect(refused.body.errors[0]).toMatchObject({
      message: "Set up two-step verification for yourself first",
      extensions: { code: "second_factor_required" },
    });
    expect((await inOrg(ownerPanel, READ)).body).toEqual({ data: { organization: { require_second_factor: false } } });

    // An admin may not change it at all.
    const admin = await newMember("admin", orgSlug);
    const adminPanel = new Panel();
    await adminPanel.signIn(admin);
    expect((await inOrg(adminPanel, RULE, { on: false })).body.errors[0].extensions.code).toBe("insufficient_role");

    // With an app of their own, the owner turns it on.
    const started = await ownerPanel.call("POST", "/admin/api/account/second-factor/totp", {});
    const app = new Authenticator(started.body.secret);
    await ownerPanel.call("POST", "/admin/api/account/second-factor/totp/confirm", { code: await app.code() });
    expect((await inOrg(ownerPanel, RULE, { on: true })).body).toEqual({
      data: { updateOrganizationSecondFactorRule: { require_second_factor: true } },
    });
    const [updated] = await auditRowsOf(server.database.db, org.id, ["organization.updated"]);
    expect(updated?.changes).toEqual({ require_second_factor: { before: false, after: true } });
    // Their last factor cannot go now.
    expect(
      (await ownerPanel.call("POST", "/admin/api/account/second-factor/totp/remove", { password: PASSWORD })).body,
    ).toEqual(
      problem(
        "second_factor_required",
        409,
        "Conflict",
        "Strict Org requires two-step verification of its owners and admins",
      ),
    );

    // The admin's next sign-in must enrol first: nothing else answers that session.
    const enrolling = new Panel();
    const afterPassword = await enrolling.signIn(admin);
    expect(afterPassword.body).toEqual({ signed_in: false, stage: "enrol", factors: [] });
    expect((await enrolling.call("GET", "/admin/api/session")).body).toEqual(afterPassword.body);
    expect((await inOrg(enrolling, READ)).status).toBe(401);
    expect((await enrolling.call("POST", "/admin/api/session/second-factor", { code: "123456" })).body).toEqual(
      notSignedIn,
    );
    expect((await enrolling.call("POST", "/admin/api/account/second-factor/recovery-codes", {})).body).toEqual(
      notSignedIn,
    );
    expect((await enrolling.call("GET", "/admin/api/account/second-factor")).body.required_by).toEqual(["Strict Org"]);
    const enrolCookie = enrolling.cookie;
    const adminStarted = await enrolling.call("POST", "/admin/api/account/second-factor/totp", {});
    const adminApp = new Authenticator(adminStarted.body.secret);
    const adminConfirmed = await enrolling.call("POST", "/admin/api/account/second-factor/totp/confirm", {
      code: await adminApp.code(),
    });
    expect(adminConfirmed.body.recovery_codes).toHaveLength(10);
    // Enrolled: signed in, with a new session token.
    expect(enrolling.cookie).not.toBe(enrolCookie);
    expect((await inOrg(enrolling, READ)).body).toEqual({ data: { organization: { require_second_factor: true } } });

    // A plain member is not asked.
    const member = await newMember("member", orgSlug);
    expect((await new Panel().signIn(member)).body.user.email).toBe(member);

    // Turned off, the admin's last factor may go again.
    expect((await inOrg(ownerPanel, RULE, { on: false })).body.data.updateOrganizationSecondFactorRule).toEqual({
      require_second_factor: false,
    });
  });

  describe("the OAuth login page", () => {
    const authorizePath = () =>
      `/oauth/authorize/?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: CALLBACK,
        response_type: "code",
        code_challenge_method: "S256",
        code_challenge: createHash("sha256").update(randomBytes(32)).digest("base64url"),
        state: `s-${unique(4)}`,
      })}`;
    const headersFor = (address: string) => ({ "x-forwarded-for": address });

    it("asks for the code after the password and authorizes nothing before it", async () => {
      const { email, app, recoveryCodes } = await enrolled();
      const address = newAddress();
      const browser = new Browser(server.url);
      const get = (path: string) => browser.request(path, { headers: headersFor(address) });
      const post = (path: string, fields: Record<string, string>) =>
        browser.request(path, {
          method: "POST",
          headers: { ...headersFor(address), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(fields).toString(),
        });
      const start = authorizePath();
      const login = await get(start);
      const afterPassword = await post("/oauth/login/", { ...hiddenFields(login.html), email, password: PASSWORD });
      expect(afterPassword.status).toBe(303);
      const codePath = afterPassword.location as string;
      expect(codePath.startsWith("/oauth/second-factor/?")).toBe(true);
      expect(new URL(codePath, server.url).searchParams.get("client_id")).toBe(clientId);

      const codePage = await get(codePath);
      expect(codePage.status).toBe(200);
      expect(codePage.html).toContain("Enter the 6-digit code from your authenticator app.");
      expect(codePage.html).toMatch(/<input id="code" name="code"[^>]*autocomplete="one-time-code"/);
      const fields = hiddenFields(codePage.html);
      expect(fields.csrf).toBeTruthy();
      expect(fields.client_id).toBe(clientId);

      // The pending session is no session to the authorization endpoint: the login page again, never a code.
      const authorize = await get(start);
      expect(authorize.status).toBe(200);
      expect(authorize.html).toMatch(/<input[^>]*name="password"/);
      const forced = await post("/oauth/authorize/", {
        ...hiddenFields(codePage.html),
        organization: slug,
        decision: "allow",
      });
      expect(forced.status).toBe(200);
      expect(forced.location).toBeNull();
      expect(forced.html).toMatch(/<input[^>]*name="password"/);

      // Same protection as the login form: without the token, nothing is checked.
      const forged = await post("/oauth/second-factor/", { ...fields, csrf: "forged", code: await app.code() });
      expect(forged.status).toBe(403);

      const wrong = await post("/oauth/second-factor/", { ...fields, code: "000000" });
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain("The code is not correct, or it was already used.");

      // The recovery code form, by the page's link.
      const link = /<a href="([^"]*method=recovery_code[^"]*)">Use a recovery code instead<\/a>/.exec(codePage.html);
      const href = link?.[1];
      if (!href) throw new Error(`no recovery code link:\n${codePage.html}`);
      const recoveryPage = await get(href.replace(/&amp;/g, "&"));
      expect(recoveryPage.html).toMatch(/<input id="recovery_code" name="recovery_code"/);
      const done = await post("/oauth/second-factor/", {
        ...hiddenFields(recoveryPage.html),
        recovery_code: recoveryCodes[0] as string,
      });
      expect(done.status).toBe(303);
      expect(done.location?.startsWith("/oauth/authorize/?")).toBe(true);
      const consent = await get(done.location as string);
      expect(consent.status).toBe(200);
      expect(consent.html).toContain("Install Client?");
      expect(consent.html).toContain(email === "" ? "?" : "Client");
    });

    it("ends the browser's earlier session still waiting for its code when the password is given again", async () => {
      const { email } = await enrolled();
      const address = newAddress();
      const browser = new Browser(server.url);
      const start = authorizePath();
      for (let attempt = 0; attempt < 2; attempt++) {
        const login = await browser.request(start, { headers: headersFor(address) });
        const afterPassword = await browser.request("/oauth/login/", {
          method: "POST",
          headers: { ...headersFor(address), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ ...hiddenFields(login.html), email, password: PASSWORD }).toString(),
        });
        expect(afterPassword.location?.startsWith("/oauth/second-factor/?")).toBe(true);
      }
      const waiting = await server.database.db
        .select({ id: sessions.id })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .where(and(eq(users.email, email), eq(sessions.stage, "second_factor")));
      expect(waiting).toHaveLength(1);
    });

    it("speaks Italian, and sends a member who must enrol to the panel", async () => {
      const orgSlug = `strict-${unique(6)}`;
      await createOrganization(server.database.db, { slug: orgSlug, name: "Strict" });
      await server.database.db
        .update(organizations)
        .set({ requireSecondFactor: true })
        .where(eq(organizations.slug, orgSlug));
      const admin = await newMember("admin", orgSlug);
      const browser = new Browser(server.url);
      const address = newAddress();
      const login = await browser.request(`${authorizePath()}&lang=it`, { headers: headersFor(address) });
      const afterPassword = await browser.request("/oauth/login/", {
        method: "POST",
        headers: { ...headersFor(address), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...hiddenFields(login.html), email: admin, password: PASSWORD }).toString(),
      });
      expect(afterPassword.status).toBe(303);
      const page = await browser.request(afterPassword.location as string, { headers: headersFor(address) });
      expect(page.status).toBe(200);
      expect(page.html).toContain("Attiva la verifica in due passaggi");
      expect(page.html).toContain(`href="${server.config.baseUrl}/admin/sign-in"`);
      expect((await browser.request(authorizePath(), { headers: headersFor(address) })).html).toMatch(
        /name="password"/,
      );

      const { email } = await enrolled();
      const other = new Browser(server.url);
      const second = await other.request(`${authorizePath()}&lang=it`, { headers: headersFor(address) });
      const next = await other.request("/oauth/login/", {
        method: "POST",
        headers: { ...headersFor(address), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...hiddenFields(second.html), email, password: PASSWORD }).toString(),
      });
      const codePage = await other.request(next.location as string, { headers: headersFor(address) });
      expect(codePage.html).toContain("Inserisci il codice di 6 cifre dell’app di autenticazione.");
      expect(codePage.html).toContain("Usa invece un codice di recupero");
    });
  });
});
