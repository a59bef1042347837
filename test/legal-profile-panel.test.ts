import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { images, organizationProfiles, organizations, users } from "../src/db/schema.js";
import { updateLegalProfile } from "../src/modules/legal-profile/legal-profile.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * Settings → Legal profile in the admin panel (Debian's chromium, the real server): what receipts
 * print, checked by the server field by field; what they still need; Italian; read-only for members.
 */
describe("admin panel: Settings → Legal profile", () => {
  let server: TestServer;
  let browser: Browser;

  /** A user of the tenant with the language they saved (none: null). */
  const newUser = async (tenant: Tenant, role: "owner" | "admin" | "member", locale: "en" | "it" | null = null) => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return email;
  };

  /** Signs in from an English-speaking browser; returns on the organization's dashboard. */
  const signIn = async (tenant: Tenant, email: string): Promise<Page> => {
    const context = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const profileRow = async (tenant: Tenant) =>
    (
      await server.database.db
        .select()
        .from(organizationProfiles)
        .where(eq(organizationProfiles.organizationId, tenant.organizationId))
    )[0];

  /** The profile through the panel's own GraphQL endpoint, with the page's session. */
  const graphqlFromPage = (page: Page, slug: string, query: string, variables: Record<string, unknown> = {}) =>
    page.evaluate(
      async ({ slug, query, variables }) => {
        const response = await fetch("/admin/graphql/", {
          method: "POST",
          headers: { "content-type": "application/json", "x-donata-organization": slug },
          body: JSON.stringify({ query, variables }),
        });
        return response.json();
      },
      { slug, query, variables },
    );

  /** A complete Italian profile, saved through the service. */
  const italianProfile = (tenant: Tenant) =>
    updateLegalProfile(
      server.database.db,
      tenant.organizationId,
      {
        legal_name: "Fondazione Esempio ETS",
        legal_form: "Fondazione",
        address_line1: "Via Roma 1",
        postal_code: "00184",
        city: "Roma",
        province: "RM",
        country: "IT",
        tax_code: "97735020584",
        runts_number: "123456",
        ets_status: "ets",
        website: "https://esempio.example",
        privacy_policy_url: "https://esempio.example/privacy",
      },
      undefined,
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner fills it: a wrong codice fiscale is refused on its field and nothing is saved; corrected, it is saved, shown after a reload, and receipts need nothing more", async () => {
    const tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    const owner = await newUser(tenant, "owner");
    const page = await signIn(tenant, owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));

    // Reached from Settings: its page links it, and so does the navigation under Settings.
    await page.locator("#sidebar").getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("link", { name: "legal profile", exact: true }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/settings/legal$`));
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Legal profile");
    await expect(
      page.locator("#sidebar").getByRole("link", { name: "Legal profile", exact: true }).getAttribute("aria-current"),
    ).resolves.toBe("page");
    expect(await page.title()).toMatch(/^Legal profile · Org .* · Donata$/);
    await expect(page.locator('[data-testid="legal-profile-issued-hint"]').textContent()).resolves.toBe(
      "Receipts already issued keep the profile they were issued with: a change here applies to the next ones.",
    );
    // What receipts still need (the tenant has its privacy notice only).
    const missing = page.locator('[data-testid="legal-profile-missing"]');
    await expect(missing.locator("p").textContent()).resolves.toBe("Receipts cannot be complete yet. Still missing:");
    await missing.locator("li").first().waitFor();
    await expect(missing.locator("li").allTextContents()).resolves.toEqual([
      "Legal name",
      "Address",
      "Postal code",
      "City",
      "Country",
    ]);
    await page.locator("legend").first().waitFor();
    await expect(page.locator("legend").allTextContents()).resolves.toEqual([
      "Logo",
      "Identity",
      "Registered seat",
      "Tax identifiers",
      "Receipts",
      "How receipts are issued",
      "Bank transfer",
    ]);
    await expect(page.getByLabel("Privacy policy", { exact: true }).inputValue()).resolves.toBe(
      "https://charity.example.org/privacy",
    );
    // The bank account is Settings → Bank transfer's: no second form of it here.
    await expect(page.locator("#legal-iban, [name=iban]").count()).resolves.toBe(0);
    await expect(page.locator('[data-testid="legal-profile-bank"]').textContent()).resolves.toContain(
      "No bank account yet.",
    );

    await page.getByLabel("Legal name", { exact: true }).fill("Fondazione Esempio ETS");
    await page.getByLabel("Legal form", { exact: true }).fill("Fondazione");
    await page.getByLabel("Contact email", { exact: true }).fill("ciao@esempio.example");
    await page.getByLabel("Address", { exact: true }).fill("Via Roma 1");
    await page.getByLabel("Postal code", { exact: true }).fill("00184");
    await page.getByLabel("City", { exact: true }).fill("Roma");
    await page.getByLabel("Province", { exact: true }).fill("RM");
    await page.getByLabel("Country", { exact: true }).fill("it");
    await page.getByLabel("Tax code (codice fiscale)", { exact: true }).fill("97735020585");
    await page.getByLabel("RUNTS registration number", { exact: true }).fill("123456");
    await page.getByLabel("ETS status", { exact: true }).selectOption("odv");
    await page.getByLabel("One statement per donor and year", { exact: true }).check();
    await page.getByLabel("Receipt legal text", { exact: true }).fill("Grazie per il tuo sostegno.");
    await page.click('[data-testid="save-legal-profile"]');

    await expect(page.locator('[data-field-error="tax_code"]').textContent()).resolves.toBe(
      "its check digit does not match",
    );
    await expect(page.locator("#legal-tax_code").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(page.locator('[data-testid="legal-profile-form"] .inline-error').textContent()).resolves.toBe(
      "Nothing was saved: 1 field needs attention.",
    );
    await expect(page.locator("[data-field-error]").count()).resolves.toBe(1);
    // The field in trouble has the focus; what was typed stays.
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("legal-tax_code");
    await expect(page.getByLabel("Legal name", { exact: true }).inputValue()).resolves.toBe("Fondazione Esempio ETS");
    expect(await profileRow(tenant)).toMatchObject({
      legalName: null,
      addressLine1: null,
      country: null,
      taxCode: null,
      etsStatus: null,
      receiptMode: "each_payment",
    });
    const email = await server.database.db
      .select({ email: organizations.email })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    expect(email[0]?.email).toBeNull();

    await page.getByLabel("Tax code (codice fiscale)", { exact: true }).fill("97735020584");
    await page.click('[data-testid="save-legal-profile"]');
    await page.locator(".flash", { hasText: "Legal profile saved." }).waitFor();
    await page.locator('[data-testid="legal-profile-missing"]').waitFor({ state: "detached" });
    await expect(page.locator('[data-testid="legal-profile-complete"]').textContent()).resolves.toBe(
      "The profile has everything receipts need.",
    );
    await expect(page.locator("[data-field-error]").count()).resolves.toBe(0);
    expect(await profileRow(tenant)).toMatchObject({
      legalName: "Fondazione Esempio ETS",
      legalForm: "Fondazione",
      addressLine1: "Via Roma 1",
      postalCode: "00184",
      city: "Roma",
      province: "RM",
      country: "IT",
      taxCode: "97735020584",
      runtsNumber: "123456",
      etsStatus: "odv",
      receiptMode: "yearly_statement",
      receiptLegalText: "Grazie per il tuo sostegno.",
      privacyPolicyUrl: "https://charity.example.org/privacy",
    });
    const saved = await graphqlFromPage(page, tenant.slug, "{ legalProfile { contact_email missing } }");
    expect(saved).toEqual({ data: { legalProfile: { contact_email: "ciao@esempio.example", missing: [] } } });

    // After a reload, the form shows what was saved.
    await page.reload();
    await page.locator('[data-testid="legal-profile-form"]').waitFor();
    await expect(page.getByLabel("Legal name", { exact: true }).inputValue()).resolves.toBe("Fondazione Esempio ETS");
    await expect(page.getByLabel("Country", { exact: true }).inputValue()).resolves.toBe("IT");
    await expect(page.getByLabel("Tax code (codice fiscale)", { exact: true }).inputValue()).resolves.toBe(
      "97735020584",
    );
    await expect(page.getByLabel("ETS status", { exact: true }).inputValue()).resolves.toBe("odv");
    await expect(page.getByLabel("One statement per donor and year", { exact: true }).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel("Receipt legal text", { exact: true }).inputValue()).resolves.toBe(
      "Grazie per il tuo sostegno.",
    );
    await expect(page.getByLabel("Contact email", { exact: true }).inputValue()).resolves.toBe("ciao@esempio.example");
    await expect(page.locator('[data-testid="legal-profile-missing"]').count()).resolves.toBe(0);

    // Blank clears: without a codice fiscale an Italian organization's receipts need it again.
    await page.getByLabel("Tax code (codice fiscale)", { exact: true }).fill("");
    await page.click('[data-testid="save-legal-profile"]');
    await page.locator(".flash", { hasText: "Legal profile saved." }).waitFor();
    await page.locator('[data-testid="legal-profile-missing"] li').first().waitFor();
    await expect(page.locator('[data-testid="legal-profile-missing"] li').allTextContents()).resolves.toEqual([
      "Tax code (codice fiscale)",
    ]);
    expect((await profileRow(tenant))?.taxCode).toBeNull();

    // The bank account's hint leads to its form in Settings.
    await page.locator('[data-testid="legal-profile-bank"]').getByRole("link").click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/settings#bank-transfer$`));
    await page.locator('[data-testid="bank-transfer"]').waitFor();
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("speaks Italian to a user who chose it", async () => {
    const tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    await italianProfile(tenant);
    const admin = await newUser(tenant, "admin", "it");
    const page = await signIn(tenant, admin);
    await page.locator("#sidebar").getByRole("link", { name: "Profilo legale", exact: true }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/settings/legal$`));
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Profilo legale");
    // The form appears once the profile is read; allTextContents does not wait for it.
    await page.locator("legend").first().waitFor();
    await expect(page.locator("legend").allTextContents()).resolves.toEqual([
      "Logo",
      "Identità",
      "Sede legale",
      "Identificativi fiscali",
      "Ricevute",
      "Come si emettono le ricevute",
      "Bonifico bancario",
    ]);
    await expect(page.getByLabel("Codice fiscale", { exact: true }).inputValue()).resolves.toBe("97735020584");
    await expect(page.getByLabel("Numero di iscrizione al RUNTS", { exact: true }).inputValue()).resolves.toBe(
      "123456",
    );
    await expect(page.getByLabel("Denominazione o ragione sociale", { exact: true }).inputValue()).resolves.toBe(
      "Fondazione Esempio ETS",
    );
    await expect(
      page.getByLabel("Qualifica ETS", { exact: true }).locator("option:checked").textContent(),
    ).resolves.toBe("Ente del Terzo settore (ETS)");
    await expect(page.locator('[data-testid="legal-profile-issued-hint"]').textContent()).resolves.toBe(
      "Le ricevute già emesse mantengono il profilo con cui sono state emesse: una modifica vale per le successive.",
    );
    await expect(page.locator('[data-testid="legal-profile-complete"]').textContent()).resolves.toBe(
      "Il profilo contiene tutto ciò che serve alle ricevute.",
    );

    // A refusal: the summary in Italian, the field's problem under it, nothing saved.
    await page.getByLabel("Partita IVA", { exact: true }).fill("12345678901");
    await page.getByRole("button", { name: "Salva il profilo legale" }).click();
    await page.locator('[data-field-error="vat_number"]').waitFor();
    // The field's problem in the panel's language, by its code.
    await expect(page.locator('[data-field-error="vat_number"]').textContent()).resolves.toBe(
      "la cifra di controllo non corrisponde",
    );
    await expect(page.locator('[data-testid="legal-profile-form"] .inline-error').textContent()).resolves.toBe(
      "Non è stato salvato nulla: 1 campo richiede attenzione.",
    );
    expect((await profileRow(tenant))?.vatNumber).toBeNull();
    await page.context().close();
  });

  it("an owner uploads the logo from a file, sees a refusal of a file that is no image, and removes it; both languages pass axe", async () => {
    const tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    const owner = await newUser(tenant, "owner");
    const page = await signIn(tenant, owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings/legal`);
    const card = page.locator('[data-testid="legal-profile-logo"]');
    await expect(card.locator('[data-testid="logo-none"]').textContent()).resolves.toMatch(/^No logo yet/);

    // A text file named like a PNG: the server reads the bytes and refuses; nothing is stored.
    await page.getByLabel("Upload a logo").setInputFiles({
      name: "logo.png",
      mimeType: "image/png",
      buffer: Buffer.from("not a picture at all"),
    });
    await expect(card.locator(".inline-error").textContent()).resolves.toMatch(/cannot be read as an image/);
    const stored = () =>
      server.database.db.select().from(images).where(eq(images.organizationId, tenant.organizationId));
    await expect(stored()).resolves.toEqual([]);

    const logo = await sharp({ create: { width: 800, height: 300, channels: 4, background: "#0a7d52" } })
      .png()
      .toBuffer();
    await page.getByLabel("Upload a logo").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: logo });
    await page.locator(".flash", { hasText: "Logo uploaded." }).waitFor();
    const preview = card.getByRole("img", { name: "The current logo" });
    await expect(preview.getAttribute("src")).resolves.toMatch(
      new RegExp(`^${server.url}/images/${tenant.organizationId}/img_[\\w-]+/512\\.png$`),
    );
    // The browser loaded it: its natural width is the 512-pixel copy's.
    await expect.poll(() => preview.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(512);
    await expect(stored()).resolves.toHaveLength(1);
    let axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);

    await card.getByRole("button", { name: "Remove logo" }).click();
    // The flash still says "Logo uploaded." until the removal is answered: wait for the new words.
    await page.locator(".flash", { hasText: "Logo removed." }).waitFor();
    await card.locator('[data-testid="logo-none"]').waitFor();
    const [row] = await server.database.db
      .select({ logoUrl: organizations.logoUrl })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    expect(row?.logoUrl).toBeNull();

    // In Italian, through the switcher's saved choice.
    await server.database.db.update(users).set({ locale: "it" }).where(eq(users.email, owner));
    await page.reload();
    await expect(card.locator("legend").textContent()).resolves.toBe("Logo");
    await expect(card.getByLabel("Carica un logo").count()).resolves.toBe(1);
    axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
    expect(axe.violations.map((violation) => violation.id)).toEqual([]);
    await page.context().close();
  });

  it("is read-only for a member, whom the API refuses too", async () => {
    const tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    await italianProfile(tenant);
    const member = await newUser(tenant, "member");
    const page = await signIn(tenant, member);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings/legal`);
    await page.locator('[data-testid="legal-profile-form"]').waitFor();
    await expect(page.locator('[data-testid="legal-profile-read-only"]').textContent()).resolves.toBe(
      "Only owners and admins can change these settings.",
    );
    await expect(page.locator('[data-testid="save-legal-profile"]').count()).resolves.toBe(0);
    const legalName = page.getByLabel("Legal name", { exact: true });
    await expect(legalName.inputValue()).resolves.toBe("Fondazione Esempio ETS");
    await expect(legalName.getAttribute("readonly")).resolves.toBe("");
    const editable = await page
      .locator('[data-testid="legal-profile-form"]')
      .evaluate((form) =>
        [
          ...form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(
            "input, select, textarea",
          ),
        ]
          .filter((control) => !control.disabled && !(control as HTMLInputElement).readOnly)
          .map((control) => control.name),
      );
    expect(editable).toEqual([]);
    const refused = await graphqlFromPage(
      page,
      tenant.slug,
      "mutation($input: LegalProfileInput!) { updateLegalProfile(input: $input) { legal_name } }",
      { input: { legal_name: "Someone else" } },
    );
    // A session of a member: their role does not give organization:manage.
    expect(refused.errors?.[0]?.extensions?.code).toBe("insufficient_scope");
    expect((await profileRow(tenant))?.legalName).toBe("Fondazione Esempio ETS");
    await page.context().close();
  });
});
