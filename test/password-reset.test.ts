import { createHash, randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import type { Browser as Chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { events, organizations, outboxMessages, userSignInLinks, users } from "../src/db/schema.js";
import { retrieveOutboxMessage } from "../src/email/outbox-admin.service.js";
import { hashSecret } from "../src/identity/secrets.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser, hiddenFields } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

const PASSWORD = "the first password";
const NEW_PASSWORD = "a brand new password";
const SENT =
  "If an account uses this address, we have sent it a link to choose a new password. The link works for 30 minutes.";
/** A page (or its CSP) without its per-response nonce, so two answers can be compared whole. */
const withoutNonce = (text: string) => text.replace(/nonce(-|=")[A-Za-z0-9+/=]+/g, "nonce");
const decode = (href: string) => href.replace(/&amp;/g, "&");

/**
 * "Forgot your password?" through the real server and a real SMTP server: the link on both sign-in
 * pages, one answer for known and unknown addresses, the emailed link (minted at delivery, never in
 * the Outbox) that works once and ends every session, the user's or organization's language, and
 * the throttle per email and per client address under concurrency.
 */
describe("forgot your password", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let chromium: Chromium;
  let tenant: Tenant;
  let italianTenant: Tenant;
  let addresses = 0;
  // Each test asks from its own client address (the server believes 127.0.0.1's X-Forwarded-For).
  const newAddress = () => `198.18.${Math.floor(++addresses / 250)}.${1 + (addresses % 250)}`;

  const newMember = async (tenantSlug: string, locale: "en" | "it" | null = null) => {
    const email = `member-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenantSlug });
    if (locale) await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return { id: user.id, email };
  };

  /** The form, fetched as a browser would: its CSRF cookie and hidden fields. */
  const openForm = async (address: string, path = "/admin/forgot-password", headers: Record<string, string> = {}) => {
    const browser = new Browser(server.url);
    const page = await browser.request(path, { headers: { "x-forwarded-for": address, ...headers } });
    expect(page.status).toBe(200);
    return {
      page,
      fields: hiddenFields(page.html),
      cookie: `donata_reset_csrf=${browser.cookies.get("donata_reset_csrf")}`,
    };
  };

  const ask = async (
    form: Awaited<ReturnType<typeof openForm>>,
    email: string,
    address: string,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${server.url}/admin/forgot-password`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: form.cookie,
        "x-forwarded-for": address,
        ...headers,
      },
      body: new URLSearchParams({ ...form.fields, email }).toString(),
    });
    return { status: response.status, headers: response.headers, html: await response.text() };
  };

  const resetMessages = (organizationId: number, to: string) =>
    server.database.db
      .select()
      .from(outboxMessages)
      .where(
        and(
          eq(outboxMessages.organizationId, organizationId),
          eq(outboxMessages.kind, "password_reset"),
          eq(outboxMessages.toAddress, to),
        ),
      );

  /** Waits for the request's email to be queued (after the answer), delivers it, and returns its link. */
  const deliveredLink = async (organizationId: number, email: string, count = 1) => {
    await expect.poll(async () => (await resetMessages(organizationId, email)).length, { timeout: 15_000 }).toBe(count);
    await flushOutbox(server, organizationId);
    const messages = smtp.to(email);
    expect(messages).toHaveLength(count);
    const link = linksOf(messages.at(-1)?.html).find((href) => href.includes("/admin/welcome?token="));
    expect(link).toBeDefined();
    return { link: link as string, message: messages.at(-1) };
  };

  const adminSignIn = async (email: string, password: string) => {
    const response = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": newAddress() },
      body: JSON.stringify({ email, password }),
    });
    const cookie = /donata_session=([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
    return { status: response.status, cookie };
  };

  const sessionUser = async (cookie: string) => {
    const response = await fetch(`${server.url}/admin/api/session`, {
      headers: { cookie: `donata_session=${cookie}` },
    });
    const body = (await response.json()) as { user?: { email: string } };
    return body.user?.email ?? null;
  };

  const choosePassword = async (browser: Browser, link: string, address: string) => {
    const form = await browser.request(link, { headers: { "x-forwarded-for": address } });
    expect(form.status).toBe(200);
    const done = await browser.submit(form, { password: NEW_PASSWORD, repeat: NEW_PASSWORD });
    return { form, done };
  };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const defaults = loadConfig({}).rateLimits;
    [server, chromium] = await Promise.all([
      startTestServer({
        smtpUrl: smtp.url,
        trustProxy: "127.0.0.1",
        // The sign-in throttle is not what is tested here: it must not refuse the test's own sign-ins.
        rateLimits: { ...defaults, signInAddress: { name: "sign_in_address", points: 1000, durationSeconds: 900 } },
      }),
      launchChromium(),
    ]);
    // Created in this order, the Italian organization has the higher id.
    tenant = await fakeTenant(server.database.db);
    italianTenant = await fakeTenant(server.database.db);
    await server.database.db
      .update(organizations)
      .set({ locale: "it" })
      .where(eq(organizations.id, italianTenant.organizationId));
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await smtp?.close();
  });

  it("is linked from the admin panel's sign-in page (chromium)", async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.locator('[data-testid="forgot-password"]').waitFor();
    expect(await page.locator('[data-testid="forgot-password"]').textContent()).toBe("Forgot your password?");
    await page.click('[data-testid="forgot-password"]');
    await page.waitForURL(`${server.url}/admin/forgot-password`);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Forgot your password?");
    await page.fill("#email", `nobody-${unique(6)}@example.test`);
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('p[role="status"]').textContent(), { timeout: 15_000 }).toBe(SENT);
    await page.click("text=Back to sign-in");
    await page.waitForURL(`${server.url}/admin/sign-in`);
    await context.close();
  });

  it("is linked from the OAuth login page, and its emailed link leads back to that authorization", async () => {
    const member = await newMember(tenant.slug);
    const address = newAddress();
    const query = new URLSearchParams({
      client_id: tenant.clientId,
      redirect_uri: "https://app.example.test/callback",
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: createHash("sha256").update(randomBytes(32)).digest("base64url"),
      state: "s",
    });
    const login = await new Browser(server.url).request(`/oauth/authorize/?${query}`, {
      headers: { "x-forwarded-for": address },
    });
    expect(login.status).toBe(200);
    const href = decode(
      /<a href="(\/admin\/forgot-password[^"]*)">Forgot your password\?<\/a>/.exec(login.html)?.[1] ?? "",
    );
    const authorization = new URL(href, server.url).searchParams.get("next") as string;
    expect(authorization).toMatch(/^\/oauth\/authorize\/\?/);
    expect(new URLSearchParams(authorization.split("?")[1]).get("client_id")).toBe(tenant.clientId);

    const form = await openForm(address, href);
    expect(form.fields.next).toBe(authorization);
    expect(form.page.html).toContain(`<a href="${authorization.replaceAll("&", "&amp;")}">Back to sign-in</a>`);
    const sent = await ask(form, member.email, address);
    expect(sent.status).toBe(200);
    expect(sent.html).toContain(`<a href="${authorization.replaceAll("&", "&amp;")}">Back to sign-in</a>`);

    const { link } = await deliveredLink(tenant.organizationId, member.email);
    expect(new URL(link).searchParams.get("next")).toBe(authorization);
    const { done } = await choosePassword(new Browser(server.url), link, address);
    expect(done.status).toBe(303);
    expect(done.location).toBe(authorization);

    // Anything but a path of this server is dropped: back to the panel's sign-in, and no `next` carried.
    for (const foreign of ["https://evil.example/", "//evil.example/admin/", "/\\evil.example", "/elsewhere"]) {
      const other = await openForm(address, `/admin/forgot-password?${new URLSearchParams({ next: foreign })}`);
      expect(other.fields.next).toBeUndefined();
      expect(other.page.html).toContain('<a href="/admin/sign-in">Back to sign-in</a>');
    }
  });

  it("answers known and unknown addresses (and an account in no organization) byte for byte alike", async () => {
    const member = await newMember(tenant.slug);
    const loner = `loner-${unique(8)}@example.test`;
    await createUser(server.database.db, { email: loner, password: PASSWORD });
    const unknown = `unknown-${unique(8)}@example.test`;
    const address = newAddress();
    const form = await openForm(address);
    const answers: Awaited<ReturnType<typeof ask>>[] = [];
    for (const email of [member.email, unknown, loner, member.email.toUpperCase()]) {
      answers.push(await ask(form, email, address));
    }
    // All but the date and the request limit's remaining count, which every request to the server has.
    const comparable = (answer: (typeof answers)[number]) => ({
      status: answer.status,
      headers: [...answer.headers]
        .filter(([name]) => name !== "date" && name !== "ratelimit")
        .map(([name, value]) => [name, withoutNonce(value)]),
      html: withoutNonce(answer.html),
    });
    const [known] = answers.map(comparable);
    expect(known?.status).toBe(200);
    expect(known?.html).toContain(`<p role="status">${SENT}</p>`);
    expect(known?.headers.find(([name]) => name === "set-cookie")).toBeUndefined();
    for (const answer of answers.slice(1)) expect(comparable(answer)).toEqual(known);

    // The known member gets two emails (the address normalised), the others none, anywhere.
    await expect.poll(async () => (await resetMessages(tenant.organizationId, member.email)).length).toBe(2);
    for (const email of [unknown, loner]) {
      const queued = await server.database.db.select().from(outboxMessages).where(eq(outboxMessages.toAddress, email));
      expect(queued).toEqual([]);
    }
  });

  it("mails an Italian link that works once, ends every session, and is never usable from the Outbox", async () => {
    const member = await newMember(tenant.slug, "it");
    const address = newAddress();
    const sessions = [await adminSignIn(member.email, PASSWORD), await adminSignIn(member.email, PASSWORD)];
    for (const session of sessions) expect(await sessionUser(session.cookie as string)).toBe(member.email);

    expect((await ask(await openForm(address), member.email, address)).status).toBe(200);
    const { link, message } = await deliveredLink(tenant.organizationId, member.email);
    // The user's language, not the (English) organization's.
    expect(message?.subject).toBe("Scegli una nuova password per Donata");
    expect(message?.text).toContain(`l'account Donata ${member.email}`);
    expect(message?.text).toContain("Il link funziona una sola volta, per 30 minuti.");
    const token = new URL(link).searchParams.get("token") as string;
    expect(token).toMatch(/^dnt_sl_[A-Za-z0-9_-]{43}$/);

    // The outbox keeps the placeholder only, and so does what any reader of the Outbox is shown.
    const [row] = await resetMessages(tenant.organizationId, member.email);
    expect(row?.state).toBe("sent");
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(token);
    expect(linksOf(row?.html)).toContain(`${server.url}/admin/welcome?token=dnt_sl_redacted`);
    expect(row?.text).toContain("/admin/welcome?token=dnt_sl_redacted");
    for (const showsLinks of [true, false]) {
      const shown = await retrieveOutboxMessage(server.database.db, tenant.organizationId, String(row?.id), {
        showsLinks,
      });
      expect(JSON.stringify(shown)).not.toContain(token);
      expect(shown?.text).toContain("dnt_sl_redacted");
    }
    // Only the token's hash is stored, with the emailed link's 30 minutes.
    const [storedLink] = await server.database.db
      .select({
        lifetime: sql<number>`extract(epoch from ${userSignInLinks.expiresDate} - ${userSignInLinks.createDate})`,
      })
      .from(userSignInLinks)
      .where(eq(userSignInLinks.tokenHash, hashSecret(token)));
    expect(Math.round(Number(storedLink?.lifetime))).toBe(30 * 60);

    const browser = new Browser(server.url);
    const { form, done } = await choosePassword(browser, link, address);
    expect(form.html).toContain("<h1>Scegli la tua password</h1>");
    expect(done.status).toBe(303);
    expect(done.location).toBe("/admin/");
    // Every earlier session ended; the new password signs in, the old one no longer does.
    for (const session of sessions) expect(await sessionUser(session.cookie as string)).toBeNull();
    expect(await sessionUser(browser.cookies.get("donata_session") as string)).toBe(member.email);
    expect((await adminSignIn(member.email, PASSWORD)).status).toBe(401);
    expect((await adminSignIn(member.email, NEW_PASSWORD)).status).toBe(200);

    // A second use: the clear page of a used link (in the reader's language), nothing changed.
    const again = await new Browser(server.url).request(link, {
      headers: { "x-forwarded-for": address, "accept-language": "it" },
    });
    expect(again.status).toBe(410);
    expect(again.html).toContain("<h1>Link scaduto</h1>");
    expect(again.html).toContain('<a href="/admin/forgot-password">Chiedi un nuovo link via email</a>');
    const replay = await browser.submit(form, { password: "yet another password", repeat: "yet another password" });
    expect(replay.status).toBe(410);
    expect((await adminSignIn(member.email, NEW_PASSWORD)).status).toBe(200);

    // The audit log: a members-only password change, by the user, through a reset link.
    const recorded = await server.database.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, tenant.organizationId), eq(events.type, "user.password_changed")));
    const mine = recorded.filter((event) => (event.data as { user_id?: number }).user_id === member.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.data).toEqual({ user_id: member.id, email: member.email, method: "reset", sessions_ended: 2 });
    expect(mine[0]?.actor).toMatchObject({ type: "user", user_id: member.id });
  });

  it("writes in the first organization's outbox and language; a new link replaces the earlier one; an expired one is refused", async () => {
    // A member of both organizations, with no language of their own: the lowest id's is English.
    const both = await newMember(italianTenant.slug);
    await createUser(server.database.db, { email: both.email, organization: tenant.slug });
    const address = newAddress();
    const form = await openForm(address);
    expect((await ask(form, both.email, address)).status).toBe(200);
    const first = await deliveredLink(tenant.organizationId, both.email);
    expect(first.message?.subject).toBe("Choose a new password for Donata");
    expect(await resetMessages(italianTenant.organizationId, both.email)).toEqual([]);

    // An Italian organization's member with no language of their own gets Italian.
    const italian = await newMember(italianTenant.slug);
    expect((await ask(form, italian.email, address)).status).toBe(200);
    const italianLink = await deliveredLink(italianTenant.organizationId, italian.email);
    expect(italianLink.message?.subject).toBe("Scegli una nuova password per Donata");

    expect((await ask(form, both.email, address)).status).toBe(200);
    const second = await deliveredLink(tenant.organizationId, both.email, 2);
    expect((await new Browser(server.url).get(first.link)).status).toBe(410);

    await server.database.db
      .update(userSignInLinks)
      .set({ expiresDate: sql`now() - interval '1 minute'` })
      .where(eq(userSignInLinks.tokenHash, hashSecret(new URL(second.link).searchParams.get("token") as string)));
    const expired = await new Browser(server.url).get(second.link);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain("<h1>Link expired</h1>");
    const form410 = await new Browser(server.url).request("/admin/welcome", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": address },
      body: new URLSearchParams({
        token: new URL(second.link).searchParams.get("token") as string,
        password: NEW_PASSWORD,
        repeat: NEW_PASSWORD,
      }).toString(),
    });
    expect(form410.status).toBe(410);
    expect((await adminSignIn(both.email, PASSWORD)).status).toBe(200);
  });

  it("refuses a form without its CSRF cookie, and a malformed address, before counting anything", async () => {
    const address = newAddress();
    const form = await openForm(address);
    const forged = await ask({ ...form, cookie: "donata_reset_csrf=forged" }, `x-${unique(6)}@example.test`, address);
    expect(forged.status).toBe(403);
    expect(forged.html).toContain("This form had expired. Send it again.");
    const malformed = await ask(form, "not an address", address);
    expect(malformed.status).toBe(400);
    expect(malformed.html).toContain("Enter an email address, such as name@example.org.");
  });

  it("counts 30 parallel requests for one email atomically: exactly 5 are answered, the rest 429 in the reader's language", async () => {
    const email = `target-${unique(8)}@example.test`;
    const form = await openForm(newAddress());
    // From 30 addresses, so only the email's limit (5 an hour) can refuse.
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => ask(form, email, newAddress(), { "accept-language": "it" })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(25);
    for (const answer of refused) {
      const retryAfter = Number(answer.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(answer.headers.get("ratelimit-policy")).toBe('"password_reset_email";q=5;w=3600');
      expect(answer.html).toContain('<html lang="it">');
      expect(answer.html).toMatch(
        /<div class="error" role="alert">Sono stati chiesti troppi link\. Riprova tra \d+ minuti?\.<\/div>/,
      );
    }
  });

  it("without SMTP, keeps even the captured copy without a usable link, and mints none", async () => {
    const captured = await startTestServer({ trustProxy: "127.0.0.1" });
    try {
      const own = await fakeTenant(captured.database.db);
      const email = `captured-${unique(8)}@example.test`;
      const user = await createUser(captured.database.db, { email, password: PASSWORD, organization: own.slug });
      const browser = new Browser(captured.url);
      const form = await browser.get("/admin/forgot-password");
      expect((await browser.submit(form, { email })).status).toBe(200);
      const queued = () =>
        captured.database.db
          .select()
          .from(outboxMessages)
          .where(and(eq(outboxMessages.organizationId, own.organizationId), eq(outboxMessages.kind, "password_reset")));
      await expect.poll(async () => (await queued()).length, { timeout: 15_000 }).toBe(1);
      expect(await flushOutbox(captured, own.organizationId)).toMatchObject({ captured: 1 });
      const [row] = await queued();
      expect(row?.state).toBe("captured");
      expect(row?.text).toContain("/admin/welcome?token=dnt_sl_redacted");
      expect(row?.text).not.toMatch(/dnt_sl_(?!redacted)/);
      const links = await captured.database.db
        .select()
        .from(userSignInLinks)
        .where(eq(userSignInLinks.userId, user.id));
      expect(links).toEqual([]);
    } finally {
      await captured.close();
    }
  });

  it("counts 30 parallel requests from one address atomically: exactly 20 are answered, the rest 429", async () => {
    const address = newAddress();
    const form = await openForm(address);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => ask(form, `someone-${unique(8)}@example.test`, address)),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(20);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(10);
    for (const answer of refused) {
      expect(answer.headers.get("ratelimit-policy")).toBe('"password_reset_address";q=20;w=3600');
      expect(answer.html).toMatch(/Too many links were asked for\. Try again in \d+ minutes?\./);
    }
  });
});
