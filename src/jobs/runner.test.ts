import { randomBytes } from "node:crypto";
import { and, asc, eq, inArray, like } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createPrivateDatabase, testDatabaseUrl } from "../../test/helpers/database.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "../../test/helpers/factories.js";
import { readResponse, TEST_ENCRYPTION_KEY } from "../../test/helpers/server.js";
import { buildApp } from "../app.js";
import { type Config, loadConfig } from "../config.js";
import { type Database, openDatabase } from "../db/client.js";
import { checkouts, donations, jobs, paymentMethods, payments, sandboxCharges } from "../db/schema.js";
import { type DocumentLinks, loadDocumentLinks } from "../modules/documents/document-links.js";
import { loadProcessorRegistry, type ProcessorRegistry } from "../payments/processors/index.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES, monthsPerCycle, retryDate } from "../payments/schedule.js";
import { type BillingRunResult, runBilling } from "./runner.js";

/**
 * The renewal worker end to end: recurring donations made through the public checkout API, then
 * `runBilling` driven with a moving clock, checked through the REST API and the database.
 *
 * `runBilling` works on every organization's jobs and checkouts at once, so with a clock years
 * ahead it would charge and expire other test files' records on the shared PostgreSQL database.
 * This file therefore runs on a database of its own: a fresh in-memory PGlite, or on PostgreSQL a
 * database created (and migrated) next to the run's test database and dropped at the end.
 */

const CARD_OK = "4242424242424242";
const CARD_FAILS_ON_RENEWAL = "4000000000000341";
const MINUTE = 60_000;
const DAY = 86_400_000;
const NOTHING: BillingRunResult = {
  renewed: 0,
  failed: 0,
  revoked: 0,
  skipped: 0,
  errors: 0,
  expired_checkouts: 0,
  reconciled: 0,
};

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;
interface Response {
  status: number;
  headers: Headers;
  body: Json;
}

interface BillingServer {
  url: string;
  links: DocumentLinks;
  processors: ProcessorRegistry;
  app: FastifyInstance;
  config: Config;
  database: Database;
  /** The private database's URL on PostgreSQL; undefined on PGlite. */
  databaseUrl: string | undefined;
  request(method: "GET" | "POST", path: string, options?: { token?: string; body?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** The real application on an ephemeral port over this file's database (as test/helpers/server.ts does). */
async function startBillingServer(databaseUrl: string | undefined): Promise<BillingServer> {
  const database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4 });
  if (!databaseUrl) await database.migrate();
  const config = loadConfig({ LOG_LEVEL: "silent", DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
  const app = await buildApp({ config, database });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    links: await loadDocumentLinks(database.db, config.baseUrl),
    processors: loadProcessorRegistry(database.db, config),
    app,
    config,
    database,
    databaseUrl,
    async request(method, path, options = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      return readResponse(response);
    },
    async close() {
      await app.close();
      await database.close();
    },
  };
}

let server: BillingServer;
let dropDatabase: (() => Promise<void>) | undefined;
let tenant: Tenant;
let campaignSlug: string;

const db = () => server.database.db;
const at = (date: Date | string, offsetMs = 0) => new Date(new Date(date).getTime() + offsetMs);
const billingOptions = (now: Date) => ({
  now,
  checkoutTtlSeconds: server.config.checkoutTtlSeconds,
  pendingTimeoutSeconds: server.config.paymentPendingTimeoutSeconds,
  links: server.links,
  processors: server.processors,
});
const run = (now: Date) => runBilling(db(), billingOptions(now));

/** Opens a checkout on the public API: what the donation form does when the donor picks an amount. */
async function startCheckout(amount: number, frequency: 0 | 1 | 12) {
  const started = await server.request(
    "POST",
    `/api/v1/public/organizations/${tenant.slug}/campaigns/${campaignSlug}/checkouts/`,
    { body: { amount, frequency } },
  );
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body as { id: number; client_secret: string; expires_date: string };
}

async function completeCheckout(
  checkout: { id: number; client_secret: string },
  amount: number,
  frequency: number,
  card: string,
  coverFee = false,
) {
  const first = unique(8);
  return server.request("POST", `/api/v1/public/organizations/${tenant.slug}/checkouts/${checkout.id}/complete`, {
    body: {
      client_secret: checkout.client_secret,
      amount,
      frequency,
      processor: "sandbox",
      card: { number: card, exp_month: 12, exp_year: 2030, cvc: "123" },
      ...(coverFee ? { cover_fee: true } : {}),
      supporter: { email: `${first}@example.org`, first_name: first, last_name: "Donor" },
      consents: { privacy: true },
    },
  });
}

/** A donor gives through the public checkout API; returns the donation as the API answered it. */
async function give(options: { frequency?: 0 | 1 | 12; card?: string; amount?: number; coverFee?: boolean } = {}) {
  const { frequency = 12, card = CARD_OK, amount = 15 } = options;
  const checkout = await startCheckout(amount, frequency);
  const completed = await completeCheckout(checkout, amount, frequency, card, options.coverFee);
  expect(completed.status, JSON.stringify(completed.body)).toBe(200);
  expect(completed.body.donation.state).toBe(frequency === 0 ? "done" : "active");
  return completed.body.donation as { id: number; state: string; completed_date: string; amount: number };
}

async function getDonation(id: number) {
  const response = await server.request("GET", `/api/v1/donations/${id}`, { token: tenant.token });
  expect(response.status).toBe(200);
  return response.body;
}

/** The donation's payments, oldest first, through the REST API's donation_id filter. */
async function paymentsOf(donationId: number): Promise<Json[]> {
  const response = await server.request("GET", `/api/v1/payments/?donation_id=${donationId}&order=id&limit=1000`, {
    token: tenant.token,
  });
  expect(response.status).toBe(200);
  expect(response.body.count).toBe(response.body.items.length);
  for (const payment of response.body.items) expect(payment.donation_id).toBe(donationId);
  return response.body.items;
}

const statesOf = (payments: Json[]) => payments.map((payment) => payment.state);

async function donationRow(id: number) {
  const [row] = await db()
    .select()
    .from(donations)
    .where(and(eq(donations.organizationId, tenant.organizationId), eq(donations.id, id)));
  if (!row) throw new Error(`donation ${id} not found`);
  return row;
}

async function renewalJobs(donationId: number) {
  return db()
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, "renewal"), eq(jobs.subjectId, donationId)))
    .orderBy(asc(jobs.id));
}

