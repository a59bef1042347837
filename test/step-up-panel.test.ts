import AxeBuilder from "@axe-core/playwright";
import { eq, sql } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, sessions, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * Step-up in the admin panel (Debian's chromium, the real server): a new IBAN saved 11 minutes after the
 * last check opens "Confirm it's you"; a wrong password is said in the dialog and saves nothing; the
 * right one saves the change without a second click; cancelling leaves the old details. In Italian too.
 */
describe("admin panel: confirm it's you before a sensitive change", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;

  const newOwner = async (locale: "en" | "it" | null) => {
    const email = `owner-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, {
      email,
      password: PASSWORD,
      organization: tenant.slug,
      role: "owner",
    });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return { email, userId: user.id };
  };
  const signIn = async (email: string): Promise<Page> => {
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
  const checkedAgo = (userId: number, minutes: number) =>
    server.database.db
      .update(sessions)
      .set({ verifiedDate: sql`now() - make_interval(mins => ${minutes})` })
      .where(eq(sessions.userId, userId));
  const storedIban = async () =>
    (
      await server.database.db
        .select({ iban: organizations.iban })
        .from(organizations)
        .where(eq(organizations.id, tenant.organizationId))
    )[0]?.iban;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium();
    tenant = await fakeTenant(server.database.db);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("asks for the password before a new IBAN, then saves it", async () => {
    const owner = await newOwner(null);
    const page = await signIn(owner.email);
    await checkedAgo(owner.userId, 11);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.locator('[data-testid="bank-transfer"]').waitFor();
    await page.getByLabel("IBAN").fill("IT60 X054 2811 1010 0000 0123 456");
    await page.click('[data-testid="save-bank-transfer"]');

    const dialog = page.getByRole("dialog", { name: "Confirm it's you" });
    await dialog.waitFor();
    await expect(new AxeBuilder({ page }).include("dialog").analyze()).resolves.toMatchObject({ violations: [] });
    await dialog.getByLabel("Your password").fill("not the password");
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await dialog.getByRole("alert").waitFor();
    expect(await storedIban()).toBeNull();
    await dialog.getByLabel("Your password").fill(PASSWORD);
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Bank details saved.").waitFor();
    expect(await storedIban()).toBe("IT60X0542811101000000123456");
    await page.context().close();
  });

  it("asks before a new second factor: the app's set-up opens once they confirm", async () => {
    const owner = await newOwner(null);
    const page = await signIn(owner.email);
    await checkedAgo(owner.userId, 11);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/account/security`);
    await page.locator('[data-testid="two-step-off"]').waitFor();
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const dialog = page.getByRole("dialog", { name: "Confirm it's you" });
    await dialog.waitFor();
    expect(await page.locator('[data-testid="totp-secret"]').count()).toBe(0);
    await dialog.getByLabel("Your password").fill(PASSWORD);
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await page.locator('[data-testid="totp-secret"]').waitFor();
    await dialog.waitFor({ state: "detached" });
    await page.context().close();
  });

  it("cancelling keeps the old details; the dialog speaks Italian", async () => {
    const owner = await newOwner("it");
    const page = await signIn(owner.email);
    await checkedAgo(owner.userId, 11);
    await page.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    await page.locator('[data-testid="bank-transfer"]').waitFor();
    await page.getByLabel("IBAN").fill("DE89 3704 0044 0532 0130 00");
    await page.click('[data-testid="save-bank-transfer"]');
    const dialog = page.getByRole("dialog", { name: "Conferma che sei tu" });
    await dialog.waitFor();
    await expect.poll(() => dialog.textContent(), { timeout: 15_000 }).toContain("La tua password");
    await dialog.getByRole("button", { name: "Annulla" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("alert").first().waitFor();
    expect(await storedIban()).toBe("IT60X0542811101000000123456");
    await page.context().close();
  });
});
