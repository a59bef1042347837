import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, sessions } from "../src/db/schema.js";
import { createSession } from "../src/identity/sessions.service.js";
import { summarize } from "../src/modules/audit/audit.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = any;

const PASSWORD = "a long enough password";
const NEW_PASSWORD = "another long password";
const MAC_CHROME =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const WINDOWS_FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0";
const IPHONE_SAFARI =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

const tooManyAttempts = {
  type: "urn:donata:problem:too_many_attempts",
  title: "Too Many Requests",
  status: 429,
  detail: "Too many failed sign-in attempts. Try again later.",
  code: "too_many_attempts",
};
const wrongCurrentPassword = {
  type: "urn:donata:problem:invalid_request",
  title: "Bad Request",
  status: 400,
  detail: "Invalid current_password: is not your current password",
  code: "invalid_request",
  errors: [{ field: "current_password", message: "is not your current password", code: "password_incorrect" }],
};

/**
 * The signed-in user's account through the real server (/admin/api/account/…, the panel's cookie
 * session): the live sessions with their device, address and last use, the current one marked;
 * ending one, the current one (a sign-out) or all the others; another user's session or an unknown
 * one is a 404 that changes nothing; the password change checks the current password through the
 * sign-in throttle (parallel guesses counted before checking), refuses a short new one without
 * counting an attempt, ends every other session and keeps this one; each change is a members-only
 * event in every organization of the user, with its audit sentence.
 */
