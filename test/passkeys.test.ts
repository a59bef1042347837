import AxeBuilder from "@axe-core/playwright";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { and, eq, sql } from "drizzle-orm";
import type { Browser as Chromium, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityChallenges, organizations, sessions, userFactors } from "../src/db/schema.js";
import { relyingParty } from "../src/identity/passkeys.service.js";
import { summarize } from "../src/modules/audit/audit.service.js";
import { createUser, userWithOrganizations } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { Browser } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { SoftAuthenticator } from "./helpers/webauthn.js";

const PASSWORD = "a long enough password";

const passkeyRefused = {
  type: "urn:donata:problem:passkey_refused",
  title: "Unauthorized",
  status: 401,
  detail: "This passkey was not accepted. Try again, or sign in with your email and password.",
  code: "passkey_refused",
};
const tooManyAttempts = {
  type: "urn:donata:problem:too_many_attempts",
  title: "Too Many Requests",
  status: 429,
  detail: "Too many failed sign-in attempts. Try again later.",
  code: "too_many_attempts",
};

describe("relying party", () => {
  it("is the public host, or the common parent of the panel's and the authorization server's hosts", () => {
    expect(relyingParty({ baseUrl: "https://give.example.org", authUrl: "https://give.example.org" })).toEqual({
      id: "give.example.org",
      name: "Donata",
      origins: ["https://give.example.org"],
    });
    expect(relyingParty({ baseUrl: "https://give.example.org", authUrl: "https://auth.example.org" })).toMatchObject({
      id: "example.org",
      origins: ["https://give.example.org", "https://auth.example.org"],
    });
    expect(relyingParty({ baseUrl: "https://example.org", authUrl: "https://login.example.org:8443" })).toMatchObject({
      id: "example.org",
      origins: ["https://example.org", "https://login.example.org:8443"],
    });
    // Nothing shared but the top-level domain: the panel's host (the other origin cannot use its passkeys).
    expect(relyingParty({ baseUrl: "https://give.example.org", authUrl: "https://auth.other.org" }).id).toBe(
      "give.example.org",
    );
    expect(relyingParty({ baseUrl: "http://localhost:3000", authUrl: "http://localhost:4000" })).toEqual({
      id: "localhost",
      name: "Donata",
      origins: ["http://localhost:3000", "http://localhost:4000"],
    });
    expect(relyingParty({ baseUrl: "http://10.0.0.1:3000", authUrl: "http://10.0.1.1:3000" }).id).toBe("10.0.0.1");
  });
});

/**
 * Passkeys over HTTP (a software authenticator answering as a browser would), then in the panel with
 * Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain): enrol, sign in without an
 * email or password, replays refused, another user's passkey and passkeys out of reach, the throttle.
 */
