import { type Browser, chromium } from "playwright-core";

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
