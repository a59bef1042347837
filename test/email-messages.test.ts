import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { and, eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { type Config, loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { donations, donorLinks, organizations, outboxMessages, paymentMethods, supporters } from "../src/db/schema.js";
import { enqueueEmail } from "../src/email/outbox.repo.js";
import { donorOrigin } from "../src/events/origin.js";
import { runBilling } from "../src/jobs/runner.js";
import { loadDocumentLinks } from "../src/modules/documents/document-links.js";
import { cancelRecurring, donorActor } from "../src/modules/donations/recurring-changes.service.js";
import { DONOR_COOKIE } from "../src/modules/donor-portal/donor-session.js";
import type { CompletionStep } from "../src/modules/giving/giving.context.js";
import { loadProcessorRegistry } from "../src/payments/processors/index.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES, retryDate } from "../src/payments/schedule.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, TEST_ENCRYPTION_KEY } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

/**
 * The donor-facing messages end to end: gifts made through the public checkout API, renewals run by
 * the worker (`runBilling`) with a moving clock, every message delivered to a real SMTP server
 * (smtp-server, parsed with mailparser) and its links opened on the real server.
 *
 * `runBilling` (renewals, card-expiry scan, digests) works on every organization at once, so with a
 * clock moved ahead it would act on other test files' records: this file runs on a database of its
 * own (a fresh PGlite, or on PostgreSQL a database created next to the run's and dropped at the end).
 */

const CARD_OK = "4242424242424242";
const CARD_FAILS_ON_RENEWAL = "4000000000000341";
const IBAN = "IT60X0542811101000000123456";
const MINUTE = 60_000;
const DAY = 86_400_000;

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

interface MessagesServer {
  url: string;
  app: FastifyInstance;
  config: Config;
  database: Database;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let smtp: TestSmtpServer;
let server: MessagesServer;
let dropDatabase: (() => Promise<void>) | undefined;
let failAt: CompletionStep | null = null;
/** The main organization: an address, a bank account, a notice for each gift. */
let tenant: Tenant;
let campaignSlug: string;
let campaignTitle: string;
const ORG_EMAIL = `office-${unique(6)}@charity.test`;

const db = () => server.database.db;
const at = (date: Date | string, offsetMs = 0) => new Date(new Date(date).getTime() + offsetMs);

async function startMessagesServer(databaseUrl: string | undefined): Promise<MessagesServer> {
  const database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4 });
  if (!databaseUrl) await database.migrate();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig(
    { LOG_LEVEL: "silent", AUTH_URL: origin, BASE_URL: origin, DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY },
    { smtpUrl: smtp.url, mailFrom: "donations@donata.test" },
  );
  const app = await buildApp({
    config,
    database,
    testHooks: {
      afterCompletionStep: (step) => {
        if (step === failAt) throw new Error(`injected failure after ${step}`);
      },
    },
  });
  const url = await app.listen({ port, host: "127.0.0.1" });
  return {
    url,
    app,
    config,
    database,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

const billing = async (now: Date) =>
  runBilling(db(), {
    now,
    checkoutTtlSeconds: server.config.checkoutTtlSeconds,
    pendingTimeoutSeconds: server.config.paymentPendingTimeoutSeconds,
    links: await loadDocumentLinks(db(), server.config.baseUrl),
    processors: loadProcessorRegistry(db(), server.config),
  });

async function request(method: "GET" | "POST", path: string, options: { token?: string; body?: unknown } = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return readResponse(response);
}

interface Gift {
  frequency?: 0 | 1 | 12;
  amount?: number;
  card?: string;
  processor?: "sandbox" | "manual";
  organization?: Tenant;
  campaign?: string;
  email?: string;
  firstName?: string;
  headers?: Record<string, string>;
}

/** Starts a checkout and completes it as the donation form does; returns the response and the donor's address. */
async function complete(gift: Gift = {}) {
  const { frequency = 0, amount = 25, processor = "sandbox", organization = tenant } = gift;
  const email = gift.email ?? `donor-${unique(8)}@example.test`;
  const started = await request(
    "POST",
    `/api/v1/public/organizations/${organization.slug}/campaigns/${gift.campaign ?? campaignSlug}/checkouts/`,
    { body: { amount, frequency } },
  );
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const body = JSON.stringify({
    client_secret: started.body.client_secret,
    amount,
    frequency,
    processor,
    ...(processor === "sandbox"
      ? { card: { number: gift.card ?? CARD_OK, exp_month: 12, exp_year: 2035, cvc: "123" } }
      : {}),
    supporter: { email, first_name: gift.firstName ?? "Ada", last_name: "Lovelace" },
    consents: { privacy: true, email_marketing: false },
  });
  /** Posts the completion (again: a retry or a replay of the same request). */
  const send = async () =>
    readResponse(
      await fetch(
        `${server.url}/api/v1/public/organizations/${organization.slug}/checkouts/${started.body.id}/complete`,
        {
          method: "POST",
          headers: { "content-type": "application/json", ...gift.headers },
          body,
        },
      ),
    );
  return { response: await send(), email, send };
}

async function give(gift: Gift = {}) {
  const { response, email } = await complete(gift);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { body: response.body as Json, donation: response.body.donation as Json, email };
}

const flush = (organizationIds: number[] = [tenant.organizationId]) => flushOutbox(server, organizationIds);

/** The outbox rows of an organization (one kind, one donation), oldest first. */
async function outbox(organizationId: number, filters: { kind?: string; donationId?: number; to?: string } = {}) {
  return db()
    .select()
    .from(outboxMessages)
    .where(
      and(
        eq(outboxMessages.organizationId, organizationId),
        filters.kind ? eq(outboxMessages.kind, filters.kind) : undefined,
        filters.donationId ? eq(outboxMessages.donationId, filters.donationId) : undefined,
        filters.to ? eq(outboxMessages.toAddress, filters.to) : undefined,
      ),
    )
    .orderBy(outboxMessages.id);
}

/** The one message of this kind the SMTP server received for the address (by the X-Donata-Message header). */
function received(to: string, kind: string): ParsedMail[] {
  return smtp.to(to).filter((mail) => mail.headers.get("x-donata-message") === kind);
}

function only(to: string, kind: string): ParsedMail {
  const mails = received(to, kind);
  expect(mails, `${kind} messages to ${to}`).toHaveLength(1);
  return mails[0] as ParsedMail;
}

/** Transactional mail: sent as the organization, replies to it, marked automatic, never with an unsubscribe link. */
function expectTransactionalHeaders(mail: ParsedMail, organizationName: string, replyTo: string | null = ORG_EMAIL) {
  expect(mail.from?.value).toEqual([{ address: "donations@donata.test", name: organizationName }]);
  if (replyTo) expect(mail.replyTo?.value).toEqual([{ address: replyTo, name: "" }]);
  expect(mail.headers.get("auto-submitted")).toBe("auto-generated");
  expect(mail.messageId).toMatch(/^<outbox\.\d+\.\d+@127\.0\.0\.1>$/);
  expect(mail.headers.has("list-unsubscribe")).toBe(false);
  expect(typeof mail.html).toBe("string");
  expect(mail.text?.length).toBeGreaterThan(50);
  // Every link of the HTML part is in the text part too.
  for (const link of linksOf(mail.html)) expect(mail.text).toContain(link);
}

const organizationName = async (organizationId: number) => {
  const [row] = await db().select().from(organizations).where(eq(organizations.id, organizationId));
  return row?.name as string;
};

/** Follows a receipt's portal link: it signs the donor in (a cookie) and the portal lists the gift. */
async function expectSignedInPortal(link: string, organization: Tenant, donationCode: string) {
  expect(link).toMatch(new RegExp(`^${server.url}/donor/${organization.slug}/enter\\?token=dnt_dl_`));
  const entered = await fetch(link, { redirect: "manual" });
  expect(entered.status).toBe(303);
  expect(entered.headers.get("location")).toBe(`/donor/${organization.slug}/`);
  const cookie = (entered.headers.get("set-cookie") ?? "").split(";")[0] as string;
  expect(cookie).toMatch(new RegExp(`^${DONOR_COOKIE}=`));
  const home = await fetch(`${server.url}/donor/${organization.slug}/`, { headers: { cookie }, redirect: "manual" });
  expect(home.status).toBe(200);
  expect(await home.text()).toContain(donationCode);
}

const giftPage = (organization: Tenant, donationId: number) =>
  `${server.url}/donor/${organization.slug}/gifts/${donationId}`;

beforeAll(async () => {
  smtp = await startSmtpServer();
  const sharedUrl = testDatabaseUrl();
  let databaseUrl: string | undefined;
  if (sharedUrl) {
    const created = await createPrivateDatabase(sharedUrl, "messages", { migrate: true });
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
  server = await startMessagesServer(databaseUrl);
  tenant = await fakeTenant(db());
  await db()
    .update(organizations)
    .set({ email: ORG_EMAIL, giftNotifications: "each", iban: IBAN, bic: "BPMOIT22", bankAccountName: "Charity Trust" })
    .where(eq(organizations.id, tenant.organizationId));
  const campaign = await fakeCampaign(db(), tenant.organizationId, {
    slug: `messages-${unique()}`,
    title: `School kits ${unique(4)}`,
    hasOneOff: true,
    hasSubscription: true,
    allowCustomAmount: true,
    allowCustomSubscriptionAmount: true,
    minAmount: 1,
    maxAmount: 10_000,
    minSubscriptionAmount: 1,
    maxSubscriptionAmount: 10_000,
    archiveDate: null,
  });
  campaignSlug = campaign.slug as string;
  campaignTitle = campaign.title;
});

beforeEach(() => {
  failAt = null;
});

afterAll(async () => {
  try {
    await server?.close();
    await smtp?.close();
  } finally {
    await dropDatabase?.();
  }
});

describe("receipts", () => {
  it("a one-off gift: a receipt with both parts, the organization as sender, and links that open", async () => {
    const { donation, email, body } = await give({ amount: 25, firstName: "Grace" });
    const [row, ...others] = await outbox(tenant.organizationId, { kind: "receipt", donationId: donation.id });
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      toAddress: email,
      dedupeKey: `receipt:payment:${body.payment.id}`,
      data: { payment_id: body.payment.id },
      state: "queued",
    });
    // No thank-you for a recurring gift on a one-off.
    expect(await outbox(tenant.organizationId, { kind: "recurring_welcome", donationId: donation.id })).toEqual([]);

    expect(await flush()).toMatchObject({ failed: 0, retried: 0, cancelled: 0 });
    const name = await organizationName(tenant.organizationId);
    const mail = only(email, "receipt");
    expect(mail.subject).toBe(`Your receipt for your gift to ${name}`);
    expect(mail.to).toMatchObject({ value: [{ address: email }] });
    expectTransactionalHeaders(mail, name);
    expect(mail.text).toContain("Dear Grace,");
    expect(mail.text).toContain(`Thank you for your gift of €25.00 to ${name}.`);
    expect(mail.text).toContain(`Reference: ${donation.code}`);
    expect(mail.text).toContain(`Campaign: ${campaignTitle}`);
    expect(mail.text).toContain("Paid with: Visa •••• 4242");
    expect(mail.html).toContain("€25.00");

    // Every link works: the payment's issued receipt and its PDF, the portal link signs the donor in.
    const links = linksOf(mail.html);
    expect(links).toHaveLength(3);
    expect(links[0]).toMatch(/\/documents\/tax-receipts\/\d+\/\d+\/[\w-]+$/);
    expect(links[1]).toBe(`${links[0]}/pdf`);
    const receipt = await fetch(links[0] as string);
    expect(receipt.status).toBe(200);
    const page = await receipt.text();
    expect(page).toContain(donation.code);
    expect(page).toContain("€25.00");
    const pdf = await fetch(links[1] as string);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect((await pdf.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect(mail.text).toContain(`Download the receipt (PDF): ${links[1]}`);
    await expectSignedInPortal(links[2] as string, tenant, donation.code);
    // The link's token is stored only as a hash.
    const token = new URL(links[2] as string).searchParams.get("token") as string;
    const stored = await db().select().from(donorLinks).where(eq(donorLinks.organizationId, tenant.organizationId));
    expect(stored.map((link) => link.purpose)).toContain("receipt");
    expect(JSON.stringify(stored)).not.toContain(token);

    // Sent once: a second pass has nothing to send.
    expect(await flush()).toMatchObject({ sent: 0 });
    expect(received(email, "receipt")).toHaveLength(1);
  });

  it("a monthly gift: a receipt and the thank-you for a regular gift, with the gift's portal page", async () => {
    const { donation, email } = await give({ frequency: 12, amount: 10 });
    expect(
      (await outbox(tenant.organizationId, { donationId: donation.id })).map((row) => [row.kind, row.dedupeKey]),
    ).toEqual([
      ["receipt", expect.stringMatching(/^receipt:payment:\d+$/)],
      ["recurring_welcome", `recurring_welcome:donation:${donation.id}`],
      ["gift_notification", `gift_notification:donation:${donation.id}`],
    ]);
    await flush();
    const name = await organizationName(tenant.organizationId);
    expect(only(email, "receipt").subject).toBe(`Your receipt for your gift to ${name}`);
    const welcome = only(email, "recurring_welcome");
    expect(welcome.subject).toBe(`Thank you for your regular gift to ${name}`);
    expectTransactionalHeaders(welcome, name);
    expect(welcome.text).toContain(`Thank you for choosing to give €10.00 monthly to ${campaignTitle}.`);
    const next = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(
      cycleDueDate(new Date(donation.completed_date), 12, 1),
    );
    expect(welcome.text).toContain(`The next payment will be taken on ${next}.`);
    expect(linksOf(welcome.html)).toEqual([giftPage(tenant, donation.id)]);
  });

  it("renewals: each paid renewal sends its receipt; a supporter without an address gets nothing", async () => {
    const { donation, email } = await give({ frequency: 12, amount: 12.5 });
    const start = new Date(donation.completed_date);
    await billing(at(cycleDueDate(start, 12, 1), MINUTE));
    const receipts = await outbox(tenant.organizationId, { kind: "receipt", donationId: donation.id });
    expect(receipts).toHaveLength(2);
    await flush();
    const mails = received(email, "receipt");
    expect(mails).toHaveLength(2);
    const renewal = mails.find((mail) => mail.text?.includes("has been received")) as ParsedMail;
    expect(renewal.text).toContain(`Your monthly gift of €12.50 to ${await organizationName(tenant.organizationId)}`);
    expect(renewal.text).toContain(`Reference: ${donation.code}`);
    // The renewal sends no second welcome, and the organization hears of new gifts only.
    expect(await outbox(tenant.organizationId, { kind: "recurring_welcome", donationId: donation.id })).toHaveLength(1);
    expect(await outbox(tenant.organizationId, { kind: "gift_notification", donationId: donation.id })).toHaveLength(1);

    // The supporter's address is removed: the next renewal is charged, and no receipt is written.
    await db()
      .update(supporters)
      .set({ email: null })
      .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.id, donation.supporter_id)));
    await billing(at(cycleDueDate(start, 12, 2), MINUTE));
    expect(await outbox(tenant.organizationId, { kind: "receipt", donationId: donation.id })).toHaveLength(2);
  });
});

