import { createHash } from "node:crypto";
import { AxeBuilder } from "@axe-core/playwright";
import { and, eq, sql } from "drizzle-orm";
import type { Browser as Chromium, Page as ChromiumPage } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { donorLinks, donorSessions, organizations, outboxMessages, supporters } from "../src/db/schema.js";
import { enqueueEmail } from "../src/email/outbox.repo.js";
import { mintReceiptLink } from "../src/modules/donor-portal/donor-links.service.js";
import { Browser, type Page } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import {
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
/** A page's HTML without its per-response nonce, so two answers can be compared whole. */
const withoutNonce = (html: string) => html.replace(/nonce="[^"]+"/g, 'nonce=""');
/** The links of an email's HTML part, entities decoded (Handlebars writes "=" as &#x3D;). */
const hrefsOf = (html: string | false | undefined) =>
  [...(html || "").matchAll(/href="([^"]*)"/g)].map((match) =>
    (match[1] as string).replace(/&#x3D;/g, "=").replace(/&amp;/g, "&"),
  );
const text = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

describe("donor portal", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let chromium: Chromium;
  let tenant: Tenant;
  let other: Tenant;
  let addresses = 0;
  // Each test asks from its own client address (the server believes 127.0.0.1's X-Forwarded-For).
  const newAddress = () => `203.0.${Math.floor(++addresses / 250)}.${1 + (addresses % 250)}`;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const defaults = loadConfig({}).rateLimits;
    [server, chromium] = await Promise.all([
      startTestServer({
        smtpUrl: smtp.url,
        trustProxy: "127.0.0.1",
        rateLimits: {
          ...defaults,
          signInAccount: { name: "sign_in_account", points: 3, durationSeconds: 900 },
          signInAddress: { name: "sign_in_address", points: 8, durationSeconds: 900 },
        },
      }),
      launchChromium(),
    ]);
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await smtp?.close();
  });

  const db = () => server.database.db;

  function askForLink(slug: string, email: string, address = newAddress()) {
    return new Browser(server.url).request(`/donor/${slug}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": address },
      body: new URLSearchParams({ email }).toString(),
    });
  }

  /** The sign-in message queued for this address (the form queues it once it has answered), by id. */
  async function queuedSignIn(target: Pick<TestServer, "database">, organizationId: number, to: string) {
    for (let wait = 0; wait < 200; wait++) {
      const [row] = await target.database.db
        .select({ id: outboxMessages.id })
        .from(outboxMessages)
        .where(
          and(
            eq(outboxMessages.organizationId, organizationId),
            eq(outboxMessages.kind, "donor_sign_in"),
            eq(outboxMessages.toAddress, to),
            eq(outboxMessages.state, "queued"),
          ),
        )
        .orderBy(sql`${outboxMessages.id} desc`)
        .limit(1);
      if (row) return row.id;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no sign-in message queued for ${to}`);
  }

  /** The sign-in link the form queued for this address, as the donor gets it (delivered through SMTP). */
  async function lastLink(organizationId: number, to: string): Promise<string | undefined> {
    const id = await queuedSignIn(server, organizationId, to);
    await flushOutbox(server, organizationId);
    const mail = smtp.to(to).find((message) => message.messageId?.startsWith(`<outbox.${organizationId}.${id}@`));
    return /(http:\/\/\S+\/enter\?token=\S+)/.exec(mail?.text ?? "")?.[1];
  }

  const tokenOf = (url: string) => new URL(url).searchParams.get("token") as string;
  const pathOf = (url: string) => {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  };

  /** A browser signed in to the organization's portal as this email. */
  async function signedIn(target: Pick<Tenant, "slug" | "organizationId">, email: string) {
    await askForLink(target.slug, email);
    const url = await lastLink(target.organizationId, email);
    if (!url) throw new Error(`no link for ${email}`);
    const browser = new Browser(server.url);
    const entered = await browser.get(pathOf(url));
    expect(entered.status).toBe(303);
    return browser;
  }

  const csrfOf = (page: Page) => /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] as string;

  function post(browser: Browser, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    return browser.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  it("answers a known and an unknown email with the same page, and mails a link only to the known one", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId, { email: `Known.${unique(6)}@Example.test` });
    const unknown = `nobody-${unique(8)}@example.test`;
    const known = await askForLink(tenant.slug, (supporter.email as string).toUpperCase());
    const stranger = await askForLink(tenant.slug, unknown);
    expect(known.status).toBe(200);
    expect(stranger.status).toBe(200);
    expect(withoutNonce(known.html)).toBe(withoutNonce(stranger.html));
    expect(text(known.html)).toContain("Check your inbox If this address belongs to a donor of");
    expect(known.headers.get("cache-control")).toBe("no-store");

    await queuedSignIn(server, tenant.organizationId, supporter.email as string);
    const messages = await db()
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.kind, "donor_sign_in")));
    // The link goes to the address on record (its own spelling), none to the unknown one.
    expect(messages.filter((row) => row.toAddress === supporter.email)).toHaveLength(1);
    expect(messages.filter((row) => row.toAddress.toLowerCase() === unknown)).toHaveLength(0);
    expect(messages.find((row) => row.toAddress === supporter.email)?.supporterId).toBe(supporter.id);
  });

  it("mails the link through SMTP; it signs in once, and only its hash is stored", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    const email = supporter.email as string;
    await askForLink(tenant.slug, email);
    await queuedSignIn(server, tenant.organizationId, email);
    await flushOutbox(server, tenant.organizationId);
    const [mail] = smtp.to(email);
    const tenantName = (await server.get(`/donor/${tenant.slug}/`)).body.match(/<p class="org"><a [^>]+>([^<]+)</)?.[1];
    expect(mail?.subject).toBe(`Your sign-in link for ${tenantName}`);
    const url = /(http:\/\/\S+\/enter\?token=\S+)/.exec(mail?.text ?? "")?.[1] as string;
    expect(url.startsWith(`${server.url}/donor/${tenant.slug}/enter?token=dnt_dl_`)).toBe(true);
    expect(hrefsOf(mail?.html)).toContain(url);

    const token = tokenOf(url);
    const [link] = await db()
      .select()
      .from(donorLinks)
      .where(and(eq(donorLinks.organizationId, tenant.organizationId), eq(donorLinks.tokenHash, sha256(token))));
    expect(link).toMatchObject({ email: email.toLowerCase(), purpose: "sign_in", usedDate: null });
    const minutes = ((link?.expiresDate.getTime() ?? 0) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);
    expect(JSON.stringify(link)).not.toContain(token.slice(7));

    // A mail client checking the link with HEAD does not use it up.
    expect((await fetch(url, { method: "HEAD", redirect: "manual" })).status).toBe(200);
    const browser = new Browser(server.url);
    const entered = await browser.get(pathOf(url));
    expect(entered.status).toBe(303);
    expect(entered.location).toBe(`/donor/${tenant.slug}/`);
    const cookie = entered.headers.getSetCookie().find((line) => line.startsWith("donata_donor="));
    expect(cookie).toMatch(
      new RegExp(
        `^donata_donor=dnt_ds_[\\w-]{43}; Max-Age=43200; Path=/donor/${tenant.slug}/; HttpOnly; SameSite=Lax$`,
      ),
    );
    const sessionToken = browser.cookies.get("donata_donor") as string;
    const [session] = await db()
      .select()
      .from(donorSessions)
      .where(eq(donorSessions.tokenHash, sha256(sessionToken)));
    expect(session).toMatchObject({ organizationId: tenant.organizationId, email: email.toLowerCase() });
    // Like a member's session, it knows where it was opened (src/identity/donor-sessions.service.ts).
    expect(session?.ipAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
    expect(Date.now() - (session?.lastSeenDate.getTime() ?? 0)).toBeLessThan(60_000);
    const hours = ((session?.expiresDate.getTime() ?? 0) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);

    const home = await browser.get(`/donor/${tenant.slug}/`);
    expect(home.status).toBe(200);
    expect(text(home.html)).toContain(`Signed in as ${email.toLowerCase()}`);

    // Followed again by the browser it signed in (a double click): the portal opens; by anyone else: 410.
    expect((await browser.get(pathOf(url))).location).toBe(`/donor/${tenant.slug}/`);
    const again = await new Browser(server.url).get(pathOf(url));
    expect(again.status).toBe(410);
    expect(text(again.html)).toContain("This sign-in link no longer works");
    expect(again.html).toContain(`action="/donor/${tenant.slug}/sign-in"`);
  });

  it("refuses a sign-in link after its 15 minutes, and an unknown or malformed token", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    await askForLink(tenant.slug, supporter.email as string);
    const url = (await lastLink(tenant.organizationId, supporter.email as string)) as string;
    await db()
      .update(donorLinks)
      .set({ expiresDate: sql`now() - interval '1 second'` })
      .where(eq(donorLinks.tokenHash, sha256(tokenOf(url))));
    for (const path of [
      pathOf(url),
      `/donor/${tenant.slug}/enter?token=dnt_dl_${unique(43)}`,
      `/donor/${tenant.slug}/enter`,
      `/donor/${tenant.slug}/enter?token=a&token=b`,
      `/donor/${tenant.slug}/enter?token=${"x".repeat(500)}`,
    ]) {
      const page = await new Browser(server.url).get(path);
      expect(page.status, path).toBe(410);
      expect(page.headers.get("set-cookie"), path).toBeNull();
      expect(text(page.html), path).toContain(
        "This sign-in link no longer works Sign-in links work once, for 15 minutes (links in receipt emails for 30 days).",
      );
    }
  });

  it("lets a receipt link sign in again and again for 30 days, then refuses it", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    const url = await db().transaction((tx) =>
      mintReceiptLink(tx, {
        organizationId: tenant.organizationId,
        organizationSlug: tenant.slug,
        email: supporter.email as string,
        baseUrl: server.config.baseUrl,
      }),
    );
    expect(url.startsWith(`${server.url}/donor/${tenant.slug}/enter?token=dnt_dl_`)).toBe(true);
    const [link] = await db()
      .select()
      .from(donorLinks)
      .where(eq(donorLinks.tokenHash, sha256(tokenOf(url))));
    expect(link?.purpose).toBe("receipt");
    const days = ((link?.expiresDate.getTime() ?? 0) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    for (let use = 0; use < 3; use++) expect((await new Browser(server.url).get(pathOf(url))).status).toBe(303);
    await db()
      .update(donorLinks)
      .set({ expiresDate: sql`now() - interval '1 second'` })
      .where(eq(donorLinks.tokenHash, sha256(tokenOf(url))));
    expect((await new Browser(server.url).get(pathOf(url))).status).toBe(410);
  });

  it("returns to the page the donor asked for after signing in, never outside the portal", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    const email = supporter.email as string;
    const signIn = await new Browser(server.url).get(`/donor/${tenant.slug}/?next=gifts/42`);
    expect(signIn.html).toContain('<input type="hidden" name="next" value="gifts/42">');
    await new Browser(server.url).request(`/donor/${tenant.slug}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": newAddress() },
      body: new URLSearchParams({ email, next: "gifts/42" }).toString(),
    });
    const url = (await lastLink(tenant.organizationId, email)) as string;
    expect(new URL(url).searchParams.get("next")).toBe("gifts/42");
    const entered = await new Browser(server.url).get(pathOf(url));
    expect(entered.location).toBe(`/donor/${tenant.slug}/gifts/42`);

    const receipt = await db().transaction((tx) =>
      mintReceiptLink(tx, {
        organizationId: tenant.organizationId,
        organizationSlug: tenant.slug,
        email,
        baseUrl: server.config.baseUrl,
        next: "gifts/7",
      }),
    );
    expect((await new Browser(server.url).get(pathOf(receipt))).location).toBe(`/donor/${tenant.slug}/gifts/7`);
    for (const next of ["//evil.example/x", "https://evil.example/", "../../admin/", "/gifts/1", "gifts/../x"]) {
      const path = `${pathOf(receipt).replace(/&next=[^&]*/, "")}&next=${encodeURIComponent(next)}`;
      expect((await new Browser(server.url).get(path)).location, next).toBe(`/donor/${tenant.slug}/`);
    }
  });

  it("sets a Secure cookie when the base URL is https", async () => {
    const secure = await startTestServer({ baseUrl: "https://give.example.org" });
    try {
      const secureTenant = await fakeTenant(secure.database.db);
      const supporter = await fakeSupporter(secure.database.db, secureTenant.organizationId);
      await new Browser(secure.url).request(`/donor/${secureTenant.slug}/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: supporter.email as string }).toString(),
      });
      // No SMTP_URL: the captured copy is the donor's link.
      const id = await queuedSignIn(secure, secureTenant.organizationId, supporter.email as string);
      await flushOutbox(secure, secureTenant.organizationId);
      const [row] = await secure.database.db
        .select({ text: outboxMessages.text })
        .from(outboxMessages)
        .where(and(eq(outboxMessages.organizationId, secureTenant.organizationId), eq(outboxMessages.id, id)));
      const url = /(https:\/\/\S+\/enter\?token=\S+)/.exec(row?.text ?? "")?.[1] ?? "";
      expect(url.startsWith(`https://give.example.org/donor/${secureTenant.slug}/enter?token=`)).toBe(true);
      const entered = await new Browser(secure.url).get(pathOf(url));
      expect(entered.headers.getSetCookie()).toEqual([
        expect.stringMatching(
          new RegExp(
            `^donata_donor=dnt_ds_[\\w-]{43}; Max-Age=43200; Path=/donor/${secureTenant.slug}/; HttpOnly; Secure; SameSite=Lax$`,
          ),
        ),
      ]);
    } finally {
      await secure.close();
    }
  });

  it("limits link requests per email and organization, then per client address, with a 429 page", async () => {
    const email = `limited-${unique(8)}@example.test`;
    const address = newAddress();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await askForLink(tenant.slug, email, newAddress())).status).toBe(200);
    }
    const refused = await askForLink(tenant.slug, email.toUpperCase(), address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.html).toContain('class="error-summary" role="alert"');
    expect(text(refused.html)).toContain(
      "There is a problem Too many sign-in links were asked for. Wait a few minutes and try again.",
    );
    // The same email at another organization has its own counter.
    expect((await askForLink(other.slug, email, newAddress())).status).toBe(200);

    const busy = newAddress();
    for (let attempt = 0; attempt < 8; attempt++) {
      expect((await askForLink(tenant.slug, `many-${unique(8)}@example.test`, busy)).status).toBe(200);
    }
    const blocked = await askForLink(tenant.slug, `many-${unique(8)}@example.test`, busy);
    expect(blocked.status).toBe(429);
  });

  it("re-shows the form with an inline error for an invalid email (400)", async () => {
    for (const [email, message] of [
      ["", "Enter your email address"],
      ["not-an-email", "Enter an email address in the form name@example.com, at most 320 characters"],
    ] as const) {
      const page = await askForLink(tenant.slug, email);
      expect(page.status).toBe(400);
      expect(page.html).toContain('<li><a href="#field-email">');
      expect(page.html).toContain('aria-invalid="true"');
      expect(page.html).toContain(`<p class="field-error" id="field-email-error">${message}</p>`);
    }
  });

  it("shows a donor's gifts, payments, receipts and statements, and nothing of another email or organization", async () => {
    const email = `giver-${unique(8)}@example.test`;
    const campaign = await fakeCampaign(db(), tenant.organizationId, { title: "Clean water" });
    const first = await fakeSupporter(db(), tenant.organizationId, { email, firstName: "Ada" });
    const second = await fakeSupporter(db(), tenant.organizationId, { email: email.toUpperCase(), firstName: "Ada" });
    const monthly = await fakeDonation(db(), tenant.organizationId, {
      supporterId: first.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
      amount: 15,
    });
    const oneOff = await fakeDonation(db(), tenant.organizationId, {
      supporterId: second.id,
      campaignId: campaign.id,
      state: "done",
      frequency: 0,
      amount: 50,
    });
    await fakePayment(db(), tenant.organizationId, {
      donationId: monthly.id,
      state: "PAID",
      amount: 15,
      paymentDate: new Date("2025-03-05T10:00:00Z"),
    });
    await fakePayment(db(), tenant.organizationId, {
      donationId: oneOff.id,
      state: "PAID",
      amount: 50,
      paymentDate: new Date("2024-12-20T10:00:00Z"),
    });
    // Another email in the same organization, and the same email in another organization.
    const stranger = await fakeSupporter(db(), tenant.organizationId);
    const strangerGift = await fakeDonation(db(), tenant.organizationId, {
      supporterId: stranger.id,
      campaignId: campaign.id,
      state: "done",
    });
    const elsewhere = await fakeSupporter(db(), other.organizationId, { email });
    const elsewhereGift = await fakeDonation(db(), other.organizationId, {
      supporterId: elsewhere.id,
      campaignId: (await fakeCampaign(db(), other.organizationId)).id,
      state: "done",
    });

    const browser = await signedIn(tenant, email);
    const home = await browser.get(`/donor/${tenant.slug}/`);
    const content = text(home.html);
    expect(content).toContain("Hello Ada");
    // Server-rendered and script-free: everything works without JavaScript.
    expect(home.html).not.toContain("<script");
    expect(content).toContain(`Clean water €15.00 a month · Active Started`);
    expect(content).toContain(`Clean water €50.00 · One-off · Received`);
    expect(home.html).toContain(`href="/donor/${tenant.slug}/gifts/${monthly.id}"`);
    expect(home.html).not.toContain(`/gifts/${oneOff.id}"`);
    expect(home.html).toContain(`href="${monthly.receiptUrl}"`);
    expect(home.html).toContain(`href="${oneOff.receiptUrl}"`);
    expect(home.html).toContain(`href="${first.certificationUrl}?year=2025"`);
    expect(home.html).toContain(`href="${second.certificationUrl}?year=2024"`);
    expect(content).toContain("€15.00 · 5 Mar 2025 · Paid");
    expect(home.html).not.toContain(strangerGift.code);
    expect(home.html).not.toContain(elsewhereGift.code);

    // The cookie of one organization's portal is no session at another's, even sent there on purpose.
    const cookie = `donata_donor=${browser.cookies.get("donata_donor")}`;
    const there = await server.get(`/donor/${other.slug}/`, undefined, { cookie });
    expect(there.status).toBe(200);
    expect(there.body).toContain(`action="/donor/${other.slug}/sign-in"`);
    expect(there.body).not.toContain(elsewhereGift.code);
    const exportThere = await fetch(`${server.url}/donor/${other.slug}/export`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: csrfOf(home) }).toString(),
    });
    expect(exportThere.status).toBe(303);
    expect(exportThere.headers.get("location")).toBe(`/donor/${other.slug}/`);

    // A link of one organization does not open another's portal.
    await askForLink(other.slug, email);
    const otherLink = (await lastLink(other.organizationId, email)) as string;
    const crossed = await new Browser(server.url).get(`/donor/${tenant.slug}/enter?token=${tokenOf(otherLink)}`);
    expect(crossed.status).toBe(410);
  });

  it("refuses a form without the session's CSRF token (403) and a cross-origin post", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    const browser = await signedIn(tenant, supporter.email as string);
    const home = await browser.get(`/donor/${tenant.slug}/`);
    for (const fields of [{ first_name: "Mallory" }, { first_name: "Mallory", csrf: "forged" }] as Record<
      string,
      string
    >[]) {
      const refused = await post(browser, `/donor/${tenant.slug}/contact`, fields);
      expect(refused.status).toBe(403);
      expect(text(refused.html)).toContain(
        "This form could not be accepted This form expired or was not sent from this site. Go back, reload the page and try again.",
      );
    }
    const foreign = await post(
      browser,
      `/donor/${tenant.slug}/contact`,
      { first_name: "Mallory", csrf: csrfOf(home) },
      { origin: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
    // The portal's own words for the refusal (the API's detail names the origin; the page speaks to the donor).
    expect(text(foreign.html)).toContain(
      "This form could not be accepted This form was sent from another site, so it was refused.",
    );
    const [row] = await db().select().from(supporters).where(eq(supporters.id, supporter.id));
    expect(row?.firstName).toBe(supporter.firstName);
  });

  it("saves contact details on every record of the identity, visible through the API, and confirms by email", async () => {
    const email = `mover-${unique(8)}@example.test`;
    const first = await fakeSupporter(db(), tenant.organizationId, { email, emailMarketing: false });
    const second = await fakeSupporter(db(), tenant.organizationId, { email: email.toUpperCase() });
    const stranger = await fakeSupporter(db(), tenant.organizationId);
    const browser = await signedIn(tenant, email);
    const home = await browser.get(`/donor/${tenant.slug}/`);

    const invalid = await post(browser, `/donor/${tenant.slug}/contact`, {
      csrf: csrfOf(home),
      first_name: "Grace",
      country: "Italy",
    });
    expect(invalid.status).toBe(400);
    expect(invalid.html).toContain(
      '<li><a href="#field-country">Country must be a two-letter code, for example IT</a></li>',
    );
    expect(invalid.html).toContain('value="Grace"');

    const saved = await post(browser, `/donor/${tenant.slug}/contact`, {
      csrf: csrfOf(home),
      first_name: "Grace",
      last_name: "Hopper",
      phone: "+39 06 1234567",
      address: "Via Roma 1",
      postal_code: "00100",
      city: "Roma",
      country: "it",
      email_marketing: "yes",
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/donor/${tenant.slug}/?done=contact`);
    const after = await browser.get(saved.location as string);
    expect(text(after.html)).toContain("Your contact details were saved. We sent you a confirmation by email.");

    for (const id of [first.id, second.id]) {
      const response = await server.get(`/api/v1/supporters/${id}`, tenant.token);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        first_name: "Grace",
        last_name: "Hopper",
        phone: "+39 06 1234567",
        address: "Via Roma 1",
        address2: null,
        postal_code: "00100",
        city: "Roma",
        country: "IT",
        email_marketing: true,
        phone_marketing: false,
        sms_marketing: false,
        postal_marketing: false,
      });
    }
    const untouched = await server.get(`/api/v1/supporters/${stranger.id}`, tenant.token);
    expect(untouched.body.first_name).toBe(stranger.firstName);

    await flushOutbox(server, tenant.organizationId);
    const confirmations = smtp.to(email).filter((mail) => mail.headers.get("x-donata-message") === "donor_change");
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]?.subject).toMatch(/^Your contact details with .+ were updated$/);
    expect(confirmations[0]?.text).toContain("Dear Grace,");
    expect(confirmations[0]?.text).toContain(`Open your donor page: ${server.url}/donor/${tenant.slug}/`);
  });

  it("words each change of the donor_change message", async () => {
    const email = `changer-${unique(8)}@example.test`;
    const supporter = await fakeSupporter(db(), tenant.organizationId, { email, firstName: "Lin" });
    const campaign = await fakeCampaign(db(), tenant.organizationId, { title: "Books" });
    const gift = await fakeDonation(db(), tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
      amount: 20,
      pausedUntil: new Date("2031-05-01T00:00:00Z"),
    });
    await db().transaction(async (tx) => {
      for (const change of ["amount", "frequency", "pause", "payment_method"]) {
        await enqueueEmail(tx, {
          organizationId: tenant.organizationId,
          kind: "donor_change",
          to: email,
          supporterId: supporter.id,
          donationId: gift.id,
          data: { change },
        });
      }
    });
    await flushOutbox(server, tenant.organizationId);
    // In the order they were enqueued (the outbox id in the Message-ID), whatever the delivery order.
    const outboxId = (mail: { messageId?: string }) => Number(/\.(\d+)@/.exec(mail.messageId ?? "")?.[1]);
    const mails = smtp.to(email).sort((a, b) => outboxId(a) - outboxId(b));
    const giftUrl = `${server.url}/donor/${tenant.slug}/gifts/${gift.id}`;
    expect(mails.map((mail) => mail.subject)).toEqual([
      expect.stringMatching(/^The amount of your gift to .+ was changed$/),
      expect.stringMatching(/^How often you give to .+ was changed$/),
      expect.stringMatching(/^Your regular gift to .+: pause confirmed$/),
      expect.stringMatching(/^Your payment method for .+ was updated$/),
    ]);
    const bodies = mails.map((mail) => (mail.text ?? "").replace(/\s+/g, " "));
    expect(bodies[0]).toContain("Your monthly gift to Books is now €20.00. The next payments will be of this amount.");
    expect(bodies[1]).toContain("Your gift to Books is now monthly, €20.00 each time.");
    expect(bodies[2]).toContain(
      "Your monthly gift to Books is paused: no payment will be taken before May 1, 2031. It then resumes by itself.",
    );
    expect(bodies[3]).toContain("The payment method of your monthly gift to Books was updated.");
    for (const body of bodies) expect(body).toContain(`See your gift: ${giftUrl}`);
    for (const mail of mails) expect(hrefsOf(mail.html)).toContain(giftUrl);
  });

  it("writes donor_change in the organization's language", async () => {
    const italian = await fakeTenant(db());
    await db().update(organizations).set({ locale: "it" }).where(eq(organizations.id, italian.organizationId));
    const email = `italiano-${unique(8)}@example.test`;
    const supporter = await fakeSupporter(db(), italian.organizationId, { email, firstName: "Giulia" });
    const campaign = await fakeCampaign(db(), italian.organizationId, { title: "Libri" });
    const gift = await fakeDonation(db(), italian.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 1,
      amount: 120,
    });
    await db().transaction(async (tx) => {
      for (const change of ["contact_details", "amount"]) {
        await enqueueEmail(tx, {
          organizationId: italian.organizationId,
          kind: "donor_change",
          to: email,
          supporterId: supporter.id,
          donationId: change === "amount" ? gift.id : null,
          data: { change },
        });
      }
    });
    await flushOutbox(server, italian.organizationId);
    // Delivery order is not part of the contract: each message is found by its kind of change.
    const contact = smtp.to(email).find((mail) => mail.subject?.startsWith("I tuoi recapiti"));
    const amount = smtp.to(email).find((mail) => mail.subject?.startsWith("L'importo"));
    expect(contact?.subject).toMatch(/^I tuoi recapiti presso .+ sono stati aggiornati$/);
    expect(contact?.text).toContain("Gentile Giulia,");
    expect(contact?.text).toContain(`Apri la tua pagina donatore: ${server.url}/donor/${italian.slug}/`);
    expect(amount?.text?.replace(/\s+/g, " ")).toContain(
      "La tua donazione annuale a Libri è ora di 120,00 €. I prossimi pagamenti saranno di questo importo.",
    );
  });

  it("exports the donor's data as a JSON attachment: every record of the identity, nobody else's", async () => {
    const email = `exporter-${unique(8)}@example.test`;
    const campaign = await fakeCampaign(db(), tenant.organizationId);
    const first = await fakeSupporter(db(), tenant.organizationId, { email });
    const second = await fakeSupporter(db(), tenant.organizationId, { email: email.toUpperCase() });
    const gift = await fakeDonation(db(), tenant.organizationId, { supporterId: first.id, campaignId: campaign.id });
    const payment = await fakePayment(db(), tenant.organizationId, { donationId: gift.id });
    const stranger = await fakeSupporter(db(), tenant.organizationId);
    const browser = await signedIn(tenant, email);
    const home = await browser.get(`/donor/${tenant.slug}/`);

    const refused = await post(browser, `/donor/${tenant.slug}/export`, {});
    expect(refused.status).toBe(403);
    const download = await post(browser, `/donor/${tenant.slug}/export`, { csrf: csrfOf(home) });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(download.headers.get("content-disposition")).toMatch(
      new RegExp(`^attachment; filename="my-data-${tenant.slug}-\\d{4}-\\d{2}-\\d{2}\\.json"$`),
    );
    expect(download.headers.get("cache-control")).toBe("no-store");
    const data = JSON.parse(download.html);
    expect(data.email).toBe(email);
    expect(data.organization.slug).toBe(tenant.slug);
    expect(data.supporters.map((record: { supporter: { id: number } }) => record.supporter.id)).toEqual([
      first.id,
      second.id,
    ]);
    expect(data.supporters[0].donations.map((donation: { id: number }) => donation.id)).toEqual([gift.id]);
    expect(data.supporters[0].payments.map((row: { id: number }) => row.id)).toEqual([payment.id]);
    expect(data.supporters[1].donations).toEqual([]);
    expect(download.html).not.toContain(stranger.email as string);
  });

  it("signs out: the session is deleted and the cookie cleared", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId);
    const browser = await signedIn(tenant, supporter.email as string);
    const token = browser.cookies.get("donata_donor") as string;
    const home = await browser.get(`/donor/${tenant.slug}/`);
    const out = await post(browser, `/donor/${tenant.slug}/sign-out`, { csrf: csrfOf(home) });
    expect(out.status).toBe(303);
    expect(out.location).toBe(`/donor/${tenant.slug}/?done=signed_out`);
    expect(browser.cookies.has("donata_donor")).toBe(false);
    expect(
      await db()
        .select()
        .from(donorSessions)
        .where(eq(donorSessions.tokenHash, sha256(token))),
    ).toEqual([]);
    const page = await browser.get(out.location as string);
    expect(text(page.html)).toContain("You are signed out.");
    const replayed = await server.get(`/donor/${tenant.slug}/`, undefined, { cookie: `donata_donor=${token}` });
    expect(replayed.body).toContain(`action="/donor/${tenant.slug}/sign-in"`);
  });

  it("answers an unknown organization with a 404 page, and adds the trailing slash the cookie needs", async () => {
    const missing = await server.get(`/donor/no-such-${unique(6)}/`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(text(missing.body)).toContain("Page not found There is no donor portal at this address.");
    const long = await server.get(`/donor/${"x".repeat(150)}/`);
    expect(long.status).toBe(404);
    const bare = await fetch(`${server.url}/donor/${tenant.slug}?a=1`, { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe(`/donor/${tenant.slug}/?a=1`);
    for (const page of ["sign-in", "sign-out", "contact", "export"]) {
      const opened = await fetch(`${server.url}/donor/${tenant.slug}/${page}`, { redirect: "manual" });
      expect(opened.status).toBe(303);
      expect(opened.headers.get("location")).toBe(`/donor/${tenant.slug}/`);
    }
    const signedOut = await fetch(`${server.url}/donor/${tenant.slug}/contact`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "first_name=x",
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toBe(`/donor/${tenant.slug}/`);
  });

  describe("in chromium", () => {
    async function expectAccessible(page: ChromiumPage) {
      const results = await new AxeBuilder({ page }).analyze();
      expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
    }

    /** Presses Tab until the element is focused: the page is used with the keyboard only. */
    async function tabTo(page: ChromiumPage, selector: string) {
      for (let press = 0; press < 60; press++) {
        if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector)) return;
        await page.keyboard.press("Tab");
      }
      throw new Error(`Tab never reached ${selector}`);
    }

    it("signs in by the emailed link and edits contact details with the keyboard alone, axe-clean", async () => {
      const email = `keyboard-${unique(8)}@example.test`;
      const campaign = await fakeCampaign(db(), tenant.organizationId, { title: "School kits" });
      const supporter = await fakeSupporter(db(), tenant.organizationId, {
        email,
        firstName: "Ada",
        smsMarketing: false,
      });
      const gift = await fakeDonation(db(), tenant.organizationId, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "active",
        frequency: 12,
        amount: 10,
      });
      await fakePayment(db(), tenant.organizationId, { donationId: gift.id, state: "PAID", amount: 10 });

      const context = await chromium.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      await page.goto(`${server.url}/donor/${tenant.slug}/`);
      expect(await page.getAttribute("html", "lang")).toBe("en");
      await expectAccessible(page);
      await tabTo(page, "#field-email");
      await page.keyboard.type(email);
      await page.keyboard.press("Enter");
      await page.waitForSelector("h1:has-text('Check your inbox')");
      await expectAccessible(page);

      await queuedSignIn(server, tenant.organizationId, email);
      await flushOutbox(server, tenant.organizationId);
      const mail = smtp.to(email).find((message) => message.headers.get("x-donata-message") === "donor_sign_in");
      const url = /(http:\/\/\S+\/enter\?token=\S+)/.exec(mail?.text ?? "")?.[1] as string;
      await page.goto(url);
      expect(new URL(page.url()).pathname).toBe(`/donor/${tenant.slug}/`);
      await page.waitForSelector("h1:has-text('Hello Ada')");
      await expectAccessible(page);
      // Mobile first: nothing wider than the phone's screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

      await tabTo(page, "#field-country");
      await page.keyboard.type("Italia");
      await tabTo(page, "#field-sms_marketing");
      await page.keyboard.press("Space");
      await tabTo(page, 'form[action$="/contact"] button[type="submit"]');
      await page.keyboard.press("Enter");
      await page.waitForSelector(".error-summary");
      // The error summary takes the focus, and its link leads to the field.
      expect(await page.evaluate(() => document.activeElement?.className)).toBe("error-summary");
      await expectAccessible(page);
      await page.keyboard.press("Tab");
      await page.keyboard.press("Enter");
      expect(await page.evaluate(() => location.hash)).toBe("#field-country");

      await tabTo(page, "#field-country");
      await page.keyboard.press("Control+A");
      await page.keyboard.type("IT");
      await tabTo(page, 'form[action$="/contact"] button[type="submit"]');
      await page.keyboard.press("Enter");
      await page.waitForSelector("text=Your contact details were saved.");
      await expectAccessible(page);
      const [row] = await db().select().from(supporters).where(eq(supporters.id, supporter.id));
      expect(row).toMatchObject({ country: "IT", smsMarketing: true, firstName: "Ada" });

      // The error pages are pages like the others (seen signed out: signed in, a dead link opens the portal).
      await context.clearCookies();
      await page.goto(`${server.url}/donor/${tenant.slug}/enter?token=dnt_dl_${unique(20)}`);
      await page.waitForSelector("h1:has-text('This sign-in link no longer works')");
      await expectAccessible(page);
      await page.goto(`${server.url}/donor/no-such-${unique(6)}/`);
      await page.waitForSelector("h1:has-text('Page not found')");
      await expectAccessible(page);
      await context.close();
    });
  });
});

describe("donor portal sign-in: the same answer at the same moment", () => {
  let server: TestServer;
  let release = () => {};
  let held = Promise.resolve();
  beforeAll(async () => {
    // Each request from its own client address: each then takes the first lease of its address's request limit.
    server = await startTestServer({ trustProxy: "127.0.0.1" }, { testHooks: { beforeSignInLinkQueued: () => held } });
  });
  afterAll(async () => {
    release();
    await server?.close();
  });

  it("answers before it looks the email up: a known and an unknown address run the same queries before the answer", async () => {
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tenant = await fakeTenant(server.database.db);
    const supporter = await fakeSupporter(server.database.db, tenant.organizationId);
    const known = supporter.email as string;
    const unknown = `nobody-${unique(8)}@example.test`;
    const before: Record<string, string[]> = {};
    for (const [index, email] of [known, unknown].entries()) {
      server.queries.length = 0;
      const answer = await fetch(`${server.url}/donor/${tenant.slug}/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": `192.0.2.${index + 1}` },
        body: new URLSearchParams({ email }).toString(),
      });
      expect(answer.status).toBe(200);
      await answer.text();
      before[email] = [...server.queries];
    }
    // Before answering: the organization and the rate-limit counters, never the email's supporter or a link.
    expect(before[known]?.filter((query) => /supporters|outbox_messages|donor_links/.test(query))).toEqual([]);
    expect(before[known]).toEqual(before[unknown]);

    // Once answered, the known address gets its message, the unknown none.
    release();
    const messages = async () =>
      server.database.db
        .select({ toAddress: outboxMessages.toAddress, kind: outboxMessages.kind })
        .from(outboxMessages)
        .where(eq(outboxMessages.organizationId, tenant.organizationId));
    for (let wait = 0; wait < 200 && (await messages()).length === 0; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await messages()).toEqual([{ toAddress: known, kind: "donor_sign_in" }]);
  });
});
