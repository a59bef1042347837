import { eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type campaigns, organizations } from "../src/db/schema.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/** The donation page and the public API in Italian and English: negotiation, the page's words, the script's, the refusals. */
describe("the donation page in the donor's language", () => {
  let server: TestServer;
  let tenant: Tenant;
  let browser: Browser;
  let campaign: typeof campaigns.$inferSelect;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
    tenant = await fakeTenant(server.database.db);
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `pozzi-${unique(6)}`,
      title: "Pozzi d'acqua pulita",
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      allowCustomSubscriptionAmount: true,
      minAmount: 5,
      maxAmount: 5000,
      minSubscriptionAmount: 5,
      maxSubscriptionAmount: 500,
      asks: ["10", "25", "50"],
      asksSubscription: ["5", "10"],
      defaultAmount: 25,
      isGoalEnabled: true,
      goal: 1000,
      shownFields: ["first_name", "last_name", "email", "ssn"],
      requiredFields: ["first_name", "last_name"],
      privacyNote: null,
      costExampleAmount: null,
      costExampleLabel: null,
      archiveDate: null,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const pagePath = () => `/donate/${tenant.slug}/${campaign.slug}`;

  it("?lang=it gives the whole page in Italian, remembers the choice, and ?lang=en switches back", async () => {
    const context = await browser.newContext({ locale: "en-GB" });
    const page = await context.newPage();
    const response = await page.goto(`${server.url}${pagePath()}?lang=it`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-language"]).toBe("it");
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    await expect(page.locator("legend").first().textContent()).resolves.toBe("Con quale frequenza?");
    await expect(page.getByLabel("Codice fiscale").count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: /^Dona/ }).textContent()).resolves.toBe("Dona 25\u00a0€");
    await page.getByLabel("Mensile").check();
    await page.locator("#ask-recurring-10").check();
    await expect(page.getByRole("button", { name: /^Dona/ }).textContent()).resolves.toBe("Dona 10\u00a0€ al mese");
    const current = page.locator("#language-switcher a[aria-current]");
    await expect(current.textContent()).resolves.toBe("Italiano");
    await expect(page.locator("#language-switcher").getAttribute("aria-label")).resolves.toBe("Lingua");

    // Checked in the page before any call: the script's words are Italian too.
    await page.getByRole("button", { name: /^Dona/ }).click();
    await expect(page.getByRole("alert").first().textContent()).resolves.toBe("Controlla i campi evidenziati.");
    await expect(page.locator("#e-consent-privacy").textContent()).resolves.toBe(
      "Spunta questa casella per continuare",
    );

    const again = await page.goto(`${server.url}${pagePath()}`);
    expect(again?.headers()["content-language"]).toBe("it");
    await page.goto(`${server.url}${pagePath()}?lang=en`);
    await expect(page.locator("legend").first().textContent()).resolves.toBe("How often?");
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === "donata_lang")).toMatchObject({
      value: "en",
      httpOnly: true,
      sameSite: "Lax",
    });
    await context.close();
  });

  it("completes a gift in Italian: the thank-you, the amounts and the donor's words", async () => {
    const context = await browser.newContext({ locale: "it-IT" });
    const page = await context.newPage();
    await page.goto(`${server.url}${pagePath()}`);
    expect(await page.locator("html").getAttribute("lang")).toBe("it");
    await page.locator("#f-supporter-first-name").fill("Ada");
    await page.getByLabel("Cognome").fill("Rossi");
    await page.getByRole("textbox", { name: "Email" }).fill(`ada-${unique(6)}@example.org`);
    await page.getByLabel("Codice fiscale").fill("RSSDAA80A41H501X");
    await page.getByLabel("Ho letto l’informativa sulla privacy").check();
    await page.getByLabel("Numero della carta").fill("4242 4242 4242 4242");
    await page.getByLabel("Mese di scadenza").fill("12");
    await page.getByLabel("Anno di scadenza").fill(String(new Date().getUTCFullYear() + 2));
    await page.getByLabel("Codice di sicurezza").fill("123");
    const completion = page.waitForResponse((response) => /\/checkouts\/\d+\/complete$/.test(response.url()));
    await page.getByRole("button", { name: /^Dona/ }).click();
    const done = await completion;
    expect(done.status()).toBe(200);
    expect(await done.request().headerValue("accept-language")).toBe("it");
    await page.locator("#success").waitFor({ state: "visible" });
    await expect(page.locator("#success-title").textContent()).resolves.toBe("Grazie, Ada!");
    await expect(page.locator("#success-summary").textContent()).resolves.toMatch(
      /^La tua donazione di 25\u00a0€ a .+ è stata ricevuta\.$/,
    );
    await expect(page.locator("#receipt-link").textContent()).resolves.toBe("Scarica la ricevuta");
    await context.close();
  });

  it("follows Accept-Language, then the organization's language; an unknown campaign's page too", async () => {
    const french = await fetch(`${server.url}${pagePath()}`, { headers: { "accept-language": "fr-FR, it;q=0.5" } });
    expect(french.headers.get("content-language")).toBe("it");
    expect(french.headers.get("vary")).toMatch(/Accept-Language/);
    const english = await fetch(`${server.url}${pagePath()}`, { headers: { "accept-language": "fr-FR" } });
    expect(english.headers.get("content-language")).toBe("en");
    await server.database.db
      .update(organizations)
      .set({ locale: "it" })
      .where(eq(organizations.id, tenant.organizationId));
    try {
      const fallback = await fetch(`${server.url}${pagePath()}`, { headers: { "accept-language": "fr-FR" } });
      expect(fallback.headers.get("content-language")).toBe("it");
      expect(await fallback.text()).toContain("<legend>Con quale frequenza?</legend>");
      const chosen = await fetch(`${server.url}${pagePath()}?lang=en`, { headers: { "accept-language": "fr-FR" } });
      expect(await chosen.text()).toContain("<legend>How often?</legend>");
    } finally {
      await server.database.db
        .update(organizations)
        .set({ locale: "en" })
        .where(eq(organizations.id, tenant.organizationId));
    }
    const missing = await fetch(`${server.url}/donate/${tenant.slug}/no-such-campaign`, {
      headers: { "accept-language": "it" },
    });
    expect(missing.status).toBe(404);
    const html = await missing.text();
    expect(html).toContain('<html lang="it">');
    expect(html).toContain("<h1>Campagna non trovata</h1>");
  });

  it("the API's refusals keep their code and say their detail in the request's language", async () => {
    const url = `${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`;
    const ask = (language: string | null, body: unknown) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(language ? { "accept-language": language } : {}) },
        body: JSON.stringify(body),
      });
    const italian = await ask("it-IT,it;q=0.9", { amount: 1, frequency: 0 });
    const english = await ask(null, { amount: 1, frequency: 0 });
    const italianBody = await italian.json();
    const englishBody = await english.json();
    expect(italian.status).toBe(english.status);
    expect(italianBody.code).toBe(englishBody.code);
    expect(italianBody.detail).not.toBe(englishBody.detail);
    expect(italianBody.detail).toBe(
      {
        amount_out_of_range: "Questo importo è fuori dai limiti della campagna.",
        amount_below_minimum: "Questo importo è sotto la donazione minima.",
      }[italianBody.code as string],
    );
    const malformed = await ask("it", { amount: "many" });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({
      code: "invalid_request",
      detail: "La richiesta non è valida. Controlla i campi evidenziati.",
    });
  });
});
