import { request as httpRequest } from "node:http";
import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "../../../test/helpers/factories.js";
import { startTestServer } from "../../../test/helpers/server.js";
import { type CardTestingConfig, loadConfig } from "../../config.js";
import { createUser } from "../users/users.service.js";

const CARDS = { ok: "4242424242424242", declined: "4000000000000002", insufficient: "4000000000009995" };
const card = (number: string = CARDS.ok) => ({ number, exp_month: 12, exp_year: 2035, cvc: "123" });
const DEFAULTS = loadConfig({}).cardTesting;
const PASSWORD = "a long enough password";

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
  body: any;
  ms: number;
}

/** One HTTP request from a chosen loopback address, so tests can be several clients (127.0.0.0/8). */
function send(url: string, method: string, body: unknown, from: string, headers: Record<string, string> = {}) {
  const startedAt = performance.now();
  return new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        localAddress: from,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: parsed,
            ms: performance.now() - startedAt,
          });
        });
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** A server with its own card-testing settings, one organization and one open campaign. */
async function givingServer(settings: Partial<CardTestingConfig>) {
  // With TEST_REDIS_URL (CI sets it) the counters live in Redis, as with REDIS_URL in production.
  const redisUrl = process.env.TEST_REDIS_URL;
  const server = await startTestServer({
    cardTesting: { ...DEFAULTS, ...settings },
    ...(redisUrl ? { redisUrl } : {}),
  });
  const tenant = await fakeTenant(server.database.db);
  const row = await fakeCampaign(server.database.db, tenant.organizationId, {
    slug: `cards-${unique(6)}`,
    hasOneOff: true,
    allowCustomAmount: true,
    minAmount: 1,
    maxAmount: 1000,
    shownFields: ["first_name", "email"],
    requiredFields: ["email"],
    archiveDate: null,
  });
  const slug = row.slug as string;
  const api = `${server.url}/api/v1/public/organizations/${tenant.slug}`;
  const start = (from = "127.0.0.1", organization = tenant.slug, campaign = slug) =>
    send(
      `${server.url}/api/v1/public/organizations/${organization}/campaigns/${campaign}/checkouts/`,
      "POST",
      { amount: 25, frequency: 0 },
      from,
    );
  const completion = (secret: string, number: string, extra: Json = {}) => ({
    client_secret: secret,
    amount: 25,
    frequency: 0,
    processor: "sandbox",
    card: card(number),
    supporter: { first_name: "Eve", email: `eve-${unique(6)}@example.test` },
    consents: { privacy: true },
    ...extra,
  });
  const complete = (checkout: { id: number; client_secret: string }, number: string, from: string, extra: Json = {}) =>
    send(`${api}/checkouts/${checkout.id}/complete`, "POST", completion(checkout.client_secret, number, extra), from);
  /** Starts a checkout from `from` and completes it there with the card. */
  const attempt = async (number: string, from: string, extra: Json = {}) => {
    const started = await start(from);
    expect(started.status).toBe(201);
    return { checkout: started.body, response: await complete(started.body, number, from, extra) };
  };
  const counts = async () => {
    const result = await server.database.db.execute<Record<string, string>>(sql`
      select
        (select count(*) from supporters where organization_id = ${tenant.organizationId}) as supporters,
        (select count(*) from payment_methods where organization_id = ${tenant.organizationId}) as methods,
        (select count(*) from donations where organization_id = ${tenant.organizationId}) as donations,
        (select count(*) from payments where organization_id = ${tenant.organizationId}) as payments,
        (select count(*) from checkout_attempts where organization_id = ${tenant.organizationId} and state = 'DECLINED') as attempts`);
    const row = (result as unknown as { rows: Record<string, string>[] }).rows[0] ?? {};
    const number = (key: string) => Number(row[key]);
    return {
      supporters: number("supporters"),
      methods: number("methods"),
      donations: number("donations"),
      payments: number("payments"),
      attempts: number("attempts"),
    };
  };
  return { server, tenant, slug, api, start, complete, attempt, counts };
}

const tooMany = (detail: string, code: string) => ({
  type: `urn:donata:problem:${code}`,
  title: "Too Many Requests",
  status: 429,
  code,
  detail: expect.stringMatching(new RegExp(`^${detail}\\. Nothing was charged; try again in \\d+ s\\.$`)),
});

