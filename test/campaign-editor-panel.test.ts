import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

const STORY = [
  "## Why it matters",
  "",
  "Every child deserves a **school kit**. Read [our report](https://example.org/report).",
  "",
  "- pens",
  "- exercise books",
].join("\n");

/**
 * The campaign editor's page content in the admin panel (Debian's chromium, the real server): story,
 * status, dates, cover, impact lines, tribute gifts and questions saved, read back through REST and
 * shown on the donation page; the server's refusals next to their field, in English and Italian.
 */
describe("admin panel: the campaign editor's page content", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;
  let owner: string;

  const api = async (method: string, path: string, body?: unknown) =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tenant.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );

  const signIn = async (): Promise<Page> => {
    const context = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", owner);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator("#sidebar").waitFor();
    return page;
  };

  const openEditor = async (page: Page, id: number) => {
    await page.goto(`${server.url}/admin/o/${tenant.slug}/campaigns/${id}/edit`);
    await page.locator('[data-testid="campaign-form"]').waitFor();
  };

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  const newCampaign = async (overrides: Record<string, unknown> = {}) => {
    const created = await api("POST", "/api/v1/campaigns/", {
      title: "School kits for every child",
      slug: `kits-${unique(6)}`,
      status: "draft",
      asks: [10, 30, 50],
      asks_subscription: [5, 10],
      default_amount: 30,
      ...overrides,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { id: number; slug: string };
  };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { currency: "EUR", timeZone: "Europe/Rome" });
    owner = `owner-${unique(6)}@example.test`;
    await createUser(server.database.db, {
      email: owner,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("an owner writes the page content, uploads a cover and saves; REST reads every field back and the donation page shows them", async () => {
    const campaign = await newCampaign();
    const page = await signIn();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await openEditor(page, campaign.id);

    // The cover goes up at once, as its own request.
    const cover = await sharp({
      create: { width: 1600, height: 900, channels: 3, background: { r: 230, g: 140, b: 60 } },
    })
      .composite([
        {
          input: await sharp({ create: { width: 600, height: 600, channels: 3, background: "#1d6f5f" } })
            .png()
            .toBuffer(),
          left: 200,
          top: 150,
        },
      ])
      .png()
      .toBuffer();
    const coverCard = page.locator('[data-testid="campaign-cover"]');
    await expect(coverCard.locator("p.muted").textContent()).resolves.toBe("No cover image yet.");
    await page
      .getByLabel("Upload a cover image")
      .setInputFiles({ name: "cover.png", mimeType: "image/png", buffer: cover });
    const preview = coverCard.getByRole("img", { name: "Current cover image" });
    await preview.waitFor();
    await expect.poll(() => preview.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBeGreaterThan(0);
    await coverCard.getByRole("button", { name: "Remove cover image" }).waitFor();

    await page.getByLabel("Status", { exact: true }).selectOption("published");
    await page.getByLabel("First day of gifts", { exact: true }).fill("2026-01-01");
    await page.getByLabel("Last day of gifts", { exact: true }).fill("2036-12-31");
    await page.getByLabel("Story", { exact: true }).fill(STORY);
    await page.getByLabel("What €30 makes possible", { exact: true }).fill("buys a school kit");
    await page.getByLabel("Let donors give in honour or in memory of someone", { exact: true }).check();

    await page.click('[data-testid="add-question"]');
    await page.click('[data-testid="add-question"]');
    const [first, second] = [
      page.locator('[data-testid="question"]').nth(0),
      page.locator('[data-testid="question"]').nth(1),
    ];
    await first.getByLabel("Type", { exact: true }).selectOption("single_choice");
    await first.getByLabel("Question", { exact: true }).fill("T-shirt size");
    await first.getByLabel("Choices", { exact: true }).fill("S\nM\nL\n");
    await second.getByLabel("Type", { exact: true }).selectOption("checkbox");
    await second.getByLabel("Question", { exact: true }).fill("I have read the event rules");
    await second.getByLabel("An answer is required", { exact: true }).check();
    await expect(second.getByLabel("Choices", { exact: true }).count()).resolves.toBe(0);

    expect(await axeViolations(page)).toEqual([]);
    await page.click('[data-testid="save-campaign"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/campaigns/${campaign.id}$`));
    await page.locator(".flash", { hasText: "Campaign saved." }).waitFor();

    const read = await api("GET", `/api/v1/campaigns/${campaign.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      story: STORY,
      status: "published",
      // Days in Rome: from the first one's midnight to the midnight after the last one.
      start_date: "2025-12-31T23:00:00.000Z",
      end_date: "2036-12-31T23:00:00.000Z",
      ask_impacts: [{ amount: 30, recurring: false, text: "buys a school kit" }],
      allow_tribute: true,
      questions: [
        {
          key: "t_shirt_size",
          type: "single_choice",
          label: "T-shirt size",
          required: false,
          options: ["S", "M", "L"],
        },
        { key: "i_have_read_the_event_rules", type: "checkbox", label: "I have read the event rules", required: true },
      ],
    });
    expect(read.body.cover_image_url).toMatch(
      new RegExp(`^${server.url}/images/${tenant.organizationId}/img_[A-Za-z0-9_-]{22}/1600\\.jpg$`),
    );

    // Opened again, the editor shows what was saved.
    await openEditor(page, campaign.id);
    await expect(page.getByLabel("Status", { exact: true }).inputValue()).resolves.toBe("published");
    await expect(page.getByLabel("First day of gifts", { exact: true }).inputValue()).resolves.toBe("2026-01-01");
    await expect(page.getByLabel("Last day of gifts", { exact: true }).inputValue()).resolves.toBe("2036-12-31");
    await expect(page.getByLabel("Story", { exact: true }).inputValue()).resolves.toBe(STORY);
    await expect(page.getByLabel("What €30 makes possible", { exact: true }).inputValue()).resolves.toBe(
      "buys a school kit",
    );
    await expect(page.locator('[data-testid="question"]').count()).resolves.toBe(2);
    await expect(first.getByLabel("Choices", { exact: true }).inputValue()).resolves.toBe("S\nM\nL");
    expect(errors).toEqual([]);
    await page.context().close();

    const donor = await browser.newContext({ locale: "en-US" });
    const tab = await donor.newPage();
    await tab.goto(`${server.url}/donate/${tenant.slug}/${campaign.slug}?lang=en`);
    await tab.locator("#story h2", { hasText: "Why it matters" }).waitFor();
    await expect(tab.locator("#story li").allTextContents()).resolves.toEqual(["pens", "exercise books"]);
    await expect(tab.locator("#story a").getAttribute("href")).resolves.toBe("https://example.org/report");
    await tab.waitForFunction(() => {
      const image = document.getElementById("cover") as HTMLImageElement | null;
      return image?.complete && image.naturalWidth > 0;
    });
    const impact = tab.getByRole("radio", { name: /buys a school kit/ });
    await impact.waitFor();
    await expect(impact.isChecked()).resolves.toBe(true);
    await donor.close();
  });

  it("a refused end date shows next to its field, in English and in Italian, and nothing is saved; axe finds nothing in either", async () => {
    const campaign = await newCampaign({ status: "published", start_date: "2026-03-01T23:00:00.000Z" });
    const before = (await server.database.db.select().from(campaigns).where(eq(campaigns.id, campaign.id)))[0];
    const page = await signIn();
    await openEditor(page, campaign.id);
    await expect(page.getByLabel("First day of gifts", { exact: true }).inputValue()).resolves.toBe("2026-03-02");
    expect(await axeViolations(page)).toEqual([]);

    // The last day before the first: the server refuses, and the panel words it by its code.
    await page.getByLabel("Last day of gifts", { exact: true }).fill("2026-02-20");
    await page.getByLabel("Story", { exact: true }).fill("Never saved.");
    await page.click('[data-testid="save-campaign"]');
    const endError = page.locator('[data-field-error="end_date"]');
    await endError.waitFor();
    await expect(endError.textContent()).resolves.toBe("cannot be before the first day of gifts");
    await expect(page.locator("#campaign-end_date").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(page.locator("#campaign-end_date").getAttribute("aria-describedby")).resolves.toContain(
      "campaign-end_date-error",
    );
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("campaign-end_date");
    await expect(page.locator("[data-field-error]").count()).resolves.toBe(1);
    expect(await axeViolations(page)).toEqual([]);

    // A choice question with one choice: refused on that question's choices, not on the whole list.
    await page.getByLabel("Last day of gifts", { exact: true }).fill("");
    await page.click('[data-testid="add-question"]');
    const question = page.locator('[data-testid="question"]').nth(0);
    await question.getByLabel("Type", { exact: true }).selectOption("single_choice");
    await question.getByLabel("Question", { exact: true }).fill("T-shirt size");
    await question.getByLabel("Choices", { exact: true }).fill("M");
    await page.click('[data-testid="save-campaign"]');
    const optionsError = page.locator('[data-field-error="questions.0.options"]');
    await optionsError.waitFor();
    await expect(optionsError.textContent()).resolves.toMatch(/^a choice question needs between 2 and \d+ choices$/);
    await expect(page.locator("[data-field-error]").count()).resolves.toBe(1);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("campaign-questions.0.options");

    await server.database.db.update(users).set({ locale: "it" }).where(eq(users.email, owner));
    await page.reload();
    await page.locator('[data-testid="campaign-form"]').waitFor();
    await expect(page.locator('[data-testid="campaign-content"] legend').textContent()).resolves.toBe(
      "Contenuto della pagina",
    );
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel("Ultimo giorno di donazioni", { exact: true }).fill("2026-02-20");
    await page.getByRole("button", { name: "Salva le modifiche" }).click();
    await endError.waitFor();
    await expect(endError.textContent()).resolves.toBe("non può precedere il primo giorno di donazioni");
    await expect(page.locator('[data-testid="campaign-form"] .inline-error').textContent()).resolves.toBe(
      "Alcuni campi richiedono attenzione (1).",
    );
    expect(await axeViolations(page)).toEqual([]);
    const after = (await server.database.db.select().from(campaigns).where(eq(campaigns.id, campaign.id)))[0];
    expect(after).toEqual(before);
    await page.context().close();
  });
});