async function queuedJob(donationId: number) {
  const queued = (await renewalJobs(donationId)).filter((job) => job.state === "queued");
  expect(queued.length).toBeLessThanOrEqual(1);
  return queued[0];
}

/** The one queued renewal of a donation: which cycle it charges and when. */
async function expectQueued(donationId: number, cycle: number, runDate: Date) {
  const job = await queuedJob(donationId);
  expect(job, `donation ${donationId} has no queued renewal`).toBeDefined();
  expect(job?.payload).toEqual({ cycle });
  expect(job?.runDate.toISOString()).toBe(runDate.toISOString());
  expect((await donationRow(donationId)).nextChargeDate?.toISOString()).toBe(runDate.toISOString());
}

beforeAll(async () => {
  const sharedUrl = testDatabaseUrl();
  let databaseUrl: string | undefined;
  if (sharedUrl) {
    const created = await createPrivateDatabase(sharedUrl, "billing", { migrate: true });
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
  server = await startBillingServer(databaseUrl);
  tenant = await fakeTenant(db());
  const campaign = await fakeCampaign(db(), tenant.organizationId, {
    slug: `billing-${unique()}`,
    hasOneOff: true,
    hasSubscription: true,
    allowCustomAmount: true,
    allowCustomSubscriptionAmount: true,
    minAmount: 1,
    maxAmount: 10_000,
    minSubscriptionAmount: 1,
    maxSubscriptionAmount: 10_000,
    allowCoverFee: true,
  });
  campaignSlug = campaign.slug as string;
});

afterEach(async () => {
  vi.useRealTimers();
  // Each test starts with an empty queue: renewals left by an earlier test never count in a later run.
  await db().update(jobs).set({ state: "cancelled" }).where(eq(jobs.state, "queued"));
});

afterAll(async () => {
  try {
    await server?.close();
  } finally {
    await dropDatabase?.();
  }
});

describe("schedule", () => {
  const utc = (text: string) => new Date(text);

  it("keeps the day of month, clamped to the month's end, and the time of day", () => {
    const start = utc("2027-01-31T10:15:30.123Z");
    expect(cycleDueDate(start, 12, 0)).toEqual(start);
    expect(cycleDueDate(start, 12, 1)).toEqual(utc("2027-02-28T10:15:30.123Z"));
    expect(cycleDueDate(start, 12, 2)).toEqual(utc("2027-03-31T10:15:30.123Z"));
    expect(cycleDueDate(start, 12, 3)).toEqual(utc("2027-04-30T10:15:30.123Z"));
    expect(cycleDueDate(start, 12, 13)).toEqual(utc("2028-02-29T10:15:30.123Z"));
    expect(cycleDueDate(utc("2028-01-31T00:00:00Z"), 12, 1)).toEqual(utc("2028-02-29T00:00:00Z"));
    expect(cycleDueDate(utc("2026-12-15T23:59:59Z"), 12, 1)).toEqual(utc("2027-01-15T23:59:59Z"));
    expect(cycleDueDate(utc("2026-11-30T08:00:00Z"), 12, 3)).toEqual(utc("2027-02-28T08:00:00Z"));
    expect(cycleDueDate(utc("2026-11-30T08:00:00Z"), 12, 4)).toEqual(utc("2027-03-30T08:00:00Z"));
  });

  it("moves yearly gifts by whole years; 29 February renews on 28 February, and on 29 in leap years", () => {
    const leap = utc("2028-02-29T12:00:00Z");
    expect(cycleDueDate(leap, 1, 1)).toEqual(utc("2029-02-28T12:00:00Z"));
    expect(cycleDueDate(leap, 1, 3)).toEqual(utc("2031-02-28T12:00:00Z"));
    expect(cycleDueDate(leap, 1, 4)).toEqual(utc("2032-02-29T12:00:00Z"));
    expect(cycleDueDate(utc("2026-11-22T07:00:00Z"), 1, 1)).toEqual(utc("2027-11-22T07:00:00Z"));
  });

  it("only knows monthly and yearly; retries after 2 days twice, then every 5 days, and revokes at the 6th failure", () => {
    expect(monthsPerCycle(12)).toBe(1);
    expect(monthsPerCycle(1)).toBe(12);
    expect(() => monthsPerCycle(0)).toThrow(/not a recurring frequency/);
    expect(() => cycleDueDate(new Date(), 4, 1)).toThrow(/not a recurring frequency/);
    const now = utc("2027-03-01T00:00:00Z");
    expect([1, 2, 3, 4, 5].map((failures) => (retryDate(now, failures).getTime() - now.getTime()) / DAY)).toEqual([
      2, 2, 5, 5, 5,
    ]);
    expect(MAX_RENEWAL_FAILURES).toBe(6);
  });
});

describe("renewals", () => {
  it("charges a monthly gift once per due cycle, never before the due date nor twice at one clock", async () => {
    const donation = await give({ frequency: 12, amount: 12.5 });
    const start = new Date(donation.completed_date);
    const due = (cycle: number) => cycleDueDate(start, 12, cycle);
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID"]);
    await expectQueued(donation.id, 1, due(1));

    // One minute early: nothing happens.
    expect(await run(at(due(1), -MINUTE))).toEqual(NOTHING);
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID"]);
    await expectQueued(donation.id, 1, due(1));

    // Due: one renewal, paid at the worker's clock, for the donation's amount with its card.
    const clock = at(due(1), MINUTE);
    expect(await run(clock)).toEqual({ ...NOTHING, renewed: 1 });
    const payments = await paymentsOf(donation.id);
    expect(statesOf(payments)).toEqual(["PAID", "PAID"]);
    expect(payments[1]).toMatchObject({ amount: 12.5, currency: "EUR", payment_date: clock.toISOString() });
    expect(payments[1].payment_method).toMatchObject({ id: payments[0].payment_method.id, processor: "sandbox" });
    expect(payments[1].processor_intent_id).toMatch(/^sbx_pi_/);
    expect(payments[1].processor_intent_id).not.toBe(payments[0].processor_intent_id);
    expect((await getDonation(donation.id)).state).toBe("active");
    expect((await donationRow(donation.id)).failureCount).toBe(0);
    await expectQueued(donation.id, 2, due(2));
    const [first] = await renewalJobs(donation.id);
    expect(first).toMatchObject({ state: "done", attempts: 1, payload: { cycle: 1 } });

    // Again at the same clock, and just before the next cycle: nothing more.
    expect(await run(clock)).toEqual(NOTHING);
    expect(await run(at(due(2), -MINUTE))).toEqual(NOTHING);
    expect(await paymentsOf(donation.id)).toHaveLength(2);

    expect(await run(at(due(2), MINUTE))).toEqual({ ...NOTHING, renewed: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "PAID", "PAID"]);
    await expectQueued(donation.id, 3, due(3));

    // A worker that was down for three cycles charges once, not once per missed cycle, and the
    // schedule resumes at the first cycle still ahead, on the original day of month.
    expect(await run(at(due(5), MINUTE))).toEqual({ ...NOTHING, renewed: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(Array(4).fill("PAID"));
    await expectQueued(donation.id, 6, due(6));
    // The cycles the one charge covered are kept for the donation's page.
    expect((await donationRow(donation.id)).skippedCycles).toEqual([4, 5]);
    expect(await run(at(due(5), 2 * MINUTE))).toEqual(NOTHING);
    expect(
      (await renewalJobs(donation.id)).map((job) => [job.state, (job.payload as { cycle: number }).cycle]),
    ).toEqual([
      ["done", 1],
      ["done", 2],
      ["done", 3],
      ["queued", 6],
    ]);
    expect((await getDonation(donation.id)).state).toBe("active");
  });

  it("charges the covered fee with every renewal: the gift and the fee stay apart on the donation", async () => {
    const donation = await give({ frequency: 12, amount: 15, coverFee: true });
    expect(donation).toMatchObject({ amount: 15, covered_fee: 0.74 });
    const due = cycleDueDate(new Date(donation.completed_date), 12, 1);
    expect(await run(at(due, MINUTE))).toEqual({ ...NOTHING, renewed: 1 });
    const payments = await paymentsOf(donation.id);
    expect(payments.map((payment) => [payment.state, payment.amount])).toEqual([
      ["PAID", 15.74],
      ["PAID", 15.74],
    ]);
    const [charge] = await db()
      .select({ amountCents: sandboxCharges.amountCents })
      .from(sandboxCharges)
      .where(like(sandboxCharges.idempotencyKey, `renewal:${donation.id}:1:%`));
    expect(charge?.amountCents).toBe(1574);
  });

  it("renews a gift started on 31 January on the last day of February, then on 31 March", async () => {
    // Only Date is faked, so the checkout completes "on" 31 January; the database clock is not moved.
    vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-01-31T09:30:00.000Z") });
    const donation = await give({ frequency: 12 });
    vi.useRealTimers();
    expect(donation.completed_date).toBe("2026-01-31T09:30:00.000Z");
    await expectQueued(donation.id, 1, new Date("2026-02-28T09:30:00.000Z"));

    expect(await run(new Date("2026-02-28T09:29:59.999Z"))).toEqual(NOTHING);
    expect(await run(new Date("2026-02-28T09:30:00.000Z"))).toEqual({ ...NOTHING, renewed: 1 });
    await expectQueued(donation.id, 2, new Date("2026-03-31T09:30:00.000Z"));
    expect(await run(new Date("2026-03-30T09:30:00.000Z"))).toEqual(NOTHING);
    expect(await run(new Date("2026-03-31T09:31:00.000Z"))).toEqual({ ...NOTHING, renewed: 1 });
    await expectQueued(donation.id, 3, new Date("2026-04-30T09:30:00.000Z"));
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "PAID", "PAID"]);
  });

  it("charges a yearly gift one year after the first charge", async () => {
    const donation = await give({ frequency: 1, amount: 120 });
    const start = new Date(donation.completed_date);
    const due = cycleDueDate(start, 1, 1);
    // No month-end clamping can apply on the days this suite runs except 29 February.
    const nextYear = new Date(start);
    nextYear.setUTCFullYear(start.getUTCFullYear() + 1);
    if (!(start.getUTCMonth() === 1 && start.getUTCDate() === 29)) expect(due).toEqual(nextYear);
    await expectQueued(donation.id, 1, due);

    expect(await run(cycleDueDate(start, 12, 1))).toEqual(NOTHING);
    expect(await run(cycleDueDate(start, 12, 11))).toEqual(NOTHING);
    expect(await run(at(due, -MINUTE))).toEqual(NOTHING);
    expect(await run(at(due, MINUTE))).toEqual({ ...NOTHING, renewed: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "PAID"]);
    await expectQueued(donation.id, 2, cycleDueDate(start, 1, 2));
    expect(await run(at(cycleDueDate(start, 1, 2), -MINUTE))).toEqual(NOTHING);
    expect((await getDonation(donation.id)).state).toBe("active");
  });
});

describe("jobs the worker cannot run", () => {
  it("cancels a due job of a kind it does not know, counts it as skipped, and never runs it again", async () => {
    const clock = new Date();
    const [job] = await db()
      .insert(jobs)
      .values({ organizationId: tenant.organizationId, kind: "reminder", subjectId: 1, runDate: at(clock, -MINUTE) })
      .returning();
    expect(await run(clock)).toEqual({ ...NOTHING, skipped: 1 });
    const [after] = await db()
      .select()
      .from(jobs)
      .where(eq(jobs.id, job?.id as number));
    expect(after).toMatchObject({ state: "cancelled", attempts: 1 });
    expect(await run(clock)).toEqual(NOTHING);
  });

  it("rolls back a job that throws, records the error, puts it back later and runs the others", async () => {
    const broken = await give({ frequency: 12 });
    const healthy = await give({ frequency: 12 });
    const due = new Date(new Date(healthy.completed_date).getTime() + 40 * DAY);
    // A corrupt payload: the renewal has no cycle to record and throws before charging.
    await db()
      .update(jobs)
      .set({ payload: { cycle: "corrupt" } })
      .where(and(eq(jobs.subjectId, broken.id), eq(jobs.state, "queued")));
    expect(await run(due)).toEqual({ ...NOTHING, renewed: 1, errors: 1 });
    expect(statesOf(await paymentsOf(broken.id))).toEqual(["PAID"]);
    expect(statesOf(await paymentsOf(healthy.id))).toEqual(["PAID", "PAID"]);
    const [job] = await renewalJobs(broken.id);
    expect(job).toMatchObject({ state: "queued", attempts: 1, lastError: expect.any(String) });
    expect(job?.runDate.getTime()).toBe(due.getTime() + 3_600_000);
    // Not again within the same hour.
    expect(await run(due)).toEqual(NOTHING);
  });
});

describe("failed renewals", () => {
  it("retries a declined renewal after 2, 2, 5, 5 and 5 days, then revokes the donation at the 6th failure", async () => {
    const donation = await give({ frequency: 12, card: CARD_FAILS_ON_RENEWAL });
    const start = new Date(donation.completed_date);
    let clock = at(cycleDueDate(start, 12, 1), MINUTE);

    expect(await run(clock)).toEqual({ ...NOTHING, failed: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "FAILED"]);
    const failed = (await paymentsOf(donation.id))[1];
    expect(failed.payment_date).toBeNull();
    expect(failed.processor_intent_id).toMatch(/^sbx_pi_/);
    expect((await getDonation(donation.id)).state).toBe("past_due");
    expect((await donationRow(donation.id)).failureCount).toBe(1);
    // The retry charges the same cycle two days after the failed attempt; nothing after one day.
    await expectQueued(donation.id, 1, at(clock, 2 * DAY));
    expect(await run(at(clock, DAY))).toEqual(NOTHING);

    const gaps = [2, 2, 5, 5, 5];
    for (const [index, gap] of gaps.entries()) {
      const failures = index + 2;
      expect(await run(at(clock, gap * DAY - MINUTE)), `before retry ${failures - 1}`).toEqual(NOTHING);
      clock = at(clock, gap * DAY);
      const result = await run(clock);
      const payments = await paymentsOf(donation.id);
      expect(payments).toHaveLength(1 + failures);
      expect(statesOf(payments.slice(1))).toEqual(Array(failures).fill("FAILED"));
      // Each attempt is a separate charge at the processor.
      expect(new Set(payments.map((payment) => payment.processor_intent_id)).size).toBe(payments.length);
      const row = await donationRow(donation.id);
      expect(row.failureCount).toBe(failures);
      if (failures < MAX_RENEWAL_FAILURES) {
        expect(result, `failure ${failures}`).toEqual({ ...NOTHING, failed: 1 });
        expect((await getDonation(donation.id)).state).toBe("past_due");
        await expectQueued(donation.id, 1, at(clock, (failures <= 2 ? 2 : 5) * DAY));
      } else {
        expect(result, `failure ${failures}`).toEqual({ ...NOTHING, revoked: 1 });
      }
    }

    expect((await getDonation(donation.id)).state).toBe("revoked");
    expect(await queuedJob(donation.id)).toBeUndefined();
    expect((await donationRow(donation.id)).nextChargeDate).toBeNull();
    const attempts = await renewalJobs(donation.id);
    expect(attempts).toHaveLength(MAX_RENEWAL_FAILURES);
    for (const job of attempts) expect(job).toMatchObject({ state: "done", attempts: 1, payload: { cycle: 1 } });
    const payments = await paymentsOf(donation.id);
    expect(payments.filter((payment) => payment.state === "FAILED")).toHaveLength(MAX_RENEWAL_FAILURES);
    expect(payments.filter((payment) => payment.state === "PAID")).toHaveLength(1);

    // A revoked donation is never charged again.
    expect(await run(at(clock, 400 * DAY))).toEqual(NOTHING);
    expect(await paymentsOf(donation.id)).toHaveLength(1 + MAX_RENEWAL_FAILURES);
  });

  it("recovers when a retry succeeds: active again, failures reset, next cycle on the original schedule", async () => {
    const donation = await give({ frequency: 12, card: CARD_FAILS_ON_RENEWAL });
    const start = new Date(donation.completed_date);
    const failedAt = at(cycleDueDate(start, 12, 1), 3 * MINUTE);
    expect(await run(failedAt)).toEqual({ ...NOTHING, failed: 1 });
    expect((await getDonation(donation.id)).state).toBe("past_due");

    // The donor updates the card: the method now points at a card that always succeeds.
    const row = await donationRow(donation.id);
    expect(row.paymentMethodId).not.toBeNull();
    const [method] = await db()
      .update(paymentMethods)
      .set({ processorReference: `sbx_pm_ok_${randomBytes(8).toString("hex")}` })
      .where(eq(paymentMethods.id, row.paymentMethodId as number))
      .returning();
    expect(method?.organizationId).toBe(tenant.organizationId);

    const retryAt = at(failedAt, 2 * DAY);
    expect(await run(at(retryAt, -MINUTE))).toEqual(NOTHING);
    expect(await run(retryAt)).toEqual({ ...NOTHING, renewed: 1 });
    const payments = await paymentsOf(donation.id);
    expect(statesOf(payments)).toEqual(["PAID", "FAILED", "PAID"]);
    expect(payments[2].payment_date).toBe(retryAt.toISOString());
    expect((await getDonation(donation.id)).state).toBe("active");
    expect((await donationRow(donation.id)).failureCount).toBe(0);
    // Cycle 2 is due a month after the first charge, not a month after the late retry.
    await expectQueued(donation.id, 2, cycleDueDate(start, 12, 2));
    expect(await run(at(cycleDueDate(start, 12, 2), -MINUTE))).toEqual(NOTHING);
    expect(await run(at(cycleDueDate(start, 12, 2), MINUTE))).toEqual({ ...NOTHING, renewed: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "FAILED", "PAID", "PAID"]);
  });
});

describe("renewals in steps: kill or fail between each pair of steps", () => {
  const LONG = 10 * 365 * 86400;
  /** What the sandbox processor charged for the donation's renewals: its own ledger, not ours. */
  const renewalCharges = (donationId: number) =>
    db()
      .select()
      .from(sandboxCharges)
      .where(like(sandboxCharges.idempotencyKey, `renewal:${donationId}:%`));
  /** As a crash would leave them: the donation's unsettled payments have waited longer than the timeout. */
  const age = (donationId: number) =>
    db()
      .update(payments)
      .set({ updateDate: new Date(Date.now() - (server.config.paymentPendingTimeoutSeconds + 60) * 1000) })
      .where(and(eq(payments.donationId, donationId), eq(payments.state, "PENDING")));

  it.each(["record", "charge", "settle"] as const)(
    "a failure after %s leaves the cycle's payment PENDING; the reconciler ends with one charge, paid and scheduled",
    async (step) => {
      const donation = await give({ frequency: 12, amount: 9 });
      const start = new Date(donation.completed_date);
      const clock = at(cycleDueDate(start, 12, 1), MINUTE);
      const failing = await runBilling(db(), {
        ...billingOptions(clock),
        pendingTimeoutSeconds: LONG,
        afterStep: (at) => {
          if (at === step) throw new Error(`injected failure after ${at}`);
        },
      });
      expect(failing).toEqual({ ...NOTHING, errors: 1 });
      const pending = await paymentsOf(donation.id);
      expect(statesOf(pending)).toEqual(["PAID", "PENDING"]);
      expect(await renewalCharges(donation.id)).toHaveLength(step === "record" ? 0 : 1);
      // The job is done: no later run charges the cycle again, only the reconciler settles it.
      expect(await queuedJob(donation.id)).toBeUndefined();
      expect(await run(clock)).toEqual(NOTHING);

      await age(donation.id);
      expect(await run(clock)).toEqual({ ...NOTHING, reconciled: 1 });
      const charges = await renewalCharges(donation.id);
      expect(charges).toHaveLength(1);
      expect(charges[0]).toMatchObject({
        state: "PAID",
        amountCents: 900,
        idempotencyKey: `renewal:${donation.id}:1:0`,
      });
      const settled = await paymentsOf(donation.id);
      expect(statesOf(settled)).toEqual(["PAID", "PAID"]);
      expect(settled[1]).toMatchObject({
        processor_intent_id: charges[0]?.intentId,
        payment_date: clock.toISOString(),
      });
      expect((await getDonation(donation.id)).state).toBe("active");
      await expectQueued(donation.id, 2, cycleDueDate(start, 12, 2));
      expect(await run(clock)).toEqual(NOTHING);
    },
  );

  it("a renewal whose processor times out is PENDING until the reconciler learns it was paid", async () => {
    const donation = await give({ frequency: 12, amount: 7 });
    const start = new Date(donation.completed_date);
    // The donor's card now answers too late (the charge goes through, the answer is lost).
    const row = await donationRow(donation.id);
    await db()
      .update(paymentMethods)
      .set({ processorReference: `sbx_pm_timeout_${randomBytes(8).toString("hex")}` })
      .where(eq(paymentMethods.id, row.paymentMethodId as number));
    const clock = at(cycleDueDate(start, 12, 1), MINUTE);
    expect(await run(clock)).toEqual({ ...NOTHING, errors: 1 });
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "PENDING"]);
    expect(await renewalCharges(donation.id)).toMatchObject([{ state: "PAID", amountCents: 700 }]);

    await age(donation.id);
    expect(await run(clock)).toEqual({ ...NOTHING, reconciled: 1 });
    expect(await renewalCharges(donation.id)).toHaveLength(1);
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "PAID"]);
    await expectQueued(donation.id, 2, cycleDueDate(start, 12, 2));
  });

  it("a declined renewal settled by the reconciler fails as a decline does: past_due, retry queued", async () => {
    const donation = await give({ frequency: 12, card: CARD_FAILS_ON_RENEWAL });
    const clock = at(cycleDueDate(new Date(donation.completed_date), 12, 1), MINUTE);
    const failing = await runBilling(db(), {
      ...billingOptions(clock),
      pendingTimeoutSeconds: LONG,
      afterStep: (at) => {
        if (at === "charge") throw new Error("injected failure after charge");
      },
    });
    expect(failing).toEqual({ ...NOTHING, errors: 1 });
    await age(donation.id);
    expect(await run(clock)).toEqual({ ...NOTHING, reconciled: 1 });
    const settled = await paymentsOf(donation.id);
    expect(statesOf(settled)).toEqual(["PAID", "FAILED"]);
    expect(await renewalCharges(donation.id)).toMatchObject([{ state: "FAILED", failureCode: "card_declined" }]);
    expect((await getDonation(donation.id)).state).toBe("past_due");
    await expectQueued(donation.id, 1, at(clock, 2 * DAY));
  });
});

