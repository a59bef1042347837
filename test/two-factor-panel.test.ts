import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Authenticator } from "./helpers/authenticator.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";

/**
 * Two-step verification in the panel (Debian's chromium, the real server): an owner sets up an
 * authenticator app on the security page by typing the key shown as text, saves the recovery codes,
 * signs out, signs in with the password and a code; another sign-in takes a recovery code instead;
 * the owner turns on the organization's rule, and an admin without a second factor must set one up
 * before the panel opens; in Italian too; axe finds nothing on any of these screens.
 */
describe("admin panel: two-step verification", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;

  const newUser = async (role: "owner" | "admin", locale: "en" | "it" | null = null) => {
    const email = `person-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
    if (locale) await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return email;
  };

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  /** The password step in a new browser; returns on whatever comes next. */
  const enterPassword = async (email: string, locale = "en-GB") => {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    return page;
  };

  const home = (page: Page) => page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`), { timeout: 15_000 });

  /** The security page's set-up: the key as text, a code of it; returns the app and the recovery codes. */
  const setUpApp = async (page: Page) => {
    const secretText = page.locator('[data-testid="totp-secret"]');
    await secretText.waitFor();
    await page.locator('[data-testid="totp-qr"]').waitFor();
    const app = new Authenticator(((await secretText.textContent()) ?? "").replace(/\s+/g, ""));
    expect(app.secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.fill("#totp-code", await app.code());
    await page.click('[data-testid="totp-confirm"]');
    await page.locator('[data-testid="recovery-codes"]').waitFor();
    const codes = await page.locator('[data-testid="recovery-codes"] li code').allTextContents();
    expect(codes).toHaveLength(10);
    return { app, codes };
  };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { timeZone: "Europe/Rome" });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("sets up an app on the security page, then signs in with the password and a code, or a recovery code", async () => {
    const email = await newUser("owner");
    const page = await enterPassword(email);
    await home(page);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/admin/o/${tenant.slug}/account/security`);
    await page.locator('[data-testid="two-step-off"]').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    await page.locator('[data-testid="totp-secret"]').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    // A wrong code first: said on the form, nothing turned on.
    await page.fill("#totp-code", "000000");
    await page.click('[data-testid="totp-confirm"]');
    await page.getByText("That code is not right, or it was already used.").waitFor();
    const { app, codes } = await setUpApp(page);
    await page.getByText("Save these recovery codes now: they will not be shown again.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.click('[data-testid="recovery-codes-saved"]');
    await page.locator('[data-testid="two-step-on"]').waitFor();
    await expect
      .poll(() => page.locator('[data-testid="two-step-on"]').textContent(), { timeout: 15_000 })
      .toContain("10 recovery codes left.");

    await page.click('[data-testid="sign-out"]');
    await page.waitForURL(/\/admin\/sign-in/);

    // The password, then the code.
    const next = await enterPassword(email);
    const step = next.locator('[data-testid="second-factor-form"]');
    await step.waitFor();
    await next.getByText("Enter the 6-digit code from your authenticator app.").waitFor();
    expect(await axeViolations(next)).toEqual([]);
    await next.fill("#second-factor-code", "123456");
    await step.getByRole("button", { name: "Verify" }).click();
    await next.getByText("That code is not right, or it was already used.").waitFor();
    await next.fill("#second-factor-code", await app.code());
    await step.getByRole("button", { name: "Verify" }).click();
    await home(next);

    // A reload in the middle of sign-in comes back to the code step; a recovery code instead.
    const third = await enterPassword(email);
    await third.locator('[data-testid="second-factor-form"]').waitFor();
    await third.goto(`${server.url}/admin/o/${tenant.slug}/`);
    await third.locator('[data-testid="second-factor-form"]').waitFor();
    await third.getByRole("button", { name: "Use a recovery code instead" }).click();
    await third.getByText("Enter one of the recovery codes you saved. Each code works once.").waitFor();
    expect(await axeViolations(third)).toEqual([]);
    await third.fill("#second-factor-code", codes[3] as string);
    await third.getByRole("button", { name: "Verify" }).click();
    await home(third);
    expect(errors).toEqual([]);

    // The owner requires it of owners and admins (Settings).
    await third.goto(`${server.url}/admin/o/${tenant.slug}/settings`);
    const rule = third.locator('[data-testid="require-second-factor"]');
    await rule.waitFor();
    expect(await rule.isChecked()).toBe(false);
    await rule.check();
    await third
      .getByText("Owners and admins without two-step verification will set it up at their next sign-in.")
      .waitFor();
    expect(await axeViolations(third)).toEqual([]);
    const [stored] = await server.database.db
      .select({ required: organizations.requireSecondFactor })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    expect(stored?.required).toBe(true);
  });

  it("makes an admin without a second factor set one up before the panel opens, in Italian", async () => {
    await server.database.db
      .update(organizations)
      .set({ requireSecondFactor: true, name: "Fondazione Due Passi" })
      .where(eq(organizations.id, tenant.organizationId));
    const email = await newUser("admin", "it");
    const page = await enterPassword(email, "it-IT");
    const enrol = page.locator('[data-testid="enrol-step"]');
    await enrol.waitFor();
    await page.getByRole("heading", { name: "Attiva la verifica in due passaggi" }).waitFor();
    await page.locator('[data-testid="totp-secret"]').waitFor();
    await expect
      .poll(() => enrol.textContent(), { timeout: 15_000 })
      .toContain("Fondazione Due Passi richiede la verifica in due passaggi");
    expect(await axeViolations(page)).toEqual([]);
    // Nothing else opens meanwhile: the panel sends the session back here.
    await page.goto(`${server.url}/admin/o/${tenant.slug}/supporters`);
    await enrol.waitFor();
    const { app } = await setUpApp(page);
    await page.getByText("Salva ora questi codici di recupero: non verranno mostrati di nuovo.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.click('[data-testid="recovery-codes-saved"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/supporters$`), { timeout: 15_000 });

    // Next time: the code, in Italian.
    const next = await enterPassword(email, "it-IT");
    await next.getByText("Inserisci il codice di 6 cifre dell’app di autenticazione.").waitFor();
    expect(await axeViolations(next)).toEqual([]);
    await next.fill("#second-factor-code", await app.code());
    await next.getByRole("button", { name: "Verifica" }).click();
    await home(next);
    await next.goto(`${server.url}/admin/o/${tenant.slug}/account/security`);
    await next.locator('[data-testid="two-step-on"]').waitFor();
    expect(await axeViolations(next)).toEqual([]);
  });
});