describe("card testing: caps per checkout and checkouts per IP", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  beforeAll(async () => {
    setup = await givingServer({ attemptsPerCheckout: 3, checkoutsPerIp: 4, declineFloorMs: 0 });
  });
  afterAll(() => setup?.server.close());

  it("refuses a 4th attempt on one checkout with 429 and Retry-After, charging and writing nothing", async () => {
    const { start, complete, counts } = setup;
    const started = await start("127.0.0.21");
    for (let i = 0; i < 3; i++) {
      expect((await complete(started.body, CARDS.declined, "127.0.0.21")).status).toBe(402);
    }
    const before = await counts();
    const refused = await complete(started.body, CARDS.ok, "127.0.0.21");
    expect(refused.status).toBe(429);
    expect(refused.headers["content-type"]).toContain("application/problem+json");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.body).toEqual(
      tooMany("Too many payment attempts on this checkout; start a new one", "too_many_attempts"),
    );
    expect(await counts()).toEqual(before);
    expect(before).toMatchObject({ supporters: 0, donations: 0, payments: 0, attempts: 3 });
  });

  it("refuses the 5th checkout started from one IP within the hour, not another IP's", async () => {
    const { start, server, tenant } = setup;
    const checkoutCount = async () =>
      (
        (await server.database.db.execute(
          sql`select count(*)::int as n from checkouts where organization_id = ${tenant.organizationId}`,
        )) as unknown as { rows: { n: number }[] }
      ).rows[0]?.n;
    for (let i = 0; i < 4; i++) expect((await start("127.0.0.22")).status).toBe(201);
    const before = await checkoutCount();
    const refused = await start("127.0.0.22");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(3000);
    expect(refused.body).toEqual(tooMany("Too many checkouts were started from this network", "too_many_checkouts"));
    expect(await checkoutCount()).toBe(before);
    expect((await start("127.0.0.23")).status).toBe(201);
  });
});

describe("card testing: declines per IP and per card", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  beforeAll(async () => {
    setup = await givingServer({ declinesPerIp: 3, declinesPerCard: 4, declineFloorMs: 0 });
  });
  afterAll(() => setup?.server.close());

  it("refuses an IP after 3 declines in the hour, even with a good card, while other IPs still give", async () => {
    const { attempt, counts } = setup;
    for (let i = 0; i < 3; i++) expect((await attempt(CARDS.declined, "127.0.0.31")).response.status).toBe(402);
    const before = await counts();
    const refused = await attempt(CARDS.ok, "127.0.0.31");
    expect(refused.response.status).toBe(429);
    expect(Number(refused.response.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.response.body).toEqual(tooMany("Too many declined payments from this network", "too_many_declines"));
    expect(await counts()).toEqual(before);
    expect((await attempt(CARDS.ok, "127.0.0.32")).response.status).toBe(200);
  });

  it("refuses a card declined 4 times in the hour, whatever the IP, and stores only its fingerprint", async () => {
    const { attempt, counts, server } = setup;
    for (let i = 0; i < 4; i++) {
      expect((await attempt(CARDS.insufficient, `127.0.0.${41 + i}`)).response.status).toBe(402);
    }
    const before = await counts();
    const refused = await attempt(CARDS.insufficient, "127.0.0.49");
    expect(refused.response.status).toBe(429);
    expect(refused.response.body).toEqual(tooMany("This card was declined too often", "too_many_declines"));
    expect(await counts()).toEqual(before);
    const stored = await server.database.db.execute<Record<string, string>>(
      sql`select card_fingerprint, client_fingerprint, card_label from checkout_attempts where failure_code = 'insufficient_funds'`,
    );
    const rows = (stored as unknown as { rows: Record<string, string>[] }).rows;
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((row) => row.card_fingerprint)).size).toBe(1);
    expect(new Set(rows.map((row) => row.client_fingerprint)).size).toBe(4);
    expect(rows[0]?.card_label).toBe("Visa •••• 9995");
    expect(JSON.stringify(rows)).not.toContain(CARDS.insufficient);
    expect(JSON.stringify(rows)).not.toContain("127.0.0.4");
  });
});

