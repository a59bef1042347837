import { createHash, randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { eq } from "drizzle-orm";
import type { Browser as Chromium, Page as ChromiumPage } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessions, users } from "../src/db/schema.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Authenticator } from "./helpers/authenticator.js";
import { Browser, hiddenFields, type Page } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { SoftAuthenticator } from "./helpers/webauthn.js";

const PASSWORD = "correct horse battery";
const CALLBACK = "https://client.example.test/oauth/callback";

const problem = (code: string, status: number, title: string, detail: string) => ({
  type: `urn:donata:problem:${code}`,
  title,
  status,
  detail,
  code,
});
const passkeyRefused = problem(
  "passkey_refused",
  401,
  "Unauthorized",
  "This passkey was not accepted. Try again, or sign in with your email and password.",
);
const csrfRefused = problem("csrf_refused", 403, "Forbidden", "This form has expired. Reload the page and try again.");
const notSignedIn = problem("not_signed_in", 401, "Unauthorized", "Sign in with your email and password first");

/**
 * Passkeys on the OAuth login page (docs/accounts.md): "Sign in with a passkey" without an email or
 * password, and "Use a passkey" as the second step after a password, each going on with the
 * authorization to the application's callback. Over HTTP with a software authenticator, then in
 * Chromium with its virtual authenticator holding the same keys, in English and Italian.
 */