describe("passkeys", () => {
  let server: TestServer;
  let chromium: Chromium;
  let tenant: Tenant;
  // Each test that counts attempts signs in from its own client address (the server trusts 127.0.0.1 as a proxy).
  let addresses = 0;
  const newAddress = () => `203.0.113.${++addresses}`;

  const newUser = async () => {
    const email = `passkey-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug });
    return { id: user.id, email };
  };

  const json = (body: unknown, address?: string): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", ...(address ? { "x-forwarded-for": address } : {}) },
    body: JSON.stringify(body),
  });
  const read = async (browser: Browser, path: string, init?: RequestInit) => {
    const page = await browser.request(path, init);
    let body: unknown = page.html;
    try {
      body = JSON.parse(page.html);
    } catch {}
    // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
    return { status: page.status, headers: page.headers, body: body as any };
  };

  const signedInWithPassword = async (email: string) => {
    const browser = new Browser(server.url);
    const answer = await read(browser, "/admin/api/session", json({ email, password: PASSWORD }));
    expect(answer.status).toBe(200);
    return browser;
  };

  const enrol = async (browser: Browser, authenticator: SoftAuthenticator, name = "Laptop") => {
    const options = await read(browser, "/admin/api/account/passkeys/options", json({}));
    expect(options.status).toBe(200);
    const credential = authenticator.create(options.body as PublicKeyCredentialCreationOptionsJSON);
    const added = await read(browser, "/admin/api/account/passkeys", json({ credential, name }));
    expect(added.status).toBe(201);
    // The list shows no recovery codes: only the answer to the first passkey does.
    return { ...added.body, recovery_codes: undefined } as {
      id: number;
      name: string;
      create_date: string;
      last_used_date: string | null;
    };
  };

  /** A challenge to sign in (its cookie in `browser`) and the authenticator's answer to it. */
  const assertion = async (browser: Browser, authenticator: SoftAuthenticator, credentialId?: string) => {
    const options = await read(browser, "/admin/api/session/passkey/options", json({}));
    expect(options.status).toBe(200);
    return authenticator.get(options.body as PublicKeyCredentialRequestOptionsJSON, credentialId);
  };

  const signInWithPasskey = (browser: Browser, credential: AuthenticationResponseJSON, address?: string) =>
    read(browser, "/admin/api/session/passkey", json({ credential }, address));

  beforeAll(async () => {
    [server, chromium] = await Promise.all([
      startTestServer({ trustProxy: "127.0.0.1" }, { hostname: "localhost" }),
      launchChromium(),
    ]);
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it("enrols a passkey with the session, then signs in with it alone: a new active session that counts as two factors", async () => {
    const alice = await newUser();
    const authenticator = new SoftAuthenticator(server.url);
    const member = await signedInWithPassword(alice.email);

    const options = await read(member, "/admin/api/account/passkeys/options", json({}));
    expect(options.status).toBe(200);
    expect(options.headers.get("cache-control")).toBe("no-store");
    expect(options.body).toMatchObject({
      rp: { id: "localhost", name: "Donata" },
      user: { name: alice.email, id: Buffer.from(String(alice.id)).toString("base64url") },
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "preferred" },
      attestation: "none",
      excludeCredentials: [],
      pubKeyCredParams: [-8, -7, -257].map((alg) => ({ alg, type: "public-key" })),
    });
    const challengeCookie = options.headers.getSetCookie().find((line) => line.startsWith("donata_passkey="));
    expect(challengeCookie).toMatch(/; Max-Age=300; Path=\/admin\/api\/account\/passkeys; HttpOnly; SameSite=Strict$/);
    const credential = authenticator.create(options.body);
    const added = await read(member, "/admin/api/account/passkeys", json({ credential, name: "  Laptop  " }));
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.any(Number),
      name: "Laptop",
      create_date: expect.any(String),
      last_used_date: null,
      // The first second factor comes with ten recovery codes, shown once: the way in when the device is lost.
      recovery_codes: expect.arrayContaining([expect.stringMatching(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{2}$/)]),
    });
    expect(new Set(added.body.recovery_codes).size).toBe(10);
    const again = await read(member, "/admin/api/account/passkeys/options", json({}));
    expect(again.body.excludeCredentials).toEqual([
      { id: credential.id, type: "public-key", transports: ["internal"] },
    ]);

    // Another browser, where the password alone no longer signs in (a second factor is asked): the
    // passkey alone does, in a new session that replaces the one the password opened.
    const stranger = await signedInWithPassword(alice.email);
    expect((await read(stranger, "/admin/api/session")).body.signed_in).toBe(false);
    const signInOptions = await read(stranger, "/admin/api/session/passkey/options", json({}));
    expect(signInOptions.body).toMatchObject({ rpId: "localhost", userVerification: "preferred", timeout: 300_000 });
    expect(signInOptions.body.allowCredentials ?? []).toEqual([]);
    expect(signInOptions.headers.getSetCookie().find((line) => line.startsWith("donata_passkey="))).toMatch(
      /; Max-Age=300; Path=\/admin\/api\/session\/passkey; HttpOnly; SameSite=Strict$/,
    );
    const stale = stranger.cookies.get("donata_session");
    const signedIn = await signInWithPasskey(stranger, authenticator.get(signInOptions.body));
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toEqual(await userWithOrganizations(server.database.db, alice.id));
    expect(signedIn.headers.get("cache-control")).toBe("no-store");
    expect(stale).toBeDefined();
    expect(stranger.cookies.get("donata_session")).not.toBe(stale);
    expect((await read(stranger, "/admin/api/session")).body.user.email).toBe(alice.email);
    const opened = await server.database.db
      .select()
      .from(sessions)
      .where(eq(sessions.userId, alice.id))
      .orderBy(sessions.id);
    expect(opened.map((session) => [session.stage, session.secondFactor])).toEqual([
      ["active", false],
      ["active", true],
    ]);
    expect(Date.now() - (opened[1]?.verifiedDate.getTime() ?? 0)).toBeLessThan(60_000);

    // Its use is kept: the counter and the time.
    const [stored] = await server.database.db.select().from(userFactors).where(eq(userFactors.userId, alice.id));
    expect(stored).toMatchObject({ kind: "passkey", name: "Laptop", signCount: 1, transports: ["internal"] });
    expect(stored?.confirmedDate).not.toBeNull();
    const listed = await read(member, "/admin/api/account/passkeys");
    expect(listed.body.items).toEqual([
      { ...added.body, recovery_codes: undefined, last_used_date: expect.any(String) },
    ]);

    // Renamed, and recorded in the audit log of the user's organization.
    const renamed = await read(member, `/admin/api/account/passkeys/${added.body.id}`, {
      ...json({ name: "Work laptop" }),
      method: "PATCH",
    });
    expect(renamed.body.name).toBe("Work laptop");
    const recorded = await auditRowsOf(server.database.db, tenant.organizationId, ["user.second_factor_added"]);
    const mine = recorded.filter((row) => (row.data as { user_id: number }).user_id === alice.id);
    expect(mine).toEqual([
      {
        type: "user.second_factor_added",
        actor: { type: "user", user_id: alice.id, label: alice.email },
        data: { user_id: alice.id, email: alice.email, kind: "passkey", id: added.body.id, name: "Laptop" },
        changes: null,
      },
    ]);
    const row = { type: "user.second_factor_added", resourceId: alice.id, data: mine[0]?.data, changes: null };
    expect(summarize(row, "en")).toBe(`Added the passkey “Laptop” for ${alice.email}`);
    expect(summarize(row, "it")).toBe(`Aggiunta la passkey «Laptop» per ${alice.email}`);
  });

  it("gives a first passkey ten recovery codes (a second none): with the device lost, the password and a code sign in", async () => {
    const frank = await newUser();
    const member = await signedInWithPassword(frank.email);
    const first = await read(
      member,
      "/admin/api/account/passkeys",
      json({
        credential: new SoftAuthenticator(server.url).create(
          (await read(member, "/admin/api/account/passkeys/options", json({}))).body,
        ),
        name: "Phone",
      }),
    );
    const codes = first.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    const second = await read(
      member,
      "/admin/api/account/passkeys",
      json({
        credential: new SoftAuthenticator(server.url).create(
          (await read(member, "/admin/api/account/passkeys/options", json({}))).body,
        ),
        name: "Spare key",
      }),
    );
    expect(second.status).toBe(201);
    expect(second.body.recovery_codes).toBeNull();
    expect((await read(member, "/admin/api/account/second-factor")).body).toMatchObject({ recovery_codes_left: 10 });

    const lost = await signedInWithPassword(frank.email);
    expect((await read(lost, "/admin/api/session")).body).toMatchObject({ signed_in: false, stage: "second_factor" });
    const recovered = await read(lost, "/admin/api/session/second-factor", json({ recovery_code: codes[0] }));
    expect(recovered.status).toBe(200);
    expect((await read(lost, "/admin/api/session")).body.user.email).toBe(frank.email);
    expect((await read(member, "/admin/api/account/second-factor")).body).toMatchObject({ recovery_codes_left: 9 });
  });

  it("uses a challenge once: the same answer twice, an old answer to a new challenge, an expired challenge are refused", async () => {
    const bob = await newUser();
    // Its counter stays 0 (a synced passkey's does): a replay is refused by the challenge alone.
    const authenticator = new SoftAuthenticator(server.url, { counterless: true });
    await enrol(await signedInWithPassword(bob.email), authenticator);

    const browser = new Browser(server.url);
    const cookie = () => `donata_passkey=${browser.cookies.get("donata_passkey")}`;
    const answer = await assertion(browser, authenticator);
    const replay = { "content-type": "application/json", cookie: cookie() };
    expect((await signInWithPasskey(browser, answer)).status).toBe(200);
    // Replayed with the same challenge's cookie: the challenge is used.
    const replayed = await fetch(`${server.url}/admin/api/session/passkey`, {
      method: "POST",
      headers: replay,
      body: JSON.stringify({ credential: answer }),
    });
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toEqual(passkeyRefused);
    // The same answer to a new challenge: it signed another.
    await read(browser, "/admin/api/session/passkey/options", json({}));
    expect((await signInWithPasskey(browser, answer)).body).toEqual(passkeyRefused);
    // An answer signed in time to an expired challenge.
    const late = await assertion(browser, authenticator);
    await server.database.db
      .update(identityChallenges)
      .set({ expiresDate: new Date(Date.now() - 1000) })
      .where(eq(identityChallenges.purpose, "sign_in"));
    expect((await signInWithPasskey(browser, late)).body).toEqual(passkeyRefused);
    // No challenge at all.
    expect((await signInWithPasskey(new Browser(server.url), answer)).body).toEqual(passkeyRefused);
    // The counterless passkey still signs in with a new challenge.
    expect((await signInWithPasskey(browser, await assertion(browser, authenticator))).status).toBe(200);
  });

  it("refuses a counter the server has already seen (a cloned authenticator)", async () => {
    const ivan = await newUser();
    const authenticator = new SoftAuthenticator(server.url);
    await enrol(await signedInWithPassword(ivan.email), authenticator);
    const browser = new Browser(server.url);
    expect((await signInWithPasskey(browser, await assertion(browser, authenticator))).status).toBe(200);
    expect((await signInWithPasskey(browser, await assertion(browser, authenticator))).status).toBe(200);
    const [credential] = authenticator.credentials.values();
    if (credential) credential.counter = 1;
    expect((await signInWithPasskey(browser, await assertion(browser, authenticator))).body).toEqual(passkeyRefused);
    const [stored] = await server.database.db.select().from(userFactors).where(eq(userFactors.userId, ivan.id));
    expect(stored?.signCount).toBe(2);
  });

  it("signs in whose passkey it is, never another user: a changed user handle or another credential's id is refused", async () => {
    const carol = await newUser();
    const dave = await newUser();
    const carolKey = new SoftAuthenticator(server.url);
    const daveKey = new SoftAuthenticator(server.url);
    const carolSession = await signedInWithPassword(carol.email);
    await enrol(carolSession, carolKey);
    const daveSession = await signedInWithPassword(dave.email);
    const daves = await enrol(daveSession, daveKey);

    const browser = new Browser(server.url);
    expect((await signInWithPasskey(browser, await assertion(browser, carolKey))).body.user.email).toBe(carol.email);

    const asDave = await assertion(browser, carolKey);
    asDave.response.userHandle = Buffer.from(String(dave.id)).toString("base64url");
    expect((await signInWithPasskey(browser, asDave)).body).toEqual(passkeyRefused);

    const daveCredential = [...daveKey.credentials.keys()][0] as string;
    const borrowed = await assertion(browser, carolKey);
    borrowed.id = daveCredential;
    borrowed.rawId = daveCredential;
    borrowed.response.userHandle = Buffer.from(String(dave.id)).toString("base64url");
    expect((await signInWithPasskey(browser, borrowed)).body).toEqual(passkeyRefused);
    expect((await read(browser, "/admin/api/session")).body.user.email).toBe(carol.email);

    // An enrolment challenge is its user's: Carol's answered in Dave's session adds nothing to either.
    const options = await read(carolSession, "/admin/api/account/passkeys/options", json({}));
    const credential = new SoftAuthenticator(server.url).create(options.body);
    daveSession.cookies.set("donata_passkey", carolSession.cookies.get("donata_passkey") as string);
    const crossed = await read(daveSession, "/admin/api/account/passkeys", json({ credential, name: "Stolen" }));
    expect(crossed.status).toBe(422);
    expect(crossed.body.code).toBe("passkey_invalid");
    expect((await read(daveSession, "/admin/api/account/passkeys")).body.items).toEqual([daves]);

    // Dave cannot rename or remove Carol's passkey: it is not found, and stays as it was.
    const [carols] = (await read(carolSession, "/admin/api/account/passkeys")).body.items;
    const rename = await read(daveSession, `/admin/api/account/passkeys/${carols.id}`, {
      ...json({ name: "Mine now" }),
      method: "PATCH",
    });
    expect(rename.status).toBe(404);
    expect(rename.body.code).toBe("not_found");
    const remove = await read(daveSession, `/admin/api/account/passkeys/${carols.id}`, { method: "DELETE" });
    expect(remove.status).toBe(404);
    expect((await read(carolSession, "/admin/api/account/passkeys")).body.items).toEqual([carols]);
    // Nobody signed in: none of it.
    const anonymous = new Browser(server.url);
    for (const [path, init] of [
      ["/admin/api/account/passkeys", undefined],
      ["/admin/api/account/passkeys/options", json({})],
      [`/admin/api/account/passkeys/${carols.id}`, { method: "DELETE" }],
    ] as const) {
      expect((await read(anonymous, path, init)).body.code).toBe("not_signed_in");
    }
  });

  it("signs in no more with a removed passkey; the last one is kept while an organization requires a second factor", async () => {
    const erin = await newUser();
    const authenticator = new SoftAuthenticator(server.url);
    const member = await signedInWithPassword(erin.email);
    const passkey = await enrol(member, authenticator);
    const owned = await fakeTenant(server.database.db);
    await createUser(server.database.db, { email: erin.email, organization: owned.slug, role: "owner" });
    await server.database.db
      .update(organizations)
      .set({ requireSecondFactor: true })
      .where(eq(organizations.id, owned.organizationId));

    const refused = await read(member, `/admin/api/account/passkeys/${passkey.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("second_factor_required");
    await server.database.db
      .update(organizations)
      .set({ requireSecondFactor: false })
      .where(eq(organizations.id, owned.organizationId));

    const removed = await read(member, `/admin/api/account/passkeys/${passkey.id}`, { method: "DELETE" });
    expect(removed.status).toBe(204);
    expect((await read(member, "/admin/api/account/passkeys")).body.items).toEqual([]);
    const browser = new Browser(server.url);
    expect((await signInWithPasskey(browser, await assertion(browser, authenticator))).body).toEqual(passkeyRefused);
    expect((await read(browser, "/admin/api/session")).body).toEqual({ signed_in: false });
    // Recorded in each of the user's organizations.
    for (const organizationId of [tenant.organizationId, owned.organizationId]) {
      const rows = await auditRowsOf(server.database.db, organizationId, ["user.second_factor_removed"]);
      expect(
        rows.filter((row) => (row.data as { user_id: number }).user_id === erin.id).map((row) => row.data),
      ).toEqual([{ user_id: erin.id, email: erin.email, kind: "passkey", id: passkey.id, name: "Laptop" }]);
    }
  });

  it("counts 41 parallel answers for one passkey before checking them: 5 get 401, the rest 429, then the right one too", async () => {
    const frank = await newUser();
    const authenticator = new SoftAuthenticator(server.url);
    await enrol(await signedInWithPassword(frank.email), authenticator);
    const address = newAddress();
    const browser = new Browser(server.url);
    const wrong = await assertion(browser, authenticator);
    wrong.response.signature = Buffer.from("not a signature").toString("base64url");
    const attempts = await Promise.all(
      Array.from({ length: 41 }, () => signInWithPasskey(new Browser(server.url), wrong, address)),
    );
    expect(attempts.filter((attempt) => attempt.status === 401).map((attempt) => attempt.body)).toEqual(
      Array(5).fill(passkeyRefused),
    );
    const refused = attempts.filter((attempt) => attempt.status === 429);
    expect(refused).toHaveLength(36);
    for (const attempt of refused) {
      expect(attempt.body).toEqual(tooManyAttempts);
      expect(Number(attempt.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // The account is throttled: its right passkey from another address waits too.
    const right = await signInWithPasskey(browser, await assertion(browser, authenticator), newAddress());
    expect(right.status).toBe(429);
    expect(browser.cookies.has("donata_session")).toBe(false);
  });

  it("counts unknown passkeys per client address: 30 refused, then 429", async () => {
    const address = newAddress();
    const stranger = new SoftAuthenticator(server.url);
    stranger.create({
      rp: { id: "localhost", name: "Donata" },
      user: { id: "eA", name: "x", displayName: "x" },
      challenge: "AAAA",
      pubKeyCredParams: [],
    });
    const browser = new Browser(server.url);
    const unknown = await assertion(browser, stranger);
    const attempts = await Promise.all(
      Array.from({ length: 35 }, () => signInWithPasskey(new Browser(server.url), unknown, address)),
    );
    expect(attempts.filter((attempt) => attempt.status === 401)).toHaveLength(30);
    expect(attempts.filter((attempt) => attempt.status === 429)).toHaveLength(5);
  });

  it("takes JSON only", async () => {
    const answer = await fetch(`${server.url}/admin/api/session/passkey/options`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(answer.status).toBe(415);
    expect((await answer.json()).code).toBe("unsupported_media_type");
  });

  describe("in the panel, with Chromium's virtual authenticator", () => {
    const axeViolations = async (page: Page, selector: string) =>
      (await new AxeBuilder({ page }).include(selector).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );
    const virtualAuthenticator = async (page: Page) => {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("WebAuthn.enable");
      const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
        options: {
          protocol: "ctap2",
          transport: "internal",
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
        },
      });
      return { cdp, authenticatorId };
    };

    it("enrols a passkey on the security page, signs out, signs in with it without typing anything, sees it used", async () => {
      const grace = await newUser();
      const context = await chromium.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      const { cdp, authenticatorId } = await virtualAuthenticator(page);

      await page.goto(`${server.url}/admin/sign-in`);
      await page.fill("#email", grace.email);
      await page.fill("#password", PASSWORD);
      await page.click('[data-testid="sign-in-form"] button[type="submit"]');
      await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));

      await page.goto(`${server.url}${SECURITY_PAGE(tenant.slug)}`);
      const section = page.locator("#passkeys");
      await section.getByText("You have no passkeys yet.").waitFor();
      await section.getByRole("button", { name: "Add a passkey" }).click();
      const dialog = page.getByRole("dialog", { name: "Add a passkey" });
      await dialog.getByLabel("Name").fill("Test laptop");
      await dialog.getByRole("button", { name: "Continue" }).click();
      await dialog.waitFor({ state: "detached" });
      await expect
        .poll(() => section.locator('[data-testid="passkeys"] tbody tr').allTextContents(), { timeout: 15_000 })
        .toEqual([expect.stringContaining("Test laptop")]);
      await expect(section.locator('[data-testid="passkey-last-used"]').textContent()).resolves.toBe("Never");
      expect(await axeViolations(page, "#passkeys")).toEqual([]);
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]?.isResidentCredential).toBe(true);

      // Signed out, then in again with the passkey: no email, no password.
      await page.evaluate(() => fetch("/admin/api/session", { method: "DELETE" }));
      await page.goto(`${server.url}/admin/sign-in`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).waitFor();
      expect(await axeViolations(page, "main")).toEqual([]);
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
      await page.locator("#sidebar").waitFor();

      await page.goto(`${server.url}${SECURITY_PAGE(tenant.slug)}`);
      await expect
        .poll(() => section.locator('[data-testid="passkey-last-used"]').textContent(), { timeout: 15_000 })
        .not.toBe("Never");

      // Removed (confirmed in a dialog): the authenticator still holds it, and it signs in no more.
      await section.getByRole("button", { name: "Remove" }).click();
      await page
        .getByRole("dialog", { name: "Remove “Test laptop”?" })
        .getByRole("button", { name: "Remove passkey" })
        .click();
      await section.getByText("You have no passkeys yet.").waitFor();
      await page.evaluate(() => fetch("/admin/api/session", { method: "DELETE" }));
      await page.goto(`${server.url}/admin/sign-in`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await expect
        .poll(() => page.locator('[data-testid="sign-in-form"] [role="alert"]').textContent(), { timeout: 15_000 })
        .toBe(passkeyRefused.detail);
      expect(errors).toEqual([]);
      await context.close();
    });

    it("has no passkey button where the browser cannot use passkeys", async () => {
      const context = await chromium.newContext();
      await context.addInitScript(() => {
        // biome-ignore lint/suspicious/noExplicitAny: removing the API as an older browser lacks it
        delete (window as any).PublicKeyCredential;
      });
      const page = await context.newPage();
      await page.goto(`${server.url}/admin/sign-in`);
      await page.locator("#password").waitFor();
      await expect(page.getByRole("button", { name: "Sign in with a passkey" }).count()).resolves.toBe(0);
      await context.close();
    });
  });

  it("keeps no challenge of another purpose usable here", async () => {
    // An enrolment challenge's cookie sent to the sign-in route is no sign-in challenge.
    const henry = await newUser();
    const authenticator = new SoftAuthenticator(server.url);
    const member = await signedInWithPassword(henry.email);
    await enrol(member, authenticator);
    await read(member, "/admin/api/account/passkeys/options", json({}));
    const [credential] = authenticator.credentials.values();
    const token = member.cookies.get("donata_passkey");
    const rows = await server.database.db
      .select()
      .from(identityChallenges)
      .where(and(eq(identityChallenges.userId, henry.id), eq(identityChallenges.purpose, "enrol")));
    const live = rows.find((row) => row.usedDate === null);
    expect(live).toBeDefined();
    const forged = authenticator.get({ challenge: live?.challenge as string, rpId: "localhost" }, credential?.id);
    const answer = await fetch(`${server.url}/admin/api/session/passkey`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: `donata_passkey=${token}` },
      body: JSON.stringify({ credential: forged }),
    });
    expect(answer.status).toBe(401);
  });

  it("confirms it's you with a passkey (step-up): only the user's own, and the session's last check is now", async () => {
    const dana = await newUser();
    const eve = await newUser();
    const danaKey = new SoftAuthenticator(server.url);
    const eveKey = new SoftAuthenticator(server.url);
    const member = await signedInWithPassword(dana.email);
    await enrol(member, danaKey);
    const intruder = await signedInWithPassword(eve.email);
    await enrol(intruder, eveKey);
    await server.database.db
      .update(sessions)
      .set({ verifiedDate: sql`now() - interval '11 minutes'` })
      .where(eq(sessions.userId, dana.id));
    // The passkey, or one of the recovery codes that came with it.
    expect((await read(member, "/admin/api/session/verify")).body).toEqual({ methods: ["recovery_code", "passkey"] });

    const options = await read(member, "/admin/api/session/verify/passkey/options", json({}));
    expect(options.status).toBe(200);
    const [danaPasskey] = await server.database.db.select().from(userFactors).where(eq(userFactors.userId, dana.id));
    expect(options.body.allowCredentials.map((allowed: { id: string }) => allowed.id)).toEqual([
      danaPasskey?.credentialId,
    ]);
    // Eve's passkey answering Dana's challenge is refused, and uses the challenge up.
    const wrong = eveKey.get(options.body as PublicKeyCredentialRequestOptionsJSON);
    expect((await read(member, "/admin/api/session/verify/passkey", json({ credential: wrong }))).status).toBe(401);
    const stale = await server.database.db.select().from(sessions).where(eq(sessions.userId, dana.id));
    expect(Date.now() - (stale[0]?.verifiedDate.getTime() ?? 0)).toBeGreaterThan(10 * 60_000);

    const fresh = await read(member, "/admin/api/session/verify/passkey/options", json({}));
    const answer = danaKey.get(fresh.body as PublicKeyCredentialRequestOptionsJSON);
    expect((await read(member, "/admin/api/session/verify/passkey", json({ credential: answer }))).status).toBe(204);
    const [checked] = await server.database.db.select().from(sessions).where(eq(sessions.userId, dana.id));
    expect(Date.now() - (checked?.verifiedDate.getTime() ?? 0)).toBeLessThan(60_000);
    expect(checked?.secondFactor).toBe(true);
    // The same answer again: the challenge is spent.
    expect((await read(member, "/admin/api/session/verify/passkey", json({ credential: answer }))).status).toBe(401);
    // Without a session: nothing to confirm.
    const nobody = new Browser(server.url);
    expect((await read(nobody, "/admin/api/session/verify/passkey/options", json({}))).status).toBe(401);
  });
});

/** Where the panel shows the signed-in user's passkeys. */
const SECURITY_PAGE = (slug: string) => `/admin/o/${slug}/account/security`;
