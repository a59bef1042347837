import { and, asc, eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { type Config, loadConfig } from "../src/config.js";
import { type Database, openDatabase } from "../src/db/client.js";
import { campaigns, donations, jobs, outboxMessages, supporters } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { runBilling } from "../src/jobs/runner.js";
import { type DocumentLinks, loadDocumentLinks } from "../src/modules/documents/document-links.js";
import { donorActor, replacePaymentMethod } from "../src/modules/donations/recurring-changes.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { loadProcessorRegistry, type ProcessorRegistry } from "../src/payments/processors/index.js";
import { cycleDueDate, MAX_RENEWAL_FAILURES } from "../src/payments/schedule.js";
import { auditRowsOf } from "./helpers/audit.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, TEST_ENCRYPTION_KEY } from "./helpers/server.js";

/**
 * Changing a recurring gift through the GraphQL admin API: amount, monthly/yearly, pause, cancel and
 * (the service the portal uses) a new payment method. Effects are read through REST as an application
 * sees them, and renewals are charged by the billing worker with a moved clock. runBilling works on
 * every organization at once, so this file has a database of its own (as src/jobs/runner.test.ts).
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
type Json = any;

const CARD_OK = "4242424242424242";
const CARD_FAILS_ON_RENEWAL = "4000000000000341";
const MINUTE = 60_000;

let database: Database;
let app: FastifyInstance;
let config: Config;
let url: string;
let links: DocumentLinks;
let processors: ProcessorRegistry;
let dropDatabase: (() => Promise<void>) | undefined;
let tenant: Tenant;
let other: Tenant;
let adminCookie: string;
let adminEmail: string;
let otherCookie: string;
let campaignId: number;
let campaignSlug: string;

const db = () => database.db;
const at = (date: Date | string, offsetMs = 0) => new Date(new Date(date).getTime() + offsetMs);

async function request(method: "GET" | "POST", path: string, options: { token?: string; body?: unknown } = {}) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return readResponse(response);
}

async function graphql(query: string, variables: Record<string, unknown>, cookie = adminCookie) {
  const response = await fetch(`${url}/admin/graphql/`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const FIELDS = "id state amount frequency next_charge_date paused_until cancelled_by cancel_reason";
const AMOUNT = `mutation ($id: ID!, $amount: Float!) { changeDonationAmount(id: $id, amount: $amount) { ${FIELDS} } }`;
const FREQUENCY = `mutation ($id: ID!, $frequency: Int!) { changeDonationFrequency(id: $id, frequency: $frequency) { ${FIELDS} } }`;
const PAUSE = `mutation ($id: ID!, $cycles: Int!) { pauseDonation(id: $id, cycles: $cycles) { ${FIELDS} } }`;
const RESUME = `mutation ($id: ID!) { resumeDonation(id: $id) { ${FIELDS} } }`;
const CANCEL = `mutation ($id: ID!, $reason: String) { cancelDonation(id: $id, reason: $reason) { ${FIELDS} } }`;
const DONATION = `query ($id: ID!) { donation(id: $id) { ${FIELDS} } }`;

/** One GraphQL error, as the admin panel receives it. */
function refusal(body: Json, field: string) {
  expect(body.data?.[field] ?? null).toBeNull();
  expect(body.errors).toHaveLength(1);
  const { message, extensions } = body.errors[0];
  return { message, extensions };
}

/** A donor gives monthly (or yearly) through the public checkout API with a sandbox card. */
async function give(options: { frequency?: 1 | 12; card?: string; amount?: number } = {}) {
  const { frequency = 12, card = CARD_OK, amount = 15 } = options;
  const started = await request(
    "POST",
    `/api/v1/public/organizations/${tenant.slug}/campaigns/${campaignSlug}/checkouts/`,
    { body: { amount, frequency } },
  );
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const first = unique(8);
  const completed = await request(
    "POST",
    `/api/v1/public/organizations/${tenant.slug}/checkouts/${started.body.id}/complete`,
    {
      body: {
        client_secret: started.body.client_secret,
        amount,
        frequency,
        processor: "sandbox",
        card: { number: card, exp_month: 12, exp_year: 2030, cvc: "123" },
        supporter: { email: `${first}@example.org`, first_name: first, last_name: "Donor" },
        consents: { privacy: true },
      },
    },
  );
  expect(completed.status, JSON.stringify(completed.body)).toBe(200);
  return completed.body.donation as { id: number; supporter_id: number; completed_date: string; amount: number };
}

async function restDonation(id: number) {
  const response = await request("GET", `/api/v1/donations/${id}`, { token: tenant.token });
  expect(response.status).toBe(200);
  return response.body;
}

async function paymentsOf(donationId: number): Promise<Json[]> {
  const response = await request("GET", `/api/v1/payments/?donation_id=${donationId}&order=id&limit=100`, {
    token: tenant.token,
  });
  expect(response.status).toBe(200);
  return response.body.items;
}

async function queuedRenewal(donationId: number) {
  const rows = await db()
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, "renewal"), eq(jobs.subjectId, donationId), eq(jobs.state, "queued")));
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

