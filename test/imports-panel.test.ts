import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import AxeBuilder from "@axe-core/playwright";
import { asc, count, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imports, supporters, users } from "../src/db/schema.js";
import { startImportRunner } from "../src/jobs/import.job.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium, signInToPanel } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";
const GIVEBUTTER = readFileSync(new URL("./fixtures/import/givebutter-contacts.csv", import.meta.url));

/**
 * The Imports page in chromium against the real server, with the worker's import runner: a Givebutter
 * export previewed and mapped, a dry run that writes nothing, the import with its progress bar, the
 * results as CSV; in English and Italian, axe clean.
 */
describe("admin panel: imports", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let italian: Tenant;
  let runners: { stop(): Promise<void> }[] = [];

  const signIn = async (locale: "en" | "it", role: "owner" | "admin" | "member" = "owner", org = tenant) => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: org.slug, role });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return signInToPanel(browser, { url: server.url, email, password: PASSWORD, organization: org.slug });
  };
  const axe = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map((v) => v.id);
  const supportersOf = (organizationId: number) =>
    server.database.db
      .select()
      .from(supporters)
      .where(eq(supporters.organizationId, organizationId))
      .orderBy(asc(supporters.id));
  const importCount = async (organizationId: number) =>
    (await server.database.db.select({ n: count() }).from(imports).where(eq(imports.organizationId, organizationId)))[0]
      ?.n;
  const fieldOf = (page: Page, column: string) =>
    page.locator(`[data-testid="import-mapping"] tr[data-column="${column}"] select`);
  const stat = (page: Page, testId: string) => page.locator(`[data-testid="${testId}"] .stat-value`).textContent();

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { timeZone: "Europe/Rome", currency: "EUR" });
    italian = await fakeTenant(server.database.db, { timeZone: "Europe/Rome", currency: "EUR" });
    // The worker's import runner, for this file's organizations (others run their own beside it): one
    // each, so that each look for queued imports reads one shard on a cluster.
    runners = [tenant, italian].map((org) =>
      startImportRunner(server.database.db, {
        intervalSeconds: 0.2,
        organizationIds: [org.organizationId],
        onError: (error) => console.error(error),
      }),
    );
  });
  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await browser?.close();
    await server?.close();
  });

  it("maps a Givebutter export over its first rows, checks it without writing, imports it with a progress bar, and gives the results as CSV", async () => {
    const page = await signIn("en");
    await page.getByRole("link", { name: "Supporters", exact: true }).click();
    await page.locator('[data-testid="supporter-import-link"]').click();
    await page.waitForURL(/\/imports$/);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Imports");
    await page.getByText("No file imported yet.").waitFor();
    await expect(page.locator("#sidebar a", { hasText: "Imports" }).getAttribute("aria-current")).resolves.toBe("page");

    await page.getByLabel("Exported from").selectOption("givebutter");
    await page.getByLabel("CSV file").setInputFiles({ name: "contacts.csv", mimeType: "text/csv", buffer: GIVEBUTTER });
    await page.locator('[data-testid="import-mapping"]').waitFor();
    // The preset's mapping, over the file's first rows.
    await expect(fieldOf(page, "Givebutter Contact ID").inputValue()).resolves.toBe("external_id");
    await expect(fieldOf(page, "Primary Email").inputValue()).resolves.toBe("email");
    await expect(fieldOf(page, "Title").inputValue()).resolves.toBe("job");
    await expect(fieldOf(page, "Total Contributions").inputValue()).resolves.toBe("ignore");
    await expect(
      page.locator('[data-testid="import-mapping"] tr[data-column="First Name"] td.cell-wrap').allTextContents(),
    ).resolves.toEqual(["Maria", "Luca", "—", "Giulia", "Maria"]);
    await expect(page.locator('[data-testid="import-mapping"] thead th').allTextContents()).resolves.toEqual([
      "Column",
      "Field",
      "Line 2",
      "Line 3",
      "Line 4",
      "Line 5",
      "Line 6",
    ]);
    // One field fills one column: the employer is the job now, the title is left out.
    await page.getByLabel("Field for the column Employer").selectOption("job");
    await expect(fieldOf(page, "Title").inputValue()).resolves.toBe("ignore");
    expect(await axe(page)).toEqual([]);

    await page.locator('[data-testid="import-check"]').click();
    const checkOutcome = page.locator('[data-testid="import-check-outcome"]');
    await checkOutcome.waitFor({ timeout: 30_000 });
    await expect(checkOutcome.locator(".flash").textContent()).resolves.toBe(
      "Dry run done: 5 rows checked, nothing written.",
    );
    await expect(stat(page, "import-check-outcome-created")).resolves.toBe("3");
    await expect(stat(page, "import-check-outcome-refused")).resolves.toBe("2");
    await expect(page.locator('[data-testid="import-check-outcome-created"] .stat-label').textContent()).resolves.toBe(
      "To create",
    );
    const refused = await page.locator('[data-testid="import-check-outcome-refused"] tbody tr').allTextContents();
    expect(refused).toContain('5Country"Atlantis" is not a country (a name or an ISO code such as IT)');
    expect(refused).toContain("6external_idthe same external id as line 2");
    await expect(
      page.locator('[data-testid="import-check-progress"] [role="progressbar"]').getAttribute("aria-valuenow"),
    ).resolves.toBe("100");
    // Nothing written: no supporter, the file let go.
    expect(await supportersOf(tenant.organizationId)).toEqual([]);
    expect(await axe(page)).toEqual([]);

    await page.getByRole("button", { name: "Import 5 rows" }).click();
    const progress = page.locator('[data-testid="import-run-progress"] [role="progressbar"]');
    await progress.waitFor();
    await expect.poll(() => progress.getAttribute("aria-valuenow"), { timeout: 30_000 }).toBe("100");
    await expect(progress.getAttribute("aria-valuetext")).resolves.toBe("5 of 5 rows");
    const runOutcome = page.locator('[data-testid="import-run-outcome"]');
    await runOutcome.waitFor({ timeout: 30_000 });
    await expect(runOutcome.locator(".flash").textContent()).resolves.toBe("Import done: 5 rows.");
    await expect(stat(page, "import-run-outcome-created")).resolves.toBe("3");
    await expect(stat(page, "import-run-outcome-refused")).resolves.toBe("2");
    const created = await supportersOf(tenant.organizationId);
    expect(created.map((row) => [row.externalId, row.firstName, row.lastName, row.businessName])).toEqual([
      ["GB-1001", "Maria", "Rossi", null],
      ["GB-1002", "Luca", "Bianchi", null],
      ["GB-1003", null, null, "Fondazione Aurora"],
    ]);
    // The changed mapping held: the title ("Teacher") was left out.
    expect(created[0]?.job).toBeNull();

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.locator('[data-testid="import-run-outcome-download"]').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^contacts-import-\d+-results\.csv$/);
    const lines = (await readFile(await download.path(), "utf8")).trim().split("\r\n");
    expect(lines[0]).toBe("line,external_id,outcome,supporter_id,problems");
    expect(lines[1]).toBe(`2,GB-1001,created,${created[0]?.id},`);
    expect(lines[4]).toMatch(/^5,GB-1004,refused,,"Date of Birth: /);
    expect(lines).toHaveLength(6);

    // Both runs are listed, newest first.
    const history = page.locator('[data-testid="table-imports"] tbody tr');
    await expect.poll(() => history.count(), { timeout: 15_000 }).toBe(2);
    await expect(history.nth(0).textContent()).resolves.toContain("Supporters · import");
    await expect(history.nth(0).textContent()).resolves.toContain("3 · 0 · 0 · 2");
    await expect(history.nth(1).textContent()).resolves.toContain("Supporters · dry run");
    expect(await axe(page)).toEqual([]);
    await page.context().close();
  });

  it("speaks Italian: a file of another platform mapped by hand, its refused row by line, column and reason; a member may not import", async () => {
    const org = italian;
    const page = await signIn("it", "admin", org);
    await page.getByRole("link", { name: "Importazioni", exact: true }).click();
    await page.waitForURL(/\/imports$/);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Importazioni");
    await page.getByText("Nessun file importato finora.").waitFor();

    const file = "Codice;Posta elettronica;Nome;Città\nX1;anna@example.org;Anna;Forlì\nX2;non-una-email;Bruno;Bari\n";
    await page
      .getByLabel("File CSV")
      .setInputFiles({ name: "soci.csv", mimeType: "text/csv", buffer: Buffer.from(file, "utf8") });
    await page.locator('[data-testid="import-mapping"]').waitFor();
    await expect(page.locator('[data-testid="import-mapping-problems"]').textContent()).resolves.toContain(
      "no column names a supporter's email",
    );
    await page
      .getByLabel("Campo per la colonna Codice")
      .selectOption({ label: "ID sull’altra piattaforma (external_id)" });
    await page.getByLabel("Campo per la colonna Posta elettronica").selectOption({ label: "Email (email)" });
    await page.getByLabel("Campo per la colonna Nome").selectOption({ label: "Nome (first_name)" });
    await expect(fieldOf(page, "Città").inputValue()).resolves.toBe("ignore");
    expect(await axe(page)).toEqual([]);

    await page.getByRole("button", { name: "Verifica (simulazione)" }).click();
    const outcome = page.locator('[data-testid="import-check-outcome"]');
    await outcome.waitFor({ timeout: 30_000 });
    await expect(outcome.locator(".flash").textContent()).resolves.toBe(
      "Simulazione completata: 2 righe controllate, non è stato scritto nulla.",
    );
    await expect(page.locator('[data-testid="import-check-outcome-created"] .stat-label').textContent()).resolves.toBe(
      "Da creare",
    );
    await expect(stat(page, "import-check-outcome-created")).resolves.toBe("1");
    await expect(stat(page, "import-check-outcome-refused")).resolves.toBe("1");
    await expect(
      page.locator('[data-testid="import-check-outcome-refused"] thead th').allTextContents(),
    ).resolves.toEqual(["Riga", "Colonna", "Motivo"]);
    await expect(
      page.locator('[data-testid="import-check-outcome-refused"] tbody tr td').first().textContent(),
    ).resolves.toBe("3");
    await expect(
      page.locator('[data-testid="import-check-outcome-refused"] tbody tr td').nth(1).textContent(),
    ).resolves.toBe("Posta elettronica");
    await expect(page.getByRole("button", { name: "Importa 2 righe" }).count()).resolves.toBe(1);
    expect(await supportersOf(org.organizationId)).toEqual([]);
    const history = page.locator('[data-testid="table-imports"] tbody tr');
    await expect.poll(() => history.count(), { timeout: 15_000 }).toBe(1);
    await expect(history.first().textContent()).resolves.toContain("Sostenitori · simulazione");
    await expect(history.first().textContent()).resolves.toContain("Completata");
    expect(await axe(page)).toEqual([]);
    await page.context().close();

    // A member reads why not; nothing to upload.
    const memberPage = await signIn("it", "member", org);
    await memberPage.goto(`${server.url}/admin/o/${org.slug}/imports`);
    await memberPage.locator('[data-testid="imports-read-only"]').waitFor();
    await expect(memberPage.locator('[data-testid="imports-read-only"]').textContent()).resolves.toBe(
      "Il tuo ruolo (membro) non può importare file: chiedi a un proprietario o a un amministratore.",
    );
    await expect(memberPage.locator("#import-file-input").count()).resolves.toBe(0);
    expect(await axe(memberPage)).toEqual([]);
    expect(await importCount(org.organizationId)).toBe(1);
    await memberPage.context().close();
  });
});