describe("cancelling", () => {
  const cancel = (id: number, token = tenant.token) =>
    server.request("POST", `/api/v1/donations/${id}/cancel`, { token });

  function expectConflict(response: Response, detail: RegExp) {
    expect(response.status, JSON.stringify(response.body)).toBe(409);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 409, code: "invalid_state_transition" });
    expect(response.body.detail).toMatch(detail);
  }

  it("revokes an active donation, cancels its queued renewal, and no later run charges it", async () => {
    const donation = await give({ frequency: 12 });
    const due = cycleDueDate(new Date(donation.completed_date), 12, 1);

    const reader = await fakeTenant(db(), { permissions: ["donations:read"] });
    expect((await cancel(donation.id, reader.token)).status).toBe(403);
    expect((await getDonation(donation.id)).state).toBe("active");

    const cancelled = await cancel(donation.id);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ id: donation.id, state: "revoked" });
    expect((await getDonation(donation.id)).state).toBe("revoked");
    expect(await queuedJob(donation.id)).toBeUndefined();
    expect((await renewalJobs(donation.id)).map((job) => job.state)).toEqual(["cancelled"]);
    expect((await donationRow(donation.id)).nextChargeDate).toBeNull();

    expect(await run(at(due, MINUTE))).toEqual(NOTHING);
    expect(await run(at(due, 400 * DAY))).toEqual(NOTHING);
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID"]);

    expectConflict(await cancel(donation.id), /is revoked; it cannot become revoked/);
    expect((await getDonation(donation.id)).state).toBe("revoked");
  });

  it("revokes a past_due donation and cancels its pending retry", async () => {
    const donation = await give({ frequency: 12, card: CARD_FAILS_ON_RENEWAL });
    const failedAt = at(cycleDueDate(new Date(donation.completed_date), 12, 1), MINUTE);
    expect(await run(failedAt)).toEqual({ ...NOTHING, failed: 1 });
    expect(await queuedJob(donation.id)).toBeDefined();

    const cancelled = await cancel(donation.id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe("revoked");
    expect(await queuedJob(donation.id)).toBeUndefined();
    expect(await run(at(failedAt, 30 * DAY))).toEqual(NOTHING);
    expect(statesOf(await paymentsOf(donation.id))).toEqual(["PAID", "FAILED"]);
  });

  it("refuses to cancel a one-off donation", async () => {
    const donation = await give({ frequency: 0 });
    expectConflict(await cancel(donation.id), /is not recurring/);
    expect((await getDonation(donation.id)).state).toBe("done");
    expect(await renewalJobs(donation.id)).toEqual([]);
  });
});