async function outboxOf(donationId: number) {
  const rows = await db()
    .select()
    .from(outboxMessages)
    .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.donationId, donationId)))
    .orderBy(asc(outboxMessages.id));
  return rows.map((row) => ({ kind: row.kind, to: row.toAddress, data: row.data }));
}

async function auditOf(donationId: number) {
  const rows = await auditRowsOf(db(), tenant.organizationId, ["donation.updated"]);
  // What members and applications did (the donor's checkout and the worker's renewals are events too).
  return rows
    .filter((row) => (row.data as { id: number }).id === donationId)
    .filter((row) => ["user", "application"].includes((row.actor as { type: string }).type))
    .map((row) => ({ actor: (row.actor as { label: string }).label, changes: row.changes }));
}

const run = (now: Date) =>
  runBilling(db(), {
    now,
    checkoutTtlSeconds: config.checkoutTtlSeconds,
    pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
    links,
    processors,
  });

async function signIn(organization: string) {
  const email = `admin-${unique(6)}@example.test`;
  const user = await createUser(db(), { email, password: "long enough password", organization, role: "admin" });
  return { email, cookie: `${SESSION_COOKIE}=${await createSession(db(), config, user.id)}` };
}

beforeAll(async () => {
  const sharedUrl = testDatabaseUrl();
  let databaseUrl: string | undefined;
  if (sharedUrl) {
    const created = await createPrivateDatabase(sharedUrl, "recurring", { migrate: true });
    databaseUrl = created.url;
    dropDatabase = created.drop;
  }
  database = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 4 });
  if (!databaseUrl) await database.migrate();
  config = loadConfig({ LOG_LEVEL: "silent", DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
  app = await buildApp({ config, database });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
  links = await loadDocumentLinks(db(), config.baseUrl);
  processors = loadProcessorRegistry(db(), config);
  [tenant, other] = await Promise.all([fakeTenant(db()), fakeTenant(db())]);
  ({ cookie: adminCookie, email: adminEmail } = await signIn(tenant.slug));
  ({ cookie: otherCookie } = await signIn(other.slug));
  const campaign = await fakeCampaign(db(), tenant.organizationId, {
    slug: `recurring-${unique()}`,
    hasOneOff: true,
    hasSubscription: true,
    allowCustomSubscriptionAmount: true,
    minSubscriptionAmount: 5,
    maxSubscriptionAmount: 500,
  });
  campaignId = campaign.id;
  campaignSlug = campaign.slug as string;
});

afterAll(async () => {
  await app?.close();
  await database?.close();
  await dropDatabase?.();
});