describe("your account: sessions and password", () => {
  let server: TestServer;
  let tenant: Tenant;
  let second: Tenant;
  let addresses = 0;
  const newAddress = () => `203.0.${Math.floor(++addresses / 250)}.${1 + (addresses % 250)}`;

  const newUser = async (password = PASSWORD) => {
    const email = `person-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password, organization: tenant.slug, role: "member" });
    await createUser(server.database.db, { email, organization: second.slug, role: "admin" });
    return { id: user.id, email };
  };

  const signIn = async (email: string, options: { userAgent?: string; address?: string; password?: string } = {}) => {
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": options.userAgent ?? MAC_CHROME,
        "x-forwarded-for": options.address ?? newAddress(),
      },
      body: JSON.stringify({ email, password: options.password ?? PASSWORD }),
    });
    const token = /donata_session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
    return { status: response.status, cookie: token ? `donata_session=${token}` : "" };
  };

  const call = async (
    method: string,
    path: string,
    cookie: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const response = await fetch(`${server.url}/admin/api/account${path}`, {
      method,
      headers: {
        cookie,
        "user-agent": MAC_CHROME,
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : null) as Json,
    };
  };
  const listSessions = async (cookie: string) => {
    const response = await call("GET", "/sessions", cookie);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.items as Json[];
  };
  const signedIn = async (cookie: string) => {
    const response = await fetch(`${server.url}/admin/api/session`, { headers: { cookie } });
    return !("signed_in" in ((await response.json()) as Json));
  };
  const changePassword = (cookie: string, current: string, next: string, address = newAddress()) =>
    call("POST", "/password", cookie, {
      body: { current_password: current, new_password: next },
      headers: { "x-forwarded-for": address },
    });
  const accountEvents = (organizationId: number) =>
    auditRowsOf(server.database.db, organizationId, ["user.password_changed", "user.session_ended"]);
  const eventsOf = async (organizationId: number, userId: number) =>
    (await accountEvents(organizationId)).filter((row) => (row.data as Json).user_id === userId);

  beforeAll(async () => {
    server = await startTestServer({ trustProxy: "127.0.0.1" });
    tenant = await fakeTenant(server.database.db);
    second = await fakeTenant(server.database.db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists the user's live sessions with device, address and last use, this one marked, and no one else's", async () => {
    const user = await newUser();
    const someoneElse = await newUser();
    const other = await signIn(someoneElse.email);
    expect(other.status).toBe(200);
    const phone = await signIn(user.email, { userAgent: IPHONE_SAFARI, address: "198.51.100.7" });
    const windows = await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "198.51.100.8" });
    const mac = await signIn(user.email, { userAgent: MAC_CHROME, address: "198.51.100.9" });
    // Half signed in (a second factor still to come): listed too, with its stage.
    await createSession(server.database.db, server.config, user.id, {
      stage: "second_factor",
      userAgent: "curl/8.5.0",
      ipAddress: "192.0.2.1",
    });
    // An expired session is not listed.
    await server.database.db.insert(sessions).values({
      tokenHash: unique(40),
      userId: user.id,
      csrfToken: "x",
      expiresDate: new Date(Date.now() - 1000),
      userAgent: MAC_CHROME,
    });

    const response = await call("GET", "/sessions", mac.cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const items = response.body.items as Json[];
    expect(items).toHaveLength(4);
    const byAddress = Object.fromEntries(items.map((item) => [item.ip_address, item]));
    expect(byAddress["198.51.100.9"]).toMatchObject({
      current: true,
      stage: "active",
      browser: "Chrome 126",
      os: "macOS",
      device_type: "desktop",
      user_agent: MAC_CHROME,
    });
    expect(byAddress["198.51.100.8"]).toMatchObject({
      current: false,
      stage: "active",
      browser: "Firefox 127",
      os: "Windows",
      device_type: "desktop",
    });
    expect(byAddress["198.51.100.7"]).toMatchObject({
      current: false,
      browser: "Safari 17",
      os: "iOS",
      device_type: "mobile",
    });
    expect(byAddress["192.0.2.1"]).toMatchObject({ current: false, stage: "second_factor", os: null });
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(
        [
          "browser",
          "create_date",
          "current",
          "device_type",
          "id",
          "ip_address",
          "last_seen_date",
          "os",
          "stage",
          "user_agent",
        ].sort(),
      );
      expect(Date.now() - Date.parse(item.last_seen_date)).toBeLessThan(60_000);
      expect(Date.now() - Date.parse(item.create_date)).toBeLessThan(60_000);
    }
    expect(items.filter((item) => item.current)).toHaveLength(1);
    // The other browsers see the same sessions, themselves as the current one.
    const fromWindows = await listSessions(windows.cookie);
    expect(fromWindows.find((item) => item.current)?.ip_address).toBe("198.51.100.8");
    expect(fromWindows.map((item) => item.id).sort()).toEqual(items.map((item) => item.id).sort());
    expect((await listSessions(phone.cookie)).length).toBe(4);
    // Someone else sees only their own.
    expect((await listSessions(other.cookie)).map((item) => item.current)).toEqual([true]);
  });

  it("refuses whoever is not signed in, and a half-signed-in session", async () => {
    const user = await newUser();
    const problem = { status: 401, code: "not_signed_in" };
    expect((await call("GET", "/sessions", "")).body).toMatchObject(problem);
    expect((await call("DELETE", "/sessions", "donata_session=dnt_ss_nothing")).body).toMatchObject(problem);
    const half = await createSession(server.database.db, server.config, user.id, { stage: "second_factor" });
    const cookie = `donata_session=${half}`;
    expect((await call("GET", "/sessions", cookie)).body).toMatchObject(problem);
    expect((await changePassword(cookie, PASSWORD, NEW_PASSWORD)).body).toMatchObject(problem);
  });

  it("ends one of the user's sessions: it is signed out, the others stay; the event names its device", async () => {
    const user = await newUser();
    const mac = await signIn(user.email, { userAgent: MAC_CHROME });
    const windows = await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "198.51.100.20" });
    const phone = await signIn(user.email, { userAgent: IPHONE_SAFARI });
    const windowsId = (await listSessions(windows.cookie)).find((item) => item.current).id;

    const ended = await call("DELETE", `/sessions/${windowsId}`, mac.cookie);
    expect(ended.status).toBe(204);
    expect(ended.headers.get("set-cookie")).toBeNull();
    expect(await signedIn(windows.cookie)).toBe(false);
    expect(await signedIn(mac.cookie)).toBe(true);
    expect(await signedIn(phone.cookie)).toBe(true);
    expect((await listSessions(mac.cookie)).map((item) => item.id)).not.toContain(windowsId);
    // Ended already: 404.
    expect((await call("DELETE", `/sessions/${windowsId}`, mac.cookie)).body).toMatchObject({
      status: 404,
      code: "not_found",
    });

    for (const organizationId of [tenant.organizationId, second.organizationId]) {
      const rows = await eventsOf(organizationId, user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        type: "user.session_ended",
        actor: { type: "user", user_id: user.id, label: user.email },
        data: {
          user_id: user.id,
          email: user.email,
          ended: "one",
          count: 1,
          sessions: [{ id: windowsId, browser: "Firefox 127", os: "Windows", ip_address: "198.51.100.20" }],
        },
      });
      const row = { ...rows[0], resourceId: user.id } as Json;
      expect(summarize(row, "en")).toBe(`Ended a session of ${user.email} (Firefox 127, Windows, 198.51.100.20)`);
      expect(summarize(row, "it")).toBe(`Chiusa una sessione di ${user.email} (Firefox 127, Windows, 198.51.100.20)`);
    }
    const [stored] = await server.database.db
      .select({ resourceType: events.resourceType, resourceId: events.resourceId })
      .from(events)
      .where(and(eq(events.organizationId, tenant.organizationId), eq(events.type, "user.session_ended")))
      .orderBy(events.seq);
    expect(stored).toEqual({ resourceType: "user", resourceId: expect.any(Number) });
  });

  it("cannot end another user's session, an unknown one or a malformed id: 404 and nothing changes", async () => {
    const user = await newUser();
    const someoneElse = await newUser();
    const mine = await signIn(user.email);
    const theirs = await signIn(someoneElse.email);
    const theirId = (await listSessions(theirs.cookie))[0].id;
    const before = await accountEvents(tenant.organizationId);
    for (const id of [theirId, 999_999_999, "abc", "0", "-1", "1e3"]) {
      const response = await call("DELETE", `/sessions/${id}`, mine.cookie);
      expect(response.status, String(id)).toBe(404);
      expect(response.body).toMatchObject({ code: "not_found", detail: "Session not found" });
    }
    expect(await signedIn(theirs.cookie)).toBe(true);
    expect(await signedIn(mine.cookie)).toBe(true);
    expect(await accountEvents(tenant.organizationId)).toEqual(before);
  });

  it("ending the current session signs out: the cookie is cleared", async () => {
    const user = await newUser();
    const mac = await signIn(user.email);
    const other = await signIn(user.email, { userAgent: WINDOWS_FIREFOX });
    const current = (await listSessions(mac.cookie)).find((item) => item.current);
    const response = await call("DELETE", `/sessions/${current.id}`, mac.cookie);
    expect(response.status).toBe(204);
    expect(response.headers.get("set-cookie")).toMatch(/^donata_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/i);
    expect(await signedIn(mac.cookie)).toBe(false);
    expect(await signedIn(other.cookie)).toBe(true);
    const [event] = await eventsOf(tenant.organizationId, user.id);
    expect(event?.data).toMatchObject({ ended: "current", count: 1 });
    expect(summarize({ ...event, resourceId: user.id } as Json, "en")).toBe(
      `Ended the session in use of ${user.email} (Chrome 126, macOS, ${current.ip_address})`,
    );
  });

  it("signs out everywhere else: every other session ends, this one stays", async () => {
    const user = await newUser();
    const mac = await signIn(user.email);
    const others = [
      await signIn(user.email, { userAgent: WINDOWS_FIREFOX }),
      await signIn(user.email, { userAgent: IPHONE_SAFARI }),
    ];
    const someoneElse = await newUser();
    const theirs = await signIn(someoneElse.email);

    const response = await call("DELETE", "/sessions", mac.cookie);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ended: 2 });
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(await signedIn(mac.cookie)).toBe(true);
    for (const other of others) expect(await signedIn(other.cookie)).toBe(false);
    expect(await signedIn(theirs.cookie)).toBe(true);
    expect((await listSessions(mac.cookie)).map((item) => item.current)).toEqual([true]);

    // Nothing left to end: no event.
    expect((await call("DELETE", "/sessions", mac.cookie)).body).toEqual({ ended: 0 });
    const rows = await eventsOf(second.organizationId, user.id);
    expect(rows).toHaveLength(1);
    const data = rows[0]?.data as Json;
    expect(data).toMatchObject({ ended: "others", count: 2 });
    expect(data.sessions.map((session: Json) => session.browser).sort()).toEqual(["Firefox 127", "Safari 17"]);
    const row = { ...rows[0], resourceId: user.id } as Json;
    expect(summarize(row, "en")).toBe(`Signed ${user.email} out everywhere else: 2 sessions ended`);
    expect(summarize(row, "it")).toBe(`Chiuse tutte le altre sessioni di ${user.email}: 2 sessioni`);
  });

  it("changes the password: the other sessions end, this one stays, the old password no longer signs in", async () => {
    const user = await newUser();
    const mac = await signIn(user.email);
    const others = [
      await signIn(user.email, { userAgent: WINDOWS_FIREFOX }),
      await signIn(user.email, { userAgent: IPHONE_SAFARI }),
    ];
    const response = await changePassword(mac.cookie, PASSWORD, NEW_PASSWORD);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ sessions_ended: 2 });
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await signedIn(mac.cookie)).toBe(true);
    for (const other of others) expect(await signedIn(other.cookie)).toBe(false);
    expect((await signIn(user.email)).status).toBe(401);
    expect((await signIn(user.email, { password: NEW_PASSWORD })).status).toBe(200);

    for (const organizationId of [tenant.organizationId, second.organizationId]) {
      const rows = await eventsOf(organizationId, user.id);
      expect(rows).toEqual([
        {
          type: "user.password_changed",
          actor: { type: "user", user_id: user.id, label: user.email },
          data: { user_id: user.id, email: user.email, method: "change", sessions_ended: 2 },
          changes: null,
        },
      ]);
      const row = { ...rows[0], resourceId: user.id } as Json;
      expect(summarize(row, "en")).toBe(`Changed the password of ${user.email}; 2 other sessions signed out`);
      expect(summarize(row, "it")).toBe(`Cambiata la password di ${user.email}; 2 altre sessioni chiuse`);
    }
    // The events never hold a password or its hash.
    expect(JSON.stringify(await accountEvents(tenant.organizationId))).not.toMatch(
      /password_hash|argon2|long password/,
    );
  });

  it("refuses a wrong current password on its field and a short new one, changing nothing", async () => {
    const user = await newUser();
    const mac = await signIn(user.email);
    const other = await signIn(user.email, { userAgent: WINDOWS_FIREFOX });
    const wrong = await changePassword(mac.cookie, "not my password", NEW_PASSWORD);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual(wrongCurrentPassword);
    const short = await changePassword(mac.cookie, PASSWORD, "short");
    expect(short.status).toBe(400);
    expect(short.body).toEqual({
      type: "urn:donata:problem:invalid_request",
      title: "Bad Request",
      status: 400,
      detail: "Invalid new_password: must be at least 10 characters",
      code: "invalid_request",
      errors: [
        { field: "new_password", message: "must be at least 10 characters", code: "too_short", values: { min: 10 } },
      ],
    });
    // In Italian for a panel in Italian.
    const italian = await call("POST", "/password", mac.cookie, {
      body: { current_password: "not my password", new_password: NEW_PASSWORD },
      headers: { "accept-language": "it" },
    });
    expect(italian.body.errors).toEqual([
      { field: "current_password", message: "non è la tua password attuale", code: "password_incorrect" },
    ]);
    // Only JSON (a form from another site cannot send it), and only from our own origin.
    const form = await fetch(`${server.url}/admin/api/account/password`, {
      method: "POST",
      headers: { cookie: mac.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ current_password: PASSWORD, new_password: NEW_PASSWORD }).toString(),
    });
    expect(form.status).toBe(415);
    const foreign = await call("DELETE", "/sessions", mac.cookie, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("cross_origin_refused");

    expect(await signedIn(other.cookie)).toBe(true);
    expect((await signIn(user.email)).status).toBe(200);
    expect(await eventsOf(tenant.organizationId, user.id)).toEqual([]);
  });

  it("counts 41 parallel wrong current passwords before checking them: 5 are told it is wrong, the rest 429, then the right one too", async () => {
    const user = await newUser();
    const mac = await signIn(user.email);
    const address = newAddress();
    // A refused new password is no attempt: it does not use up the throttle.
    for (let i = 0; i < 6; i++) expect((await changePassword(mac.cookie, "guess", "short", address)).status).toBe(400);
    const attempts = await Promise.all(
      Array.from({ length: 41 }, () => changePassword(mac.cookie, "not my password", NEW_PASSWORD, address)),
    );
    expect(attempts.filter((attempt) => attempt.status === 400).map((attempt) => attempt.body)).toEqual(
      Array(5).fill(wrongCurrentPassword),
    );
    const refused = attempts.filter((attempt) => attempt.status === 429);
    expect(refused).toHaveLength(36);
    for (const attempt of refused) {
      expect(attempt.body).toEqual(tooManyAttempts);
      expect(Number(attempt.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const right = await changePassword(mac.cookie, PASSWORD, NEW_PASSWORD, newAddress());
    expect(right.status).toBe(429);
    // Unchanged: the old password is still the one (its sign-in is throttled too: the account's count is shared).
    expect((await signIn(user.email, { password: NEW_PASSWORD })).status).toBe(429);
    expect(await signedIn(mac.cookie)).toBe(true);
    expect(await eventsOf(tenant.organizationId, user.id)).toEqual([]);
  });
});
