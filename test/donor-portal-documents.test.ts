import { AxeBuilder } from "@axe-core/playwright";
import { and, eq } from "drizzle-orm";
import type { Browser as Chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { organizations, outboxMessages, supporters } from "../src/db/schema.js";
import { insertReceipt, nextReceiptNumber } from "../src/modules/receipts/receipts.repo.js";
import { donorSnapshot, issuerSnapshot } from "../src/modules/receipts/receipts.service.js";
import { Browser } from "./helpers/browser.js";
import { launchChromium } from "./helpers/chromium.js";
import { fakeCampaign, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

/**
 * The donor portal's "Your documents": the receipts and yearly statements issued to the donor's
 * records (docs/receipts.md), each with its number, date, amount, a void badge with its reason, and
 * its signed page and PDF; never another donor's or another organization's. Through the real server,
 * the public checkout, the emailed sign-in link, the REST refund and (in Italian) chromium.
 */

const CARD_OK = "4242424242424242";
const NBSP = "\u00a0";
const TIME_ZONE = "Europe/Rome";

interface IssuedReceipt {
  id: number;
  kind: string;
  code: string;
  payment_id: number | null;
  supporter_id: number;
  amount: number;
  gift_date: string;
  void_date: string | null;
  void_reason: string | null;
  replaces_id: number | null;
  url: string;
}

/** A page's text without its tags, spaces collapsed. */
const text = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();

/** The documents section of the home page, and its cards (one per document, in the page's order). */
function documentsOf(html: string) {
  const section = /<section aria-labelledby="documents-title">([\s\S]*?)<\/section>/.exec(html)?.[1];
  if (section === undefined) throw new Error("the home has no documents section");
  const cards = [...section.matchAll(/<li class="card">([\s\S]*?)<\/li>/g)].map((match) => {
    const card = match[1] as string;
    return { html: card, text: text(card), hrefs: [...card.matchAll(/href="([^"]*)"/g)].map((m) => m[1] as string) };
  });
  return { html: section, text: text(section), cards };
}

describe("the donor portal's documents", () => {
  let server: TestServer;
  let smtp: TestSmtpServer;
  let chromium: Chromium;
  let tenant: Tenant;
  let other: Tenant;
  const campaigns = new Map<number, string>();

  const db = () => server.database.db;
  const giftDay = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: TIME_ZONE });

  beforeAll(async () => {
    smtp = await startSmtpServer();
    [server, chromium] = await Promise.all([startTestServer({ smtpUrl: smtp.url }), launchChromium()]);
    tenant = await fakeTenant(db(), { timeZone: TIME_ZONE });
    other = await fakeTenant(db(), { timeZone: TIME_ZONE });
    for (const organization of [tenant, other]) {
      const slug = `documents-${unique(6)}`;
      await fakeCampaign(db(), organization.organizationId, {
        slug,
        title: "Pozzi d’acqua",
        hasOneOff: true,
        allowCustomAmount: true,
        minAmount: 1,
        maxAmount: 10_000,
        shownFields: ["first_name", "last_name", "email"],
        archiveDate: null,
      });
      campaigns.set(organization.organizationId, slug);
    }
  });
  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await smtp?.close();
  });

  /** A one-off gift through the public checkout with the sandbox card: its payment gets a receipt. */
  async function give(organization: Tenant, email: string, amount: number, language?: string) {
    const base = `${server.url}/api/v1/public/organizations/${organization.slug}`;
    const started = await fetch(`${base}/campaigns/${campaigns.get(organization.organizationId)}/checkouts/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount, frequency: 0 }),
    }).then((response) => response.json());
    const response = await fetch(`${base}/checkouts/${started.id}/complete`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(language ? { "accept-language": language } : {}) },
      body: JSON.stringify({
        client_secret: started.client_secret,
        amount,
        frequency: 0,
        processor: "sandbox",
        card: { number: CARD_OK, exp_month: 12, exp_year: 2035, cvc: "123" },
        supporter: { email, first_name: "Nicolò", last_name: "Dell’Acqua" },
        consents: { privacy: true },
      }),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body as { donation: { id: number; code: string }; payment: { id: number } };
  }

  /** The organization's issued receipts as its application sees them (GraphQL), newest first. */
  async function receiptsOf(organization: Tenant): Promise<IssuedReceipt[]> {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${organization.token}` },
      body: JSON.stringify({
        query:
          "{ receipts(first: 500) { id kind code payment_id supporter_id amount gift_date void_date void_reason replaces_id url } }",
      }),
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    return body.data.receipts;
  }

  const refund = (organization: Tenant, paymentId: number, amount?: number) =>
    fetch(`${server.url}/api/v1/payments/${paymentId}/refund`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${organization.token}` },
      body: JSON.stringify(amount === undefined ? {} : { amount }),
    });

  /** The sign-in link the portal's form mailed to this address (delivered through SMTP). */
  async function mailedLink(organization: Tenant, to: string): Promise<string> {
    for (let wait = 0; wait < 200; wait++) {
      const [row] = await db()
        .select({ id: outboxMessages.id })
        .from(outboxMessages)
        .where(
          and(
            eq(outboxMessages.organizationId, organization.organizationId),
            eq(outboxMessages.kind, "donor_sign_in"),
            eq(outboxMessages.toAddress, to),
          ),
        )
        .limit(1);
      if (row) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await flushOutbox(server, organization.organizationId);
    const mail = smtp.to(to).find((message) => message.headers.get("x-donata-message") === "donor_sign_in");
    const link = /(http:\/\/\S+\/enter\?token=\S+)/.exec(mail?.text ?? "")?.[1];
    if (!link) throw new Error(`no sign-in link mailed to ${to}`);
    return link;
  }

  /** A client signed in to the organization's portal as this email, by the emailed link. */
  async function signedIn(organization: Tenant, email: string) {
    const browser = new Browser(server.url);
    const asked = await browser.request(`/donor/${organization.slug}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email }).toString(),
    });
    expect(asked.status).toBe(200);
    const link = new URL(await mailedLink(organization, email));
    const entered = await browser.get(`${link.pathname}${link.search}`);
    expect(entered.status).toBe(303);
    return browser;
  }

  it("lists the donor's receipts and statements with their numbers, dates, amounts, pages and PDFs; a refund shows void and the new receipt; nobody else's", async () => {
    const email = `ada-${unique(8)}@example.test`;
    const gift = await give(tenant, email, 40);
    // The donor's other record (same email, other case) with a yearly statement issued to it.
    const second = await fakeSupporter(db(), tenant.organizationId, {
      email: email.toUpperCase(),
      firstName: "Ada",
      eraseDate: null,
    });
    const [organization] = await db().select().from(organizations).where(eq(organizations.id, tenant.organizationId));
    await db().transaction(async (tx) => {
      if (!organization) throw new Error("no organization");
      await insertReceipt(tx, {
        organizationId: tenant.organizationId,
        kind: "statement",
        year: 2025,
        number: await nextReceiptNumber(tx, tenant.organizationId, "statement", 2025),
        supporterId: second.id,
        amount: 120,
        currency: "EUR",
        giftDate: new Date("2025-12-31T22:59:59Z"),
        traceable: true,
        organization: issuerSnapshot(organization, undefined),
        donor: donorSnapshot(second),
        lines: [{ date: "2025-06-01T10:00:00.000Z", amount: 120, method: "Visa •••• 4242", donation_code: null }],
        legalText: "",
        locale: "en",
      });
    });
    // Another donor of the organization, the same donor's email at another organization, and another
    // donor there: each has receipts, none of them the donor's.
    const strangerEmail = `mallory-${unique(8)}@example.test`;
    const stranger = await give(tenant, strangerEmail, 33);
    const elsewhere = await give(other, email, 44);
    const strangerElsewhere = await give(other, strangerEmail, 55);

    const issued = await receiptsOf(tenant);
    const receipt = issued.find((row) => row.payment_id === gift.payment.id) as IssuedReceipt;
    const statement = issued.find((row) => row.kind === "statement" && row.supporter_id === second.id) as IssuedReceipt;
    const strangerReceipt = issued.find((row) => row.payment_id === stranger.payment.id) as IssuedReceipt;
    expect(receipt).toMatchObject({ kind: "payment", amount: 40, void_date: null });
    expect(statement.code).toMatch(/^2025-S?\d{6}$/);
    const othersIssued = await receiptsOf(other);
    const foreign = othersIssued.filter((row) =>
      [elsewhere.payment.id, strangerElsewhere.payment.id].includes(row.payment_id as number),
    );
    expect(foreign).toHaveLength(2);

    const browser = await signedIn(tenant, email);
    const home = await browser.get(`/donor/${tenant.slug}/`);
    expect(home.status).toBe(200);
    const documents = documentsOf(home.html);
    expect(documents.html).toContain('<h2 id="documents-title">Your documents</h2>');
    // Newest first (the statement was issued after the receipt); each with its page and PDF, nothing else.
    expect(documents.cards.map((card) => card.hrefs)).toEqual([
      [statement.url, `${statement.url}/pdf`],
      [receipt.url, `${receipt.url}/pdf`],
    ]);
    const [statementCard, receiptCard] = documents.cards;
    expect(receiptCard?.text).toBe(
      `Receipt €40.00 · Gift of ${giftDay.format(new Date(receipt.gift_date))} No. ${receipt.code} · ${gift.donation.code} View receipt ${receipt.code} Download PDF of receipt ${receipt.code}`,
    );
    expect(statementCard?.text).toBe(
      `Yearly statement 2025 €120.00 · Gifts received in 2025 No. ${statement.code} View statement ${statement.code} Download PDF of statement ${statement.code}`,
    );
    // The accessible names tell the documents apart: the code is in each link, hidden from sight.
    expect(receiptCard?.html).toContain(`<span class="visually-hidden"> receipt ${receipt.code}</span>`);
    expect(home.html).not.toContain("badge bad");
    // Nobody else's: not the other donor's receipt here, nor anything of the other organization.
    expect(home.html).not.toContain(strangerReceipt.url);
    expect(home.html).not.toContain(stranger.donation.code);
    for (const row of othersIssued) expect(home.html).not.toContain(row.url);
    expect(home.html).not.toContain(elsewhere.donation.code);
    expect(home.html).not.toContain("€44.00");
    expect(home.html).not.toContain("€55.00");

    // The links work on their own (signed): the page, and the PDF.
    const page = await fetch(receiptCard?.hrefs[0] as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`No. ${receipt.code}`);
    const pdf = await fetch(receiptCard?.hrefs[1] as string);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");
    const statementPdf = await fetch(statementCard?.hrefs[1] as string);
    expect(statementPdf.headers.get("content-type")).toBe("application/pdf");

    // A partial refund voids the receipt and issues one for the rest: the list shows both.
    expect((await refund(tenant, gift.payment.id, 15)).status).toBe(200);
    const replacement = (await receiptsOf(tenant)).find((row) => row.replaces_id === receipt.id) as IssuedReceipt;
    expect(replacement).toMatchObject({ amount: 25, void_date: null });
    const afterPartial = documentsOf((await browser.get(`/donor/${tenant.slug}/`)).html);
    expect(afterPartial.cards.map((card) => card.hrefs[0])).toEqual([replacement.url, statement.url, receipt.url]);
    const [renewed, , voided] = afterPartial.cards;
    expect(renewed?.text).toContain(`Receipt €25.00 · Gift of ${giftDay.format(new Date(replacement.gift_date))}`);
    expect(renewed?.text).toContain(`No. ${replacement.code}`);
    expect(renewed?.html).not.toContain("badge");
    expect(voided?.html).toContain('<span class="badge bad">Void</span>');
    expect(voided?.text).toContain(
      `Receipt €40.00 · Gift of ${giftDay.format(new Date(receipt.gift_date))} · Void Part of the gift was refunded: a new receipt covers the rest. No. ${receipt.code}`,
    );

    // The rest refunded too: the new receipt is void as well, the gift refunded.
    expect((await refund(tenant, gift.payment.id)).status).toBe(200);
    const afterFull = documentsOf((await browser.get(`/donor/${tenant.slug}/`)).html);
    expect(afterFull.cards[0]?.text).toContain("€25.00");
    expect(afterFull.cards[0]?.text).toContain("Void The gift was refunded.");
    expect(afterFull.cards[1]?.html).not.toContain("badge");
  });

  it("offers a year's live summary of gifts until that year's statement is issued, then only the statement", async () => {
    const email = `lin-${unique(8)}@example.test`;
    await give(tenant, email, 30);
    const year = new Intl.DateTimeFormat("en", { year: "numeric", timeZone: TIME_ZONE }).format(new Date());
    const browser = await signedIn(tenant, email);
    const before = await browser.get(`/donor/${tenant.slug}/`);
    expect(before.html).toContain('<h2 id="statements-title">Gifts by year</h2>');
    expect(before.html).toContain(`>Gifts in ${year}</a>`);

    const [organization] = await db().select().from(organizations).where(eq(organizations.id, tenant.organizationId));
    const [supporter] = await db()
      .select()
      .from(supporters)
      .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.email, email)));
    await db().transaction(async (tx) => {
      if (!organization || !supporter) throw new Error("no organization or supporter");
      await insertReceipt(tx, {
        organizationId: tenant.organizationId,
        kind: "statement",
        year: Number(year),
        number: await nextReceiptNumber(tx, tenant.organizationId, "statement", Number(year)),
        supporterId: supporter.id,
        amount: 30,
        currency: "EUR",
        giftDate: new Date(),
        traceable: true,
        organization: issuerSnapshot(organization, undefined),
        donor: donorSnapshot(supporter),
        lines: [],
        legalText: "",
        locale: "en",
      });
    });
    const after = await browser.get(`/donor/${tenant.slug}/`);
    expect(after.html).not.toContain(`>Gifts in ${year}</a>`);
    expect(after.html).not.toContain('id="statements-title"');
    expect(documentsOf(after.html).cards.map((card) => card.text.split(" €")[0])).toContain(`Yearly statement ${year}`);
  });

  it("says so when there is no document yet", async () => {
    const supporter = await fakeSupporter(db(), tenant.organizationId, { eraseDate: null });
    const browser = await signedIn(tenant, supporter.email as string);
    const documents = documentsOf((await browser.get(`/donor/${tenant.slug}/`)).html);
    expect(documents.cards).toEqual([]);
    expect(documents.text).toBe(
      "Your documents Your receipts and yearly statements appear here once they have been issued.",
    );
  });

  it("in Italian, in chromium: the donor's receipt, its links by name, the PDF, and a void one after a refund", async () => {
    const email = `giulia-${unique(8)}@example.test`;
    // The checkout keeps the donor's language (supporters.locale): the portal then speaks Italian.
    const gift = await give(tenant, email, 25.5, "it-IT");
    const receipt = (await receiptsOf(tenant)).find((row) => row.payment_id === gift.payment.id) as IssuedReceipt;
    const day = new Intl.DateTimeFormat("it-IT", { dateStyle: "medium", timeZone: TIME_ZONE }).format(
      new Date(receipt.gift_date),
    );

    const context = await chromium.newContext({ locale: "en-GB" });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/donor/${tenant.slug}/`);
      await page.getByLabel("Your email address").fill(email);
      await page.getByRole("button", { name: "Email me a sign-in link" }).click();
      await page.waitForSelector("h1:has-text('Check your inbox')");
      await page.goto(await mailedLink(tenant, email));
      expect(await page.getAttribute("html", "lang")).toBe("it");

      const section = page.locator("section[aria-labelledby='documents-title']");
      expect(await section.locator("h2").innerText()).toBe("I tuoi documenti");
      const card = section.locator("li").filter({ hasText: receipt.code });
      expect((await card.innerText()).replace(/[ \t\n]+/g, " ")).toContain(
        `Ricevuta 25,50${NBSP}€ · Donazione del ${day} N. ${receipt.code} · ${gift.donation.code}`,
      );
      const view = page.getByRole("link", { name: `Apri la ricevuta ${receipt.code}`, exact: true });
      expect(await view.getAttribute("href")).toBe(receipt.url);
      const pdfLink = page.getByRole("link", { name: `Scarica il PDF della ricevuta ${receipt.code}`, exact: true });
      expect(await pdfLink.getAttribute("href")).toBe(`${receipt.url}/pdf`);
      const pdf = await context.request.get(`${receipt.url}/pdf`);
      expect(pdf.headers()["content-type"]).toBe("application/pdf");
      const results = await new AxeBuilder({ page }).include("section[aria-labelledby='documents-title']").analyze();
      expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);

      expect((await refund(tenant, gift.payment.id, 10.5)).status).toBe(200);
      await page.reload();
      const voided = section.locator("li").filter({ hasText: `N. ${receipt.code}` });
      expect(await voided.locator(".badge").innerText()).toBe("Annullata");
      expect(await voided.innerText()).toContain(
        "Parte della donazione è stata rimborsata: una nuova ricevuta copre l’importo restante.",
      );
      const renewed = section.locator("li").first();
      expect(await renewed.innerText()).toContain(`15,00${NBSP}€`);
      expect(await renewed.locator(".badge").count()).toBe(0);
      expect(await section.getByRole("link", { name: /^Apri la ricevuta / }).count()).toBe(2);
    } finally {
      await context.close();
    }
  });
});