describe("changing the amount", () => {
  it("charges the new amount from the next renewal on, with an audit event and the donor's email", async () => {
    const donation = await give({ amount: 15 });
    const { body } = await graphql(AMOUNT, { id: donation.id, amount: 22.5 });
    expect(body.errors).toBeUndefined();
    expect(body.data.changeDonationAmount).toMatchObject({ id: donation.id, state: "active", amount: 22.5 });
    expect((await restDonation(donation.id)).amount).toBe(22.5);

    expect((await outboxOf(donation.id)).find((message) => message.kind === "donor_change")).toMatchObject({
      kind: "donor_change",
      data: { change: "amount", before: 15, after: 22.5 },
    });
    expect(await auditOf(donation.id)).toEqual([
      { actor: adminEmail, changes: { amount: { before: 15, after: 22.5 } } },
    ]);

    const due = cycleDueDate(new Date(donation.completed_date), 12, 1);
    await run(at(due, MINUTE));
    expect((await paymentsOf(donation.id)).map((payment) => [payment.state, payment.amount])).toEqual([
      ["PAID", 15],
      ["PAID", 22.5],
    ]);
  });

  it("refuses amounts outside the campaign's rules, changing nothing and sending nothing", async () => {
    const donation = await give({ amount: 15 });
    const before = await outboxOf(donation.id);
    const cases: [number, Json][] = [
      [
        4.99,
        {
          message: "The smallest recurring gift is 5",
          extensions: {
            code: "amount_out_of_range",
            errors: [
              {
                field: "amount",
                message: "The smallest recurring gift is 5",
                code: "recurring_gift_min",
                values: { min: 5 },
              },
            ],
          },
        },
      ],
      [
        500.01,
        {
          message: "The largest recurring gift is 500",
          extensions: {
            code: "amount_out_of_range",
            errors: [
              {
                field: "amount",
                message: "The largest recurring gift is 500",
                code: "recurring_gift_max",
                values: { max: 500 },
              },
            ],
          },
        },
      ],
      [
        12.345,
        {
          message: "The amount must have at most 2 decimals",
          extensions: {
            code: "invalid_amount",
            errors: [{ field: "amount", message: "The amount must have at most 2 decimals" }],
          },
        },
      ],
      [
        0,
        {
          message: "The amount must be greater than 0",
          extensions: { code: "invalid_amount", errors: [{ field: "amount", message: "must be greater than 0" }] },
        },
      ],
    ];
    for (const [amount, expected] of cases) {
      const { body } = await graphql(AMOUNT, { id: donation.id, amount });
      expect(refusal(body, "changeDonationAmount"), String(amount)).toMatchObject(expected);
    }
    await db()
      .update(campaigns)
      .set({ allowCustomSubscriptionAmount: false, asksSubscription: ["10", "20"] });
    try {
      const { body } = await graphql(AMOUNT, { id: donation.id, amount: 12 });
      expect(refusal(body, "changeDonationAmount")).toMatchObject({
        message: "This campaign accepts only its suggested amounts: 10, 20",
        extensions: {
          code: "custom_amount_not_allowed",
          errors: [
            {
              field: "amount",
              message: "This campaign accepts only its suggested amounts: 10, 20",
              code: "suggested_amounts_only_listed",
              values: { amounts: "10, 20" },
            },
          ],
        },
      });
      expect((await graphql(AMOUNT, { id: donation.id, amount: 20 })).body.data.changeDonationAmount.amount).toBe(20);
    } finally {
      await db().update(campaigns).set({ allowCustomSubscriptionAmount: true, asksSubscription: null });
    }
    expect((await restDonation(donation.id)).amount).toBe(20);
    expect((await outboxOf(donation.id)).length).toBe(before.length + 1);
  });

  it("is refused for a donation of another organization, by GraphQL and REST", async () => {
    const donation = await give({ amount: 15 });
    const foreign = await graphql(AMOUNT, { id: donation.id, amount: 20 }, otherCookie);
    expect(refusal(foreign.body, "changeDonationAmount")).toEqual({
      message: "Donation not found",
      extensions: { code: "not_found" },
    });
    for (const [query, field, variables] of [
      [CANCEL, "cancelDonation", {}],
      [FREQUENCY, "changeDonationFrequency", { frequency: 1 }],
      [PAUSE, "pauseDonation", { cycles: 1 }],
      [DONATION, "donation", {}],
    ] as const) {
      const { body } = await graphql(query, { id: donation.id, ...variables }, otherCookie);
      if (field === "donation") expect(body.data.donation).toBeNull();
      else
        expect(refusal(body, field), field).toEqual({
          message: "Donation not found",
          extensions: { code: "not_found" },
        });
    }
    const rest = await request("POST", `/api/v1/donations/${donation.id}/cancel`, { token: other.token });
    expect(rest.status).toBe(404);
    expect((await restDonation(donation.id)).state).toBe("active");
    expect(await auditOf(donation.id)).toEqual([]);
  });
});

