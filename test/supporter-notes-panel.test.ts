import AxeBuilder from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supporterNotes, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * The Notes section of a supporter's page (Debian's chromium, the real server): an owner adds a note
 * and sees it with their name and the date in the organization's time zone; an Italian member sees
 * the section in Italian, adds one, may delete their own (after confirming) but not the owner's; axe
 * finds nothing in either language.
 */
describe("admin panel: supporter notes", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let member: string;
  let supporterId: number;

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

  const storedNotes = () =>
    server.database.db
      .select()
      .from(supporterNotes)
      .where(
        and(eq(supporterNotes.organizationId, tenant.organizationId), eq(supporterNotes.supporterId, supporterId)),
      );

  /** The date as the panel writes it: the organization's time zone (Rome), the panel's language. */
  const panelDate = (page: Page, date: Date, locale: string) =>
    page.evaluate(
      ([iso, tag]) =>
        new Intl.DateTimeFormat(tag, { dateStyle: "medium", timeStyle: "short", timeZone: "Europe/Rome" }).format(
          new Date(iso),
        ),
      [date.toISOString(), locale] as const,
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    owner = `owner-${unique(6)}@example.test`;
    member = `member-${unique(6)}@example.test`;
    for (const [email, role, name, locale] of [
      [owner, "owner", "Olivia Owner", "en"],
      [member, "member", "Marta Membro", "it"],
    ] as const) {
      const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
      await server.database.db.update(users).set({ name, locale }).where(eq(users.id, user.id));
    }
    supporterId = (await fakeSupporter(server.database.db, tenant.organizationId)).id;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner adds a note and sees it with their name and the date in the organization's time zone", async () => {
    const page = await signIn(owner, "en-US");
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/${supporterId}`);
    const section = page.locator("#supporter-notes");
    await section.getByRole("heading", { name: "Notes" }).waitFor();
    await section.getByText("No notes yet.").waitFor();
    await expect(section.getByRole("button", { name: "Add note" }).isDisabled()).resolves.toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    await section.getByLabel("New note", { exact: true }).fill("Met at the spring gala.\nWants a visit in May.");
    await section.getByRole("button", { name: "Add note" }).click();
    const note = section.locator('[data-testid="supporter-note"]');
    await note.first().waitFor();
    await expect(section.getByLabel("New note", { exact: true }).inputValue()).resolves.toBe("");

    const [stored] = await storedNotes();
    expect(stored).toMatchObject({
      authorName: "Olivia Owner",
      body: "Met at the spring gala.\nWants a visit in May.",
    });
    const date = await panelDate(page, stored?.createDate as Date, "en-US");
    await expect(note.locator(".note-meta").textContent()).resolves.toBe(`Olivia Owner · ${date}`);
    await expect(note.locator(".note-body").innerText()).resolves.toBe(
      "Met at the spring gala.\nWants a visit in May.",
    );
    await expect(note.getByRole("button", { name: "Delete" }).count()).resolves.toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("an Italian member adds a note in Italian words, deletes their own after confirming, and cannot delete the owner's", async () => {
    const page = await signIn(member, "it-IT");
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/${supporterId}`);
    const section = page.locator("#supporter-notes");
    await section.getByRole("heading", { name: "Note", exact: true }).waitFor();
    await section.locator('[data-testid="supporter-note"]').first().waitFor();

    await section.getByLabel("Nuova nota", { exact: true }).fill("Ha chiamato per la ricevuta.");
    await section.getByRole("button", { name: "Aggiungi nota" }).click();
    await expect.poll(() => section.locator('[data-testid="supporter-note"]').count()).toBe(2);
    const [mine, owners] = [
      section.locator('[data-testid="supporter-note"]').nth(0),
      section.locator('[data-testid="supporter-note"]').nth(1),
    ];
    const stored = (await storedNotes()).find((row) => row.authorName === "Marta Membro");
    const date = await panelDate(page, stored?.createDate as Date, "it-IT");
    await expect(mine.locator(".note-meta").textContent()).resolves.toBe(`Marta Membro · ${date}`);
    await expect(mine.locator(".note-body").textContent()).resolves.toBe("Ha chiamato per la ricevuta.");
    // The owner's note shows no delete for a member.
    await expect(owners.getByRole("button", { name: "Elimina" }).count()).resolves.toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    await mine.getByRole("button", { name: "Elimina" }).click();
    const dialog = page.locator("dialog");
    await dialog.getByText("La nota di Marta Membro viene rimossa per sempre.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.click('[data-testid="confirm-dialog-confirm"]');
    await expect.poll(() => section.locator('[data-testid="supporter-note"]').count()).toBe(1);
    expect((await storedNotes()).map((row) => row.authorName)).toEqual(["Olivia Owner"]);
    await page.context().close();
  });
});
