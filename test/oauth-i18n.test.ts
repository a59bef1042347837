import { createHash, randomBytes } from "node:crypto";
import cookie from "@fastify/cookie";
import { eq } from "drizzle-orm";
import Fastify from "fastify";
import type { BrowserContext, Browser as Chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminPageRoutes } from "../src/admin/admin-pages.routes.js";
import { organizations, users } from "../src/db/schema.js";
import { createSignInLink } from "../src/identity/one-time-links.service.js";
import { insertUser } from "../src/identity/users.repo.js";
import { createApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";
const CALLBACK = "https://app.example.test/callback";

/** The authorization server's pages and the sign-in link's page in Italian and English, through the real server. */
describe("the sign-in, consent and welcome pages in the reader's language", () => {
  let server: TestServer;
  let chromium: Chromium;
  let app: { client_id: string };
  const slugs = { main: "", second: "", italian: "" };
  const emails = { owner: "", member: "", loyal: "" };

  beforeAll(async () => {
    [server, chromium] = await Promise.all([startTestServer(), launchChromium()]);
    const db = server.database.db;
    slugs.main = `main-${unique(6)}`;
    slugs.second = `second-${unique(6)}`;
    slugs.italian = `italiana-${unique(6)}`;
    await createOrganization(db, { slug: slugs.main, name: "Main Org" });
    await createOrganization(db, { slug: slugs.second, name: "Second Org" });
    await createOrganization(db, { slug: slugs.italian, name: "Onlus Italiana" });
    await db.update(organizations).set({ locale: "it" }).where(eq(organizations.slug, slugs.italian));
    emails.owner = `owner-${unique(6)}@example.test`;
    emails.member = `member-${unique(6)}@example.test`;
    emails.loyal = `loyal-${unique(6)}@example.test`;
    await createUser(db, { email: emails.owner, password: PASSWORD, organization: slugs.main, role: "owner" });
    await createUser(db, { email: emails.owner, organization: slugs.second, role: "admin" });
    await createUser(db, { email: emails.member, password: PASSWORD, organization: slugs.main, role: "member" });
    await createUser(db, { email: emails.loyal, password: PASSWORD, organization: slugs.italian, role: "owner" });
    app = await createApplication(db, {
      name: "Reporting App",
      applicationUrl: "https://app.example.test/",
      callbackUrls: [CALLBACK],
      permissions: ["campaigns:read", "donations:write", "checkouts:read"],
    });
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
  });

  const authorizePath = (extra: Record<string, string> = {}) =>
    `/oauth/authorize/?${new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: CALLBACK,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url"),
      state: `state-${unique(6)}`,
      ...extra,
    })}`;

  const userLocale = async (email: string) => {
    const [row] = await server.database.db.select({ locale: users.locale }).from(users).where(eq(users.email, email));
    return row?.locale;
  };
  const langCookie = async (context: BrowserContext) =>
    (await context.cookies()).find((entry) => entry.name === "donata_lang");
  const text = async (context: { textContent(): Promise<string | null> }) => (await context.textContent())?.trim();

  it("with an Italian browser, sign-in, organization choice and consent speak Italian; the switcher keeps the request", async () => {
    const context = await chromium.newContext({ locale: "it-IT" });
    const page = await context.newPage();
    const path = authorizePath();
    const response = await page.goto(`${server.url}${path}`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-language"]).toBe("it");
    expect(response?.headers().vary).toMatch(/Accept-Language/);
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    await expect(page.title()).resolves.toBe("Accedi · Donata");
    await expect(text(page.locator("h1"))).resolves.toBe("Accedi");
    await expect(text(page.locator("p.muted"))).resolves.toBe("per continuare su Reporting App");
    await expect(page.getByLabel("Password").count()).resolves.toBe(1);
    await expect(text(page.locator("button[type=submit]"))).resolves.toBe("Accedi");
    await expect(page.locator("#language-switcher").getAttribute("aria-label")).resolves.toBe("Lingua");
    await expect(text(page.locator("#language-switcher a[aria-current]"))).resolves.toBe("Italiano");
    // The other language's link is the same authorization request.
    const english = new URL(
      (await page.locator('#language-switcher a[hreflang="en"]').getAttribute("href")) as string,
      server.url,
    );
    const asked = new URL(path, server.url);
    expect(english.pathname).toBe("/oauth/authorize/");
    expect(english.searchParams.get("lang")).toBe("en");
    english.searchParams.delete("lang");
    expect([...english.searchParams].sort()).toEqual([...asked.searchParams].sort());

    // A wrong password is refused in Italian.
    await page.getByLabel("Email").fill(emails.owner);
    await page.getByLabel("Password").fill("wrong password!");
    await page.getByRole("button", { name: "Accedi", exact: true }).click();
    await expect(text(page.getByRole("alert"))).resolves.toBe("L’email o la password non sono corrette.");

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Accedi", exact: true }).click();
    await page.locator("h1", { hasText: "Scegli un’organizzazione" }).waitFor();
    await expect(page.title()).resolves.toBe("Scegli un’organizzazione · Donata");
    await expect(text(page.locator("p.muted").first())).resolves.toBe(
      "Reporting App agirà per conto dell’organizzazione che scegli.",
    );
    await page.getByRole("button", { name: /Main Org/ }).click();

    await page.locator("h1", { hasText: "Installare Reporting App?" }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    await expect(page.title()).resolves.toBe("Installa l’applicazione · Donata");
    await expect(text(page.locator("p.muted").first())).resolves.toBe("in Main Org");
    await expect(page.getByText("URL dell’applicazione:").count()).resolves.toBe(1);
    await expect(page.getByText("Chiede questi permessi:").count()).resolves.toBe(1);
    await expect(page.locator("ul.permissions li").allTextContents()).resolves.toEqual([
      "Leggere le campagne campaigns:read",
      "Registrare donazioni offline e annullare donazioni periodiche donations:write",
      "Leggere i checkout delle donazioni checkouts:read",
    ]);
    await expect(text(page.locator('button[value="allow"]'))).resolves.toBe("Consenti e installa");
    await expect(text(page.locator('button[value="deny"]'))).resolves.toBe("Rifiuta");
    // Nothing was chosen yet: the browser's language is not saved as the user's.
    expect(await userLocale(emails.owner)).toBeNull();

    // ?lang=en from the consent page: the same consent in English, remembered in the cookie and for the user.
    await page.locator('#language-switcher a[hreflang="en"]').click();
    await page.locator("h1", { hasText: "Install Reporting App?" }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    await expect(page.locator("ul.permissions li").first().textContent()).resolves.toBe(
      "Read campaigns campaigns:read",
    );
    expect(new URL(page.url()).searchParams.get("__organization")).toBe(slugs.main);
    expect(await langCookie(context)).toMatchObject({ value: "en", httpOnly: true, sameSite: "Lax" });
    expect(await userLocale(emails.owner)).toBe("en");

    // The user's saved language outranks the Italian browser, also without the cookie.
    await context.clearCookies({ name: "donata_lang" });
    const again = await page.goto(`${server.url}${authorizePath({ __organization: slugs.main })}`);
    expect(again?.headers()["content-language"]).toBe("en");
    await expect(text(page.locator("h1"))).resolves.toBe("Install Reporting App?");
    await context.close();
  });

  it("?lang= switches a visitor's pages and is remembered in the cookie; chosen before sign-in, it becomes the user's", async () => {
    const context = await chromium.newContext({ locale: "it-IT" });
    const page = await context.newPage();
    const english = await page.goto(`${server.url}${authorizePath({ lang: "en" })}`);
    expect(english?.headers()["content-language"]).toBe("en");
    await expect(text(page.locator("h1"))).resolves.toBe("Sign in");
    expect(await langCookie(context)).toMatchObject({ value: "en" });
    // Without ?lang=, the cookie outranks the browser's Italian.
    await page.goto(`${server.url}${authorizePath()}`);
    await expect(text(page.locator("h1"))).resolves.toBe("Sign in");
    await expect(page.title()).resolves.toBe("Sign in · Donata");

    // Back to Italian with the switcher, then sign in: the choice is saved as the user's.
    await page.locator('#language-switcher a[hreflang="it"]').click();
    await page.locator("h1", { hasText: "Accedi" }).waitFor();
    expect(await langCookie(context)).toMatchObject({ value: "it" });
    expect(await userLocale(emails.member)).toBeNull();
    await page.getByLabel("Email").fill(emails.member);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Accedi", exact: true }).click();

    // A member cannot install the application: the refusal page, in Italian.
    await page.locator("h1", { hasText: "Chiedi a un amministratore" }).waitFor();
    expect(await userLocale(emails.member)).toBe("it");
    await expect(page.title()).resolves.toBe("Chiedi a un amministratore · Donata");
    await expect(text(page.locator("main p"))).resolves.toBe(
      "Reporting App non è installata in Main Org. Solo un proprietario o un amministratore dell’organizzazione può installarla: chiedi a uno di loro, poi riprova.",
    );
    await expect(page.locator('button[name="decision"]').count()).resolves.toBe(0);

    // The sign-out pages follow the user's language too.
    await page.goto(`${server.url}/oauth/logout/`);
    await expect(text(page.locator("h1"))).resolves.toBe("Esci");
    await expect(text(page.locator("p.muted"))).resolves.toBe(`Accesso effettuato come ${emails.member}`);
    await page.getByRole("button", { name: "Esci" }).click();
    await page.locator("h1", { hasText: "Uscita effettuata" }).waitFor();
    await expect(text(page.locator("main p"))).resolves.toBe("Hai chiuso la sessione.");
    await context.close();
  });

  it("a user whose saved language is Italian gets Italian pages in an English browser once signed in", async () => {
    await server.database.db.update(users).set({ locale: "it" }).where(eq(users.email, emails.owner));
    const context = await chromium.newContext({ locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${server.url}${authorizePath()}`);
    // Nobody is signed in yet: the browser's English.
    await expect(text(page.locator("h1"))).resolves.toBe("Sign in");
    await page.getByLabel("Email").fill(emails.owner);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.locator("h1", { hasText: "Scegli un’organizzazione" }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    await page.getByRole("button", { name: /Second Org/ }).click();
    await page.locator("h1", { hasText: "Installare Reporting App?" }).waitFor();
    await expect(page.locator("ul.permissions li").first().textContent()).resolves.toBe(
      "Leggere le campagne campaigns:read",
    );
    await context.close();
  });

  it("the organization's language is the last word once it is known; error pages speak the reader's language", async () => {
    const browser = new Browser(server.url);
    const french = { "accept-language": "fr-FR" };
    const login = await browser.request(authorizePath(), { headers: french });
    expect(login.headers.get("content-language")).toBe("en");
    const signedIn = await browser.submit(login, { email: emails.loyal, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    const consent = await browser.request(signedIn.location as string, { headers: french });
    expect(consent.status).toBe(200);
    expect(consent.headers.get("content-language")).toBe("it");
    expect(consent.html).toContain('<html lang="it">');
    expect(consent.html).toContain("<h1>Installare Reporting App?</h1>");
    expect(consent.html).toContain("<li>Leggere le campagne <code>campaigns:read</code></li>");

    const italian = { "accept-language": "it-IT,it;q=0.9,en;q=0.5" };
    const unknown = await fetch(`${server.url}/oauth/authorize/?client_id=nobody&redirect_uri=${CALLBACK}`, {
      headers: italian,
    });
    expect(unknown.status).toBe(400);
    const unknownHtml = await unknown.text();
    expect(unknownHtml).toContain("<h1>Applicazione sconosciuta</h1>");
    expect(unknownHtml).toContain("<p>Nessuna applicazione ha questo client_id.</p>");
    const missing = await fetch(`${server.url}/oauth/authorize/`, { headers: italian });
    expect(await missing.text()).toContain("<p>Manca il parametro client_id.</p>");
    const english = await fetch(`${server.url}/oauth/authorize/?lang=en`, { headers: italian });
    expect(await english.text()).toContain("<p>client_id is missing.</p>");
    const expired = await new Browser(server.url).request("/oauth/login/", {
      method: "POST",
      headers: { ...italian, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: app.client_id, email: emails.owner, password: PASSWORD }).toString(),
    });
    expect(expired.status).toBe(403);
    expect(expired.html).toContain("<h1>Modulo scaduto</h1>");

    // The callback's error codes are for programs: they stay English.
    const denied = await fetch(`${server.url}${authorizePath({ response_type: "token" })}`, {
      headers: italian,
      redirect: "manual",
    });
    const callback = new URL(denied.headers.get("location") as string);
    expect(callback.searchParams.get("error")).toBe("unsupported_response_type");
    expect(callback.searchParams.get("error_description")).toBe("response_type must be code");
  });

  it("the one-time link's page speaks Italian, keeps its token in the switcher, and saves the choice on sign-in", async () => {
    const db = server.database.db;
    const email = `newcomer-${unique(6)}@example.test`;
    const user = await insertUser(db, { email, passwordHash: null });
    const token = await createSignInLink(db, user.id, "setup");
    const italian = { "accept-language": "it" };
    const browser = new Browser(server.url);
    const form = await browser.request(`/admin/welcome?token=${encodeURIComponent(token)}`, { headers: italian });
    expect(form.status).toBe(200);
    expect(form.headers.get("content-language")).toBe("it");
    expect(form.html).toContain("<title>Scegli la tua password · Donata</title>");
    expect(form.html).toContain("<h1>Scegli la tua password</h1>");
    expect(form.html).toContain("Ti diamo il benvenuto in Donata. Scegli la password con cui accederai.");
    expect(form.html).toContain('<label for="password">Nuova password (almeno 10 caratteri)</label>');
    expect(form.html).toContain('<button type="submit">Salva e accedi</button>');
    expect(form.html).toContain(`href="/admin/welcome?token=${encodeURIComponent(token)}&amp;lang=en"`);

    const short = await browser.request("/admin/welcome", {
      method: "POST",
      headers: { ...italian, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, password: "short", repeat: "short" }).toString(),
    });
    expect(short.status).toBe(400);
    expect(short.html).toContain('<div class="error" role="alert">Scegli almeno 10 caratteri.</div>');

    // Chosen on the page (?lang=it from an English browser), the language is the user's once the form signs them in.
    const chosen = await browser.request(`/admin/welcome?token=${encodeURIComponent(token)}&lang=it`, {
      headers: { "accept-language": "en" },
    });
    expect(chosen.html).toContain("<h1>Scegli la tua password</h1>");
    expect(await userLocale(email)).toBeNull();
    const done = await browser.submit(chosen, { password: PASSWORD, repeat: PASSWORD });
    expect(done.status).toBe(303);
    expect(await userLocale(email)).toBe("it");

    const dead = await fetch(`${server.url}/admin/welcome?token=dnt_sl_nothing`, { headers: italian });
    expect(dead.status).toBe(404);
    const deadHtml = await dead.text();
    expect(deadHtml).toContain('<html lang="it">');
    expect(deadHtml).toContain("<h1>Link non valido</h1>");
    expect(deadHtml).toContain("Questo link non è valido. Chiedi un nuovo link a un proprietario");
  });

  it("the panel's 'not built' page negotiates too", async () => {
    const panel = Fastify();
    await panel.register(cookie);
    await adminPageRoutes(panel, server.database.db, server.config.authUrl, "/nonexistent-admin-build/");
    const italian = await panel.inject({ url: "/admin/", headers: { "accept-language": "it" } });
    expect(italian.statusCode).toBe(503);
    expect(italian.headers["content-language"]).toBe("it");
    expect(italian.body).toContain('<html lang="it">');
    expect(italian.body).toContain("<h1>Il pannello di amministrazione non è compilato</h1>");
    expect(italian.body).toContain("Esegui <code>npm run build:admin</code>");
    const english = await panel.inject({ url: "/admin/sign-in?lang=en", headers: { "accept-language": "it" } });
    expect(english.body).toContain("<h1>The admin panel is not built</h1>");
    expect(english.body).toContain('href="/admin/sign-in?lang=it"');
    expect(english.headers["set-cookie"]).toMatch(/donata_lang=en/);
    await panel.close();
  });
});