describe("monthly and yearly", () => {
  it("switches to yearly: the next charge is the first anniversary ahead, charged by the worker", async () => {
    const donation = await give({ amount: 15 });
    const start = new Date(donation.completed_date);
    const { body } = await graphql(FREQUENCY, { id: donation.id, frequency: 1 });
    expect(body.errors).toBeUndefined();
    const yearly = cycleDueDate(start, 1, 1);
    expect(body.data.changeDonationFrequency).toMatchObject({
      frequency: 1,
      next_charge_date: yearly.toISOString(),
    });
    expect((await restDonation(donation.id)).frequency).toBe(1);
    expect((await queuedRenewal(donation.id))?.payload).toEqual({ cycle: 1 });
    expect((await outboxOf(donation.id)).at(-1)).toMatchObject({
      kind: "donor_change",
      data: { change: "frequency", before: 12, after: 1 },
    });

    await run(at(cycleDueDate(start, 12, 1), MINUTE));
    expect(await paymentsOf(donation.id)).toHaveLength(1);
    await run(at(yearly, MINUTE));
    expect((await paymentsOf(donation.id)).map((payment) => payment.state)).toEqual(["PAID", "PAID"]);
    expect((await queuedRenewal(donation.id))?.payload).toEqual({ cycle: 2 });

    // Back to monthly: the first month ahead of now, not a cycle already charged.
    const back = await graphql(FREQUENCY, { id: donation.id, frequency: 12 });
    expect(back.body.data.changeDonationFrequency.next_charge_date).toBe(cycleDueDate(start, 12, 1).toISOString());
  });

  it("refuses a frequency the campaign does not take, or that is not 12 or 1", async () => {
    const donation = await give({ amount: 15 });
    const invalid = await graphql(FREQUENCY, { id: donation.id, frequency: 4 });
    expect(refusal(invalid.body, "changeDonationFrequency")).toEqual({
      message: 'Invalid field "frequency": must be 12 (monthly) or 1 (yearly)',
      extensions: {
        code: "invalid_request",
        errors: [{ field: "frequency", message: "must be 12 (monthly) or 1 (yearly)" }],
      },
    });
    await db().update(campaigns).set({ hasSubscription: false }).where(eq(campaigns.id, campaignId));
    try {
      const { body } = await graphql(FREQUENCY, { id: donation.id, frequency: 1 });
      expect(refusal(body, "changeDonationFrequency")).toEqual({
        message: "This campaign accepts one-off gifts only",
        extensions: {
          code: "frequency_not_offered",
          errors: [{ field: "frequency", message: "This campaign accepts one-off gifts only", code: "one_off_only" }],
        },
      });
    } finally {
      await db().update(campaigns).set({ hasSubscription: true }).where(eq(campaigns.id, campaignId));
    }
    // Rolled back: the renewal still queued as it was, nothing sent.
    expect((await queuedRenewal(donation.id))?.payload).toEqual({ cycle: 1 });
    expect((await restDonation(donation.id)).frequency).toBe(12);
    expect((await outboxOf(donation.id)).map((message) => message.kind)).not.toContain("donor_change");
  });
});

describe("pausing", () => {
  it("moves the queued renewal N cycles ahead; nothing is charged before; resuming brings it back", async () => {
    const donation = await give({ amount: 15 });
    const start = new Date(donation.completed_date);
    const resume = cycleDueDate(start, 12, 3);
    const { body } = await graphql(PAUSE, { id: donation.id, cycles: 2 });
    expect(body.errors).toBeUndefined();
    expect(body.data.pauseDonation).toMatchObject({
      state: "active",
      paused_until: resume.toISOString(),
      next_charge_date: resume.toISOString(),
    });
    const job = await queuedRenewal(donation.id);
    expect(job?.payload).toEqual({ cycle: 3 });
    expect(job?.runDate.toISOString()).toBe(resume.toISOString());
    expect((await outboxOf(donation.id)).at(-1)).toMatchObject({
      kind: "donor_change",
      data: { change: "pause", before: null, after: resume.toISOString() },
    });

    const again = await graphql(PAUSE, { id: donation.id, cycles: 1 });
    expect(refusal(again.body, "pauseDonation")).toEqual({
      message: `The donation ${donation.id} is already paused until ${resume.toISOString()}`,
      extensions: { code: "invalid_state_transition" },
    });

    const resumed = await graphql(RESUME, { id: donation.id });
    expect(resumed.body.data.resumeDonation).toMatchObject({
      paused_until: null,
      next_charge_date: cycleDueDate(start, 12, 1).toISOString(),
    });
    expect((await queuedRenewal(donation.id))?.payload).toEqual({ cycle: 1 });

    await graphql(PAUSE, { id: donation.id, cycles: 2 });
    await run(at(cycleDueDate(start, 12, 1), MINUTE));
    await run(at(cycleDueDate(start, 12, 2), MINUTE));
    expect(await paymentsOf(donation.id)).toHaveLength(1);
    await run(at(resume, MINUTE));
    expect((await paymentsOf(donation.id)).map((payment) => payment.state)).toEqual(["PAID", "PAID"]);
    expect((await queuedRenewal(donation.id))?.payload).toEqual({ cycle: 4 });
  });

  it("refuses 0 or 4 cycles", async () => {
    const donation = await give();
    for (const cycles of [0, 4]) {
      const { body } = await graphql(PAUSE, { id: donation.id, cycles });
      expect(refusal(body, "pauseDonation")).toEqual({
        message: 'Invalid field "cycles": must be 1 to 3',
        extensions: { code: "invalid_request", errors: [{ field: "cycles", message: "must be 1 to 3" }] },
      });
    }
    expect((await graphql(DONATION, { id: donation.id })).body.data.donation.paused_until).toBeNull();
  });
});

