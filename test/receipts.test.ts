import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import * as mupdf from "mupdf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { events, organizations, receipts } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { runCliInProcess } from "./helpers/cli.js";
import { fakeAppToken, fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox } from "./helpers/smtp.js";

/** The organization's legal profile, and receipts as issued records (docs/receipts.md). */

const CARD_OK = "4242424242424242";
const ITALIAN_PROFILE = {
  legal_name: "Fondazione Acqua Pulita ETS",
  legal_form: "Fondazione",
  address_line1: "Via Roma 1",
  postal_code: "20121",
  city: "Milano",
  province: "MI",
  country: "IT",
  tax_code: "97735020584",
  runts_number: "12345",
  ets_status: "ets",
  privacy_policy_url: "https://acqua.example.org/privacy",
  contact_email: "ricevute@acqua.example.org",
  receipt_legal_text: "Grazie: con il tuo aiuto portiamo l’acqua dove manca.",
};

/** The text of every page of a PDF, and its first page as a PNG (mupdf, no browser). */
function readPdf(pdf: Buffer) {
  const document = mupdf.Document.openDocument(pdf, "application/pdf");
  const pages = document.countPages();
  let text = "";
  for (let index = 0; index < pages; index++)
    text += document
      .loadPage(index)
      .toStructuredText("")
      .asText()
      .replace(/\u00a0/g, " ");
  const png = document
    .loadPage(0)
    .toPixmap(mupdf.Matrix.scale(1.3, 1.3), mupdf.ColorSpace.DeviceRGB, false, true)
    .asPNG();
  const fonts = pdf.toString("latin1").match(/\/FontFile2/g)?.length ?? 0;
  return { text, png: Buffer.from(png), pages, fonts };
}