describe("concurrent workers", () => {
  const COUNT = 20;

  async function dueDonations() {
    const made: { id: number; completed_date: string }[] = [];
    for (let index = 0; index < COUNT; index++) made.push(await give({ frequency: 12, amount: 5 + index }));
    const latest = Math.max(...made.map((donation) => Date.parse(donation.completed_date)));
    return { made, clock: at(cycleDueDate(new Date(latest), 12, 1), MINUTE) };
  }

  async function expectEachRenewedOnce(made: { id: number; completed_date: string }[]) {
    let renewals = 0;
    for (const donation of made) {
      const payments = await paymentsOf(donation.id);
      expect(statesOf(payments), `donation ${donation.id}`).toEqual(["PAID", "PAID"]);
      renewals += payments.length - 1;
      await expectQueued(donation.id, 2, cycleDueDate(new Date(donation.completed_date), 12, 2));
    }
    expect(renewals).toBe(COUNT);
    const done = await db()
      .select()
      .from(jobs)
      .where(
        and(
          inArray(
            jobs.subjectId,
            made.map((donation) => donation.id),
          ),
          eq(jobs.state, "done"),
        ),
      );
    expect(done).toHaveLength(COUNT);
  }

  it("two workers on separate connections charge each due renewal exactly once", async () => {
    const { made, clock } = await dueDonations();
    // On PostgreSQL the second worker has a pool of its own, as a second process would;
    // PGlite has one connection, so both workers share it and interleave their transactions.
    const second = server.databaseUrl
      ? await openDatabase({ databaseUrl: server.databaseUrl, dataDir: "", poolSize: 4 })
      : undefined;
    try {
      const options = billingOptions(clock);
      const results = await Promise.all([
        runBilling(db(), options),
        runBilling(second?.db ?? db(), options),
        runBilling(db(), options),
        runBilling(second?.db ?? db(), options),
      ]);
      const renewed = results.reduce((sum, result) => sum + result.renewed, 0);
      expect(renewed).toBe(COUNT);
      for (const result of results) expect(result).toMatchObject({ failed: 0, revoked: 0, skipped: 0 });
    } finally {
      await second?.close();
    }
    await expectEachRenewedOnce(made);
    expect(await run(clock)).toEqual(NOTHING);
  });

  it.runIf(testDatabaseUrl())(
    "a worker skips a renewal another worker holds, without waiting for it, and leaves it queued",
    async () => {
      const { made, clock } = await dueDonations();
      const [held] = made;
      const other = new pg.Client({ connectionString: server.databaseUrl });
      await other.connect();
      try {
        await other.query("begin");
        const locked = await other.query(
          "select id from jobs where kind = 'renewal' and subject_id = $1 and state = 'queued' for update",
          [held?.id],
        );
        expect(locked.rowCount).toBe(1);
        const started = Date.now();
        expect(await run(clock)).toEqual({ ...NOTHING, renewed: COUNT - 1 });
        expect(Date.now() - started).toBeLessThan(30_000);
        expect(statesOf(await paymentsOf(held?.id as number))).toEqual(["PAID"]);
        await expectQueued(held?.id as number, 1, cycleDueDate(new Date(held?.completed_date as string), 12, 1));
      } finally {
        await other.query("rollback").catch(() => {});
        await other.end();
      }
      expect(await run(clock)).toEqual({ ...NOTHING, renewed: 1 });
      await expectEachRenewedOnce(made);
    },
  );
});