describe("cancelling", () => {
  it("keeps who cancelled and why, emails the donor, and refuses a second cancel", async () => {
    const donation = await give();
    const { body } = await graphql(CANCEL, { id: donation.id, reason: "  Moved abroad " });
    expect(body.errors).toBeUndefined();
    expect(body.data.cancelDonation).toMatchObject({
      state: "revoked",
      next_charge_date: null,
      cancelled_by: "admin",
      cancel_reason: "Moved abroad",
    });
    expect((await restDonation(donation.id)).state).toBe("revoked");
    expect(await queuedRenewal(donation.id)).toBeUndefined();
    expect((await outboxOf(donation.id)).at(-1)).toMatchObject({
      kind: "recurring_cancelled",
      data: { by: "admin", reason: "Moved abroad" },
    });
    const twice = await graphql(CANCEL, { id: donation.id });
    expect(refusal(twice.body, "cancelDonation")).toEqual({
      message: `The donation ${donation.id} is revoked; it cannot become revoked`,
      extensions: { code: "invalid_state_transition" },
    });
    expect((await outboxOf(donation.id)).filter((message) => message.kind === "recurring_cancelled")).toHaveLength(1);
  });

  it("REST keeps its wire shape and records an application's cancel; a reason over 500 characters is refused", async () => {
    const donation = await give();
    const long = await graphql(CANCEL, { id: donation.id, reason: "x".repeat(501) });
    expect(refusal(long.body, "cancelDonation")).toEqual({
      message: 'Invalid field "reason": must be at most 500 characters',
      extensions: { code: "invalid_request", errors: [{ field: "reason", message: "must be at most 500 characters" }] },
    });
    const response = await request("POST", `/api/v1/donations/${donation.id}/cancel`, { token: tenant.token });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(Object.keys(await restDonation(donation.id)).sort());
    expect(response.body).not.toHaveProperty("cancelled_by");
    expect((await graphql(DONATION, { id: donation.id })).body.data.donation).toMatchObject({
      cancelled_by: "admin",
      cancel_reason: null,
    });
    expect((await outboxOf(donation.id)).at(-1)).toMatchObject({ kind: "recurring_cancelled", data: { by: "admin" } });
    expect((await auditOf(donation.id)).at(-1)).toEqual({
      actor: `application ${tenant.applicationId}`,
      changes: { state: { before: "active", after: "revoked" }, cancelled_by: { before: null, after: "admin" } },
    });
  });

  it("sends no email to a supporter without an address", async () => {
    const donation = await give();
    await db().update(supporters).set({ email: null }).where(eq(supporters.id, donation.supporter_id));
    const before = (await outboxOf(donation.id)).length;
    expect((await graphql(AMOUNT, { id: donation.id, amount: 30 })).body.errors).toBeUndefined();
    expect((await graphql(CANCEL, { id: donation.id })).body.errors).toBeUndefined();
    expect((await outboxOf(donation.id)).length).toBe(before);
    expect((await auditOf(donation.id)).map((event) => Object.keys(event.changes ?? {}))).toEqual([
      ["amount"],
      ["state", "cancelled_by"],
    ]);
  });

  it("after the last failed retry the gift is revoked as cancelled by failed payments", async () => {
    const donation = await give({ card: CARD_FAILS_ON_RENEWAL });
    for (let failure = 0; failure < MAX_RENEWAL_FAILURES; failure++) {
      const job = await queuedRenewal(donation.id);
      if (!job) throw new Error(`no renewal queued after ${failure} failures`);
      await run(at(job.runDate, MINUTE));
    }
    const [row] = await db().select().from(donations).where(eq(donations.id, donation.id));
    expect(row).toMatchObject({ state: "revoked", cancelledBy: "failed_payments" });
    expect((await graphql(DONATION, { id: donation.id })).body.data.donation.cancelled_by).toBe("failed_payments");
  });
});