describe("failed renewals", () => {
  it("each failure tells the donor what happened, when it is retried and where to update the card; the last one stops the gift", async () => {
    const { donation, email } = await give({ frequency: 12, amount: 8, card: CARD_FAILS_ON_RENEWAL });
    let clock = at(cycleDueDate(new Date(donation.completed_date), 12, 1), MINUTE);
    await billing(clock);
    const [failed] = await outbox(tenant.organizationId, { kind: "renewal_failed", donationId: donation.id });
    expect(failed?.dedupeKey).toMatch(/^renewal_failed:payment:\d+$/);
    expect(failed?.data).toMatchObject({ retry_date: retryDate(clock, 1).toISOString() });
    await flush();
    const name = await organizationName(tenant.organizationId);
    const mail = only(email, "renewal_failed");
    expect(mail.subject).toBe(`Your gift to ${name} could not be collected`);
    expectTransactionalHeaders(mail, name);
    const day = (date: Date) => new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" }).format(date);
    expect(mail.text).toContain("We tried to collect your monthly gift of €8.00 on");
    expect(mail.text).toContain("but your bank declined the payment.");
    expect(mail.text).toContain(`We will try again on ${day(retryDate(clock, 1))}.`);
    expect(linksOf(mail.html)).toEqual([giftPage(tenant, donation.id)]);

    // The retries fail too; the last failure stops the gift and says so, instead of a sixth failure notice.
    const gaps = [2, 2, 5, 5, 5];
    for (const gap of gaps) {
      clock = at(clock, gap * DAY);
      await billing(clock);
    }
    const row = (await db().select().from(donations).where(eq(donations.id, donation.id)))[0];
    expect(row?.state).toBe("revoked");
    expect(await outbox(tenant.organizationId, { kind: "renewal_failed", donationId: donation.id })).toHaveLength(
      MAX_RENEWAL_FAILURES - 1,
    );
    const [cancelled, ...more] = await outbox(tenant.organizationId, {
      kind: "recurring_cancelled",
      donationId: donation.id,
    });
    expect(more).toEqual([]);
    expect(cancelled).toMatchObject({
      dedupeKey: `recurring_cancelled:donation:${donation.id}`,
      data: { by: "failed_payments" },
    });
    await flush();
    expect(received(email, "renewal_failed")).toHaveLength(MAX_RENEWAL_FAILURES - 1);
    const stopped = only(email, "recurring_cancelled");
    expect(stopped.subject).toBe(`Your regular gift to ${name} has stopped`);
    expectTransactionalHeaders(stopped, name);
    expect(stopped.text).toContain(
      `We could not collect your monthly gift of €8.00 to ${campaignTitle} after several attempts, so we have stopped it.`,
    );
    expect(stopped.text).toContain("No further payments will be taken.");
    expect(linksOf(stopped.html)).toEqual([giftPage(tenant, donation.id)]);
  });
});

