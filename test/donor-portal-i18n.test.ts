import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Browser as Chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { donorSessions, organizations, outboxMessages, supporters } from "../src/db/schema.js";
import { hashSecret } from "../src/identity/secrets.js";
import { DONOR_COOKIE } from "../src/modules/donor-portal/donor-session.js";
import { Browser } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import {
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakePaymentMethod,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

/**
 * The donor portal in Italian and English, through the real server, SMTP and chromium: a donor's
 * saved language (supporters.locale) wins over the browser's, `?lang=` switches and is remembered for
 * the donor, and signed out the sign-in page follows Accept-Language, then the organization's language.
 */

const NBSP = "\u00a0";

describe("the donor portal in the donor's language", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let chromium: Chromium;
  let tenant: Tenant;

  const db = () => server.database.db;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    [server, chromium] = await Promise.all([startTestServer({ smtpUrl: smtp.url }), launchChromium()]);
    tenant = await fakeTenant(db(), { timeZone: "Europe/Rome" });
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await smtp?.close();
  });

  /** The sign-in link the form mailed to this address (delivered through SMTP). */
  async function mailedLink(organizationId: number, to: string): Promise<string> {
    for (let wait = 0; wait < 200; wait++) {
      const [row] = await db()
        .select({ id: outboxMessages.id })
        .from(outboxMessages)
        .where(
          and(
            eq(outboxMessages.organizationId, organizationId),
            eq(outboxMessages.kind, "donor_sign_in"),
            eq(outboxMessages.toAddress, to),
          ),
        )
        .limit(1);
      if (row) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await flushOutbox(server, organizationId);
    const mail = smtp.to(to).find((message) => message.headers.get("x-donata-message") === "donor_sign_in");
    const link = /(http:\/\/\S+\/enter\?token=\S+)/.exec(mail?.text ?? "")?.[1];
    if (!link) throw new Error(`no sign-in link mailed to ${to}`);
    return link;
  }

  async function savedLocaleOf(id: number) {
    const [row] = await db().select({ locale: supporters.locale }).from(supporters).where(eq(supporters.id, id));
    return row?.locale;
  }

  /** A donor session for this email, as a cookie (the sign-in flow itself is tested in chromium below). */
  async function sessionCookie(organizationId: number, email: string) {
    const token = randomBytes(24).toString("base64url");
    await db()
      .insert(donorSessions)
      .values({
        organizationId,
        tokenHash: hashSecret(token),
        email: email.toLowerCase(),
        csrfToken: randomBytes(16).toString("hex"),
        expiresDate: new Date(Date.now() + 3600_000),
      });
    return token;
  }

  it("a donor whose language is Italian signs in from an English browser and manages their gifts in Italian; ?lang=en switches and is remembered", async () => {
    const email = `giulia-${unique(8)}@example.test`;
    const supporter = await fakeSupporter(db(), tenant.organizationId, {
      email,
      firstName: "Giulia",
      locale: "it",
      country: "IT",
      eraseDate: null,
    });
    const campaign = await fakeCampaign(db(), tenant.organizationId, {
      title: "Pozzi d’acqua",
      hasSubscription: true,
      allowCustomSubscriptionAmount: true,
      minSubscriptionAmount: 5,
      maxSubscriptionAmount: 500,
    });
    const method = await fakePaymentMethod(db(), tenant.organizationId, {
      supporterId: supporter.id,
      processor: "sandbox",
      label: "Visa •••• 4242",
      processorReference: `sbx_pm_ok_${unique(16)}`,
    });
    const monthly = await fakeDonation(db(), tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
      amount: 25,
      createDate: new Date("2025-02-05T10:00:00Z"),
      completedDate: new Date("2025-02-05T10:00:00Z"),
      nextChargeDate: new Date("2031-05-01T10:00:00Z"),
      paymentMethodId: method.id,
    });
    const oneOff = await fakeDonation(db(), tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "done",
      frequency: 0,
      amount: 50,
      createDate: new Date("2025-03-05T09:00:00Z"),
    });
    await fakePayment(db(), tenant.organizationId, {
      donationId: oneOff.id,
      state: "PAID",
      amount: 50,
      paymentDate: new Date("2025-03-05T10:00:00Z"),
    });

    // An English browser, an English organization: only the donor's saved language says Italian.
    const context = await chromium.newContext({ locale: "en-GB" });
    const page = await context.newPage();
    await page.goto(`${server.url}/donor/${tenant.slug}/`);
    expect(await page.getAttribute("html", "lang")).toBe("en");
    await page.getByLabel("Your email address").fill(email);
    await page.getByRole("button", { name: "Email me a sign-in link" }).click();
    await page.waitForSelector("h1:has-text('Check your inbox')");

    const home = await page.goto(await mailedLink(tenant.organizationId, email));
    expect(new URL(page.url()).pathname).toBe(`/donor/${tenant.slug}/`);
    expect(home?.headers()["content-language"]).toBe("it");
    expect(await page.getAttribute("html", "lang")).toBe("it");
    expect(await page.title()).toMatch(/^Le tue donazioni · Org /);
    expect(await page.locator("h1").innerText()).toBe("Ciao Giulia");
    expect(await page.locator("h2").allInnerTexts()).toEqual([
      "Donazioni",
      "Pagamenti e ricevute",
      "Donazioni per anno",
      "I tuoi documenti",
      "Recapiti",
      "I tuoi dati",
    ]);
    expect(await page.locator(".who").innerText()).toContain(`Accesso effettuato come ${email}`);
    expect(await page.getByRole("button", { name: "Esci" }).count()).toBe(1);
    expect(await page.locator("#language-switcher").getAttribute("aria-label")).toBe("Lingua");
    expect(await page.locator("#language-switcher a[aria-current]").innerText()).toBe("Italiano");
    const gifts = page.locator("section[aria-labelledby='gifts-title'] li");
    const monthlyCard = gifts.filter({ hasText: monthly.code });
    expect(await monthlyCard.locator(".amount").innerText()).toBe(`25,00${NBSP}€ al mese`);
    expect(await monthlyCard.locator(".badge").innerText()).toBe("Attiva");
    expect(await monthlyCard.innerText()).toContain(`Attivata il 5 feb 2025 · ${monthly.code}`);
    expect(await monthlyCard.innerText()).toContain("Prossimo pagamento: 1 mag 2031");
    const oneOffCard = gifts.filter({ hasText: oneOff.code });
    expect((await oneOffCard.innerText()).replace(/[ \t\n]+/g, " ")).toContain(
      `50,00${NBSP}€ · Una tantum · Completata`,
    );
    const payments = page.locator("section[aria-labelledby='payments-title']");
    expect((await payments.innerText()).replace(/[ \t\n]+/g, " ")).toContain(
      `50,00${NBSP}€ · 5 mar 2025 · Pagato · Ricevuta`,
    );
    expect(await page.getByRole("link", { name: "Donazioni del 2025" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Scarica i miei dati" }).count()).toBe(1);

    // A contact form error, in Italian.
    await page.getByLabel("Paese").fill("Italia");
    await page.getByRole("button", { name: "Salva i recapiti" }).click();
    await page.waitForSelector(".error-summary");
    expect(await page.locator("#error-summary-title").innerText()).toBe("C’è un problema");
    expect(await page.locator(".error-summary a").innerText()).toBe(
      "Il paese va indicato con un codice di due lettere, per esempio IT",
    );
    expect(await page.locator("#field-country-error").innerText()).toBe(
      "Il paese va indicato con un codice di due lettere, per esempio IT",
    );

    // The recurring gift's page, its forms and a refusal, then the notice after a change.
    await page.getByRole("link", { name: `Gestisci questa donazione (${monthly.code})` }).click();
    await page.waitForURL(`**/donor/${tenant.slug}/gifts/${monthly.id}`);
    expect(await page.getAttribute("html", "lang")).toBe("it");
    expect(await page.locator("h1").innerText()).toBe("Pozzi d’acqua");
    expect(await page.locator(".amount").innerText()).toBe(`25,00${NBSP}€ al mese`);
    expect(await page.getByText("Pagata con Visa •••• 4242").count()).toBe(1);
    expect(await page.locator("#field-amount-hint").innerText()).toBe(
      `Da 5,00${NBSP}€ a 500,00${NBSP}€. Vale dal prossimo pagamento.`,
    );
    expect(await page.getByRole("button", { name: "Passa alla donazione annuale" }).count()).toBe(1);
    expect(await page.getByLabel("2 mesi").count()).toBe(1);
    expect(await page.getByRole("link", { name: "Annulla questa donazione" }).count()).toBe(1);
    await page.getByLabel("Nuovo importo mensile (EUR)").fill("2");
    await page.getByRole("button", { name: "Cambia l’importo" }).click();
    await page.waitForSelector(".error-summary");
    expect(await page.locator("#field-amount-error").innerText()).toBe(
      `La donazione periodica minima è di 5,00${NBSP}€`,
    );
    await page.getByLabel("Nuovo importo mensile (EUR)").fill("30");
    await page.getByRole("button", { name: "Cambia l’importo" }).click();
    await page.waitForURL(`**/gifts/${monthly.id}?done=amount`);
    expect(await page.locator(".notice").innerText()).toBe(
      "L’importo è stato modificato. Ti abbiamo inviato una conferma per email.",
    );
    expect(await page.locator(".amount").innerText()).toBe(`30,00${NBSP}€ al mese`);
    await page.getByRole("link", { name: "Annulla questa donazione" }).click();
    await page.waitForURL(`**/gifts/${monthly.id}/cancel`);
    expect(await page.locator("h1").innerText()).toBe("Vuoi annullare la donazione?");
    expect(await page.locator("#language-switcher a[hreflang='en']").getAttribute("href")).toBe(
      `/donor/${tenant.slug}/gifts/${monthly.id}/cancel?lang=en`,
    );

    // ?lang=en: the page in English, the choice kept on the donor's record and in the cookie.
    const english = await page.goto(`${server.url}/donor/${tenant.slug}/?lang=en`);
    expect(english?.headers()["content-language"]).toBe("en");
    expect(await page.getAttribute("html", "lang")).toBe("en");
    expect(await page.locator("h1").innerText()).toBe("Hello Giulia");
    expect(
      await page
        .locator("section[aria-labelledby='gifts-title'] li", { hasText: monthly.code })
        .locator(".amount")
        .innerText(),
    ).toBe("€30.00 a month");
    expect(await savedLocaleOf(supporter.id)).toBe("en");
    expect((await context.cookies()).find((cookie) => cookie.name === "donata_lang")).toMatchObject({
      value: "en",
      httpOnly: true,
    });
    await page.goto(`${server.url}/donor/${tenant.slug}/gifts/${monthly.id}`);
    expect(await page.locator(".badge").innerText()).toBe("Active");
    // Remembered for the donor, not only in this browser: a session without the language cookie is English too.
    const session = (await context.cookies()).find((cookie) => cookie.name === DONOR_COOKIE)?.value as string;
    const elsewhere = await server.get(`/donor/${tenant.slug}/`, undefined, {
      cookie: `${DONOR_COOKIE}=${session}`,
      "accept-language": "it-IT,it;q=0.9",
    });
    expect(elsewhere.headers.get("content-language")).toBe("en");
    expect(elsewhere.body).toContain("<h1>Hello Giulia</h1>");

    // And back to Italian with the switcher.
    await page.locator("#language-switcher a[hreflang='it']").click();
    await page.waitForURL(`**/gifts/${monthly.id}?lang=it`);
    expect(await page.locator(".badge").innerText()).toBe("Attiva");
    expect(await savedLocaleOf(supporter.id)).toBe("it");
    await context.close();
  });

  it("says the recurring gift's other notices and refusals in Italian", async () => {
    const email = `marco-${unique(8)}@example.test`;
    const supporter = await fakeSupporter(db(), tenant.organizationId, { email, locale: "it", eraseDate: null });
    const campaign = await fakeCampaign(db(), tenant.organizationId, { title: "Scuole", hasSubscription: true });
    const gift = await fakeDonation(db(), tenant.organizationId, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
      amount: 10,
      completedDate: new Date(Date.now() - 86_400_000),
      nextChargeDate: new Date(Date.now() + 29 * 86_400_000),
    });
    const browser = new Browser(server.url);
    browser.cookies.set(DONOR_COOKIE, await sessionCookie(tenant.organizationId, email));
    // The donor's saved language comes before the language cookie of this browser.
    browser.cookies.set("donata_lang", "en");
    const path = `/donor/${tenant.slug}/gifts/${gift.id}`;
    const page = await browser.get(path);
    expect(page.headers.get("content-language")).toBe("it");
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] as string;
    const post = (action: string, fields: Record<string, string>) =>
      browser.request(`${path}/${action}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...fields, csrf }).toString(),
      });
    const same = await post("amount", { amount: "10" });
    expect((await browser.get(same.location as string)).html).toContain(
      "Non è cambiato nulla: la tua donazione era già impostata così.",
    );
    const paused = await post("pause", { cycles: "2" });
    expect((await browser.get(paused.location as string)).html).toContain(
      "La tua donazione è in pausa. Ti abbiamo inviato una conferma per email.",
    );
    const badPause = await post("pause", { cycles: "7" });
    expect(badPause.status).toBe(400);
    expect(badPause.html).toContain('<a href="#field-cycles">Scegli quanti pagamenti saltare: da 1 a 3</a>');
    const pausedTwice = await post("pause", { cycles: "1" });
    expect(pausedTwice.status).toBe(409);
    expect(pausedTwice.html).toContain("Questa modifica non è possibile ora.");
    const words = await post("amount", { amount: "dieci" });
    expect(words.status).toBe(422);
    expect(words.html).toContain('<a href="#field-amount">Inserisci un importo come 15 o 12,50</a>');
    // Its switcher leads to the gift's page, not to the form's address.
    expect(words.html).toContain(`href="${path}?lang=en"`);
    const forged = await browser.request(`${path}/amount`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "amount=20&csrf=forged",
    });
    expect(forged.status).toBe(403);
    expect(forged.html).toContain('<html lang="it">');
    expect(forged.html).toContain("<h1>Non è stato possibile accettare questo modulo</h1>");
    expect(forged.html).toContain("Questo modulo è scaduto o non è stato inviato da questo sito.");
    const missing = await browser.get(`/donor/${tenant.slug}/gifts/999999999`);
    expect(missing.status).toBe(404);
    expect(missing.html).toContain("<h1>Pagina non trovata</h1>");
    expect(missing.html).toContain("Questa donazione non risulta tra quelle del tuo indirizzo email.");
  });

  it("signed out, follows Accept-Language, then the organization's language; ?lang= is kept in a cookie", async () => {
    const home = `${server.url}/donor/${tenant.slug}/`;
    const italian = await fetch(home, { headers: { "accept-language": "fr-FR, it;q=0.5, en;q=0.2" } });
    expect(italian.headers.get("content-language")).toBe("it");
    expect(italian.headers.get("vary")).toMatch(/Accept-Language/);
    const italianHtml = await italian.text();
    expect(italianHtml).toContain('<html lang="it">');
    expect(italianHtml).toMatch(/<h1>Le tue donazioni a Org \w+<\/h1>/);
    expect(italianHtml).toContain('<label for="field-email">Il tuo indirizzo email</label>');
    expect(italianHtml).toContain('<button type="submit">Inviami il link per accedere</button>');
    expect(italianHtml).toContain("<title>Accedi · Org ");
    const english = await fetch(home, { headers: { "accept-language": "fr-FR" } });
    expect(english.headers.get("content-language")).toBe("en");
    expect(await english.text()).toContain('<button type="submit">Email me a sign-in link</button>');

    const refused = await fetch(`${home}sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "accept-language": "it" },
      body: "email=",
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(
      '<p class="field-error" id="field-email-error">Inserisci il tuo indirizzo email</p>',
    );
    const unknown = await fetch(`${server.url}/donor/no-such-${unique(6)}/`, { headers: { "accept-language": "it" } });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("A questo indirizzo non c’è nessuna pagina donatore.");
    const dead = await fetch(`${home}enter?token=dnt_dl_${unique(20)}`, { headers: { "accept-language": "it" } });
    expect(dead.status).toBe(410);
    expect(await dead.text()).toContain("<h1>Questo link di accesso non funziona più</h1>");

    await db().update(organizations).set({ locale: "it" }).where(eq(organizations.id, tenant.organizationId));
    try {
      const fallback = await fetch(home, { headers: { "accept-language": "fr-FR" } });
      expect(fallback.headers.get("content-language")).toBe("it");
      expect(await fallback.text()).toContain("Inviami il link per accedere");
      const chosen = await fetch(`${home}?lang=en&next=gifts/12`, { headers: { "accept-language": "fr-FR" } });
      expect(chosen.headers.get("content-language")).toBe("en");
      expect(chosen.headers.getSetCookie().find((line) => line.startsWith("donata_lang="))).toMatch(
        /^donata_lang=en; Max-Age=31536000; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      const chosenHtml = await chosen.text();
      expect(chosenHtml).toContain("Email me a sign-in link");
      // The switcher keeps the page to come back to after signing in.
      expect(chosenHtml).toContain(`href="/donor/${tenant.slug}/?next=gifts%2F12&amp;lang=it"`);
      // The cookie then comes before the browser's and the organization's languages.
      const remembered = await fetch(home, { headers: { cookie: "donata_lang=en", "accept-language": "it" } });
      expect(remembered.headers.get("content-language")).toBe("en");
    } finally {
      await db().update(organizations).set({ locale: "en" }).where(eq(organizations.id, tenant.organizationId));
    }
  });
});