describe("card testing: concurrent attempts", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  beforeAll(async () => {
    setup = await givingServer({ declinesPerIp: 3, declinesPerCard: 100, declineFloorMs: 0 });
  });
  afterAll(() => setup?.server.close());

  it("lets 12 parallel declines from one IP through the processor only 3 times; successes never count", async () => {
    const { start, complete, counts, attempt } = setup;
    const checkouts = [];
    for (let i = 0; i < 12; i++) checkouts.push((await start("127.0.0.91")).body);
    const answers = await Promise.all(checkouts.map((checkout) => complete(checkout, CARDS.declined, "127.0.0.91")));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(3).fill(402), ...Array(9).fill(429)]);
    expect((await counts()).attempts).toBe(3);

    for (let i = 0; i < 5; i++) expect((await attempt(CARDS.ok, "127.0.0.92")).response.status).toBe(200);
    expect((await attempt(CARDS.declined, "127.0.0.92")).response.status).toBe(402);
  });
});

describe("card testing: declined attempts", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  beforeAll(async () => {
    setup = await givingServer({ declineFloorMs: 400 });
  });
  afterAll(() => setup?.server.close());

  it("answers a decline no faster than the floor, records it, and writes no supporter, donation or payment", async () => {
    const { attempt, counts, server, tenant } = setup;
    const before = await counts();
    const declined = await attempt(CARDS.declined, "127.0.0.61");
    expect(declined.response.status).toBe(402);
    expect(declined.response.ms).toBeGreaterThanOrEqual(400);
    expect(declined.response.body).toEqual({
      type: "urn:donata:problem:payment_failed",
      title: "Payment Required",
      status: 402,
      code: "payment_failed",
      detail: "The card was declined. Nothing was charged; try another card or payment method.",
      errors: [{ field: "card", message: expect.stringMatching(/^card_declined: attempt \d+ was declined$/) }],
    });
    expect(await counts()).toEqual({ ...before, attempts: before.attempts + 1 });
    const checkout = await server.get(`/api/v1/checkouts/${declined.checkout.id}`, tenant.token);
    expect(checkout.body).toMatchObject({ state: "OPEN", supporter: null, donation: null, payment: null });

    const paid = await setup.complete(declined.checkout, CARDS.ok, "127.0.0.61");
    expect(paid.status).toBe(200);
    expect(await counts()).toEqual({
      supporters: before.supporters + 1,
      methods: before.methods + 1,
      donations: before.donations + 1,
      payments: before.payments + 1,
      attempts: before.attempts + 1,
    });
  });
});

describe("card testing: default limits never stop a real donor", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  beforeAll(async () => {
    setup = await givingServer({});
  });
  afterAll(() => setup?.server.close());

  it("one decline, then success on the same checkout, with the default decline floor of 1 s", async () => {
    expect(DEFAULTS).toMatchObject({ declineFloorMs: 1000, attemptsPerCheckout: 10, declinesPerIp: 10 });
    const declined = await setup.attempt(CARDS.declined, "127.0.0.71");
    expect(declined.response.status).toBe(402);
    expect(declined.response.ms).toBeGreaterThanOrEqual(1000);
    const retried = await setup.complete(declined.checkout, CARDS.ok, "127.0.0.71");
    expect(retried.status).toBe(200);
    expect(retried.body.result).toBe("succeeded");
  });
});