describe("bank transfer", () => {
  it("a donor who chooses a transfer gets the account, the amount and the donation code; the receipt follows when it arrives", async () => {
    const { body, donation, email } = await give({ processor: "manual", amount: 60 });
    expect(body.result).toBe("pending");
    expect(await outbox(tenant.organizationId, { donationId: donation.id })).toMatchObject([
      { kind: "bank_transfer", dedupeKey: `bank_transfer:donation:${donation.id}`, toAddress: email },
    ]);
    await flush();
    const name = await organizationName(tenant.organizationId);
    const mail = only(email, "bank_transfer");
    expect(mail.subject).toBe(`How to complete your bank transfer to ${name}`);
    expectTransactionalHeaders(mail, name);
    expect(mail.text).toContain("Account holder: Charity Trust");
    expect(mail.text).toContain("IBAN: IT60 X054 2811 1010 0000 0123 456");
    expect(mail.text).toContain("BIC/SWIFT: BPMOIT22");
    expect(mail.text).toContain("Amount: €60.00");
    expect(mail.text).toContain(`Reference: ${donation.code}`);
    expect(mail.html).toContain("IT60 X054 2811 1010 0000 0123 456");
    expect(mail.html).toContain(donation.code);
    expect(received(email, "receipt")).toEqual([]);

    const paid = await request("POST", `/api/v1/payments/${body.payment.id}/mark_paid`, { token: tenant.token });
    expect(paid.status).toBe(200);
    await flush();
    const receipt = only(email, "receipt");
    expect(receipt.text).toContain("Thank you for your gift of €60.00");
    const [receiptLink, pdfLink, portalLink] = linksOf(receipt.html);
    expect(pdfLink).toBe(`${receiptLink}/pdf`);
    const page = await fetch(receiptLink as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(donation.code);
    await expectSignedInPortal(portalLink as string, tenant, donation.code);
  });

  it("a gift a member records as received offline sends the donor nothing, and the organization no notice", async () => {
    const { donation } = await give({ amount: 15 });
    const offline = await request("POST", "/api/v1/donations/", {
      token: tenant.token,
      body: { supporter_id: donation.supporter_id, campaign_id: donation.campaign_id, amount: 50, label: "Cheque" },
    });
    expect(offline.status, JSON.stringify(offline.body)).toBe(201);
    const recorded = offline.body.donation as Json;
    expect(recorded).toMatchObject({ id: expect.any(Number), state: "done" });
    // Its events are recorded (payment.paid for whoever waits for payments), but no message follows from them.
    expect(await outbox(tenant.organizationId, { donationId: recorded.id as number })).toEqual([]);
  });
});

describe("organization notices", () => {
  it("'each': one notice per new gift to the organization's address, with the gift's admin page", async () => {
    const { donation } = await give({ amount: 42, firstName: "Marie" });
    await flush();
    const notices = smtp
      .to(ORG_EMAIL)
      .filter((mail) => mail.headers.get("x-donata-message") === "gift_notification")
      .filter((mail) => mail.text?.includes(donation.code));
    expect(notices).toHaveLength(1);
    const notice = notices[0] as ParsedMail;
    expect(notice.subject).toBe("New gift: €42.00 from Marie Lovelace");
    expect(notice.text).toContain(`Marie Lovelace has just given €42.00 (one-off) to ${campaignTitle}.`);
    expect(linksOf(notice.html)).toEqual([`${server.url}/admin/o/${tenant.slug}/donations/${donation.id}`]);
    expect(notice.headers.get("auto-submitted")).toBe("auto-generated");
    // Addressed to the organization, not to a donor: its own footer, no "you gave to…".
    expect(notice.text).toContain("(gift notifications)");
    expect(notice.text).not.toContain("because you gave to");
  });

  it("'daily': yesterday's gifts in one digest, once per day, in the organization's time zone; none for a day without gifts", async () => {
    const daily = await fakeTenant(db());
    const digestEmail = `digest-${unique(6)}@charity.test`;
    await db()
      .update(organizations)
      .set({ email: digestEmail, giftNotifications: "daily", timeZone: "Pacific/Auckland" })
      .where(eq(organizations.id, daily.organizationId));
    const campaign = await fakeCampaign(db(), daily.organizationId, {
      slug: `daily-${unique()}`,
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 1,
      maxAmount: 10_000,
      archiveDate: null,
    });
    const first = await give({
      organization: daily,
      campaign: campaign.slug as string,
      amount: 10,
      firstName: "Ann <b>",
    });
    const second = await give({
      organization: daily,
      campaign: campaign.slug as string,
      amount: 5.5,
      firstName: "Bob",
    });
    // No notice per gift on daily.
    expect(await outbox(daily.organizationId, { kind: "gift_notification" })).toEqual([]);
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Pacific/Auckland" }).format(new Date());
    // Still today in Auckland: nothing yet.
    await billing(new Date());
    expect(await outbox(daily.organizationId, { kind: "gift_digest" })).toEqual([]);
    // The next day there: one digest of today's gifts; another run the same day adds nothing.
    // 23:00 UTC is the next day's late morning in Auckland (UTC+12 or +13).
    const tomorrow = new Date(`${today}T23:00:00Z`);
    await billing(tomorrow);
    await billing(at(tomorrow, 3600_000));
    const digests = await outbox(daily.organizationId, { kind: "gift_digest" });
    expect(digests).toMatchObject([
      { dedupeKey: `gift_digest:${today}`, toAddress: digestEmail, data: { date: today } },
    ]);
    // The day after: no gifts the day before, no digest.
    await billing(at(tomorrow, DAY));
    expect(await outbox(daily.organizationId, { kind: "gift_digest" })).toHaveLength(1);

    await flush([daily.organizationId]);
    const mail = only(digestEmail, "gift_digest");
    const dayText = new Intl.DateTimeFormat("en", { dateStyle: "full", timeZone: "UTC" }).format(
      new Date(`${today}T12:00:00Z`),
    );
    expect(mail.subject).toBe(`Gifts received on ${dayText}: 2`);
    // What donors typed is text: escaped in the HTML part, as typed in the text part.
    expect(mail.text).toContain("Ann <b> Lovelace");
    expect(mail.html).toContain("Ann &lt;b&gt; Lovelace");
    expect(mail.html).not.toContain("Ann <b>");
    expect(mail.text).toContain("Bob Lovelace");
    expect(mail.text).toContain("Total: €15.50");
    expect(linksOf(mail.html)).toEqual([
      `${server.url}/admin/o/${daily.slug}/donations/${first.donation.id}`,
      `${server.url}/admin/o/${daily.slug}/donations/${second.donation.id}`,
      `${server.url}/admin/o/${daily.slug}/donations`,
    ]);
  });
});

describe("card expiring", () => {
  it("warns once per card when it expires before the next renewal due within 30 days", async () => {
    const { donation, email } = await give({ frequency: 12, amount: 9 });
    const [row] = await db().select().from(donations).where(eq(donations.id, donation.id));
    const next = row?.nextChargeDate as Date;
    // The card runs out at the end of the month before the renewal's.
    const before = new Date(next);
    before.setUTCDate(1);
    before.setUTCMonth(before.getUTCMonth() - 1);
    await db()
      .update(paymentMethods)
      .set({ expiryMonth: before.getUTCMonth() + 1, expiryYear: before.getUTCFullYear() })
      .where(eq(paymentMethods.id, row?.paymentMethodId as number));

    // More than 30 days ahead: not yet.
    await billing(at(next, -31 * DAY));
    expect(await outbox(tenant.organizationId, { kind: "card_expiring", donationId: donation.id })).toEqual([]);
    // Within 30 days: once, however many runs.
    await billing(at(next, -20 * DAY));
    await billing(at(next, -19 * DAY));
    expect(await outbox(tenant.organizationId, { kind: "card_expiring", donationId: donation.id })).toMatchObject([
      { dedupeKey: `card_expiring:${donation.id}:${row?.paymentMethodId}`, toAddress: email },
    ]);
    await flush();
    const name = await organizationName(tenant.organizationId);
    const mail = only(email, "card_expiring");
    expect(mail.subject).toBe(`Your card expires before your next gift to ${name}`);
    expectTransactionalHeaders(mail, name);
    const expiry = `${String(before.getUTCMonth() + 1).padStart(2, "0")}/${before.getUTCFullYear()}`;
    expect(mail.text).toContain(`The card you give with (Visa •••• 4242) expires at the end of ${expiry}.`);
    expect(linksOf(mail.html)).toEqual([giftPage(tenant, donation.id)]);

    // A card valid past the renewal: no warning for another gift.
    const other = await give({ frequency: 12, amount: 9 });
    const [otherRow] = await db().select().from(donations).where(eq(donations.id, other.donation.id));
    await db()
      .update(paymentMethods)
      .set({ expiryMonth: 12, expiryYear: 2035 })
      .where(eq(paymentMethods.id, otherRow?.paymentMethodId as number));
    await billing(at(otherRow?.nextChargeDate as Date, -10 * DAY));
    expect(await outbox(tenant.organizationId, { kind: "card_expiring", donationId: other.donation.id })).toEqual([]);
  });
});

describe("other messages and tenancy", () => {
  it("the yearly statement: the year's total and a statement link that opens on that year", async () => {
    const first = await give({ amount: 30, firstName: "Stella" });
    const second = await give({ amount: 12.35, email: first.email });
    const supporterId = first.donation.supporter_id as number;
    expect(second.donation.supporter_id).toBe(supporterId);
    const year = Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone: "UTC" }).format(new Date()));
    await db().transaction((tx) =>
      enqueueEmail(tx, {
        organizationId: tenant.organizationId,
        kind: "statement",
        to: first.email,
        supporterId,
        data: { year },
        dedupeKey: `statement:${year}:${supporterId}`,
      }),
    );
    await flush();
    const name = await organizationName(tenant.organizationId);
    const mail = only(first.email, "statement");
    expect(mail.subject).toBe(`Your ${year} statement of donations to ${name}`);
    expectTransactionalHeaders(mail, name);
    expect(mail.text).toContain("Dear Stella,");
    expect(mail.text).toContain(`Total given in ${year}: €42.35`);
    expect(mail.text).toContain("Number of payments: 2");
    // The donor's statement of the year, issued as the email was delivered (docs/receipts.md), and its PDF.
    const [link, ...others] = linksOf(mail.html);
    expect(link).toMatch(/\/documents\/tax-receipts\/\d+\/\d+\/[\w-]+$/);
    expect(others).toEqual([`${link}/pdf`]);
    const page = await fetch(link as string);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`Statement of donations ${year}`);
    expect(html).toContain(first.donation.code);
    expect(html).toContain(second.donation.code);
  });

  it("a gift stopped by the donor or by the organization says who, and the donor's reason", async () => {
    const { donation, email } = await give({ frequency: 1, amount: 120 });
    // The donor's own cancel (the portal's service), with a reason: its donation.updated event sends the notice.
    await cancelRecurring(
      { db: db() },
      tenant.organizationId,
      donation.id as number,
      { reason: "I give through my employer now" },
      donorActor(donorOrigin(donation.supporter_id as number)),
    );
    await flush();
    const mail = only(email, "recurring_cancelled");
    expect(mail.text).toContain(`As you asked, your yearly gift of €120.00 to ${campaignTitle} has been stopped.`);
    expect(mail.text).toContain("Reason given: I give through my employer now");
    // Once per donation: a second cancel is refused and writes no second notice.
    const again = await request("POST", `/api/v1/donations/${donation.id}/cancel`, { token: tenant.token });
    expect(again.status).toBe(409);
    expect(await outbox(tenant.organizationId, { kind: "recurring_cancelled", donationId: donation.id })).toHaveLength(
      1,
    );

    const other = await give({ frequency: 12, amount: 7 });
    const cancelled = await request("POST", `/api/v1/donations/${other.donation.id}/cancel`, { token: tenant.token });
    expect(cancelled.status).toBe(200);
    await flush();
    const byAdmin = only(other.email, "recurring_cancelled");
    expect(byAdmin.text).toContain(
      `${await organizationName(tenant.organizationId)} has stopped your monthly gift of €7.00 to ${campaignTitle}.`,
    );
    expect(byAdmin.text).not.toContain("Reason given");
  });

  it("a message never reads another organization's records: a forged row is cancelled, nothing is sent", async () => {
    const stranger = await fakeTenant(db());
    const { donation, body } = await give({ amount: 11 });
    const to = `forged-${unique(6)}@example.test`;
    // A receipt of the stranger's organization naming this organization's donation and payment.
    const forged = await db().transaction(async (tx) => [
      await enqueueEmail(tx, {
        organizationId: stranger.organizationId,
        kind: "receipt",
        to,
        donationId: donation.id,
        data: { payment_id: body.payment.id },
      }),
      await enqueueEmail(tx, {
        organizationId: stranger.organizationId,
        kind: "gift_notification",
        to,
        donationId: donation.id,
      }),
      await enqueueEmail(tx, { organizationId: stranger.organizationId, kind: "gift_digest", to, data: { date: "x" } }),
    ]);
    // And one of this organization naming its own donation with another donation's payment.
    const mismatched = await give({ amount: 13 });
    await db().transaction((tx) =>
      enqueueEmail(tx, {
        organizationId: tenant.organizationId,
        kind: "receipt",
        to,
        donationId: mismatched.donation.id,
        data: { payment_id: body.payment.id },
      }),
    );
    expect(await flush([stranger.organizationId, tenant.organizationId])).toMatchObject({ failed: 0 });
    expect(smtp.to(to)).toEqual([]);
    const rows = [...(await outbox(stranger.organizationId)), ...(await outbox(tenant.organizationId, { to }))];
    expect(rows.map((row) => row.state)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled"]);
    expect(rows.slice(0, 3).map((row) => row.id)).toEqual(forged);
  });
});