describe("a new payment method (the portal's service)", () => {
  it("retries a past_due gift at once with the new card", async () => {
    const donation = await give({ card: CARD_FAILS_ON_RENEWAL });
    const due = cycleDueDate(new Date(donation.completed_date), 12, 1);
    await run(at(due, MINUTE));
    expect((await restDonation(donation.id)).state).toBe("past_due");
    const now = at(due, 2 * MINUTE);
    await replacePaymentMethod(
      { db: db() },
      tenant.organizationId,
      donation.id,
      { processor: "sandbox", card: { number: CARD_OK, exp_month: 11, exp_year: 2031, cvc: "123" } },
      donorActor(),
      now,
    );
    const job = await queuedRenewal(donation.id);
    expect(job?.runDate.toISOString()).toBe(now.toISOString());
    expect((await outboxOf(donation.id)).at(-1)).toMatchObject({
      kind: "donor_change",
      data: { change: "payment_method", after: "Visa •••• 4242" },
    });
    await run(at(now, MINUTE));
    expect((await restDonation(donation.id)).state).toBe("active");
    expect((await paymentsOf(donation.id)).map((payment) => [payment.state, payment.payment_method?.label])).toEqual([
      ["PAID", "Visa •••• 0341"],
      ["FAILED", "Visa •••• 0341"],
      ["PAID", "Visa •••• 4242"],
    ]);
  });
});

describe("events", () => {
  /** Every event after the cursor, page by page, and the cursor after the last. */
  async function eventsAfter(after: string) {
    const seen: Json[] = [];
    let cursor = after;
    for (;;) {
      const page = await request("GET", `/api/v1/events/?after=${cursor}&limit=100`, { token: tenant.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.items);
      cursor = page.body.next_cursor;
      if (!page.body.has_more) return { seen, cursor };
    }
  }

  /** The donation's events (and its payments') after the cursor, as the events feed gives them. */
  async function eventsOf(donationId: number, after: string) {
    const { seen } = await eventsAfter(after);
    const payments = new Set((await paymentsOf(donationId)).map((payment) => payment.id));
    return seen
      .filter((event) =>
        event.resource.type === "donation" ? event.resource.id === donationId : payments.has(event.resource.id),
      )
      .filter((event) => event.resource.type === "donation" || event.resource.type === "payment")
      .map((event) => [event.type, event.actor.type, event.data.state]);
  }

  it("records each change and renewal of a recurring gift with who made it: a member, the worker, the donor", async () => {
    const start = (await request("GET", "/api/v1/events/?limit=1", { token: tenant.token })).body.next_cursor;
    const donation = await give({ card: CARD_FAILS_ON_RENEWAL });
    const { cursor } = await eventsAfter(start);

    expect((await graphql(AMOUNT, { id: donation.id, amount: 20 })).body.errors).toBeUndefined();
    const due = cycleDueDate(new Date(donation.completed_date), 12, 1);
    await run(at(due, MINUTE));
    const now = at(due, 2 * MINUTE);
    await replacePaymentMethod(
      { db: db() },
      tenant.organizationId,
      donation.id,
      { processor: "sandbox", card: { number: CARD_OK, exp_month: 11, exp_year: 2031, cvc: "123" } },
      donorActor({
        actor: { type: "donor", supporter_id: donation.supporter_id, label: "donor" },
        requestId: null,
        ip: null,
        userAgent: null,
      }),
      now,
    );
    await run(at(now, MINUTE));
    expect((await graphql(CANCEL, { id: donation.id, reason: "moving abroad" })).body.errors).toBeUndefined();

    expect(await eventsOf(donation.id, cursor)).toEqual([
      ["donation.updated", "user", "active"],
      ["payment.created", "system", "PENDING"],
      ["payment.failed", "system", "FAILED"],
      ["donation.updated", "system", "past_due"],
      ["donation.updated", "donor", "past_due"],
      ["payment.created", "system", "PENDING"],
      ["payment.paid", "system", "PAID"],
      ["donation.updated", "system", "active"],
      ["donation.updated", "user", "revoked"],
    ]);
    const last = (await eventsAfter(cursor)).seen.filter((event) => event.type === "donation.updated").at(-1);
    expect(last.data).toEqual(await restDonation(donation.id));
  });
});
