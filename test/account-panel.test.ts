import AxeBuilder from "@axe-core/playwright";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../src/db/schema.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "a long enough password";
const NEW_PASSWORD = "a brand new passphrase";
const MAC_CHROME =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const WINDOWS_FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0";
const IPHONE_SAFARI =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/**
 * The "Your account" page (Debian's chromium, the real server): reached from the top bar's link; it
 * lists where the user is signed in from two browser contexts with different user agents and
 * addresses (device, address, last seen, "This device"), ends the other one after a confirmation
 * (that browser is signed out), refuses a wrong current password and a mismatched repeat on their
 * fields, changes the password (the other session signed out, this one kept), signs out everywhere
 * else; in Italian too; axe finds nothing, dialogs open or not; at a phone's 390 px the page fits
 * its width with the address and last use under the device.
 */
describe("admin panel: your account", () => {
  let server: TestServer;
  let browser: Browser;
  let tenant: Tenant;

  const newUser = async (locale: "en" | "it") => {
    const email = `person-${unique(8)}@example.test`;
    const user = await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug });
    await server.database.db.update(users).set({ locale }).where(eq(users.id, user.id));
    return { id: user.id, email };
  };

  const signIn = async (
    email: string,
    options: { userAgent: string; address: string; password?: string } & BrowserContextOptions,
  ): Promise<Page> => {
    const { address, password, ...context } = options;
    const page = await (
      await browser.newContext({
        viewport: { width: 1280, height: 900 },
        extraHTTPHeaders: { "x-forwarded-for": address },
        ...context,
      })
    ).newPage();
    await page.goto(`${server.url}/admin/sign-in`);
    await page.fill("#email", email);
    await page.fill("#password", password ?? PASSWORD);
    await page.click('[data-testid="sign-in-form"] button[type="submit"]');
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/?$`));
    await page.locator('[data-testid="your-account"]').waitFor({ state: "attached" });
    return page;
  };

  const signedIn = async (page: Page) => {
    const body = (await (await page.request.get(`${server.url}/admin/api/session`)).json()) as object;
    return !("signed_in" in body);
  };

  const axeViolations = async (page: Page) =>
    (await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze()).violations.map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );

  const rows = (page: Page) => page.locator('[data-testid="table-sessions"] tbody tr');
  const rowTexts = (page: Page) =>
    rows(page).evaluateAll((found) =>
      found.map((row) =>
        Array.from(row.querySelectorAll("td"))
          .filter((cell) => getComputedStyle(cell).display !== "none")
          .map((cell) => (cell as HTMLElement).innerText.replace(/\s+/g, " ").trim()),
      ),
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer({ trustProxy: "127.0.0.1" }), launchChromium()]);
    tenant = await fakeTenant(server.database.db, { timeZone: "Europe/Rome" });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("lists two browsers, ends the other, refuses a wrong password, changes it and signs out everywhere else", async () => {
    const user = await newUser("en");
    const page = await signIn(user.email, { userAgent: MAC_CHROME, address: "198.51.100.7" });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const other = await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "198.51.100.8" });

    // From the top bar.
    await page.getByRole("link", { name: "Your account" }).click();
    await page.waitForURL(new RegExp(`/admin/o/${tenant.slug}/account$`));
    await page.getByRole("heading", { name: "Where you're signed in" }).waitFor();
    await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBe(2);
    const texts = await rowTexts(page);
    const mine = texts.find((row) => row[0]?.includes("This device"));
    const theirs = texts.find((row) => !row[0]?.includes("This device"));
    expect(mine?.slice(0, 3)).toEqual(["Chrome 126 on macOS This device", "198.51.100.7", "Just now"]);
    expect(theirs?.slice(0, 3)).toEqual(["Firefox 127 on Windows", "198.51.100.8", "Just now"]);
    expect(mine?.[4]).toBe("Sign out");
    expect(theirs?.[4]).toBe("End");
    // The tab to the second factors' page.
    const security = page.getByRole("navigation", { name: "Account settings" }).getByRole("link", {
      name: "Two-step verification",
    });
    expect(await security.getAttribute("href")).toBe(`/admin/o/${tenant.slug}/account/security`);
    await expect(page.getByRole("link", { name: "Password and sessions" }).getAttribute("aria-current")).resolves.toBe(
      "page",
    );
    expect(await axeViolations(page)).toEqual([]);

    // End the other browser's session.
    await rows(page).filter({ hasText: "Firefox 127 on Windows" }).getByRole("button", { name: "End" }).click();
    const confirm = page.getByRole("dialog", { name: "End the session on Firefox 127 on Windows?" });
    await confirm.waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole("button", { name: "End" }).click();
    await page.getByText("Ended the session on Firefox 127 on Windows.").waitFor();
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.getByText("You are signed in only here.").waitFor();
    expect(await signedIn(other)).toBe(false);
    await other.reload();
    await other.waitForURL(/\/admin\/sign-in/);
    await other.context().close();

    // The form's own checks, then the server's: a wrong current password on its field.
    const form = page.locator('[data-testid="password-form"]');
    await form.getByLabel("New password", { exact: true }).fill("short");
    await page.getByRole("button", { name: "Change password" }).click();
    await form.getByText("Enter your current password.").waitFor();
    await form.getByText("Choose at least 10 characters.").waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("password-current_password");
    await form.getByLabel("Current password", { exact: true }).fill("not my password");
    await form.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel("Repeat the new password", { exact: true }).fill(`${NEW_PASSWORD}!`);
    await page.getByRole("button", { name: "Change password" }).click();
    await form.getByText("The two new passwords differ.").waitFor();
    await form.getByLabel("Repeat the new password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await form.getByText("is not your current password").waitFor();
    await expect(form.getByLabel("Current password", { exact: true }).getAttribute("aria-invalid")).resolves.toBe(
      "true",
    );
    expect(await axeViolations(page)).toEqual([]);

    // Another browser signs in again; the change signs it out and keeps this one.
    const again = await signIn(user.email, { userAgent: IPHONE_SAFARI, address: "198.51.100.9" });
    await form.getByLabel("Current password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("Your password was changed. 1 other session was signed out.").waitFor();
    await expect(form.getByLabel("Current password", { exact: true }).inputValue()).resolves.toBe("");
    await expect(form.locator(".field-error").count()).resolves.toBe(0);
    expect(await signedIn(again)).toBe(false);
    expect(await signedIn(page)).toBe(true);
    await expect.poll(() => rows(page).count()).toBe(1);
    await again.context().close();

    // Two more browsers, then "Sign out everywhere else".
    const others = [
      await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "198.51.100.10", password: NEW_PASSWORD }),
      await signIn(user.email, { userAgent: IPHONE_SAFARI, address: "198.51.100.11", password: NEW_PASSWORD }),
    ];
    await page.reload();
    await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBe(3);
    await page.getByRole("button", { name: "Sign out everywhere else" }).click();
    const everywhere = page.getByRole("dialog", { name: "Sign out everywhere else?" });
    await everywhere.getByText("2 other sessions end; this browser stays signed in.").waitFor();
    await everywhere.getByRole("button", { name: "Sign out everywhere else" }).click();
    await page.getByText("2 other sessions signed out.").waitFor();
    await expect.poll(() => rows(page).count()).toBe(1);
    await expect(page.getByRole("button", { name: "Sign out everywhere else" }).count()).resolves.toBe(0);
    for (const gone of others) {
      expect(await signedIn(gone)).toBe(false);
      await gone.context().close();
    }
    expect(await signedIn(page)).toBe(true);

    // Each change is in the organization's audit log.
    const recorded = await auditRowsOf(server.database.db, tenant.organizationId, [
      "user.password_changed",
      "user.session_ended",
    ]);
    expect(
      recorded
        .filter((row) => (row.data as { user_id: number }).user_id === user.id)
        .map((row) => [row.type, (row.data as { ended?: string }).ended ?? (row.data as { method: string }).method]),
    ).toEqual([
      ["user.session_ended", "one"],
      ["user.password_changed", "change"],
      ["user.session_ended", "others"],
    ]);

    // Ending this session is signing out.
    await rows(page).getByRole("button", { name: "Sign out" }).click();
    await page
      .getByRole("dialog", { name: "Sign out of this browser?" })
      .getByRole("button", { name: "Sign out" })
      .click();
    await page.waitForURL(/\/admin\/sign-in/);
    expect(await signedIn(page)).toBe(false);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("speaks Italian, and passes axe", async () => {
    const user = await newUser("it");
    const page = await signIn(user.email, { userAgent: MAC_CHROME, address: "198.51.100.20", locale: "it-IT" });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    const other = await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "198.51.100.21", locale: "it-IT" });
    await page.getByRole("link", { name: "Il tuo account" }).click();
    await page.getByRole("heading", { name: "Il tuo account", level: 1 }).waitFor();
    await page.getByRole("heading", { name: "Dove hai effettuato l’accesso" }).waitFor();
    await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBe(2);
    const texts = await rowTexts(page);
    expect(texts.map((row) => row[0]).sort()).toEqual([
      "Chrome 126 su macOS Questo dispositivo",
      "Firefox 127 su Windows",
    ]);
    await expect(page.getByRole("columnheader").allInnerTexts()).resolves.toEqual([
      "DISPOSITIVO",
      "INDIRIZZO",
      "ULTIMO UTILIZZO",
      "ACCESSO",
      "AZIONI",
    ]);
    expect(await axeViolations(page)).toEqual([]);

    const form = page.locator('[data-testid="password-form"]');
    await form.getByLabel("Password attuale", { exact: true }).fill("non è questa");
    await form.getByLabel("Nuova password", { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel("Ripeti la nuova password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Cambia password" }).click();
    await form.getByText("non è la tua password attuale").waitFor();

    await page.getByRole("button", { name: "Esci da tutti gli altri dispositivi" }).click();
    const dialog = page.getByRole("dialog", { name: "Uscire da tutti gli altri dispositivi?" });
    await dialog.getByText("1 altra sessione si chiude; questo browser resta collegato.").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Esci da tutti gli altri dispositivi" }).click();
    await page.getByText("1 altra sessione chiusa.").waitFor();
    expect(await signedIn(other)).toBe(false);
    expect(errors).toEqual([]);
    await other.context().close();
    await page.context().close();
  });

  it("fits a phone's 390 px: the address and last use under the device, nothing wider than the screen", async () => {
    const user = await newUser("en");
    const page = await signIn(user.email, {
      userAgent: IPHONE_SAFARI,
      address: "198.51.100.30",
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    await signIn(user.email, { userAgent: WINDOWS_FIREFOX, address: "2001:db8:85a3::8a2e:370:7334" });
    // The top bar's link is an icon with its name for screen readers.
    await page.getByRole("link", { name: "Your account" }).click();
    await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBe(2);
    const texts = await rowTexts(page);
    expect(texts.map((row) => row.length)).toEqual([2, 2]);
    expect(texts.map((row) => row[0]).sort()).toEqual([
      "Firefox 127 on Windows 2001:db8:85a3::8a2e:370:7334 · Just now",
      "Safari 17 on iOS This device 198.51.100.30 · Just now",
    ]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const table = await page.locator('[data-testid="table-sessions"]').boundingBox();
    expect((table?.x ?? 0) + (table?.width ?? 999)).toBeLessThanOrEqual(390);
    // Readable: the words are not shrunk, and the form's inputs fit.
    const fontSize = await rows(page)
      .first()
      .locator("strong")
      .evaluate((element) => Number.parseFloat(getComputedStyle(element).fontSize));
    expect(fontSize).toBeGreaterThanOrEqual(13);
    const input = await page.locator("#password-new_password").boundingBox();
    expect((input?.x ?? 0) + (input?.width ?? 999)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });
});
