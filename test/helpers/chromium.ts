import { type Browser, chromium, type Page } from "playwright-core";

/**
 * Debian's chromium, driven by playwright-core (which downloads no browser of its own).
 * CHROMIUM_PATH points elsewhere, e.g. on a machine where chromium lives in another place.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Signs in to the admin panel with email and password in a new browser context; returns on the organization's home page. */
export async function signInToPanel(
  browser: Browser,
  options: { url: string; email: string; password: string; organization: string },
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${options.url}/admin/sign-in`);
  await page.fill("#email", options.email);
  await page.fill("#password", options.password);
  await page.click('[data-testid="sign-in-form"] button[type="submit"]');
  await page.waitForURL(new RegExp(`/admin/o/${options.organization}/?$`));
  return page;
}