describe("checkout expiry", () => {
  const getCheckout = async (id: number) => {
    const response = await server.request("GET", `/api/v1/checkouts/${id}`, { token: tenant.token });
    expect(response.status).toBe(200);
    return response.body;
  };

  it("closes OPEN checkouts older than the expiry without a payment; younger and completed ones are untouched", async () => {
    const ttl = server.config.checkoutTtlSeconds;
    const completed = await startCheckout(20, 0);
    expect((await completeCheckout(completed, 20, 0, CARD_OK)).status).toBe(200);
    const old = await startCheckout(20, 12);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const young = await startCheckout(30, 0);
    const completedBefore = await getCheckout(completed.id);
    expect(completedBefore.state).toBe("CLOSED");
    const expiry = new Date(old.expires_date);
    expect(expiry.getTime() - Date.parse((await getCheckout(old.id)).create_date)).toBe(ttl * 1000);

    // Just before it expires, nothing is closed.
    expect(await run(at(expiry, -1))).toEqual(NOTHING);
    expect((await getCheckout(old.id)).state).toBe("OPEN");

    expect(await run(at(expiry, 1))).toEqual({ ...NOTHING, expired_checkouts: 1 });
    const closed = await getCheckout(old.id);
    expect(closed).toMatchObject({ state: "CLOSED", completed_date: null, donation: null, payment: null });
    expect((await getCheckout(young.id)).state).toBe("OPEN");
    expect(await getCheckout(completed.id)).toEqual(completedBefore);
    const rows = await db()
      .select({ id: checkouts.id, paymentId: checkouts.paymentId, donationId: checkouts.donationId })
      .from(checkouts)
      .where(eq(checkouts.id, old.id));
    expect(rows).toEqual([{ id: old.id, paymentId: null, donationId: null }]);

    // The donor cannot complete it any more.
    const late = await completeCheckout(old, 20, 12, CARD_OK);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("checkout_closed");

    // The younger one expires in its turn, once.
    expect(await run(at(young.expires_date, 1))).toEqual({ ...NOTHING, expired_checkouts: 1 });
    expect(await run(at(young.expires_date, 1))).toEqual(NOTHING);
    expect((await getCheckout(young.id)).state).toBe("CLOSED");
  });
});
