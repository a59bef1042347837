import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, users } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCompletedCheckout, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";
const ITALIAN_ERRORS = JSON.parse(
  readFileSync(new URL("../src/i18n/catalogs/it/errors.json", import.meta.url), "utf8"),
) as Record<string, string>;

/**
 * The admin panel in Italian and English (Debian's chromium, the real server): the signed-in user's
 * saved language, then the browser's, then the organization's; the switcher saves the choice; money,
 * dates and the API's refusals follow the language.
 */
describe("the admin panel in the user's language", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let donationId: number;
  let paymentId: number;

  /** A new user of the tenant (owner unless told), with the language they saved (none: null). */
  const newUser = async (locale: "en" | "it" | null, role: "owner" | "admin" | "member" = "admin") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return { id: user.id, email };
  };

  /** Signs in from a browser speaking `browserLocale`; returns on the organization's dashboard. */
  const signIn = async (email: string, browserLocale: string): Promise<Page> => {
    const context = await browser.newContext({ locale: browserLocale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const navLinks = (page: Page) => page.locator("#sidebar a").allTextContents();
  const savedLocale = async (userId: number) =>
    (await server.database.db.select({ locale: users.locale }).from(users).where(eq(users.id, userId)))[0]?.locale;
  const field = (page: Page, label: string) => page.locator(`.field:has(dt:text-is("${label}")) dd`);

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    // The organization speaks Italian: the last word for a user whose browser names none of our languages.
    await server.database.db
      .update(organizations)
      .set({ locale: "it" })
      .where(eq(organizations.id, tenant.organizationId));
    const completed = new Date("2026-03-04T10:00:00Z");
    const { donation, payment } = await fakeCompletedCheckout(server.database.db, tenant.organizationId, {
      donation: { amount: 1234.5, frequency: 0, completedDate: completed },
      checkout: { completedDate: completed },
    });
    donationId = donation.id;
    paymentId = payment.id;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("speaks Italian to a user who chose it, whatever the browser says: words, money and dates", async () => {
    const user = await newUser("it");
    const page = await signIn(user.email, "en-US");
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    expect(await navLinks(page)).toEqual([
      "Dashboard",
      "Campagne",
      "Sostenitori",
      "Donazioni",
      "Pagamenti",
      "Checkout",
      "Fidelizzazione",
      "Importazioni",
      "Posta in uscita",
      "App",
      "Sviluppatori",
      "Webhook",
      "Membri",
      "Impostazioni",
      "Email",
      "Profilo legale",
      "Registro attività",
    ]);
    await expect(page.locator(".sidebar-heading").first().textContent()).resolves.toBe("Impostazioni");
    await expect(page.getByRole("button", { name: "Esci" }).count()).resolves.toBe(1);
    await page.locator('[data-testid="raised-this-month"]', { hasText: "Raccolti questo mese" }).waitFor();
    expect(await page.title()).toMatch(/^Dashboard · Org .* · Donata$/);

    // The donations list: headers, the Italian way of writing money (1.234,50 € with a no-break space).
    await page.getByRole("link", { name: "Donazioni" }).click();
    const table = page.locator('[data-testid="table-donations"]');
    await table.waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Donazioni");
    const headers = (await table.locator("thead th").allTextContents()).map((text) => text.replace(/[▲▼↕]/g, ""));
    expect(headers).toEqual([
      "ID",
      "Codice",
      "Sostenitore",
      "Campagna",
      "Importo",
      "Frequenza",
      "Stato",
      "Creazione",
      "Completamento",
    ]);
    const row = table.locator(`tr[data-id="${donationId}"]`);
    await expect(row.textContent()).resolves.toContain("1.234,50\u00a0€");
    await expect(row.textContent()).resolves.toContain("Una tantum");
    await expect(row.textContent()).resolves.toContain("completata");
    await expect(page.locator('[data-testid="pagination-range"]').textContent()).resolves.toBe("1–1 di 1");

    // A donation's page: its title, its fields, its date in Italian (in the organization's time zone).
    await page.goto(`${server.url}/admin/o/${tenant.slug}/donations/${donationId}`);
    await expect
      .poll(() => page.locator("h1").textContent(), { timeout: 15_000 })
      .toBe("Donazione una tantum di 1.234,50\u00a0€");
    await expect(field(page, "Completamento").textContent()).resolves.toBe("4 mar 2026, 11:00");
    await expect(page.getByRole("link", { name: "Donazioni" }).first().count()).resolves.toBe(1);

    // A payment's page, and an empty state.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/payments/${paymentId}`);
    await expect
      .poll(() => page.locator("h1").textContent(), { timeout: 15_000 })
      .toBe(`Pagamento n. ${paymentId}: 1.234,50\u00a0€`);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/webhooks`);
    await page.getByText("Nessuna applicazione ha ancora aggiunto un endpoint webhook.").waitFor();
    await page.context().close();
  });

  it("switches to English with the switcher, saves the choice on the user, and keeps it after a reload", async () => {
    const user = await newUser("it");
    // The browser and the organization both say Italian: only the saved choice can bring English back.
    const page = await signIn(user.email, "it-IT");
    const switcher = page.getByLabel("Lingua del pannello");
    await expect(switcher.inputValue()).resolves.toBe("it");
    await expect(switcher.locator("option").allTextContents()).resolves.toEqual(["English", "Italiano"]);
    await switcher.selectOption("en");
    await page.getByRole("link", { name: "Campaigns", exact: true }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    await expect.poll(() => savedLocale(user.id)).toBe("en");
    await expect(page.getByLabel("Panel language").inputValue()).resolves.toBe("en");

    await page.reload();
    await page.getByRole("link", { name: "Campaigns", exact: true }).waitFor();
    expect(await navLinks(page)).toContain("Audit log");
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    await expect(page.locator('[data-testid="raised-this-month"] .stat-label').textContent()).resolves.toBe(
      "Raised this month",
    );

    // And back to Italian.
    await page.getByLabel("Panel language").selectOption("it");
    await page.getByRole("link", { name: "Campagne", exact: true }).waitFor();
    await expect.poll(() => savedLocale(user.id)).toBe("it");
    await page.context().close();
  });

  it("without a saved choice follows the browser's language, then the organization's", async () => {
    const user = await newUser(null);
    const italian = await signIn(user.email, "it-IT");
    await italian.getByRole("link", { name: "Sostenitori" }).waitFor();
    expect(await italian.locator("html").getAttribute("lang")).toBe("it");
    await italian.context().close();

    const english = await signIn(user.email, "en-GB");
    await english.getByRole("link", { name: "Supporters" }).waitFor();
    expect(await english.locator("html").getAttribute("lang")).toBe("en");
    // English as the British write it: the day before the month.
    await english.goto(`${server.url}/admin/o/${tenant.slug}/donations/${donationId}`);
    await expect(field(english, "Completed").textContent()).resolves.toBe("4 Mar 2026, 11:00");
    await english.context().close();

    // A browser speaking none of our languages: the organization's (Italian here).
    const german = await signIn(user.email, "de-DE");
    await german.getByRole("link", { name: "Sostenitori" }).waitFor();
    await german.context().close();
    // Nothing was saved by reading.
    expect(await savedLocale(user.id)).toBeNull();
  });

  it("shows an API refusal in Italian from the catalog, not the server's English sentence", async () => {
    // The organization's only owner tries to leave it: the server refuses with last_owner.
    const other = await fakeTenant(server.database.db);
    const email = `owner-${unique(6)}@example.test`;
    const owner = await createUser(server.database.db, {
      email,
      password: PASSWORD,
      organization: other.slug,
      role: "owner",
    });
    await server.database.db.update(users).set({ locale: "it" }).where(eq(users.id, owner.id));
    const context = await browser.newContext({ locale: "en-US" });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${other.slug}/?$`));
    await page.goto(`${server.url}/admin/o/${other.slug}/members`);
    await page.click(`[data-testid="remove-${owner.id}"]`);
    const dialog = page.locator('[data-testid="confirm-dialog"]');
    await expect(dialog.locator("h2").textContent()).resolves.toMatch(/^Rimuovere .* da Org .*\?$/);
    await dialog.getByRole("button", { name: "Rimuovi" }).click();
    const alert = dialog.getByRole("alert");
    await alert.waitFor();
    const expected = ITALIAN_ERRORS.last_owner as string;
    expect(expected).toMatch(/organizzazione/);
    await expect(alert.textContent()).resolves.toBe(expected);
    await expect(dialog.getByRole("button", { name: "Annulla" }).count()).resolves.toBe(1);
    await context.close();
  });

  describe("the signed-in user's preferences over GraphQL", () => {
    const graphql = async (query: string, variables: Record<string, unknown>, auth: Record<string, string>) => {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-donata-organization": tenant.slug, ...auth },
        body: JSON.stringify({ query, variables }),
      });
      return {
        status: response.status,
        body: (await response.json()) as {
          data?: Record<string, { locale: string | null; organization_locale: string }> | null;
          errors?: { message: string; extensions?: { code?: string; errors?: { field: string }[] } }[];
        },
      };
    };
    const UPDATE = `mutation ($input: UserPreferencesInput!) { updateMyPreferences(input: $input) { locale organization_locale } }`;
    const READ = "{ myPreferences { locale organization_locale } }";

    it("reads and saves the member's language, forgets it with null, and refuses a language it does not speak", async () => {
      const user = await newUser(null, "member");
      const cookie = { cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}` };
      expect((await graphql(READ, {}, cookie)).body.data?.myPreferences).toEqual({
        locale: null,
        organization_locale: "it",
      });
      expect((await graphql(UPDATE, { input: { locale: "it" } }, cookie)).body.data?.updateMyPreferences).toEqual({
        locale: "it",
        organization_locale: "it",
      });
      expect(await savedLocale(user.id)).toBe("it");

      for (const locale of ["de", "IT", "it-IT", ""]) {
        const refused = await graphql(UPDATE, { input: { locale } }, cookie);
        expect(refused.body.data ?? null).toBeNull();
        expect(refused.body.errors?.[0]?.extensions?.code).toBe("invalid_request");
        expect(refused.body.errors?.[0]?.extensions?.errors?.[0]?.field).toBe("locale");
      }
      expect(await savedLocale(user.id)).toBe("it");

      // An absent locale changes nothing; null forgets the choice.
      expect((await graphql(UPDATE, { input: {} }, cookie)).body.data?.updateMyPreferences?.locale).toBe("it");
      expect((await graphql(UPDATE, { input: { locale: null } }, cookie)).body.data?.updateMyPreferences?.locale).toBe(
        null,
      );
      expect(await savedLocale(user.id)).toBeNull();
    });

    it("belongs to people: an application's token is refused", async () => {
      const refused = await graphql(READ, {}, { authorization: `Bearer ${tenant.token}` });
      expect(refused.body.errors?.[0]?.extensions?.code).toBe("insufficient_scope");
      const update = await graphql(UPDATE, { input: { locale: "en" } }, { authorization: `Bearer ${tenant.token}` });
      expect(update.body.errors?.[0]?.extensions?.code).toBe("insufficient_scope");
    });
  });
});