describe("card testing: escalation to a proof-of-work challenge", () => {
  let setup: Awaited<ReturnType<typeof givingServer>>;
  let other: Tenant;
  let otherSlug: string;

  const campaignOf = (organization: string, campaign: string) =>
    send(
      `${setup.server.url}/api/v1/public/organizations/${organization}/campaigns/${campaign}`,
      "GET",
      undefined,
      "127.0.0.1",
    );
  const solved = async (organization: string) => {
    const challenge = await send(
      `${setup.server.url}/api/v1/public/organizations/${organization}/challenge`,
      "GET",
      undefined,
      "127.0.0.1",
    );
    expect(challenge.status).toBe(200);
    expect(challenge.headers["cache-control"]).toBe("no-store");
    expect(challenge.body.parameters).toMatchObject({ algorithm: "PBKDF2/SHA-256", cost: 2 });
    const solution = await solveChallenge({ challenge: challenge.body, deriveKey });
    if (!solution) throw new Error("challenge not solved");
    return Buffer.from(JSON.stringify({ challenge: challenge.body, solution })).toString("base64");
  };

  beforeAll(async () => {
    setup = await givingServer({
      declinesPerIp: 1,
      spikeBlocked: 3,
      spikeWindowSeconds: 600,
      cooldownSeconds: 3,
      challengeCost: 2,
      challengeMaxNumber: 40,
      declineFloorMs: 0,
    });
    other = await fakeTenant(setup.server.database.db);
    otherSlug = (
      await fakeCampaign(setup.server.database.db, other.organizationId, {
        slug: `other-${unique(6)}`,
        hasOneOff: true,
        archiveDate: null,
      })
    ).slug as string;
  });
  afterAll(() => setup?.server.close());

  it("turns the challenge on when 3 IPs are blocked, requires a valid unused solution, and turns it off after the cooling-off", async () => {
    const { attempt, tenant, slug, counts } = setup;
    expect((await campaignOf(tenant.slug, slug)).body).toMatchObject({
      challenge_required: false,
      challenge_url: `/api/v1/public/organizations/${tenant.slug}/challenge`,
    });
    expect((await attempt(CARDS.declined, "127.0.0.81")).response.status).toBe(402);
    expect((await attempt(CARDS.declined, "127.0.0.82")).response.status).toBe(402);
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(false);
    expect((await attempt(CARDS.declined, "127.0.0.83")).response.status).toBe(402);
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(true);
    expect((await campaignOf(other.slug, otherSlug)).body.challenge_required).toBe(false);

    const before = await counts();
    const started = await setup.start("127.0.0.84");
    expect(started.body.challenge_required).toBe(true);
    const missing = await setup.complete(started.body, CARDS.ok, "127.0.0.84");
    expect(missing.status).toBe(403);
    expect(missing.body).toEqual({
      type: "urn:donata:problem:challenge_required",
      title: "Forbidden",
      status: 403,
      code: "challenge_required",
      detail:
        "The donation form is protected right now: solve the proof-of-work challenge (ALTCHA) and send its payload as `altcha`",
      errors: [{ field: "altcha", message: "a solved ALTCHA challenge is required" }],
    });
    const invalid = {
      type: "urn:donata:problem:challenge_invalid",
      title: "Forbidden",
      status: 403,
      code: "challenge_invalid",
      detail: "The ALTCHA payload is invalid, expired or already used; solve a new challenge",
      errors: [{ field: "altcha", message: "invalid, expired or already used" }],
    };
    const garbage = await setup.complete(started.body, CARDS.ok, "127.0.0.84", { altcha: "not a payload" });
    expect(garbage.status).toBe(403);
    expect(garbage.body).toEqual(invalid);
    const foreign = await setup.complete(started.body, CARDS.ok, "127.0.0.84", { altcha: await solved(other.slug) });
    expect(foreign.body).toEqual(invalid);
    const payload = await solved(tenant.slug);
    const tampered = JSON.parse(Buffer.from(payload, "base64").toString());
    const key: string = tampered.solution.derivedKey;
    tampered.solution.derivedKey = `${key.startsWith("0") ? "1" : "0"}${key.slice(1)}`;
    const wrong = await setup.complete(started.body, CARDS.ok, "127.0.0.84", {
      altcha: Buffer.from(JSON.stringify(tampered)).toString("base64"),
    });
    expect(wrong.body).toEqual(invalid);
    expect(await counts()).toEqual(before);

    const body = {
      client_secret: started.body.client_secret,
      amount: 25,
      frequency: 0,
      processor: "sandbox",
      card: card(),
      supporter: { email: `real-${unique(6)}@example.test` },
      consents: { privacy: true },
      altcha: payload,
    };
    const idempotency = { "idempotency-key": `key-${unique()}` };
    const url = `${setup.api}/checkouts/${started.body.id}/complete`;
    const given = await send(url, "POST", body, "127.0.0.84", idempotency);
    expect(given.status).toBe(200);
    // A retry after a lost answer replays it, though its solution is now used.
    const replayed = await send(url, "POST", body, "127.0.0.84", idempotency);
    expect(replayed.status).toBe(200);
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    expect(replayed.body).toEqual(given.body);
    const again = await setup.start("127.0.0.84");
    const reused = await setup.complete(again.body, CARDS.ok, "127.0.0.84", { altcha: payload });
    expect(reused.status).toBe(403);
    expect(reused.body).toEqual(invalid);

    await new Promise((resolve) => setTimeout(resolve, 3100));
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(false);
    expect((await setup.complete(again.body, CARDS.ok, "127.0.0.84")).status).toBe(200);
  });

  it("lets an owner or admin turn the challenge on and off through GraphQL, audited, for their organization only", async () => {
    const { server, tenant, slug } = setup;
    const member = async (role: "owner" | "admin" | "member") => {
      const email = `${role}-${unique(6)}@example.test`;
      await createUser(server.database.db, { email, password: PASSWORD, organization: tenant.slug, role });
      const response = await fetch(`${server.url}/admin/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      const cookie = response.headers.getSetCookie().find((line) => line.startsWith("donata_session="));
      return { email, cookie: cookie?.split(";")[0] ?? "" };
    };
    const graphql = async (headers: Record<string, string>, query: string) => {
      const response = await fetch(`${server.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-donata-organization": tenant.slug, ...headers },
        body: JSON.stringify({ query }),
      });
      return response.json();
    };
    const toggle = (enabled: boolean) =>
      `mutation { setCheckoutChallenge(enabled: ${enabled}) { challenge_required challenge_forced under_attack changed_by changed_date declines_last_hour } }`;
    const admin = await member("admin");
    const plain = await member("member");

    const on = await graphql({ cookie: admin.cookie }, toggle(true));
    expect(on.data.setCheckoutChallenge).toMatchObject({
      challenge_required: true,
      challenge_forced: true,
      changed_by: admin.email,
      changed_date: expect.any(String),
      declines_last_hour: 3,
    });
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(true);
    expect((await campaignOf(other.slug, otherSlug)).body.challenge_required).toBe(false);

    const refused = await graphql({ cookie: plain.cookie }, toggle(false));
    expect(refused.errors[0]).toMatchObject({
      message: "Your role (member) does not allow changing the donation form's protection",
      extensions: { code: "insufficient_scope" },
    });
    const byApp = await graphql({ authorization: `Bearer ${tenant.token}` }, toggle(false));
    expect(byApp.errors[0].extensions.code).toBe("insufficient_scope");
    const read = await graphql({ cookie: plain.cookie }, "{ checkoutProtection { challenge_required changed_by } }");
    expect(read.data.checkoutProtection).toEqual({ challenge_required: true, changed_by: admin.email });
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(true);

    const owner = await member("owner");
    const off = await graphql({ cookie: owner.cookie }, toggle(false));
    expect(off.data.setCheckoutChallenge).toMatchObject({
      challenge_required: false,
      challenge_forced: false,
      under_attack: false,
      changed_by: owner.email,
    });
    expect((await campaignOf(tenant.slug, slug)).body.challenge_required).toBe(false);
  });
});

