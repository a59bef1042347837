import AxeBuilder from "@axe-core/playwright";
import { and, count, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supporters } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * The supporter editor in the admin panel (Debian's chromium, the real server): an owner creates a
 * supporter and edits one field of another, each read back from the database; a bad email is refused
 * under its input, by the panel's light check or by the server, and nothing is stored; Italian words;
 * a member sees neither New supporter nor Edit; axe finds nothing on the form in English or Italian.
 */
describe("admin panel: the supporter editor", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let member: string;

  const signIn = async (email: string, locale = "en-US"): Promise<Page> => {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const panel = (sub: string) => `${server.url}/admin/o/${tenant.slug}/${sub}`;

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  /** The `input` of every createSupporter / updateSupporter the page sends, in order. */
  const recordWrites = (page: Page) => {
    const writes: { operation: string; input: Record<string, unknown> }[] = [];
    page.on("request", (request) => {
      if (!request.url().endsWith("/admin/graphql/") || request.method() !== "POST") return;
      const body = request.postDataJSON() as { query: string; variables: { input?: Record<string, unknown> } };
      const operation = /mutation (CreateSupporter|UpdateSupporter)\b/.exec(body.query)?.[1];
      if (operation) writes.push({ operation, input: body.variables.input ?? {} });
    });
    return writes;
  };

  const row = async (id: number) =>
    (
      await server.database.db
        .select()
        .from(supporters)
        .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.id, id)))
    )[0];

  const supporterCount = async () =>
    (
      await server.database.db
        .select({ n: count() })
        .from(supporters)
        .where(eq(supporters.organizationId, tenant.organizationId))
    )[0]?.n;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    owner = `owner-${unique(6)}@example.test`;
    member = `member-${unique(6)}@example.test`;
    for (const [email, role] of [
      [owner, "owner"],
      [member, "member"],
    ] as const) {
      await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner creates a supporter from the list: the row holds every value entered and the supporter's page shows them", async () => {
    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const writes = recordWrites(page);
    await page.goto(panel("supporters"));
    await page.getByRole("link", { name: "New supporter" }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/new$`));
    await page.locator('[data-testid="supporter-form"]').waitFor();
    await expect(page.locator('[data-testid="supporter-form"] legend').allTextContents()).resolves.toEqual([
      "Name and business",
      "Contact",
      "Address",
      "Personal details",
      "Tags and note",
      "Consents",
    ]);
    expect(await axeViolations(page)).toEqual([]);

    const email = `ada-${unique(6)}@example.org`;
    await page.getByLabel("First name", { exact: true }).fill("Ada");
    await page.getByLabel("Last name", { exact: true }).fill("Lovelace");
    await page.getByLabel("Business name", { exact: true }).fill("Analytical Engines Ltd");
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Mobile", { exact: true }).fill("+39 333 123 4567");
    await page.getByLabel("Address", { exact: true }).fill("Via Roma 1");
    await page.getByLabel("Postal code", { exact: true }).fill("10121");
    await page.getByLabel("City", { exact: true }).fill("Torino");
    await page.getByLabel("Country", { exact: true }).fill("it");
    await page.getByLabel("Date of birth", { exact: true }).fill("1985-12-10");
    await page.getByLabel("Sex", { exact: true }).selectOption("FEMALE");
    await page.getByLabel("Tax code / SSN", { exact: true }).fill("LVLDAA85T50L219X");
    const tags = page.getByLabel("Tags", { exact: true });
    await tags.fill("volunteer");
    await tags.press("Enter");
    await tags.fill("major donor");
    await page.getByRole("button", { name: "Add tag" }).click();
    await tags.fill("newsletter");
    await tags.press("Enter");
    await page.getByRole("button", { name: "Remove tag newsletter" }).click();
    // A tag still being typed is kept on saving.
    await tags.fill("board");
    await expect(page.locator('[data-testid="supporter-tag-list"] .tag').count()).resolves.toBe(2);
    await page.getByLabel("Note", { exact: true }).fill("Met at the spring gala.\nPrefers email.");
    await page.getByLabel("Privacy policy accepted", { exact: true }).check();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole("button", { name: "Create supporter" }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/\\d+$`));
    await page.locator(".flash", { hasText: "Supporter created." }).waitFor();
    const id = Number(new URL(page.url()).pathname.split("/").at(-1));

    // Only what was filled in is sent: nothing blank, no consent not given.
    expect(writes).toEqual([
      {
        operation: "CreateSupporter",
        input: {
          first_name: "Ada",
          last_name: "Lovelace",
          business_name: "Analytical Engines Ltd",
          email,
          mobile: "+39 333 123 4567",
          address: "Via Roma 1",
          postal_code: "10121",
          city: "Torino",
          country: "IT",
          date_of_birth: "1985-12-10",
          sex: "FEMALE",
          ssn: "LVLDAA85T50L219X",
          note: "Met at the spring gala.\nPrefers email.",
          tags: ["volunteer", "major donor", "board"],
          privacy: true,
        },
      },
    ]);
    expect(await row(id)).toMatchObject({
      firstName: "Ada",
      lastName: "Lovelace",
      businessName: "Analytical Engines Ltd",
      email,
      phone: null,
      mobile: "+39 333 123 4567",
      address: "Via Roma 1",
      address2: null,
      postalCode: "10121",
      city: "Torino",
      country: "IT",
      dateOfBirth: "1985-12-10",
      sex: "FEMALE",
      ssn: "LVLDAA85T50L219X",
      vat: null,
      note: "Met at the spring gala.\nPrefers email.",
      tags: ["volunteer", "major donor", "board"],
      privacy: true,
      emailMarketing: null,
    });

    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Ada Lovelace");
    const profile = page.locator("#profile");
    await profile.getByRole("link", { name: email }).waitFor();
    await profile.getByText("Analytical Engines Ltd").waitFor();
    await profile.getByText("Via Roma 1, 10121 Torino, IT").waitFor();
    await profile.getByText("LVLDAA85T50L219X").waitFor();
    await profile.getByText("Female", { exact: true }).waitFor();
    await expect(profile.locator(".tag").allTextContents()).resolves.toEqual(["volunteer", "major donor", "board"]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("a bad email is refused under its input, by the panel's check and by the server's, focus on it, and nothing is stored", async () => {
    const before = await supporterCount();
    const page = await signIn(owner);
    const writes = recordWrites(page);
    await page.goto(panel("supporters/new"));
    await page.locator('[data-testid="supporter-form"]').waitFor();
    await page.getByLabel("First name", { exact: true }).fill("Grace");
    await page.getByLabel("City", { exact: true }).fill("Arlington");

    // No @: the panel's own light check, the server is not asked.
    await page.getByLabel("Email", { exact: true }).fill("grace.example.org");
    await page.getByRole("button", { name: "Create supporter" }).click();
    const emailError = page.locator('[data-field-error="email"]');
    await emailError.waitFor();
    await expect(emailError.textContent()).resolves.toBe("must be an email address, like donations@example.org");
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("supporter-email");
    expect(writes).toEqual([]);

    // An address without a domain: it passes the light check, the server refuses it on its field.
    await page.getByLabel("Email", { exact: true }).fill("grace@localhost");
    await page.getByLabel("Last name", { exact: true }).focus();
    await page.getByRole("button", { name: "Create supporter" }).click();
    await expect.poll(() => writes.length).toBe(1);
    await page.locator(".inline-error", { hasText: "Some fields need attention (1)." }).waitFor();
    await expect(emailError.textContent()).resolves.toBe("must be an email address, like donations@example.org");
    await expect(page.locator("[data-field-error]").count()).resolves.toBe(1);
    const input = page.locator("#supporter-email");
    await expect(input.getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(input.getAttribute("aria-describedby")).resolves.toBe("supporter-email-error");
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("supporter-email");
    expect(await axeViolations(page)).toEqual([]);
    expect(page.url()).toMatch(/\/supporters\/new$/);
    expect(await supporterCount()).toBe(before);

    // Neither a name nor an email: the server's rule, checked first in the panel.
    await page.getByLabel("First name", { exact: true }).fill("");
    await page.getByLabel("Email", { exact: true }).fill("");
    await page.getByRole("button", { name: "Create supporter" }).click();
    await expect.poll(() => emailError.textContent()).toBe("a name, a business name or an email is required");
    expect(writes).toHaveLength(1);
    expect(await supporterCount()).toBe(before);
    await page.context().close();
  });

  it("Edit changes the one field changed, a cleared field becomes null, and the rest of the row stays as it was", async () => {
    const supporter = await fakeSupporter(server.database.db, tenant.organizationId, {
      phone: "+39 011 555 0101",
      city: "Milano",
      address: "Corso Como 2",
      note: "Ask before calling.",
      tags: ["volunteer", "board"],
      sex: null,
      dateOfBirth: "1970-01-15",
      emailMarketing: false,
    });
    const before = await row(supporter.id);
    const page = await signIn(owner);
    const writes = recordWrites(page);
    await page.goto(panel(`supporters/${supporter.id}`));
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.waitForURL(new RegExp(`/supporters/${supporter.id}/edit$`));
    await page.locator('[data-testid="supporter-form"]').waitFor();
    await expect(page.getByLabel("City", { exact: true }).inputValue()).resolves.toBe("Milano");
    await expect(page.getByLabel("Date of birth", { exact: true }).inputValue()).resolves.toBe("1970-01-15");
    await expect(page.locator('[data-testid="supporter-tag-list"] .tag').count()).resolves.toBe(2);
    // Consents are the supporter page's own form.
    await expect(page.locator('[data-testid="supporter-consents"]').count()).resolves.toBe(0);

    await page.getByLabel("City", { exact: true }).fill("Torino");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(new RegExp(`/supporters/${supporter.id}$`));
    await page.locator(".flash", { hasText: "Supporter saved." }).waitFor();
    expect(writes).toEqual([{ operation: "UpdateSupporter", input: { city: "Torino" } }]);
    const after = await row(supporter.id);
    const { updateDate: _before, ...unchanged } = before ?? {};
    const { updateDate: _after, ...changed } = after ?? {};
    expect(changed).toEqual({ ...unchanged, city: "Torino" });
    await page.locator("#profile").getByText("Corso Como 2, Torino").waitFor();

    // Cleared: null is sent and stored; a removed tag leaves the list.
    await page.getByRole("link", { name: "Edit", exact: true }).click();
    await page.locator('[data-testid="supporter-form"]').waitFor();
    await page.getByLabel("Phone", { exact: true }).fill("");
    await page.getByRole("button", { name: "Remove tag board" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.locator(".flash", { hasText: "Supporter saved." }).waitFor();
    expect(writes[1]).toEqual({ operation: "UpdateSupporter", input: { phone: null, tags: ["volunteer"] } });
    expect(await row(supporter.id)).toMatchObject({
      ...unchanged,
      city: "Torino",
      phone: null,
      tags: ["volunteer"],
    });
    await page.context().close();
  });

  it("speaks Italian to an Italian browser, refusals included; axe finds nothing on the form in Italian", async () => {
    const before = await supporterCount();
    const page = await signIn(owner, "it-IT");
    await page.goto(panel("supporters"));
    await page.getByRole("link", { name: "Nuovo sostenitore" }).click();
    const form = page.locator('[data-testid="supporter-form"]');
    await form.waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Nuovo sostenitore");
    await expect(form.locator("legend").allTextContents()).resolves.toEqual([
      "Nome e azienda",
      "Recapiti",
      "Indirizzo",
      "Dati personali",
      "Etichette e nota",
      "Consensi",
    ]);
    for (const label of ["Nome", "Cognome", "Cellulare", "CAP", "Codice fiscale", "Partita IVA", "Etichette", "Nota"]) {
      await expect(page.getByLabel(label, { exact: true }).count()).resolves.toBe(1);
    }
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole("button", { name: "Crea sostenitore" }).click();
    const emailError = page.locator('[data-field-error="email"]');
    await expect(emailError.textContent()).resolves.toBe("serve un nome, una ragione sociale o un indirizzo email");

    await page.getByLabel("Cognome", { exact: true }).fill("Montessori");
    await page.getByLabel("Email", { exact: true }).fill("maria@localhost");
    await page.getByRole("button", { name: "Crea sostenitore" }).click();
    await page.locator(".inline-error", { hasText: "Alcuni campi richiedono attenzione (1)." }).waitFor();
    await expect(emailError.textContent()).resolves.toBe("deve essere un indirizzo email, come donazioni@esempio.org");
    expect(await axeViolations(page)).toEqual([]);
    expect(await supporterCount()).toBe(before);

    await page.getByLabel("Email", { exact: true }).fill("");
    await page.getByRole("button", { name: "Crea sostenitore" }).click();
    await page.locator(".flash", { hasText: "Sostenitore creato." }).waitFor();
    await page.getByRole("link", { name: "Modifica", exact: true }).click();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Modifica Montessori");
    await page.getByRole("button", { name: "Salva le modifiche" }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it("a member reads supporters without New supporter or Edit, and the editor's addresses tell them so", async () => {
    const supporter = await fakeSupporter(server.database.db, tenant.organizationId);
    const page = await signIn(member);
    await page.goto(panel("supporters"));
    await page.locator('[data-testid="download-csv"]').waitFor();
    await expect(page.getByRole("link", { name: "New supporter" }).count()).resolves.toBe(0);

    await page.goto(panel(`supporters/${supporter.id}`));
    await page.locator("#profile").waitFor();
    await expect
      .poll(() => page.locator("h1").textContent(), { timeout: 15_000 })
      .toBe(`${supporter.firstName} ${supporter.lastName}`);
    await expect(page.getByRole("link", { name: "Edit", exact: true }).count()).resolves.toBe(0);
    await expect(page.locator('[data-testid="edit-supporter"]').count()).resolves.toBe(0);

    for (const sub of ["supporters/new", `supporters/${supporter.id}/edit`]) {
      await page.goto(panel(sub));
      await page
        .locator(".notice", { hasText: "Your role (member) can read supporters but not change them." })
        .waitFor();
      await expect(page.locator('[data-testid="supporter-form"]').count()).resolves.toBe(0);
    }
    await page.context().close();
  });
});
