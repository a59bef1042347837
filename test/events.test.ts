import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_CATALOG } from "../src/events/catalog.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { runEventRetention } from "../src/jobs/event-retention.job.js";
import { createUser } from "../src/modules/users/users.service.js";
import { issueTokenPair } from "../src/oauth/tokens.service.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

type Auth = { token?: string; cookie?: string };
interface EventWire {
  id: string;
  type: string;
  create_date: string;
  resource: { type: string; id: number | null };
  actor: { type: string; id: number | null };
  request: { id: string } | null;
  data: Record<string, unknown>;
  cursor: string;
}
interface EventPage {
  items: EventWire[];
  next_cursor: string;
  has_more: boolean;
}

const problem = (status: number, code: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `urn:donata:problem:${code}`,
  title: expect.any(String),
  status,
  detail,
  code,
  ...extra,
});

describe("events: the one record of every change, and its feed", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let admin: Auth & { userId: number };

  const graphql = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "events-test/1.0",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = await response.json();
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const feed = async (query: string, token = tenant.token) => server.get(`/api/v1/events/${query}`, token);
  /** Every event the token may read, page by page from the start. */
  const everything = async (token = tenant.token, type?: string) => {
    const items: EventWire[] = [];
    let after = "";
    for (;;) {
      const params = new URLSearchParams({ limit: "50", ...(after ? { after } : {}), ...(type ? { type } : {}) });
      const page = await feed(`?${params}`, token);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      const body = page.body as EventPage;
      items.push(...body.items);
      after = body.next_cursor;
      if (!body.has_more) return items;
    }
  };

  const CREATE_SUPPORTER = `mutation ($input: SupporterInput!) { createSupporter(input: $input) { id } }`;
  const UPDATE_SUPPORTER = `mutation ($id: ID!, $input: SupporterPatch!) { updateSupporter(id: $id, input: $input) { id } }`;
  const ERASE_SUPPORTER = `mutation ($id: ID!) { eraseSupporter(id: $id) { id } }`;
  const CREATE_CAMPAIGN = `mutation ($input: CampaignInput!) { createCampaign(input: $input) { id } }`;

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    const user = await createUser(server.database.db, {
      email: `admin-${unique(6)}@example.test`,
      password: "long enough password",
      organization: tenant.slug,
      role: "admin",
    });
    admin = {
      userId: user.id,
      cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`,
    };
  });
  afterAll(() => server?.close());

  it("records each change with its actor and request, the resource as GET returns it, in commit order", async () => {
    const start = (await feed("?limit=1")).body as EventPage;
    expect(start).toEqual({ items: [], next_cursor: expect.any(String), has_more: false });

    const email = `ada-${unique(6)}@example.test`;
    const { createSupporter } = await graphql(CREATE_SUPPORTER, { input: { first_name: "Ada", email } }, admin);
    const asCreated = (await server.get(`/api/v1/supporters/${createSupporter.id}`, tenant.token)).body;
    await graphql(UPDATE_SUPPORTER, { id: String(createSupporter.id), input: { last_name: "Lovelace" } }, tenant);
    const asUpdated = (await server.get(`/api/v1/supporters/${createSupporter.id}`, tenant.token)).body;
    const slug = `spring-${unique(6)}`;
    const { createCampaign } = await graphql(CREATE_CAMPAIGN, { input: { title: "Spring", slug } }, tenant);
    const campaign = (await server.get(`/api/v1/campaigns/${createCampaign.id}`, tenant.token)).body;

    const page = await feed(`?after=${start.next_cursor}`);
    expect(page.status).toBe(200);
    const { items, has_more } = page.body as EventPage;
    expect(has_more).toBe(false);
    expect(items.map((event) => event.type)).toEqual(["supporter.created", "supporter.updated", "campaign.created"]);
    expect(items[0]).toEqual({
      id: expect.stringMatching(/^evt_[A-Za-z0-9_-]{20}$/),
      type: "supporter.created",
      create_date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      resource: { type: "supporter", id: createSupporter.id },
      actor: { type: "user", id: admin.userId },
      request: { id: expect.stringMatching(/^req_[A-Za-z0-9_-]{16}$/) },
      data: asCreated,
      cursor: expect.any(String),
    });
    expect(items[1]).toMatchObject({ actor: { type: "application", id: tenant.applicationId }, data: asUpdated });
    expect(items[2]).toMatchObject({ resource: { type: "campaign", id: createCampaign.id }, data: campaign });
    expect(new Set(items.map((event) => event.request?.id)).size).toBe(3);

    // One by one from the same cursor: the same events, each once; each event's cursor resumes after it.
    const single = await feed(`?after=${start.next_cursor}&limit=1`);
    expect(single.body).toEqual({ items: [items[0]], next_cursor: items[0]?.cursor, has_more: true });
    const next = await feed(`?after=${items[0]?.cursor}&limit=2`);
    expect((next.body as EventPage).items).toEqual(items.slice(1));
    const end = await feed(`?after=${items[2]?.cursor}`);
    expect(end.body).toEqual({ items: [], next_cursor: items[2]?.cursor, has_more: false });
    expect((await server.get(`/api/v1/events/${items[1]?.id}`, tenant.token)).body).toEqual(items[1]);

    // The address and user agent are kept for the audit log, never shown to applications.
    const stored = (await server.database.db.execute(
      sql`select ip, user_agent from events where organization_id = ${tenant.organizationId} and id = ${items[0]?.id}`,
    )) as unknown as { rows: { ip: string; user_agent: string }[] };
    expect(stored.rows).toEqual([{ ip: "127.0.0.1", user_agent: "events-test/1.0" }]);
  });

  it("records nothing for a change that is refused or rolled back", async () => {
    const before = await everything();
    const slug = `taken-${unique(6)}`;
    await graphql(CREATE_CAMPAIGN, { input: { title: "First", slug } }, tenant);
    await expect(graphql(CREATE_CAMPAIGN, { input: { title: "Second", slug } }, tenant)).rejects.toThrow("slug_taken");
    await expect(graphql(CREATE_SUPPORTER, { input: { tags: ["no name"] } }, tenant)).rejects.toThrow(
      "invalid_request",
    );
    const after = await everything();
    expect(after.slice(before.length).map((event) => event.type)).toEqual(["campaign.created"]);
  });

  it("keeps no personal data of an erased supporter in any event", async () => {
    const email = `grace-${unique(6)}@example.test`;
    const { createSupporter } = await graphql(
      CREATE_SUPPORTER,
      { input: { first_name: "Grace", last_name: "Hopper", email, phone: "+39 333 1234567" } },
      tenant,
    );
    await graphql(UPDATE_SUPPORTER, { id: String(createSupporter.id), input: { city: "Arlington" } }, tenant);
    expect(JSON.stringify(await everything())).toContain(email);
    await graphql(ERASE_SUPPORTER, { id: String(createSupporter.id) }, tenant);
    await graphql(ERASE_SUPPORTER, { id: String(createSupporter.id) }, tenant);

    const events = (await everything()).filter(
      (event) => event.resource.type === "supporter" && event.resource.id === createSupporter.id,
    );
    expect(events.map((event) => event.type)).toEqual(["supporter.created", "supporter.updated", "supporter.erased"]);
    const stored = JSON.stringify(
      await server.database.db.execute(sql`select * from events where organization_id = ${tenant.organizationId}`),
    );
    for (const personal of [email, "Grace", "Hopper", "333 1234567", "Arlington"]) {
      expect(JSON.stringify(events)).not.toContain(personal);
      expect(stored).not.toContain(personal);
    }
    expect(events[2]?.data).toMatchObject({ id: createSupporter.id, email: null, first_name: null });
  });

  it("shows an application only the types its permissions read, and no other organization's", async () => {
    const all = await everything();
    expect(all.length).toBeGreaterThan(0);
    // A token of the same installation narrowed to supporters:read.
    const supportersOnly = await issueTokenPair(
      server.database.db,
      { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 3600 },
      {
        organizationId: tenant.organizationId,
        organizationSlug: tenant.slug,
        applicationId: tenant.applicationId,
        scope: ["supporters:read"],
      },
    );
    const seen = await everything(supportersOnly.access_token);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((event) => event.type.split(".")[0]))).toEqual(new Set(["supporter"]));
    expect(seen).toEqual(all.filter((event) => event.type.startsWith("supporter.")));

    const refused = await feed("?type=campaign.created", supportersOnly.access_token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "insufficient_scope" });
    const membersOnly = await feed("?type=membership.created");
    expect(membersOnly.status).toBe(403);
    expect(membersOnly.body).toMatchObject({ code: "insufficient_scope" });
    const campaignId = all.find((event) => event.type === "campaign.created")?.id;
    expect((await server.get(`/api/v1/events/${campaignId}`, supportersOnly.access_token)).status).toBe(404);

    // Filtered by type, the same events in the same order.
    expect(await everything(tenant.token, "campaign.created,supporter.erased")).toEqual(
      all.filter((event) => ["campaign.created", "supporter.erased"].includes(event.type)),
    );

    // Another organization sees none of them, by feed or by id, and cannot use this organization's cursor.
    expect(await everything(other.token)).toEqual([]);
    expect((await server.get(`/api/v1/events/${all[0]?.id}`, other.token)).status).toBe(404);
    const foreign = await feed(`?after=${all[0]?.cursor}`, other.token);
    expect(foreign.body).toEqual(
      problem(
        400,
        "invalid_request",
        'Invalid query parameter "after": is not a cursor this API gave for this organization\'s events',
        {
          errors: [{ parameter: "after", message: "is not a cursor this API gave for this organization's events" }],
        },
      ),
    );
  });

  it("refuses bad parameters with a 400 that names them, and needs a token", async () => {
    const otherOrganization = Buffer.from("ev1.999999999.1").toString("base64url");
    for (const after of ["garbage", otherOrganization, "%00", "x".repeat(101), "ev1.1.1"]) {
      const answer = await feed(`?after=${after}`);
      expect(answer.status, after).toBe(400);
      expect(answer.body).toMatchObject({ code: "invalid_request" });
    }
    const unknownType = await feed("?type=supporter.created,payment.teleported");
    expect(unknownType.body).toEqual(
      problem(400, "invalid_request", 'Invalid query parameter "type": unknown event type "payment.teleported"', {
        errors: [{ parameter: "type", message: 'unknown event type "payment.teleported"' }],
      }),
    );
    expect((await feed("?limit=0")).status).toBe(400);
    expect((await feed("?limit=1001")).status).toBe(400);
    expect((await feed("?since=1")).status).toBe(400);
    expect((await feed("")).status).toBe(200);
    expect((await server.get("/api/v1/events/")).status).toBe(401);
    expect((await server.get("/api/v1/events/evt_missing")).status).toBe(401);
    expect((await server.get("/api/v1/events/evt_missing", tenant.token)).status).toBe(404);
    expect((await server.get("/api/v1/events/not-an-event-id", tenant.token)).status).toBe(404);
  });

  it("answers 410 for a cursor older than the events kept, and starts at the oldest kept without one", async () => {
    const local = await fakeTenant(server.database.db);
    const { createSupporter: first } = await graphql(CREATE_SUPPORTER, { input: { first_name: "Old" } }, local);
    const old = await everything(local.token);
    expect(old.map((event) => event.resource.id)).toEqual([first.id]);
    const oldest = (await feed("?limit=1", local.token)).body as EventPage;
    expect(oldest.items).toEqual(old);

    // Thirty-one days on, the worker's retention pass deletes it; a newer event stays.
    await server.database.db.execute(
      sql`update events set create_date = now() - interval '31 days' where organization_id = ${local.organizationId}`,
    );
    const { createSupporter: second } = await graphql(CREATE_SUPPORTER, { input: { first_name: "New" } }, local);
    expect(await runEventRetention(server.database.db, new Date(), 30)).toBeGreaterThanOrEqual(1);
    expect((await everything(local.token)).map((event) => event.resource.id)).toEqual([second.id]);

    // The deleted event's own cursor still reads what follows it; a cursor from before it is gone.
    const following = (await feed(`?after=${oldest.next_cursor}`, local.token)).body as EventPage;
    expect(following.items.map((event) => event.resource.id)).toEqual([second.id]);
    const startCursor = Buffer.from(`ev1.${local.organizationId}.0`).toString("base64url");
    const expired = await feed(`?after=${startCursor}`, local.token);
    expect(expired.body).toEqual(
      problem(
        410,
        "cursor_expired",
        "This cursor is older than the events kept: the events after it are gone. Read the resources again, then start without a cursor",
      ),
    );
  });

  it("deletes a backlog past retention in batches, oldest first, and keeps the rest whole", async () => {
    const local = await fakeTenant(server.database.db);
    for (let index = 0; index < 5; index++) {
      await graphql(CREATE_SUPPORTER, { input: { first_name: `Backlog ${index}` } }, local);
    }
    await server.database.db.execute(
      sql`update events set create_date = now() - interval '40 days' where organization_id = ${local.organizationId}`,
    );
    const { createSupporter: kept } = await graphql(CREATE_SUPPORTER, { input: { first_name: "Kept" } }, local);
    // Batches of 2: three transactions for five events; the newer event stays.
    expect(await runEventRetention(server.database.db, new Date(), 30, 2)).toBeGreaterThanOrEqual(5);
    expect((await everything(local.token)).map((event) => event.resource.id)).toEqual([kept.id]);
    const counter = (await server.database.db.execute(
      sql`select last_seq::int as last, pruned_through::int as pruned from event_sequences where organization_id = ${local.organizationId}`,
    )) as unknown as { rows: { last: number; pruned: number }[] };
    expect(counter.rows).toEqual([{ last: 6, pruned: 5 }]);
    // Nothing left to delete: a second pass leaves it as it is.
    await runEventRetention(server.database.db, new Date(), 30, 2);
    expect((await everything(local.token)).map((event) => event.resource.id)).toEqual([kept.id]);
  });

  it("never deletes an event within retention, even behind a higher-numbered old one (the moved audit records)", async () => {
    const local = await fakeTenant(server.database.db);
    const { createSupporter: recent } = await graphql(CREATE_SUPPORTER, { input: { first_name: "Recent" } }, local);
    // As migration 0017 numbers the old audit table's records: after the events, with their old dates.
    await server.database.db.execute(sql`
      insert into events (organization_id, seq, id, type, resource_type, resource_id, actor, data, create_date)
      values (${local.organizationId}, 2, ${`evt_${unique(20)}`}, 'audit.legacy', 'organization', ${local.organizationId},
              '{"type":"system","label":"cli"}', '{"action":"payments.test_mode_enabled","details":{}}', now() - interval '90 days')`);
    await server.database.db.execute(
      sql`update event_sequences set last_seq = 2 where organization_id = ${local.organizationId}`,
    );
    await runEventRetention(server.database.db, new Date(), 30, 2);
    const left = (await server.database.db.execute(
      sql`select seq::int as seq from events where organization_id = ${local.organizationId} order by seq`,
    )) as unknown as { rows: { seq: number }[] };
    expect(left.rows).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect((await everything(local.token)).map((event) => event.resource.id)).toEqual([recent.id]);
  });

  it("gives a polling reader every event exactly once, in commit order, while 8 writers commit", async () => {
    const local = await fakeTenant(server.database.db);
    const PER_WRITER = 8;
    const begin = ((await feed("", local.token)).body as EventPage).next_cursor;
    const created: number[] = [];
    let writing = true;
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      for (let index = 0; index < PER_WRITER; index++) {
        const { createSupporter } = await graphql(
          CREATE_SUPPORTER,
          { input: { first_name: `W${writer}-${index}` } },
          local,
        );
        created.push(createSupporter.id);
      }
    });
    const seen: EventWire[] = [];
    const reader = (async () => {
      let after = begin;
      for (;;) {
        const done = !writing;
        const page = await feed(`?after=${after}&limit=7`, local.token);
        expect(page.status).toBe(200);
        const body = page.body as EventPage;
        seen.push(...body.items);
        after = body.next_cursor;
        if (done && !body.has_more) return;
      }
    })();
    await Promise.all(writers);
    writing = false;
    await reader;

    expect(created).toHaveLength(8 * PER_WRITER);
    expect(seen.map((event) => event.resource.id).sort((a, b) => Number(a) - Number(b))).toEqual(
      [...created].sort((a, b) => a - b),
    );
    expect(new Set(seen.map((event) => event.id)).size).toBe(seen.length);
    // Numbered without gaps in the order they were read (the cursor's number, opaque to clients).
    const numbers = seen.map((event) => Number(Buffer.from(event.cursor, "base64url").toString().split(".")[2]));
    expect(numbers).toEqual(Array.from({ length: seen.length }, (_, index) => index + 1));
    // Commit order: each writer's own supporters come in the order it created them.
    for (let writer = 0; writer < 8; writer++) {
      const names = seen.map((event) => String(event.data.first_name)).filter((name) => name.startsWith(`W${writer}-`));
      expect(names).toEqual(Array.from({ length: PER_WRITER }, (_, index) => `W${writer}-${index}`));
    }
  });

  it("records a supporter a donor creates at checkout, once, with the donor as actor", async () => {
    const local = await fakeTenant(server.database.db);
    const campaign = await fakeCampaign(server.database.db, local.organizationId, {
      hasOneOff: true,
      allowCustomAmount: true,
      minAmount: 1,
      maxAmount: 1000,
      archiveDate: null,
    });
    const email = `donor-${unique(6)}@example.test`;
    const give = async () => {
      const base = `${server.url}/api/v1/public/organizations/${local.slug}`;
      const started = await fetch(`${base}/campaigns/${campaign.slug}/checkouts/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then((response) => response.json());
      const completed = await fetch(`${base}/checkouts/${started.id}/complete`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_secret: started.client_secret,
          amount: 25,
          frequency: 0,
          processor: "sandbox",
          card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
          supporter: { first_name: "Dora", email },
          consents: { privacy: true },
        }),
      });
      expect(completed.status).toBe(200);
    };
    await give();
    await give();
    const created = (await everything(local.token)).filter((event) => event.type === "supporter.created");
    expect(created).toHaveLength(1);
    const supporterId = created[0]?.resource.id;
    expect(created[0]).toMatchObject({ actor: { type: "donor", id: supporterId }, request: null });
    // As created; the first gift then sets its statement link, an update of its own.
    expect(created[0]?.data).toMatchObject({ email, first_name: "Dora", certification_url: null });
    const updates = (await everything(local.token)).filter(
      (event) => event.type === "supporter.updated" && event.resource.id === supporterId,
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]?.data).toEqual((await server.get(`/api/v1/supporters/${supporterId}`, local.token)).body);
  });

  describe("money", () => {
    let local: Tenant;
    let campaignSlug: string;
    let campaignId: number;
    const since = async (cursor: string) => {
      const items: EventWire[] = [];
      let after = cursor;
      for (;;) {
        const page = (await feed(`?after=${after}&limit=100`, local.token)).body as EventPage;
        items.push(...page.items);
        after = page.next_cursor;
        if (!page.has_more) return { items, cursor: after };
      }
    };
    const mark = async () => (await since((await feed("?limit=1", local.token)).body.next_cursor)).cursor;
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${local.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    };
    const checkout = async (options: { card?: string; processor?: string; email?: string; lastName?: string } = {}) => {
      const base = `${server.url}/api/v1/public/organizations/${local.slug}`;
      const started = await fetch(`${base}/campaigns/${campaignSlug}/checkouts/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then((response) => response.json());
      const processor = options.processor ?? "sandbox";
      const completed = await fetch(`${base}/checkouts/${started.id}/complete`, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "donor-browser/1.0" },
        body: JSON.stringify({
          client_secret: started.client_secret,
          amount: 40,
          frequency: 0,
          processor,
          ...(processor === "sandbox"
            ? { card: { number: options.card ?? "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" } }
            : {}),
          supporter: {
            first_name: "Marie",
            last_name: options.lastName ?? "Curie",
            email: options.email ?? `marie-${unique(6)}@example.test`,
          },
          consents: { privacy: true },
        }),
      });
      return { checkoutId: started.id as number, status: completed.status, body: await completed.json() };
    };

    beforeAll(async () => {
      local = await fakeTenant(server.database.db);
      await server.database.db.execute(
        sql`update organizations set iban = 'IT60X0542811101000000123456', bank_account_name = 'Charity Trust' where id = ${local.organizationId}`,
      );
      const campaign = await fakeCampaign(server.database.db, local.organizationId, {
        hasOneOff: true,
        allowCustomAmount: true,
        minAmount: 1,
        maxAmount: 1000,
        archiveDate: null,
      });
      campaignSlug = campaign.slug as string;
      campaignId = campaign.id;
    });

    it("records a card checkout: supporter, donation, payment, paid, done, completed, each as GET returns it", async () => {
      const cursor = await mark();
      const gift = await checkout();
      expect(gift.status, JSON.stringify(gift.body)).toBe(200);
      const { items } = await since(cursor);
      const supporterId = gift.body.donation.supporter_id;
      const donationId = gift.body.donation.id;
      const paymentId = gift.body.payment.id;
      expect(items.map((event) => [event.type, event.resource.id])).toEqual([
        ["supporter.created", supporterId],
        ["donation.created", donationId],
        ["payment.created", paymentId],
        ["payment.paid", paymentId],
        ["donation.updated", donationId],
        ["supporter.updated", supporterId],
        ["checkout.completed", gift.checkoutId],
        // The paid payment's receipt, issued by its subscriber in the same transaction (docs/receipts.md).
        ["receipt.issued", expect.any(Number)],
      ]);
      expect(items[7]?.data).toMatchObject({ kind: "payment", payment_id: paymentId, number: expect.any(Number) });
      // The donor did it all, whoever reported the charge; one transaction, so no request of theirs is named.
      for (const event of items) expect(event.actor).toEqual({ type: "donor", id: supporterId });
      expect(items[1]?.data).toMatchObject({ id: donationId, state: "pending" });
      expect(items[2]?.data).toMatchObject({ id: paymentId, state: "PENDING" });
      const payment = (await server.get(`/api/v1/payments/${paymentId}`, local.token)).body;
      const donation = (await server.get(`/api/v1/donations/${donationId}`, local.token)).body;
      const completed = (await server.get(`/api/v1/checkouts/${gift.checkoutId}`, local.token)).body;
      expect(items[3]?.data).toEqual(payment);
      expect(items[4]?.data).toEqual(donation);
      expect(items[6]?.data).toEqual(completed);
      expect(payment).toMatchObject({ state: "PAID", payment_method: { label: expect.any(String) } });
      expect(donation.state).toBe("done");

      // The same donor again (a supporter found, its statement link set already), and a bank transfer still pending.
      const email = (await server.get(`/api/v1/supporters/${supporterId}`, local.token)).body.email;
      for (const processor of ["sandbox", "manual"]) {
        const next = await mark();
        const again = await checkout({ email, processor });
        expect(again.status, JSON.stringify(again.body)).toBe(200);
        const [completedEvent] = (await since(next)).items.filter((event) => event.type === "checkout.completed");
        expect(completedEvent?.data).toEqual(
          (await server.get(`/api/v1/checkouts/${again.checkoutId}`, local.token)).body,
        );
        expect(completedEvent?.data).toMatchObject({ supporter: { id: supporterId }, state: "CLOSED" });
      }
    });

    it("records nothing for a declined card", async () => {
      const cursor = await mark();
      const declined = await checkout({ card: "4000000000000002" });
      expect(declined.status).toBe(402);
      expect((await since(cursor)).items).toEqual([]);
    });

    it("records refunds in part and in full, and the gift revoked, with the application as actor", async () => {
      const gift = await checkout();
      const paymentId = gift.body.payment.id;
      const cursor = await mark();
      expect((await api("POST", `/api/v1/payments/${paymentId}/refund`, { amount: 15 })).status).toBe(200);
      expect((await api("POST", `/api/v1/payments/${paymentId}/refund`)).status).toBe(200);
      const { items } = await since(cursor);
      expect(
        items.map((event) => [event.type, event.data.state ?? event.data.void_reason ?? event.data.amount]),
      ).toEqual([
        ["payment.refunded", "PAID"],
        // The receipt of the whole gift is voided, one for what is left is issued; the full refund voids that one.
        ["receipt.voided", "partially_refunded"],
        ["receipt.issued", 25],
        ["payment.refunded", "REFUNDED"],
        ["donation.updated", "revoked"],
        ["receipt.voided", "refunded"],
      ]);
      for (const event of items) expect(event.actor).toEqual({ type: "application", id: local.applicationId });
      expect(items[3]?.data).toEqual((await server.get(`/api/v1/payments/${paymentId}`, local.token)).body);
      expect(new Set(items.map((event) => event.request?.id)).size).toBe(2);
    });

    it("records a bank transfer awaited, then marked paid; and a gift received offline", async () => {
      const cursor = await mark();
      const transfer = await checkout({ processor: "manual" });
      expect(transfer.status, JSON.stringify(transfer.body)).toBe(200);
      const paymentId = transfer.body.payment.id;
      expect((await api("POST", `/api/v1/payments/${paymentId}/mark_paid`)).status).toBe(200);
      const offline = await api("POST", "/api/v1/donations/", {
        supporter_id: transfer.body.donation.supporter_id,
        campaign_id: campaignId,
        amount: 12,
        label: "Cash",
      });
      expect(offline.status, JSON.stringify(offline.body)).toBe(201);
      const { items } = await since(cursor);
      expect(items.map((event) => `${event.type} ${event.actor.type}`)).toEqual([
        "supporter.created donor",
        "donation.created donor",
        "payment.created donor",
        "checkout.completed donor",
        "payment.paid application",
        "donation.updated application",
        "supporter.updated application",
        "receipt.issued application",
        "donation.created application",
        "payment.created application",
        "payment.paid application",
        "receipt.issued application",
      ]);
      expect(items[1]?.data).toMatchObject({ state: "pending" });
      expect(items[4]?.data).toEqual((await server.get(`/api/v1/payments/${paymentId}`, local.token)).body);
      expect(items[7]?.data).toMatchObject({ payment_id: paymentId, traceable: true });
      expect(items[9]?.data).toEqual(offline.body.payment);
      expect(items[8]?.data).toEqual(offline.body.donation);
      // Cash is not a traceable payment (what an Italian deduction needs), and the receipt says so.
      expect(items[11]?.data).toMatchObject({ payment_id: offline.body.payment.id, traceable: false });
    });

    it("keeps no personal data of an erased donor in the events of their checkout", async () => {
      const email = `irene-${unique(6)}@example.test`;
      const lastName = `Joliot-${unique(6)}`;
      const gift = await checkout({ email, lastName });
      const supporterId = gift.body.donation.supporter_id;
      const stored = async () =>
        JSON.stringify(
          await server.database.db.execute(sql`select * from events where organization_id = ${local.organizationId}`),
        );
      expect(await stored()).toContain(lastName);
      await graphql(ERASE_SUPPORTER, { id: String(supporterId) }, { token: local.token });
      const after = await stored();
      for (const personal of [email, lastName]) expect(after).not.toContain(personal);
      const completed = (await everything(local.token, "checkout.completed")).find(
        (event) => event.resource.id === gift.checkoutId,
      );
      expect(completed?.data.supporter).toMatchObject({ id: supporterId, email: null, first_name: null });
    });
  });

  it("has a catalog in which every type names its resource and who may read it", () => {
    for (const [type, entry] of Object.entries(EVENT_CATALOG)) {
      expect(type).toMatch(/^[a-z_]+\.[a-z_]+$/);
      expect(entry.description.length).toBeGreaterThan(10);
    }
  });
});