describe("card testing: configuration", () => {
  it("reads every default from its environment variable and refuses a bad value", () => {
    const config = loadConfig({
      CHECKOUT_ATTEMPTS_PER_CHECKOUT: "4",
      CARD_DECLINES_PER_IP: "6",
      CARD_DECLINES_PER_CARD: "2",
      CHECKOUTS_PER_IP: "50",
      CARD_DECLINE_FLOOR_MS: "1500",
      CARD_TESTING_SPIKE_BLOCKED: "5",
      CARD_TESTING_SPIKE_DECLINES: "40",
      CARD_TESTING_SPIKE_WINDOW: "300",
      CARD_TESTING_COOLDOWN: "7200",
      ALTCHA_COST: "2000",
      ALTCHA_MAX_NUMBER: "5000",
      ALTCHA_TTL: "300",
    });
    expect(config.cardTesting).toEqual({
      attemptsPerCheckout: 4,
      declinesPerIp: 6,
      declinesPerCard: 2,
      checkoutsPerIp: 50,
      declineFloorMs: 1500,
      spikeBlocked: 5,
      spikeDeclines: 40,
      spikeWindowSeconds: 300,
      cooldownSeconds: 7200,
      challengeCost: 2000,
      challengeMaxNumber: 5000,
      challengeTtlSeconds: 300,
    });
    expect(() => loadConfig({ CARD_DECLINES_PER_IP: "0" })).toThrow(
      'CARD_DECLINES_PER_IP must be an integer between 1 and 100000, got "0"',
    );
    expect(() => loadConfig({ CARD_DECLINE_FLOOR_MS: "fast" })).toThrow(
      'CARD_DECLINE_FLOOR_MS must be an integer between 0 and 30000, got "fast"',
    );
  });
});
