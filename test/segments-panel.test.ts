import AxeBuilder from "@axe-core/playwright";
import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { segments, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * Saved segments on the supporters table (Debian's chromium, the real server): an owner filters the
 * table, saves the filters as a segment, comes back to the bare table, chooses the segment and sees
 * only its rows, with a CSV link that carries its filters and answers the same rows, then deletes
 * it; an Italian member does the same in Italian words, is told a name is taken, and cannot delete
 * the owner's segment. axe finds nothing in either language, dialogs open or not.
 */
describe("admin panel: saved segments", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let member: string;
  let ownerId: number;
  const tag = `gala-${unique(6)}`;
  const italiansOfTag: number[] = [];
  const frenchOfTag: number[] = [];
  const allOfTag: number[] = [];
  let everyone = 0;

  const signIn = async (email: string, locale: string): Promise<Page> => {
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

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  const tableIds = async (page: Page) =>
    (await page
      .locator('[data-testid="table-supporters"] tbody tr')
      .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-id"))))) as number[];
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
  const storedSegments = () =>
    server.database.db.select().from(segments).where(eq(segments.organizationId, tenant.organizationId));
  const segmentSelect = (page: Page) => page.locator('[data-testid="segment-select"]');
  const selectedLabel = (page: Page) =>
    segmentSelect(page).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent ?? "");

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    owner = `owner-${unique(6)}@example.test`;
    member = `member-${unique(6)}@example.test`;
    for (const [email, role, locale] of [
      [owner, "owner", "en"],
      [member, "member", "it"],
    ] as const) {
      const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
      await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
      if (role === "owner") ownerId = user.id;
    }
    for (const [country, tags] of [
      ["IT", [tag]],
      ["IT", [tag, "volunteer"]],
      ["FR", [tag]],
      ["IT", ["volunteer"]],
      ["FR", []],
      ["IT", [tag]],
      ["DE", [tag]],
    ] as const) {
      const supporter = await fakeSupporter(server.database.db, tenant.organizationId, { country, tags: [...tags] });
      const tagged = (tags as readonly string[]).includes(tag);
      if (tagged && country === "IT") italiansOfTag.push(supporter.id);
      if (tagged && country === "FR") frenchOfTag.push(supporter.id);
      if (tagged) allOfTag.push(supporter.id);
      everyone++;
    }
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner saves the filtered table as a segment, chooses it on the bare table, exports it and deletes it", async () => {
    const page = await signIn(owner, "en-US");
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const supporters = `${server.url}/admin/o/${tenant.slug}/supporters`;
    await page.goto(supporters);
    await page.locator('[data-testid="table-supporters"]').waitFor();
    await expect.poll(() => tableIds(page).then((ids) => ids.length)).toBe(everyone);
    await expect(selectedLabel(page)).resolves.toBe("No segment");
    await expect(page.getByRole("button", { name: "Save as segment…" }).isDisabled()).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    // Filter the table by hand.
    await page.fill("#filter-country", "IT");
    await page.fill("#filter-tag", tag);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => tableIds(page).then(sorted)).toEqual(sorted(italiansOfTag));

    // Save the filters as a segment.
    await page.getByRole("button", { name: "Save as segment…" }).click();
    const dialog = page.getByRole("dialog", { name: "Save these filters as a segment" });
    await dialog.waitFor();
    await expect(dialog.locator('[data-testid="segment-filters"] li').allTextContents()).resolves.toEqual([
      "Country: IT",
      `Tag: ${tag}`,
    ]);
    expect(await axeViolations(page)).toEqual([]);
    // A name is needed.
    await dialog.getByRole("button", { name: "Save segment" }).click();
    await dialog.getByText("Give the segment a name.").waitFor();
    await dialog.getByLabel("Name").fill("Italian gala guests");
    await dialog.getByRole("button", { name: "Save segment" }).click();
    await page.getByText("Saved the segment “Italian gala guests”.").waitFor();
    await expect(dialog.count()).resolves.toBe(0);
    await expect.poll(() => selectedLabel(page)).toBe("Italian gala guests");
    const [saved] = await storedSegments();
    expect(saved).toMatchObject({
      collection: "supporters",
      name: "Italian gala guests",
      filters: { country: "IT", tag },
      createdBy: ownerId,
    });

    // Back on the bare table after a reload, choosing the segment brings its filters and rows back.
    await page.goto(supporters);
    await expect.poll(() => tableIds(page).then((ids) => ids.length)).toBe(everyone);
    await expect.poll(() => selectedLabel(page)).toBe("No segment");
    await segmentSelect(page).selectOption({ label: "Italian gala guests" });
    await expect.poll(() => tableIds(page).then(sorted)).toEqual(sorted(italiansOfTag));
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({ country: "IT", tag });
    await expect(page.locator("#filter-country").inputValue()).resolves.toBe("IT");
    await expect(page.locator("#filter-tag").inputValue()).resolves.toBe(tag);

    // The CSV link carries the segment's filters, and the file holds the same rows.
    const href = (await page.locator('[data-testid="download-csv"]').getAttribute("href")) ?? "";
    const link = new URL(href, server.url);
    expect(link.pathname).toBe("/admin/export/supporters.csv");
    expect(Object.fromEntries(link.searchParams)).toEqual({ organization: tenant.slug, country: "IT", tag });
    const csv = await page.request.get(link.toString());
    expect(csv.status()).toBe(200);
    const rows = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    expect(sorted(rows.map((row) => Number(row.id)))).toEqual(sorted(italiansOfTag));
    expect(await axeViolations(page)).toEqual([]);

    // Delete it: the table keeps its filters, the segment is gone for everyone.
    await page.getByRole("button", { name: "Delete segment" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete the segment “Italian gala guests”?" });
    await confirm.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole("button", { name: "Delete" }).click();
    await page.getByText("Deleted the segment “Italian gala guests”.").waitFor();
    await expect.poll(() => segmentSelect(page).locator("option").allTextContents()).toEqual(["No segment"]);
    expect(await storedSegments()).toEqual([]);
    expect(sorted(await tableIds(page))).toEqual(sorted(italiansOfTag));
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("an Italian member saves a segment in Italian, is told a name is taken, and deletes only their own", async () => {
    // The owner's segment, which the member may choose but not delete.
    await server.database.db.insert(segments).values({
      organizationId: tenant.organizationId,
      collection: "supporters",
      name: "Del titolare",
      filters: { tag },
      createdBy: ownerId,
    });
    const page = await signIn(member, "it-IT");
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters?country=FR&tag=${tag}`);
    await expect.poll(() => tableIds(page).then(sorted)).toEqual(sorted(frenchOfTag));
    await expect.poll(() => selectedLabel(page)).toBe("Nessun segmento");
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole("button", { name: "Salva come segmento…" }).click();
    const dialog = page.getByRole("dialog", { name: "Salva questi filtri come segmento" });
    await dialog.waitFor();
    await expect(dialog.locator('[data-testid="segment-filters"] li').allTextContents()).resolves.toEqual([
      "Paese: FR",
      `Etichetta: ${tag}`,
    ]);
    // A name another segment of the table has, in another case, is refused in Italian.
    await dialog.getByLabel("Nome").fill("DEL TITOLARE");
    await dialog.getByRole("button", { name: "Salva segmento" }).click();
    await dialog.getByText("Un altro segmento di questa tabella ha già questo nome.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByLabel("Nome").fill("Ospiti francesi");
    await dialog.getByRole("button", { name: "Salva segmento" }).click();
    await page.getByText("Segmento «Ospiti francesi» salvato.").waitFor();
    await expect.poll(() => selectedLabel(page)).toBe("Ospiti francesi");
    await expect(segmentSelect(page).locator("option").allTextContents()).resolves.toEqual([
      "Nessun segmento",
      "Del titolare",
      "Ospiti francesi",
    ]);

    // The owner's segment: chosen, its rows shown, but no delete for a member.
    await segmentSelect(page).selectOption({ label: "Del titolare" });
    await expect.poll(() => tableIds(page).then(sorted)).toEqual(sorted(allOfTag));
    await expect(page.getByRole("button", { name: "Elimina segmento" }).count()).resolves.toBe(0);
    const href = (await page.locator('[data-testid="download-csv"]').getAttribute("href")) ?? "";
    expect(Object.fromEntries(new URL(href, server.url).searchParams)).toEqual({ organization: tenant.slug, tag });

    // Their own: deleted after confirming in Italian.
    await segmentSelect(page).selectOption({ label: "Ospiti francesi" });
    await expect.poll(() => tableIds(page).then(sorted)).toEqual(sorted(frenchOfTag));
    await page.getByRole("button", { name: "Elimina segmento" }).click();
    const confirm = page.getByRole("dialog", { name: "Eliminare il segmento «Ospiti francesi»?" });
    await confirm.getByText("Il segmento viene eliminato per tutti; la tabella mantiene i filtri attuali.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole("button", { name: "Elimina", exact: true }).click();
    await page.getByText("Segmento «Ospiti francesi» eliminato.").waitFor();
    await expect
      .poll(() => segmentSelect(page).locator("option").allTextContents())
      .toEqual(["Nessun segmento", "Del titolare"]);
    expect((await storedSegments()).map((row) => row.name)).toEqual(["Del titolare"]);
    // Choosing no segment shows the whole table again.
    await segmentSelect(page).selectOption({ label: "Nessun segmento" });
    await expect.poll(() => tableIds(page).then((ids) => ids.length)).toBe(everyone);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