describe("transactions and languages", () => {
  it("a checkout whose settling transaction rolls back writes no message and sends nothing; its retry sends one receipt", async () => {
    const key = { "idempotency-key": `key-${unique()}` };
    const email = `rolled-back-${unique(6)}@example.test`;
    const before = (await outbox(tenant.organizationId)).length;
    failAt = "checkout";
    const failed = await complete({ email, headers: key, frequency: 12 });
    failAt = null;
    expect(failed.response.status).toBe(500);
    expect(await outbox(tenant.organizationId)).toHaveLength(before);
    await flush();
    expect(smtp.to(email)).toEqual([]);

    // The donor's retry settles the charge the processor holds: one receipt and one welcome; a replay adds nothing.
    const retried = await failed.send();
    expect(retried.status).toBe(200);
    const replayed = await failed.send();
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect((await outbox(tenant.organizationId, { to: email })).map((row) => row.kind)).toEqual([
      "receipt",
      "recurring_welcome",
    ]);
    await flush();
    expect(received(email, "receipt")).toHaveLength(1);
    expect(received(email, "recurring_welcome")).toHaveLength(1);
  });

  it("a donor who gave in Italian reads Italian, the organization's notice stays in its language; the next gift's language wins", async () => {
    const email = `lingua-${unique(8)}@example.test`;
    await give({
      email,
      frequency: 12,
      amount: 10,
      firstName: "Lucia",
      headers: { "accept-language": "it-IT,it;q=0.9" },
    });
    await flush();
    const name = await organizationName(tenant.organizationId);
    expect(only(email, "receipt").subject).toBe(`La ricevuta della tua donazione a ${name}`);
    expect(only(email, "recurring_welcome").subject).toBe(`Grazie per la tua donazione periodica a ${name}`);
    const notice = received(ORG_EMAIL, "gift_notification").at(-1);
    expect(notice?.subject).toMatch(/^New gift: €10.00 /);
    // A bare client's wildcard states no language: the donor keeps theirs; a stated one replaces it.
    await give({ email, amount: 5, headers: { "accept-language": "*" } });
    await flush();
    expect(received(email, "receipt").at(-1)?.subject).toBe(`La ricevuta della tua donazione a ${name}`);
    await give({ email, amount: 6, headers: { "accept-language": "en-GB" } });
    await flush();
    expect(received(email, "receipt").at(-1)?.subject).toBe(`Your receipt for your gift to ${name}`);
  });

  it("an Italian organization writes in Italian", async () => {
    const italian = await fakeTenant(db());
    await db()
      .update(organizations)
      .set({ locale: "it", email: `ufficio-${unique(6)}@charity.test` })
      .where(eq(organizations.id, italian.organizationId));
    const campaign = await fakeCampaign(db(), italian.organizationId, {
      slug: `it-${unique()}`,
      hasOneOff: true,
      hasSubscription: true,
      allowCustomAmount: true,
      allowCustomSubscriptionAmount: true,
      minAmount: 1,
      maxAmount: 10_000,
      minSubscriptionAmount: 1,
      maxSubscriptionAmount: 10_000,
      archiveDate: null,
    });
    const { email } = await give({
      organization: italian,
      campaign: campaign.slug as string,
      frequency: 12,
      amount: 15,
      firstName: "Lucia",
    });
    await flush([italian.organizationId]);
    const name = await organizationName(italian.organizationId);
    const receipt = only(email, "receipt");
    expect(receipt.subject).toBe(`La ricevuta della tua donazione a ${name}`);
    expect(receipt.text).toContain("Gentile Lucia,");
    expect(receipt.text).toContain(`Grazie per la tua donazione di 15,00\u00a0€ a ${name}.`);
    expect(only(email, "recurring_welcome").subject).toBe(`Grazie per la tua donazione periodica a ${name}`);
  });
});
