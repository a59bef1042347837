import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeCampaign, fakeDonation, fakePayment, fakeTenant, type Tenant } from "../../../test/helpers/factories.js";
import { startTestServer, type TestServer } from "../../../test/helpers/server.js";
import { campaigns, donations, organizations, payments, supporters } from "../../db/schema.js";
import { updateBankAccount } from "../organizations/organizations.service.js";
import { type DocumentLinks, loadDocumentLinks } from "./document-links.js";

const CARD = { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" };
const TIME_ZONE = "Pacific/Auckland";

interface Donor {
  email: string;
  first_name: string;
  last_name: string;
  address?: string;
  city?: string;
  postal_code?: string;
}

describe("documents: receipts and yearly statements", () => {
  let server: TestServer;
  let tenant: Tenant;
  let campaign: { id: number; slug: string | null; title: string };
  let links: DocumentLinks;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db, { timeZone: TIME_ZONE });
    campaign = await fakeCampaign(server.database.db, tenant.organizationId, {
      slug: `documents-${tenant.slug}`,
      title: "Clean water <for> everyone",
      minAmount: 1,
      maxAmount: 10_000,
      minSubscriptionAmount: 1,
      maxSubscriptionAmount: 10_000,
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      allowCustomSubscriptionAmount: true,
      archiveDate: null,
      shownFields: ["first_name", "last_name", "email", "address", "city", "postal_code"],
      requiredFields: [],
    });
    links = await loadDocumentLinks(server.database.db, server.url);
  });
  afterAll(() => server.close());

  async function post(path: string, body: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  /** A real gift through the public checkout API, paid with the sandbox test card. */
  async function give(
    donor: Donor,
    amount: number,
    frequency: 0 | 1 | 12 = 0,
    processor = "sandbox",
    coverFee = false,
  ) {
    const base = `/api/v1/public/organizations/${tenant.slug}`;
    const started = await post(`${base}/campaigns/${campaign.slug}/checkouts/`, { amount, frequency });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const completed = await post(`${base}/checkouts/${started.body.id}/complete`, {
      client_secret: started.body.client_secret,
      amount,
      frequency,
      processor,
      ...(processor === "sandbox" ? { card: CARD } : {}),
      ...(coverFee ? { cover_fee: true } : {}),
      supporter: donor,
      consents: { privacy: true },
    });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    return completed.body as {
      donation: { id: number; code: string; supporter_id: number; receipt_url: string; completed_date: string };
      payment: { id: number; payment_method: { label: string } };
    };
  }

  const donor = (overrides: Partial<Donor> = {}): Donor => {
    const tag = Math.random().toString(36).slice(2, 10);
    return { email: `${tag}@donors.example`, first_name: `Ada${tag}`, last_name: `Byron${tag}`, ...overrides };
  };

  async function open(url: string) {
    const response = await fetch(url);
    return { status: response.status, headers: response.headers, html: await response.text() };
  }

  const pathOf = (url: string) => new URL(url).pathname;
  const withoutNonce = (html: string) => html.replace(/nonce="[^"]*"/g, 'nonce=""');
  const organizationName = async () => {
    const [row] = await server.database.db
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    return row?.name as string;
  };
  const localDay = (instant: Date | string) =>
    new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeZone: TIME_ZONE }).format(new Date(instant));

  function expectDocumentHeaders(headers: Headers) {
    expect(headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(headers.get("cache-control")).toBe("private, no-store");
    expect(headers.get("x-robots-tag")).toBe("noindex");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
  }

  async function statementOf(supporterId: number, query = "") {
    const [row] = await server.database.db
      .select({ url: supporters.certificationUrl })
      .from(supporters)
      .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.id, supporterId)));
    expect(row?.url).toBe(links.statementUrl(tenant.organizationId, supporterId));
    return open(`${row?.url}${query}`);
  }

  async function setPayment(donationId: number, values: Partial<typeof payments.$inferInsert>) {
    await server.database.db
      .update(payments)
      .set(values)
      .where(and(eq(payments.organizationId, tenant.organizationId), eq(payments.donationId, donationId)));
  }

  it("shows a real donation's receipt: organization, supporter, amount, code, date, method, campaign", async () => {
    const person = donor({ address: "12 Harbour Street", city: "Wellington", postal_code: "6011" });
    const gift = await give(person, 25.5);
    expect(gift.donation.receipt_url).toBe(links.receiptUrl(tenant.organizationId, gift.donation.id));

    const receipt = await open(gift.donation.receipt_url);
    expect(receipt.status).toBe(200);
    expectDocumentHeaders(receipt.headers);
    const { html } = receipt;
    const [, nonce] = /script-src 'nonce-([^']+)'/.exec(receipt.headers.get("content-security-policy") ?? "") ?? [];
    expect(nonce).toBeTruthy();
    expect(receipt.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).toContain("Print / Save as PDF");
    expect(html).toContain("@page { size: A4");
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);

    expect(html).toContain(`<div class="organization">${await organizationName()}</div>`);
    expect(html).toContain("Donation receipt");
    expect(html).toContain(gift.donation.code);
    expect(html).toContain(`${person.first_name} ${person.last_name}`);
    expect(html).toContain("12 Harbour Street");
    expect(html).toContain("6011 Wellington");
    expect(html).toContain("€25.50");
    expect(html).toContain("One-off");
    expect(html).toContain(localDay(gift.donation.completed_date));
    expect(html).toContain(gift.payment.payment_method.label);
    expect(html).toContain("Clean water &lt;for&gt; everyone");
    expect(html).not.toContain("Refunded");
  });

  it("prints the bank transfer details and reference on a bank transfer gift's receipt, not on a card gift's", async () => {
    await updateBankAccount(server.database.db, tenant.organizationId, {
      account_name: "Clean Water Trust",
      iban: "GB82 WEST 1234 5698 7654 32",
      bic: "WESTGB2L",
    });
    const gift = await give(donor(), 40, 0, "manual");
    const markPaid = await fetch(`${server.url}/api/v1/payments/${gift.payment.id}/mark_paid`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(markPaid.status).toBe(200);
    const receipt = await open(links.receiptUrl(tenant.organizationId, gift.donation.id));
    expect(receipt.status).toBe(200);
    expect(receipt.html).toContain("<h2>Bank transfer</h2>");
    expect(receipt.html).toContain("<dt>Account holder</dt><dd>Clean Water Trust</dd>");
    expect(receipt.html).toContain("<dt>IBAN</dt><dd>GB82 WEST 1234 5698 7654 32</dd>");
    expect(receipt.html).toContain("<dt>BIC</dt><dd>WESTGB2L</dd>");
    expect(receipt.html).toContain(`<dt>Reference</dt><dd>${gift.donation.code}</dd>`);
    expect(receipt.html).toContain("€40");

    const card = await give(donor(), 12);
    const cardReceipt = await open(card.donation.receipt_url);
    expect(cardReceipt.status).toBe(200);
    expect(cardReceipt.html).not.toContain("<h2>Bank transfer</h2>");
    expect(cardReceipt.html).not.toContain("GB82");
  });

  it("shows the gift and the processing fee the donor covered apart, and the total charged", async () => {
    await server.database.db
      .update(campaigns)
      .set({ allowCoverFee: true })
      .where(and(eq(campaigns.organizationId, tenant.organizationId), eq(campaigns.id, campaign.id)));
    const gift = await give(donor(), 25, 0, "sandbox", true);
    const { html } = await open(gift.donation.receipt_url);
    expect(html).toContain('<dt>Gift</dt><dd><span class="amount">€25.00</span></dd>');
    expect(html).toContain("<dt>Processing fee covered</dt><dd>€1.03</dd>");
    expect(html).toContain("<dt>Total charged</dt><dd>€26.03</dd>");

    const monthly = await give(donor(), 10, 12, "sandbox", true);
    const recurring = await open(monthly.donation.receipt_url);
    expect(recurring.html).toContain('<dt>Gift of each payment</dt><dd><span class="amount">€10.00</span></dd>');
    expect(recurring.html).toContain("<dt>Processing fee covered</dt><dd>€0.59</dd>");
    expect(recurring.html).toContain("<dt>Charged each time</dt><dd>€10.59</dd>");
    expect(recurring.html).toContain('<td class="number">€10.59</td>');

    const plain = await give(donor(), 25);
    expect((await open(plain.donation.receipt_url)).html).not.toContain("Processing fee");
  });

  it("answers 404 to a tampered signature, another organization's signature and an unknown id alike", async () => {
    const gift = await give(donor(), 12);
    const { id } = gift.donation;
    const good = await open(gift.donation.receipt_url);
    expect(good.status).toBe(200);
    const signature = gift.donation.receipt_url.split("/").pop() as string;
    // The link names its organization; a link of the earlier form (the record alone) still opens.
    expect(gift.donation.receipt_url).toBe(
      `${server.url}/documents/receipts/${tenant.organizationId}/${id}/${signature}`,
    );
    const legacy = await open(`${server.url}/documents/receipts/${id}/${signature}`);
    expect(legacy.status).toBe(200);
    expect(withoutNonce(legacy.html)).toBe(withoutNonce(good.html));

    const flipped = `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`;
    const other = await fakeTenant(server.database.db);
    const foreign = links.receiptUrl(other.organizationId, id);
    const misses = [
      `${server.url}/documents/receipts/${id}/${flipped}`,
      `${server.url}/documents/receipts/${id}/${signature.slice(1)}`,
      foreign,
      `${server.url}/documents/receipts/${id + 1_000_000_000}/${signature}`,
      `${server.url}/documents/receipts/abc/${signature}`,
      // The organization in the path is signed too: another one's, or none that parses, opens nothing.
      `${server.url}/documents/receipts/${tenant.organizationId}/${id}/${flipped}`,
      `${server.url}/documents/receipts/${other.organizationId}/${id}/${signature}`,
      `${server.url}/documents/receipts/0${tenant.organizationId}/${id}/${signature}`,
      `${server.url}/documents/receipts/abc/${id}/${signature}`,
      // A statement link is not a receipt link, even for the same id and organization.
      `${server.url}/documents/receipts/${id}/${links.sign("statement", tenant.organizationId, id)}`,
    ];
    const bodies = new Set<string>();
    for (const url of misses) {
      const miss = await open(url);
      expect(miss.status, pathOf(url)).toBe(404);
      expectDocumentHeaders(miss.headers);
      bodies.add(withoutNonce(miss.html));
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain("This document does not exist.");

    const foreignStatement = await open(links.statementUrl(other.organizationId, gift.donation.supporter_id));
    expect(foreignStatement.status).toBe(404);
  });

  it("has no receipt for a donation that was never paid", async () => {
    const db = server.database.db;
    const [row] = await db
      .select()
      .from(supporters)
      .where(eq(supporters.organizationId, tenant.organizationId))
      .limit(1);
    const donation = await fakeDonation(db, tenant.organizationId, {
      supporterId: row?.id as number,
      campaignId: campaign.id,
      state: "pending",
    });
    await fakePayment(db, tenant.organizationId, { donationId: donation.id, state: "FAILED", paymentDate: null });
    await fakePayment(db, tenant.organizationId, { donationId: donation.id, state: "PENDING", paymentDate: null });
    expect((await open(links.receiptUrl(tenant.organizationId, donation.id))).status).toBe(404);
  });

  it("marks a refunded one-off gift and lists the payments of a recurring one, cancelled", async () => {
    const oneOff = await give(donor(), 30);
    await setPayment(oneOff.donation.id, { state: "REFUNDED", refundDate: new Date() });
    await server.database.db
      .update(donations)
      .set({ state: "revoked" })
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, oneOff.donation.id)));
    const refunded = await open(oneOff.donation.receipt_url);
    expect(refunded.status).toBe(200);
    expect(refunded.html).toContain('<div class="stamp">Refunded</div>');

    const monthly = await give(donor(), 9, 12);
    await fakePayment(server.database.db, tenant.organizationId, {
      donationId: monthly.donation.id,
      state: "PAID",
      amount: 9,
      paymentDate: new Date(Date.parse(monthly.donation.completed_date) + 31 * 86_400_000),
    });
    await fakePayment(server.database.db, tenant.organizationId, {
      donationId: monthly.donation.id,
      state: "FAILED",
      amount: 9,
      paymentDate: null,
    });
    const active = await open(monthly.donation.receipt_url);
    expect(active.html).toContain("Monthly");
    expect(active.html).toContain("Payments received");
    expect(active.html.match(/<td>Received<\/td>/g)).toHaveLength(2);
    expect(active.html).toMatch(/Total received<\/td><td class="number">€18\.00</);
    expect(active.html).not.toContain('class="stamp"');

    await server.database.db
      .update(donations)
      .set({ state: "revoked" })
      .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, monthly.donation.id)));
    const cancelled = await open(monthly.donation.receipt_url);
    expect(cancelled.html).toContain('<div class="stamp">Cancelled</div>');
  });

  it("escapes what supporters typed", async () => {
    const gift = await give(donor({ first_name: "<script>alert(1)</script>", last_name: `O'Brien & "Co"` }), 5);
    const receipt = await open(gift.donation.receipt_url);
    expect(receipt.status).toBe(200);
    expect(receipt.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; O&#39;Brien &amp; &quot;Co&quot;");
    expect(receipt.html).not.toContain("<script>alert");
    expect(receipt.html.match(/<script/g)).toHaveLength(1);

    const statement = await statementOf(gift.donation.supporter_id);
    expect(statement.status).toBe(200);
    expect(statement.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(statement.html).not.toContain("<script>alert");
  });

  describe("yearly statement", () => {
    let supporterId: number;
    let codes: Record<"june" | "november" | "refunded" | "newYear", string>;

    beforeAll(async () => {
      const person = donor();
      // Dates are set in the database: the organization's year ends at 11:00 UTC on 31 December.
      const dated = async (amount: number, paymentDate: string, state = "PAID") => {
        const gift = await give(person, amount);
        await setPayment(gift.donation.id, { paymentDate: new Date(paymentDate), state });
        return gift;
      };
      const june = await dated(25.5, "2024-06-15T09:00:00Z");
      const november = await dated(10.25, "2024-11-20T09:00:00Z");
      const refunded = await dated(40, "2024-08-01T09:00:00Z", "REFUNDED");
      const newYear = await dated(7, "2024-12-31T12:00:00Z");
      await fakePayment(server.database.db, tenant.organizationId, {
        donationId: june.donation.id,
        state: "FAILED",
        amount: 99,
        paymentDate: new Date("2024-07-01T09:00:00Z"),
      });
      supporterId = june.donation.supporter_id;
      expect(new Set([november, refunded, newYear].map((gift) => gift.donation.supporter_id))).toEqual(
        new Set([supporterId]),
      );
      codes = {
        june: june.donation.code,
        november: november.donation.code,
        refunded: refunded.donation.code,
        newYear: newYear.donation.code,
      };
    });

    it("lists the year's received payments with their total, not refunded or failed ones", async () => {
      const statement = await statementOf(supporterId, "?year=2024");
      expect(statement.status).toBe(200);
      expectDocumentHeaders(statement.headers);
      const { html } = statement;
      expect(html).toContain("Statement of donations 2024");
      expect(html).toContain(codes.june);
      expect(html).toContain(codes.november);
      expect(html).toContain(localDay("2024-06-15T09:00:00Z"));
      expect(html).toContain("Clean water &lt;for&gt; everyone");
      expect(html).toContain("€25.50");
      expect(html).toContain("€10.25");
      expect(html).toMatch(/Total 2024<\/td><td class="number">€35\.75</);
      expect(html).not.toContain(codes.refunded);
      expect(html).not.toContain("€40.00");
      expect(html).not.toContain("€99.00");
      // 31 December 12:00 UTC is already 2025 in Auckland.
      expect(html).not.toContain(codes.newYear);
      expect(html).toContain('<a href="?year=2025">2025</a>');
      expect(html).toContain("Print / Save as PDF");
    });

    it("opens on the latest year with payments and links the others", async () => {
      const statement = await statementOf(supporterId);
      expect(statement.status).toBe(200);
      expect(statement.html).toContain("Statement of donations 2025");
      expect(statement.html).toContain(codes.newYear);
      expect(statement.html).toContain(localDay("2024-12-31T12:00:00Z"));
      expect(statement.html).toMatch(/Total 2025<\/td><td class="number">€7\.00</);
      expect(statement.html).toContain('<a href="?year=2024">2024</a>');
      expect(statement.html).not.toContain(codes.june);

      const empty = await statementOf(supporterId, "?year=2019");
      expect(empty.status).toBe(200);
      expect(empty.html).toContain("No donation was received from you in 2019.");
    });

    it("answers 400 with an HTML page to a year that is not a year", async () => {
      for (const query of ["?year=abcd", "?year=24", "?year=20245", "?year=1066", "?year=", "?year=2024&year=2025"]) {
        const statement = await statementOf(supporterId, query);
        expect(statement.status, query).toBe(400);
        expectDocumentHeaders(statement.headers);
        expect(statement.html, query).toContain("<h1>Invalid request</h1>");
      }
    });

    it("has no statement for an erased supporter, and their receipts no longer name them", async () => {
      const person = donor();
      const gift = await give(person, 15);
      const url = links.statementUrl(tenant.organizationId, gift.donation.supporter_id);
      expect((await open(url)).status).toBe(200);
      await server.database.db
        .update(supporters)
        .set({ eraseDate: new Date() })
        .where(
          and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.id, gift.donation.supporter_id)),
        );
      const statement = await open(url);
      expect(statement.status).toBe(404);
      expect(statement.html).toContain("This document does not exist.");
      const receipt = await open(gift.donation.receipt_url);
      expect(receipt.status).toBe(200);
      expect(receipt.html).not.toContain(person.first_name);
      expect(receipt.html).toContain("Personal data erased");
    });
  });
});
