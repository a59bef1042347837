import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * Merging two supporters from the possible duplicates page (Debian's chromium, the real server): the
 * owner chooses whom to keep (the oldest by default), reads the preview (the kept supporter as the merge
 * leaves it, the consent that wins, the difference kept as a note), confirms and lands on the kept
 * supporter; the merged supporter's page points to it. Cancel changes nothing; Italian; a member sees
 * no Merge action; axe finds nothing on the preview and on the pointer page.
 */
describe("admin panel: merging supporters", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;
  let member: string;
  let kept: { id: number; phone: string | null };
  let merged: { id: number; phone: string | null };
  let italianKept: { id: number; email: string | null };
  let italianMerged: { id: number; email: string | null };
  const trio: number[] = [];

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

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  /** The duplicates page's section of the group that holds supporter `id`. */
  const groupOf = (page: Page, id: number) =>
    page.locator("section", { has: page.locator(`a[href="/admin/o/${tenant.slug}/supporters/${id}"]`) });

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    const { db } = server.database;
    tenant = await fakeTenant(db, { currency: "EUR", timeZone: "Europe/Rome" });
    const person = {
      sex: "FEMALE" as const,
      dateOfBirth: "1815-12-10",
      country: "GB",
      privacy: true,
      tags: [] as string[],
    };
    const mail = `ada-${unique(6)}@example.org`;
    // The kept one is the older record; the merged one was updated last, so its consents win.
    kept = await fakeSupporter(db, tenant.organizationId, {
      ...person,
      firstName: "Ada",
      lastName: "Lovelace",
      email: mail,
      phone: "+39 06 1111111",
      city: null,
      emailMarketing: true,
      createDate: new Date("2024-01-01T00:00:00Z"),
      updateDate: new Date("2025-01-01T00:00:00Z"),
    });
    merged = await fakeSupporter(db, tenant.organizationId, {
      ...person,
      firstName: "Ada",
      lastName: "Lovelace",
      email: mail,
      phone: "+39 06 2222222",
      city: "London",
      emailMarketing: false,
      createDate: new Date("2025-06-01T00:00:00Z"),
      updateDate: new Date("2026-01-01T00:00:00Z"),
    });
    const postalCode = unique(5);
    italianKept = await fakeSupporter(db, tenant.organizationId, {
      ...person,
      firstName: "Grazia",
      lastName: "Deledda",
      postalCode,
      emailMarketing: true,
      createDate: new Date("2024-01-01T00:00:00Z"),
      updateDate: new Date("2025-01-01T00:00:00Z"),
    });
    italianMerged = await fakeSupporter(db, tenant.organizationId, {
      ...person,
      firstName: "Grazia",
      lastName: "Deledda",
      postalCode,
      emailMarketing: false,
      createDate: new Date("2025-06-01T00:00:00Z"),
      updateDate: new Date("2026-01-01T00:00:00Z"),
    });
    const shared = `carla-${unique(6)}@example.org`;
    for (const year of [2021, 2022, 2023]) {
      const row = await fakeSupporter(db, tenant.organizationId, {
        ...person,
        firstName: "Carla",
        lastName: "Fracci",
        email: shared,
        createDate: new Date(`${year}-01-01T00:00:00Z`),
      });
      trio.push(row.id);
    }
    owner = `owner-${unique(6)}@example.test`;
    member = `member-${unique(6)}@example.test`;
    // One after the other: users are rows of reference tables on a cluster.
    await createUser(db, { email: owner, password: PASSWORD, organization: tenant.slug, role: "owner" });
    await createUser(db, { email: member, password: PASSWORD, organization: tenant.slug, role: "member" });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("previews the merge of a group, merges on confirming and lands on the kept supporter; the merged one points there", async () => {
    const page = await signIn(owner);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/duplicates`);
    const group = groupOf(page, kept.id);
    await group.getByRole("button", { name: "Merge…" }).click();
    // The oldest is kept by default; in a group of two the other is the one merged.
    await expect(group.getByRole("radio", { name: `Ada Lovelace #${kept.id}` }).isChecked()).resolves.toBe(true);
    await expect(group.locator('[data-testid="merge-other"]').textContent()).resolves.toBe(
      `Ada Lovelace #${merged.id} will be merged into it.`,
    );
    await group.getByRole("button", { name: "Preview the merge" }).click();
    const preview = group.locator('[data-testid="merge-preview"]');
    await preview.waitFor();
    await expect(preview.locator("h3").textContent()).resolves.toBe(
      `Merge Ada Lovelace #${merged.id} into Ada Lovelace #${kept.id}`,
    );
    // The kept phone stays, the blank city takes the merged one's.
    const result = await preview.locator('[data-testid="merge-result"]').textContent();
    expect(result).toContain(kept.phone);
    expect(result).toContain("London");
    // Both said an email-marketing consent and differ: the merged supporter, updated last, wins.
    await expect(
      preview
        .locator('[data-testid="merge-consents"] tr', { hasText: "Email marketing" })
        .locator("td")
        .allTextContents(),
    ).resolves.toEqual(["Yes", "No", "No (from the merged one)"]);
    await expect(preview.locator('[data-testid="merge-differences"] tbody tr').allTextContents()).resolves.toEqual([
      `Phone${kept.phone}${merged.phone}`,
    ]);
    expect(await axeViolations(page)).toEqual([]);

    await preview.getByRole("button", { name: "Confirm merge" }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/${kept.id}$`));
    await expect(page.locator(".flash").textContent()).resolves.toBe(
      `Supporter #${merged.id} was merged into this supporter.`,
    );

    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/${merged.id}`);
    const pointer = page.locator('[data-testid="supporter-merged"]');
    await pointer.waitFor();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Supporter merged");
    expect(await pointer.textContent()).toMatch(
      new RegExp(`^This supporter \\(#${merged.id}\\) was merged into supporter #${kept.id} on .+\\.$`),
    );
    expect(await axeViolations(page)).toEqual([]);
    await pointer.getByRole("link", { name: `supporter #${kept.id}` }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters/${kept.id}$`));
    // The address changes first; the page that heads it follows.
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Ada Lovelace");
    expect(errors).toEqual([]);
  });

  it("speaks Italian, and Cancel changes nothing", async () => {
    const page = await signIn(owner, "it-IT");
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/duplicates`);
    const group = groupOf(page, italianKept.id);
    await group.getByRole("button", { name: "Unisci…" }).click();
    await group.getByRole("button", { name: "Anteprima dell'unione" }).click();
    const preview = group.locator('[data-testid="merge-preview"]');
    await preview.waitFor();
    await expect(
      preview
        .locator('[data-testid="merge-consents"] tr', { hasText: "Comunicazioni via email" })
        .locator("td")
        .allTextContents(),
    ).resolves.toEqual(["Sì", "No", "No (da quello unito)"]);
    // Each has its own email: the kept one stays, the other goes into the note.
    await expect(preview.locator('[data-testid="merge-differences"] tbody tr').allTextContents()).resolves.toEqual([
      `Email${italianKept.email}${italianMerged.email}`,
    ]);
    expect(await axeViolations(page)).toEqual([]);
    await preview.getByRole("button", { name: "Annulla" }).click();
    await group.getByRole("button", { name: "Unisci…" }).waitFor();
    for (const id of [italianKept.id, italianMerged.id]) {
      const answer = await page.evaluate(
        async ({ id, slug }) => {
          const response = await fetch("/admin/graphql/", {
            method: "POST",
            headers: { "content-type": "application/json", "x-donata-organization": slug },
            body: JSON.stringify({ query: `query ($id: ID!) { supporter(id: $id) { id } }`, variables: { id } }),
          });
          return response.json();
        },
        { id, slug: tenant.slug },
      );
      expect(answer).toEqual({ data: { supporter: { id } } });
    }
  });

  it("in a group of three picks the one to merge, and says so in place when it is gone meanwhile", async () => {
    const [oldest = 0, second = 0, third = 0] = trio;
    const page = await signIn(owner);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/duplicates`);
    const group = groupOf(page, oldest);
    await group.getByRole("button", { name: "Merge…" }).click();
    const mergedChoice = group.getByRole("group", { name: "Supporter to merge into it" });
    await expect(mergedChoice.getByRole("radio").count()).resolves.toBe(2);
    await expect(mergedChoice.getByRole("radio", { name: `Carla Fracci #${second}` }).isChecked()).resolves.toBe(true);
    await mergedChoice.getByRole("radio", { name: `Carla Fracci #${third}` }).check();
    // Someone else merges the third one away before the preview is asked for.
    const merged = await page.evaluate(
      async ({ kept, merged, slug }) => {
        const response = await fetch("/admin/graphql/", {
          method: "POST",
          headers: { "content-type": "application/json", "x-donata-organization": slug },
          body: JSON.stringify({
            query: "mutation ($k: ID!, $m: ID!) { mergeSupporters(kept_id: $k, merged_id: $m) { merged_id } }",
            variables: { k: kept, m: merged },
          }),
        });
        return response.json();
      },
      { kept: second, merged: third, slug: tenant.slug },
    );
    expect(merged).toEqual({ data: { mergeSupporters: { merged_id: third } } });
    await group.getByRole("button", { name: "Preview the merge" }).click();
    await expect(group.getByRole("alert").textContent()).resolves.toBe("Supporter not found");
    await expect(group.locator('[data-testid="merge-preview"]').count()).resolves.toBe(0);
  });

  it("a member sees the groups but no Merge action; an id never merged reads the plain not-found state", async () => {
    const page = await signIn(member);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/duplicates`);
    await groupOf(page, italianKept.id).waitFor();
    await expect(page.locator('[data-testid="merge-open"]').count()).resolves.toBe(0);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters/999999999`);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Supporter not found");
    await expect(page.locator('[data-testid="supporter-merged"]').count()).resolves.toBe(0);
  });
});