describe("passkeys on the OAuth login page", () => {
  let server: TestServer;
  let chromium: Chromium;
  let client: { client_id: string; client_secret: string };

  /** The owner of an organization of their own (where the application is not installed yet: its consent page comes). */
  const newMember = async () => {
    const slug = `org-${unique(6)}`;
    await createOrganization(server.database.db, { slug, name: "Passkey Org" });
    const email = `oauth-passkey-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: slug, role: "owner" });
    return { id: user.id, email, slug };
  };

  /** A JSON POST with the browser's cookies; the body parsed. */
  const call = async (browser: Browser, path: string, body: unknown) => {
    const page = await browser.request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
    return { status: page.status, headers: page.headers, body: JSON.parse(page.html) as any };
  };

  /** A member's passkey, added in the panel with a password sign-in (and an authenticator app first, if asked). */
  const enrolled = async (options: { app?: boolean } = {}) => {
    const member = await newMember();
    const panel = new Browser(server.url);
    expect((await call(panel, "/admin/api/session", { email: member.email, password: PASSWORD })).status).toBe(200);
    let app: Authenticator | undefined;
    if (options.app) {
      const started = await call(panel, "/admin/api/account/second-factor/totp", {});
      app = new Authenticator(started.body.secret);
      const confirmed = await call(panel, "/admin/api/account/second-factor/totp/confirm", { code: await app.code() });
      expect(confirmed.status).toBe(200);
    }
    const key = new SoftAuthenticator(server.url);
    const creation = await call(panel, "/admin/api/account/passkeys/options", {});
    const credential = key.create(creation.body as PublicKeyCredentialCreationOptionsJSON);
    expect((await call(panel, "/admin/api/account/passkeys", { credential, name: "Laptop" })).status).toBe(201);
    return { ...member, key, credentialId: credential.id, app };
  };

  /** An authorization request of the application, with its PKCE verifier. */
  const authorizeRequest = (extra: Record<string, string> = {}) => {
    const verifier = randomBytes(32).toString("base64url");
    const state = `s-${unique(6)}`;
    const query = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      state,
      ...extra,
    });
    return { path: `/oauth/authorize/?${query}`, query, verifier, state };
  };

  /** The consent page allowed: the callback's code, exchanged for tokens. */
  const allowAndExchange = async (browser: Browser, consent: Page, request: ReturnType<typeof authorizeRequest>) => {
    expect(consent.status).toBe(200);
    expect(consent.html).toContain("Install Client?");
    const callback = await browser.submit(consent, { decision: "allow" });
    expect(callback.status).toBe(303);
    const url = new URL(callback.location as string);
    expect(url.origin + url.pathname).toBe(CALLBACK);
    expect(url.searchParams.get("state")).toBe(request.state);
    const token = await fetch(`${server.url}/oauth/token/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: url.searchParams.get("code") as string,
        redirect_uri: CALLBACK,
        code_verifier: request.verifier,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    });
    expect(token.status).toBe(200);
    expect((await token.json()).access_token).toMatch(/^dnt_at_/);
  };

  const challengeCookie = (headers: Headers) =>
    headers.getSetCookie().find((line) => line.startsWith("donata_passkey="));
  const sessionsOf = (userId: number) =>
    server.database.db.select().from(sessions).where(eq(sessions.userId, userId)).orderBy(sessions.id);

  /** After a right password: the second step's page, and its session still pending. */
  const afterPassword = async (email: string, request = authorizeRequest()) => {
    const browser = new Browser(server.url);
    const login = await browser.get(request.path);
    const next = await browser.submit(login, { email, password: PASSWORD });
    expect(next.status).toBe(303);
    expect(next.location?.startsWith("/oauth/second-factor/?")).toBe(true);
    const step = await browser.get(next.location as string);
    expect(step.status).toBe(200);
    return { browser, step, request };
  };

  beforeAll(async () => {
    [server, chromium] = await Promise.all([
      startTestServer({ trustProxy: "127.0.0.1" }, { hostname: "localhost" }),
      launchChromium(),
    ]);
    client = await createApplication(server.database.db, {
      name: "Client",
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK],
    });
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  it("signs in with a passkey alone, then the authorization goes on to the callback with a code", async () => {
    const alice = await enrolled();
    const browser = new Browser(server.url);
    const request = authorizeRequest();
    const login = await browser.get(request.path);
    expect(login.html).toContain('<form id="passkey-form" class="passkey" action="/oauth/passkey" hidden');
    expect(login.html).toContain('<button type="button" class="secondary">Sign in with a passkey</button>');
    expect(login.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const form = hiddenFields(login.html);
    expect(form.csrf).toBeTruthy();

    // JSON only, and only with the login form's own token (its cookie's double).
    const plain = await browser.request("/oauth/passkey/options", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ form }),
    });
    expect(plain.status).toBe(415);
    expect((await call(browser, "/oauth/passkey/options", { form: { ...form, csrf: "forged" } })).body).toEqual(
      csrfRefused,
    );
    expect((await call(new Browser(server.url), "/oauth/passkey/options", { form })).body).toEqual(csrfRefused);

    const options = await call(browser, "/oauth/passkey/options", { form });
    expect(options.status).toBe(200);
    expect(options.headers.get("cache-control")).toBe("no-store");
    expect(options.body).toMatchObject({ rpId: "localhost", userVerification: "preferred", timeout: 300_000 });
    expect(options.body.allowCredentials ?? []).toEqual([]);
    expect(challengeCookie(options.headers)).toMatch(
      /; Max-Age=300; Path=\/oauth\/passkey; HttpOnly; SameSite=Strict$/,
    );

    const credential = alice.key.get(options.body as PublicKeyCredentialRequestOptionsJSON);
    const signedIn = await call(browser, "/oauth/passkey", { credential, form });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get("cache-control")).toBe("no-store");
    const location = new URL(signedIn.body.location, server.url);
    expect(signedIn.body.location.startsWith("/oauth/authorize/?")).toBe(true);
    expect([...location.searchParams].sort()).toEqual([...request.query].sort());
    // The login form is done; a new session, active and counted as two factors.
    expect(browser.cookies.has("donata_login_csrf")).toBe(false);
    expect((await sessionsOf(alice.id)).at(-1)).toMatchObject({ stage: "active", secondFactor: true });
    // Its challenge is spent: the same answer again signs in nobody.
    expect((await call(browser, "/oauth/passkey", { credential, form })).body).toEqual(csrfRefused);

    await allowAndExchange(browser, await browser.get(signedIn.body.location), request);
  });

  it("keeps a language chosen on the login page as the user's, as a password sign-in does", async () => {
    const bella = await enrolled();
    const browser = new Browser(server.url);
    const login = await browser.get(authorizeRequest({ lang: "it" }).path);
    expect(login.html).toContain(">Accedi con una passkey</button>");
    const form = hiddenFields(login.html);
    expect(form.lang).toBe("it");
    const options = await call(browser, "/oauth/passkey/options", { form });
    const credential = bella.key.get(options.body as PublicKeyCredentialRequestOptionsJSON);
    expect((await call(browser, "/oauth/passkey", { credential, form })).status).toBe(200);
    const [user] = await server.database.db.select().from(users).where(eq(users.id, bella.id));
    expect(user?.locale).toBe("it");
  });

  it("asks a member whose only second factor is a passkey for it after the password, and authorizes nothing before", async () => {
    const bob = await enrolled();
    const { browser, step, request } = await afterPassword(bob.email);
    expect(step.html).toContain("Confirm it&#39;s you with one of your passkeys.");
    expect(step.html).toContain('<form id="passkey-form" class="passkey" action="/oauth/second-factor/passkey" hidden');
    expect(step.html).toContain('<button type="button">Use a passkey</button>');
    expect(step.html).toContain('<p id="passkey-unsupported">');
    // No code to type (no authenticator app); the recovery codes that came with the passkey are the way out.
    expect(step.html).not.toMatch(/name="(code|recovery_code)"/);
    expect(step.html).toMatch(/<a href="[^"]*method=recovery_code[^"]*">Use a recovery code instead<\/a>/);
    const form = hiddenFields(step.html);
    expect(form.csrf).toBeTruthy();
    expect(form.client_id).toBe(client.client_id);

    // The pending session is no session to the authorization endpoint: the login page, never a code.
    expect((await browser.get(request.path)).html).toMatch(/<input[^>]*name="password"/);
    const forced = await browser.request("/oauth/authorize/", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...form, organization: bob.slug, decision: "allow" }).toString(),
    });
    expect(forced.status).toBe(200);
    expect(forced.location).toBeNull();
    expect(forced.html).toMatch(/<input[^>]*name="password"/);

    // The step takes the pending session's own CSRF token, and a pending session.
    const path = "/oauth/second-factor/passkey";
    expect((await call(browser, `${path}/options`, { form: { ...form, csrf: "forged" } })).body).toEqual(csrfRefused);
    expect((await call(new Browser(server.url), `${path}/options`, { form })).body).toEqual(notSignedIn);
    const options = await call(browser, `${path}/options`, { form });
    expect(options.status).toBe(200);
    expect(options.body.allowCredentials.map((allowed: { id: string }) => allowed.id)).toEqual([bob.credentialId]);
    expect(challengeCookie(options.headers)).toMatch(
      /; Max-Age=300; Path=\/oauth\/second-factor\/passkey; HttpOnly; SameSite=Strict$/,
    );
    const credential = bob.key.get(options.body as PublicKeyCredentialRequestOptionsJSON);
    expect((await call(browser, path, { credential, form: { ...form, csrf: "forged" } })).body).toEqual(csrfRefused);
    expect((await sessionsOf(bob.id)).at(-1)?.stage).toBe("second_factor");

    const pending = browser.cookies.get("donata_session");
    const done = await call(browser, path, { credential, form });
    expect(done.status).toBe(200);
    expect(done.body.location.startsWith("/oauth/authorize/?")).toBe(true);
    // A new session (a new token), active, with its second factor; the pending one is gone.
    expect(browser.cookies.get("donata_session")).not.toBe(pending);
    const opened = await sessionsOf(bob.id);
    expect(opened.at(-1)).toMatchObject({ stage: "active", secondFactor: true });
    expect(opened.filter((session) => session.stage === "second_factor")).toEqual([]);
    // The step is over: nothing more to confirm here.
    expect((await call(browser, `${path}/options`, { form })).body).toEqual(notSignedIn);

    await allowAndExchange(browser, await browser.get(done.body.location), request);
  });

  it("refuses another user's passkey at the second step; the session stays pending until the user's own answers", async () => {
    const carol = await enrolled();
    const dave = await enrolled();
    const { browser, step, request } = await afterPassword(carol.email);
    const form = hiddenFields(step.html);
    const path = "/oauth/second-factor/passkey";

    const options = await call(browser, `${path}/options`, { form });
    const daves = dave.key.get(options.body as PublicKeyCredentialRequestOptionsJSON);
    expect(daves.id).toBe(dave.credentialId);
    const refused = await call(browser, path, { credential: daves, form });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(passkeyRefused);
    expect((await sessionsOf(carol.id)).map((session) => session.stage)).toEqual(["active", "second_factor"]);
    expect((await sessionsOf(dave.id)).map((session) => session.stage)).toEqual(["active"]);
    expect((await browser.get(request.path)).html).toMatch(/<input[^>]*name="password"/);

    // Nor does a passwordless sign-in's challenge serve this step, even answered by Carol's own passkey.
    const elsewhere = new Browser(server.url);
    const elsewhereLogin = await elsewhere.get(authorizeRequest().path);
    const signIn = await call(elsewhere, "/oauth/passkey/options", { form: hiddenFields(elsewhereLogin.html) });
    browser.cookies.set("donata_passkey", elsewhere.cookies.get("donata_passkey") as string);
    const crossed = carol.key.get(signIn.body as PublicKeyCredentialRequestOptionsJSON);
    expect((await call(browser, path, { credential: crossed, form })).body).toEqual(passkeyRefused);

    // Carol's own passkey, on a challenge of her own: the authorization goes on.
    const fresh = await call(browser, `${path}/options`, { form });
    const credential = carol.key.get(fresh.body as PublicKeyCredentialRequestOptionsJSON);
    const done = await call(browser, path, { credential, form });
    expect(done.status).toBe(200);
    await allowAndExchange(browser, await browser.get(done.body.location), request);
  });

  it("offers a passkey beside the authenticator app's code and the recovery codes", async () => {
    const erin = await enrolled({ app: true });
    const { browser, step } = await afterPassword(erin.email);
    expect(step.html).toContain("Enter the 6-digit code from your authenticator app.");
    expect(step.html).toMatch(/<input id="code" name="code"/);
    expect(step.html).toContain('<button type="button" class="secondary">Use a passkey instead</button>');
    expect(step.html).not.toContain('id="passkey-unsupported"');
    const link = /<a href="([^"]*method=recovery_code[^"]*)">Use a recovery code instead<\/a>/.exec(step.html)?.[1];
    expect(link).toBeDefined();
    const recovery = await browser.get((link as string).replace(/&amp;/g, "&"));
    expect(recovery.html).toMatch(/<input id="recovery_code" name="recovery_code"/);
    expect(recovery.html).toContain("Use a passkey instead</button>");
    expect(recovery.html).toContain("Use a code from your authenticator app instead</a>");

    // A member without a passkey is offered none.
    const frank = await newMember();
    const panel = new Browser(server.url);
    await call(panel, "/admin/api/session", { email: frank.email, password: PASSWORD });
    const started = await call(panel, "/admin/api/account/second-factor/totp", {});
    const app = new Authenticator(started.body.secret);
    await call(panel, "/admin/api/account/second-factor/totp/confirm", { code: await app.code() });
    const appOnly = await afterPassword(frank.email);
    expect(appOnly.step.html).toMatch(/<input id="code" name="code"/);
    expect(appOnly.step.html).not.toContain('id="passkey-form"');
    expect(appOnly.step.html).not.toContain("<script");
  });

  describe("in Chromium, with a virtual authenticator", () => {
    const axeViolations = async (page: ChromiumPage) =>
      (await new AxeBuilder({ page }).include("main").withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );

    /** A page whose virtual authenticator holds the software authenticator's passkeys (same keys, same counter). */
    const pageHolding = async (key?: SoftAuthenticator) => {
      const context = await chromium.newContext();
      await context.route(
        (url) => url.href.startsWith(CALLBACK),
        (route) =>
          route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Callback</title>" }),
      );
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      const cdp = await context.newCDPSession(page);
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
      for (const credential of key?.credentials.values() ?? []) {
        await cdp.send("WebAuthn.addCredential", {
          authenticatorId,
          credential: {
            credentialId: Buffer.from(credential.id, "base64url").toString("base64"),
            isResidentCredential: true,
            rpId: credential.rpId,
            privateKey: credential.privateKey.export({ format: "der", type: "pkcs8" }).toString("base64"),
            userHandle: Buffer.from(credential.userHandle, "base64url").toString("base64"),
            signCount: credential.counter,
          },
        });
      }
      return { context, page, errors };
    };

    const consented = async (page: ChromiumPage, heading: string, allow: string) => {
      await page.locator("h1", { hasText: heading }).waitFor();
      await page.getByRole("button", { name: allow }).click();
      await page.waitForURL((url) => url.href.startsWith(CALLBACK));
      expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();
    };

    it("signs in on the login page with a passkey, without typing anything (English)", async () => {
      const grace = await enrolled();
      const { context, page, errors } = await pageHolding(grace.key);
      await page.goto(`${server.url}${authorizeRequest().path}`);
      const button = page.getByRole("button", { name: "Sign in with a passkey" });
      await button.waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await button.click();
      await consented(page, "Install Client?", "Allow and install");
      expect(errors).toEqual([]);
      await context.close();
    });

    it("says so when no passkey was used", async () => {
      const { context, page, errors } = await pageHolding();
      await page.goto(`${server.url}${authorizeRequest().path}`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await expect
        .poll(() => page.locator("#passkey-error").textContent(), { timeout: 15_000 })
        .toBe("No passkey was used. Try again.");
      await expect(page.getByRole("button", { name: "Sign in with a passkey" }).isEnabled()).resolves.toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });

    it("asks a passkey-only member for their passkey after the password (Italian)", async () => {
      const henry = await enrolled();
      const { context, page, errors } = await pageHolding(henry.key);
      await page.goto(`${server.url}${authorizeRequest({ lang: "it" }).path}`);
      await page.getByLabel("Email").fill(henry.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Accedi", exact: true }).click();
      const button = page.getByRole("button", { name: "Usa una passkey" });
      await button.waitFor();
      await expect(page.locator("h1").textContent()).resolves.toBe("Verifica in due passaggi");
      await expect(page.locator("p.muted").first().textContent()).resolves.toBe(
        "Conferma che sei tu con una delle tue passkey.",
      );
      await expect(page.locator("#passkey-unsupported").isVisible()).resolves.toBe(false);
      await expect(page.locator("#code").count()).resolves.toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await button.click();
      await consented(page, "Installare Client?", "Consenti e installa");
      expect(errors).toEqual([]);
      await context.close();
    });

    it("shows no passkey button where the browser cannot use passkeys, and says so where it is the only way", async () => {
      const ivan = await enrolled();
      const context = await chromium.newContext();
      await context.addInitScript(() => {
        // biome-ignore lint/suspicious/noExplicitAny: removing the API as an older browser lacks it
        delete (window as any).PublicKeyCredential;
      });
      const page = await context.newPage();
      await page.goto(`${server.url}${authorizeRequest().path}`);
      await page.locator("#password").waitFor();
      await expect(page.getByRole("button", { name: "Sign in with a passkey" }).count()).resolves.toBe(0);
      await page.getByLabel("Email").fill(ivan.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.locator("#passkey-unsupported").waitFor();
      await expect(page.locator("#passkey-unsupported").textContent()).resolves.toBe(
        "This browser cannot use passkeys. Open this page in a browser that can.",
      );
      await expect(page.getByRole("button", { name: "Use a passkey" }).count()).resolves.toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    });
  });
});