describe("legal profile and receipts", () => {
  let server: TestServer;
  let tenant: Tenant;
  let campaignSlug: string;
  let campaignId: number;

  beforeAll(async () => {
    // Gifts complete at once with the same test card: each holds one of the card's decline allowance
    // until it settles (card-testing defence), so the allowance is made wider than the gifts at once.
    server = await startTestServer({
      cardTesting: { ...loadConfig({}).cardTesting, declinesPerCard: 50, declinesPerIp: 50 },
    });
    tenant = await fakeTenant(server.database.db);
    campaignSlug = `pozzi-${unique(6)}`;
    campaignId = (
      await fakeCampaign(server.database.db, tenant.organizationId, {
        slug: campaignSlug,
        hasOneOff: true,
        hasSubscription: true,
        allowCustomAmount: true,
        allowCustomSubscriptionAmount: true,
        minAmount: 1,
        maxAmount: 10_000,
        minSubscriptionAmount: 1,
        maxSubscriptionAmount: 10_000,
        shownFields: ["first_name", "last_name", "email", "ssn", "address", "city", "postal_code"],
        archiveDate: null,
      })
    ).id;
    const owner = await createUser(server.database.db, {
      email: `owner-${unique(6)}@example.test`,
      password: "long enough password",
      organization: tenant.slug,
      role: "owner",
    });
    ownerCookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, owner.id)}`;
  });
  afterAll(async () => {
    await server?.close();
  });

  let ownerCookie = "";
  /** GraphQL as the organization's owner (the panel), or as the installed application with its token. */
  const graphql = async (
    query: string,
    variables: Record<string, unknown> = {},
    as: "owner" | "application" = "owner",
  ) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(as === "owner" ? { cookie: ownerCookie } : { authorization: `Bearer ${tenant.token}` }),
      },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };

  const PROFILE_FIELDS = "legal_name tax_code vat_number country ets_status privacy_policy_url receipt_mode missing";
  const saveProfile = (input: Record<string, unknown>) =>
    graphql(`mutation($input: LegalProfileInput!) { updateLegalProfile(input: $input) { ${PROFILE_FIELDS} } }`, {
      input,
    });

  /** A gift through the public checkout, as the donation page sends it. */
  async function give(options: { amount?: number; language?: string; ssn?: string; email?: string } = {}) {
    const amount = options.amount ?? 25;
    const base = `${server.url}/api/v1/public/organizations/${tenant.slug}`;
    const started = await fetch(`${base}/campaigns/${campaignSlug}/checkouts/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amount, frequency: 0 }),
    }).then((response) => response.json());
    const response = await fetch(`${base}/checkouts/${started.id}/complete`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.language ? { "accept-language": options.language } : {}),
      },
      body: JSON.stringify({
        client_secret: started.client_secret,
        amount,
        frequency: 0,
        processor: "sandbox",
        card: { number: CARD_OK, exp_month: 12, exp_year: 2035, cvc: "123" },
        supporter: {
          email: options.email ?? `donor-${unique(8)}@example.test`,
          first_name: "Nicolò",
          last_name: "Dell’Acqua",
          address: "Corso Buenos Aires 3",
          city: "Milano",
          postal_code: "20124",
          ...(options.ssn ? { ssn: options.ssn } : {}),
        },
        consents: { privacy: true },
      }),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body as { donation: { id: number }; payment: { id: number } };
  }

  const receiptsOf = async (paymentId: number) => {
    const { body } = await graphql(
      "{ receipts(first: 500) { id kind number year code payment_id amount void_date void_reason replaces_id url traceable payment_method } }",
      {},
      "application",
    );
    expect(body.errors).toBeUndefined();
    return (body.data.receipts as Record<string, unknown>[]).filter((receipt) => receipt.payment_id === paymentId);
  };

  it("keeps the legal profile: identifiers checked by their country, every problem at once, nothing saved on a refusal; audited", async () => {
    const byApplication = await graphql(
      `mutation { updateLegalProfile(input: { legal_name: "App" }) { legal_name } }`,
      {},
      "application",
    );
    expect(byApplication.body.errors[0].extensions.code).toBe("insufficient_scope");
    const refused = await saveProfile({
      ...ITALIAN_PROFILE,
      tax_code: "97735020585",
      vat_number: "IT12345",
      ets_status: "charity",
      privacy_policy_url: "javascript:alert(1)",
      website: "ftp://acqua.example.org",
    });
    expect(refused.status).toBe(200);
    expect(refused.body.errors[0].extensions.code).toBe("invalid_request");
    const fields = (refused.body.errors[0].extensions.errors as { field: string }[]).map((error) => error.field);
    expect(fields.sort()).toEqual(["ets_status", "privacy_policy_url", "tax_code", "vat_number", "website"]);
    const country = await saveProfile({ country: "XX" });
    expect(country.body.errors[0].extensions.errors).toEqual([
      { field: "country", message: "not a known country code", code: "country_unknown" },
    ]);
    const unchanged = await graphql(`{ legalProfile { ${PROFILE_FIELDS} } }`);
    expect(unchanged.body.data.legalProfile).toMatchObject({ legal_name: null, country: null });
    expect(unchanged.body.data.legalProfile.missing).toEqual(
      expect.arrayContaining(["legal_name", "address_line1", "country"]),
    );

    const wrongCheck = await saveProfile({ country: "IT", tax_code: "97735020585" });
    expect(wrongCheck.body.errors[0].extensions.errors).toEqual([
      { field: "tax_code", message: "its check digit does not match", code: "check_digit" },
    ]);
    const person = await saveProfile({ country: "IT", tax_code: "RSSMRA80A01F205Y" });
    expect(person.body.errors[0].extensions.errors).toEqual([
      { field: "tax_code", message: "its check character does not match", code: "check_character" },
    ]);

    // Gift notifications go to the contact address: it cannot be cleared while they are on.
    await server.database.db
      .update(organizations)
      .set({ giftNotifications: "each", email: "office@acqua.example.org" })
      .where(eq(organizations.id, tenant.organizationId));
    const cleared = await saveProfile({ contact_email: "" });
    expect(cleared.body.errors[0].extensions.errors).toEqual([
      {
        field: "contact_email",
        message: "gift notifications go to this address; turn them off first (Settings → Email)",
        code: "contact_email_in_use",
      },
    ]);
    await server.database.db
      .update(organizations)
      .set({ giftNotifications: "off" })
      .where(eq(organizations.id, tenant.organizationId));
    const saved = await saveProfile({ ...ITALIAN_PROFILE, vat_number: "IT 01234567897" });
    expect(saved.body.errors).toBeUndefined();
    expect(saved.body.data.updateLegalProfile).toMatchObject({
      legal_name: "Fondazione Acqua Pulita ETS",
      tax_code: "97735020584",
      vat_number: "01234567897",
      country: "IT",
      missing: [],
    });
    const [event] = await server.database.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, tenant.organizationId), eq(events.type, "legal_profile.updated")));
    expect(event?.changes).toMatchObject({
      legal_name: { before: null, after: "Fondazione Acqua Pulita ETS" },
      tax_code: { before: null, after: "97735020584" },
    });
  });

  it("issues one numbered receipt per paid payment, with the donor's codice fiscale, in the donor's language, as HTML and PDF", async () => {
    const gift = await give({ amount: 25.5, language: "it-IT", ssn: "RSSMRA80A01F205X" });
    const [receipt] = await receiptsOf(gift.payment.id);
    expect(receipt).toMatchObject({ kind: "payment", amount: 25.5, void_date: null, traceable: true });
    const page = await fetch(receipt?.url as string);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-language")).toBe("it");
    const html = await page.text();
    expect(html).toContain("Ricevuta di erogazione liberale");
    expect(html).toContain(`N. ${receipt?.code}`);
    expect(html).toContain("Codice fiscale: 97735020584");
    expect(html).toContain("Codice fiscale: RSSMRA80A01F205X");
    expect(html).toContain("Nicolò Dell’Acqua");
    expect(html).toContain("art. 83 del D.Lgs. 3 luglio 2017, n. 117");
    expect(html).toContain("ente del Terzo settore");
    expect(html).toContain("Grazie: con il tuo aiuto portiamo l’acqua dove manca.");
    expect(html).toContain("25,50\u00a0€");

    const pdfResponse = await fetch(`${receipt?.url}/pdf`);
    expect(pdfResponse.status).toBe(200);
    expect(pdfResponse.headers.get("content-type")).toBe("application/pdf");
    expect(pdfResponse.headers.get("content-disposition")).toBe(`inline; filename="receipt-${receipt?.code}.pdf"`);
    const pdf = readPdf(Buffer.from(await pdfResponse.arrayBuffer()));
    expect(pdf.fonts).toBeGreaterThanOrEqual(2);
    expect(pdf.text).toContain("Ricevuta di erogazione liberale");
    expect(pdf.text).toContain("25,50 €");
    expect(pdf.text).toContain("Nicolò Dell’Acqua");
    expect(pdf.text).toContain("Codice fiscale: RSSMRA80A01F205X");
    expect(pdf.png.subarray(1, 4).toString()).toBe("PNG");
    if (process.env.RECEIPT_PNG_DIR) {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(path.join(process.env.RECEIPT_PNG_DIR, "receipt-it.png"), pdf.png);
    }

    // The English page of the same receipt, on the reader's request.
    const english = await fetch(`${receipt?.url}?lang=en`).then((response) => response.text());
    expect(english).toContain("Donation receipt");
    expect(english).toContain("Tax code: RSSMRA80A01F205X");

    // Another signature, another organization's id: the same 404.
    const forged = String(receipt?.url).replace(/\/[^/]+$/, "/AAAA");
    expect((await fetch(forged)).status).toBe(404);
  });

  it("numbers receipts one after the other with no gap or duplicate, also when gifts complete at once", async () => {
    const gifts = await Promise.all(Array.from({ length: 6 }, (_, index) => give({ amount: 10 + index })));
    const rows = await server.database.db
      .select({ number: receipts.number, year: receipts.year, paymentId: receipts.paymentId })
      .from(receipts)
      .where(eq(receipts.organizationId, tenant.organizationId));
    const numbers = rows.map((row) => row.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, index) => index + 1));
    for (const gift of gifts) expect(rows.filter((row) => row.paymentId === gift.payment.id)).toHaveLength(1);
  });

  it("keeps what it printed when the profile changes; a refund voids it, a partial one issues a new receipt for the rest", async () => {
    const gift = await give({ amount: 40 });
    const [first] = await receiptsOf(gift.payment.id);
    await saveProfile({ legal_name: "Fondazione Acqua Pulita ETS (nuovo nome)" });
    expect(await fetch(first?.url as string).then((response) => response.text())).not.toContain("nuovo nome");

    const refund = (amount?: number) =>
      fetch(`${server.url}/api/v1/payments/${gift.payment.id}/refund`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body: JSON.stringify(amount === undefined ? {} : { amount }),
      });
    expect((await refund(15)).status).toBe(200);
    const afterPartial = await receiptsOf(gift.payment.id);
    expect(afterPartial).toHaveLength(2);
    const voided = afterPartial.find((receipt) => receipt.id === first?.id);
    const replacement = afterPartial.find((receipt) => receipt.id !== first?.id);
    expect(voided).toMatchObject({ void_reason: "partially_refunded" });
    expect(voided?.void_date).not.toBeNull();
    expect(replacement).toMatchObject({ amount: 25, replaces_id: first?.id, void_date: null });
    const voidPage = await fetch(voided?.url as string).then((response) => response.text());
    expect(voidPage).toContain(`receipt ${replacement?.code} replaces this one`);
    expect(await fetch(replacement?.url as string).then((response) => response.text())).toContain("nuovo nome");

    expect((await refund()).status).toBe(200);
    const afterFull = await receiptsOf(gift.payment.id);
    expect(afterFull.every((receipt) => receipt.void_date !== null)).toBe(true);
    const pdf = readPdf(Buffer.from(await (await fetch(`${replacement?.url}/pdf`)).arrayBuffer()));
    expect(pdf.text).toContain("VOID: the gift was refunded");
    const issued = await server.database.db
      .select({ type: events.type })
      .from(events)
      .where(and(eq(events.organizationId, tenant.organizationId), eq(events.resourceType, "receipt")));
    expect(issued.filter((event) => event.type === "receipt.voided")).toHaveLength(2);
  });

  it("lists receipts over REST: filtered, paged and counted like every list; links only for a reader of supporters", async () => {
    const gift = await give({ amount: 12 });
    const db = server.database.db;
    const api = async (pathAndQuery: string, token = tenant.token) => {
      const response = await fetch(`${server.url}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, body: await response.json() };
    };
    const rows = await db.select().from(receipts).where(eq(receipts.organizationId, tenant.organizationId));
    const all = await api("/api/v1/receipts/?limit=100&order=-id");
    expect(all.status).toBe(200);
    // The unfiltered total is the counted one: every receipt issued so far.
    expect(all.body.count).toBe(rows.length);
    expect(all.body.items.map((item: { id: number }) => item.id)).toEqual(
      rows
        .map((row) => row.id)
        .sort((a, b) => b - a)
        .slice(0, 100),
    );
    const mine = await api(`/api/v1/receipts/?payment_id=${gift.payment.id}`);
    expect(mine.body).toMatchObject({
      count: 1,
      items: [
        {
          kind: "payment",
          amount: 12,
          currency: "EUR",
          payment_id: gift.payment.id,
          donation_id: gift.donation.id,
          void_date: null,
          void_reason: null,
          traceable: true,
          url: expect.stringMatching(/\/documents\/tax-receipts\/\d+\/\d+\/[\w-]+$/),
        },
      ],
    });
    const [item] = mine.body.items;
    expect(item.code).toMatch(/^\d{4}-\d{6}$/);
    expect((await api(`/api/v1/receipts/${item.id}`)).body).toEqual(item);
    expect((await fetch(item.url)).status).toBe(200);

    // A partial refund voids it and issues the rest: void and valid ones split the whole.
    const refunded = await fetch(`${server.url}/api/v1/payments/${gift.payment.id}/refund`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
      body: JSON.stringify({ amount: 2 }),
    });
    expect(refunded.status).toBe(200);
    const afterRefund = await api(`/api/v1/receipts/?payment_id=${gift.payment.id}&order=id`);
    expect(
      afterRefund.body.items.map((receipt: { amount: number; void_reason: string | null }) => [
        receipt.amount,
        receipt.void_reason,
      ]),
    ).toEqual([
      [12, "partially_refunded"],
      [10, null],
    ]);
    rows.splice(
      0,
      rows.length,
      ...(await db.select().from(receipts).where(eq(receipts.organizationId, tenant.organizationId))),
    );
    expect((await api("/api/v1/receipts/?limit=1")).body.count).toBe(rows.length);
    const voided = await api("/api/v1/receipts/?void=true&limit=100");
    const valid = await api("/api/v1/receipts/?void=false&limit=100");
    expect(voided.body.count).toBe(rows.filter((row) => row.voidDate !== null).length);
    expect(voided.body.count).toBeGreaterThan(0);
    expect(voided.body.items.every((receipt: { void_date: string | null }) => receipt.void_date !== null)).toBe(true);
    expect(voided.body.count + valid.body.count).toBe(rows.length);
    const payments = await api(`/api/v1/receipts/?kind=payment&year=${item.year}&limit=1`);
    expect(payments.body.count).toBe(rows.filter((row) => row.kind === "payment" && row.year === item.year).length);
    expect(payments.body.items).toHaveLength(1);

    // Bad filters are a 400 that names them.
    for (const query of ["kind=invoice", "order=-secret", "void=maybe", "year=12"]) {
      const refused = await api(`/api/v1/receipts/?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.code).toBe("invalid_request");
    }
    // donations:read alone: the receipt, but not the link to the page that names the donor.
    const donationsOnly = await fakeAppToken(db, tenant, ["donations:read"]);
    const withoutLink = (await api(`/api/v1/receipts/${item.id}`, donationsOnly)).body;
    expect(withoutLink).toMatchObject({ id: item.id, code: item.code, url: null });
    const graphqlUrl = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${donationsOnly}` },
      body: JSON.stringify({ query: "{ receipts(first: 1) { id url } }" }),
    }).then((response) => response.json());
    expect(graphqlUrl.data.receipts[0].url).toBeNull();
    // Without donations:read: 403; another organization: nothing of it.
    expect((await api("/api/v1/receipts/", await fakeAppToken(db, tenant, ["supporters:read"]))).status).toBe(403);
    const stranger = await fakeTenant(db);
    expect((await api(`/api/v1/receipts/${item.id}`, stranger.token)).status).toBe(404);
    expect((await api("/api/v1/receipts/", stranger.token)).body).toEqual({ items: [], count: 0 });
  });

  it("words a US receipt as the written acknowledgment, and a receipt elsewhere neutrally", async () => {
    await saveProfile({
      country: "US",
      tax_code: "",
      ein: "123456789",
      vat_number: "",
      runts_number: "",
      ets_status: "",
    });
    await graphql(`mutation { updateLegalProfile(input: { us_501c3: true }) { us_501c3 } }`);
    const us = await give({ amount: 30, language: "en" });
    const [usReceipt] = await receiptsOf(us.payment.id);
    const usPage = await fetch(usReceipt?.url as string).then((response) => response.text());
    expect(usPage).toContain("No goods or services were provided in exchange for this contribution.");
    expect(usPage).toContain("EIN: 12-3456789");
    expect(usPage).toContain("section 501(c)(3)");

    await saveProfile({ country: "GB", ein: "", us_501c3: false, charity_number: "1234567" } as Record<
      string,
      unknown
    >);
    const gb = await give({ amount: 31, language: "en" });
    const [gbReceipt] = await receiptsOf(gb.payment.id);
    const gbPage = await fetch(gbReceipt?.url as string).then((response) => response.text());
    expect(gbPage).toContain("confirms it received this gift, given freely");
    expect(gbPage).toContain("Charity no. 1234567");
    expect(gbPage).not.toContain("art. 83");
  });

  it("in yearly-statement mode, issues one numbered statement per donor and year, as PDF, linked by its email, all in one ZIP", async () => {
    await saveProfile({ receipt_mode: "yearly_statement" });
    const email = `annuale-${unique(8)}@example.test`;
    const first = await give({ amount: 20, email, language: "it" });
    await give({ amount: 30, email });
    expect(await receiptsOf(first.payment.id)).toEqual([]);
    const year = new Date().getUTCFullYear();
    // A donor without an email address, who gave in cash (recorded offline).
    const api = (route: string, body: unknown) =>
      fetch(`${server.url}${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const offline = await api("/api/v1/supporters/", { first_name: "Senza", last_name: `Email${unique(4)}` });
    expect(offline.status).toBe(201);
    const cash = await api("/api/v1/donations/", {
      supporter_id: offline.body.id,
      campaign_id: campaignId,
      amount: 15,
      label: "Contanti",
    });
    expect(cash.status, JSON.stringify(cash.body)).toBe(201);
    const send = () =>
      graphql("mutation($year: Int!) { sendStatements(year: $year) { queued skipped_no_email } }", { year });
    const sent = await send();
    expect(sent.body.errors).toBeUndefined();
    expect(sent.body.data.sendStatements.skipped_no_email).toBeGreaterThanOrEqual(1);
    // No email to deliver for that donor: the statement is issued once the answer is sent.
    const offlineStatement = async () =>
      (
        await server.database.db
          .select({ amount: receipts.amount, traceable: receipts.traceable })
          .from(receipts)
          .where(
            and(
              eq(receipts.organizationId, tenant.organizationId),
              eq(receipts.supporterId, offline.body.id),
              eq(receipts.kind, "statement"),
            ),
          )
      )[0];
    await expect.poll(offlineStatement, { timeout: 20_000 }).toEqual({ amount: 15, traceable: false });
    // Each donor's statement is issued as its email is delivered (the worker).
    await flushOutbox(server, tenant.organizationId);
    const { body } = await graphql(
      '{ receipts(kind: "statement", first: 500) { id supporter_id number code amount url } }',
      {},
      "application",
    );
    const statements = body.data.receipts as {
      id: number;
      supporter_id: number;
      number: number;
      code: string;
      amount: number;
      url: string;
    }[];
    const numbers = statements.map((statement) => statement.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, index) => index + 1));
    const supporterId = (
      await fetch(`${server.url}/api/v1/donations/${first.donation.id}`, {
        headers: { authorization: `Bearer ${tenant.token}` },
      }).then((response) => response.json())
    ).supporter_id;
    const mine = statements.find((statement) => statement.supporter_id === supporterId);
    expect(mine).toMatchObject({ amount: 50, code: expect.stringMatching(new RegExp(`^${year}-S\\d{6}$`)) });
    const pdf = readPdf(Buffer.from(await (await fetch(`${mine?.url}/pdf`)).arrayBuffer()));
    expect(pdf.text).toContain(`Riepilogo delle donazioni ${year}`);
    expect(pdf.text).toContain("50,00 €");
    if (process.env.RECEIPT_PNG_DIR) {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(path.join(process.env.RECEIPT_PNG_DIR, "statement-it.png"), pdf.png);
    }
    // A second run issues nothing twice.
    expect((await send()).body.errors).toBeUndefined();
    await flushOutbox(server, tenant.organizationId);
    const again = await graphql('{ receipts(kind: "statement", first: 500) { id } }', {}, "application");
    expect(again.body.data.receipts).toHaveLength(statements.length);

    const zip = await fetch(`${server.url}/admin/export/statements.zip?organization=${tenant.slug}&year=${year}`, {
      headers: { cookie: ownerCookie },
    });
    expect(zip.status).toBe(200);
    expect(zip.headers.get("content-type")).toBe("application/zip");
    const files = unzipSync(new Uint8Array(await zip.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual(statements.map((statement) => `statement-${statement.code}.pdf`).sort());
    expect(readPdf(Buffer.from(files[`statement-${mine?.code}.pdf`] as Uint8Array)).text).toContain("50,00 €");
    const outsider = await fetch(`${server.url}/admin/export/statements.zip?organization=${tenant.slug}&year=${year}`);
    expect(outsider.status).toBe(401);
    await saveProfile({ receipt_mode: "each_payment" });
  });

  it("publishes no campaign before the organization links its privacy notice; the form's consent box links to it", async () => {
    await saveProfile({ privacy_policy_url: "" });
    const create = (language?: string) =>
      fetch(`${server.url}/api/v1/campaigns/`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${tenant.token}`,
          ...(language ? { "accept-language": language } : {}),
        },
        body: JSON.stringify({ title: "Nuova campagna", slug: `nuova-${unique(6)}` }),
      });
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: "privacy_policy_required" });
    const italian = await (await create("it")).json();
    expect(italian.detail).toMatch(/^Prima di pubblicare una campagna aggiungi l’informativa sulla privacy/);
    const { body } = await graphql("{ receipts(first: 1) { id } }", {}, "application");
    expect(body.errors).toBeUndefined();

    await saveProfile({ privacy_policy_url: "https://acqua.example.org/privacy" });
    const created = await create();
    expect(created.status).toBe(201);
    const page = await fetch(`${server.url}/donate/${tenant.slug}/${campaignSlug}?lang=it`).then((response) =>
      response.text(),
    );
    expect(page).toContain(
      'Ho letto l’<a href="https://acqua.example.org/privacy" target="_blank" rel="noopener" id="privacy-link">informativa sulla privacy</a> e la accetto',
    );
  });

  it("donata org profile shows and changes the profile", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "donata-profile-"));
    const env = { LOG_LEVEL: "warn", DATA_DIR: dataDir, ...(process.env.TEST_DATABASE_URL ? {} : {}) };
    try {
      const slug = `cli-${unique(8)}`;
      expect((await runCliInProcess(["migrate"], env)).code).toBe(0);
      expect((await runCliInProcess(["org", "create", "--slug", slug, "--name", "CLI ETS"], env)).code).toBe(0);
      const refused = await runCliInProcess(
        ["org", "profile", "--org", slug, "--country", "IT", "--tax-code", "123"],
        env,
      );
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("tax_code");
      const set = await runCliInProcess(
        [
          "org",
          "profile",
          "--org",
          slug,
          "--legal-name",
          "CLI ETS",
          "--country",
          "it",
          "--tax-code",
          "97735020584",
          "--json",
        ],
        env,
      );
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ legal_name: "CLI ETS", country: "IT", tax_code: "97735020584" });
      const shown = await runCliInProcess(["org", "profile", "--org", slug], env);
      expect(shown.stdout).toContain("Receipts need: address_line1, postal_code, city, privacy_policy_url");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
