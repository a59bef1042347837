import { and, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { idempotencyKeys, outboxMessages, webhookDeliveries, webhookEndpoints } from "../src/db/schema.js";
import { webhookSenderDeps } from "../src/jobs/webhook.job.js";
import { createUser } from "../src/modules/users/users.service.js";
import {
  deliverWebhooks,
  dispatchWebhookEvents,
  MAX_ATTEMPTS,
  RETRY_SCHEDULE_SECONDS,
} from "../src/modules/webhooks/webhook-delivery.service.js";
import { claimDueDeliveries } from "../src/modules/webhooks/webhooks.repo.js";
import { auditRowsOf } from "./helpers/audit.js";
import { fakeAppToken, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";
import { startWebhookReceiver } from "./helpers/webhook-receiver.js";

interface Delivery {
  id: number;
  event: { id: string; type: string };
  state: string;
  attempts: number;
  next_attempt_date: string | null;
  last_status: number | null;
  last_error: string | null;
  attempt_log: {
    attempt: number;
    status: number | null;
    duration_ms: number;
    response: string | null;
    error: string | null;
  }[];
}

const SECOND = 1000;

describe("webhooks: endpoints, signed deliveries, retries, the delivery log", () => {
  let server: TestServer;
  let tenant: Tenant;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  const send = async (method: string, path: string, body?: unknown, token = tenant.token) =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }),
    );
  const deliver = (options: { now?: Date; timeoutMs?: number } = {}) =>
    deliverWebhooks(server.database.db, webhookSenderDeps(server.config), {
      organizationIds: [tenant.organizationId],
      ...options,
    });
  const createEndpoint = async (body: Record<string, unknown> = {}) => {
    const created = await send("POST", "/api/v1/webhook_endpoints/", {
      url: receiver.url(`/hooks/${unique(6)}`),
      event_types: ["supporter.created", "supporter.updated"],
      ...body,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { id: number; url: string; secret: string; status: string };
  };
  const createSupporter = async (first_name = "Ada") => {
    const created = await send("POST", "/api/v1/supporters/", { first_name, email: `${unique(6)}@example.test` });
    expect(created.status).toBe(201);
    return created.body as { id: number };
  };
  const deliveriesOf = async (endpointId: number, query = "") => {
    const page = await send("GET", `/api/v1/webhook_endpoints/${endpointId}/deliveries${query}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    return (page.body as { items: Delivery[] }).items;
  };
  const receivedAt = (endpoint: { url: string }) =>
    receiver.received.filter((hook) => endpoint.url.endsWith(hook.path));
  /** Every delivery is checked with the reference Standard Webhooks library. */
  const verified = (secret: string, hook: { headers: Record<string, unknown>; body: string }) =>
    new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as {
      id: string;
      type: string;
      data: Record<string, unknown>;
    };

  beforeAll(async () => {
    server = await startTestServer({ webhookAllowPrivateNetworks: true });
    receiver = await startWebhookReceiver();
  });
  beforeEach(async () => {
    // Each test its own organization: a test's deliveries never wait behind another's.
    tenant = await fakeTenant(server.database.db);
    receiver.answer((_request, response) => response.end("ok"));
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  it("creates an endpoint (the secret shown once), lists, gets, updates and deletes it, each change in the audit record", async () => {
    const endpoint = await createEndpoint({ description: "CRM sync" });
    expect(endpoint).toMatchObject({ status: "enabled", event_types: ["supporter.created", "supporter.updated"] });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("secret");
    expect(JSON.stringify((await send("GET", "/api/v1/webhook_endpoints/")).body)).not.toContain("whsec_");
    const [row] = await server.database.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, endpoint.id)));
    expect(row?.secretSealed).not.toContain(endpoint.secret.slice(6, 20));

    const patched = await send("PATCH", `/api/v1/webhook_endpoints/${endpoint.id}`, {
      event_types: ["*"],
      description: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ event_types: ["*"], description: null, url: endpoint.url });

    const deleted = await send("DELETE", `/api/v1/webhook_endpoints/${endpoint.id}`);
    expect(deleted.status).toBe(204);
    expect((await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404);

    const rows = await auditRowsOf(server.database.db, tenant.organizationId, [
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.deleted",
    ]);
    expect(rows.map((event) => event.type)).toEqual([
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.deleted",
    ]);
    expect(JSON.stringify(rows)).not.toContain("whsec_");
  });

  it("replays a create and a rotation sent again with the same Idempotency-Key: the same secret, nothing more made", async () => {
    const keyed = async (path: string, key: string, body: unknown = {}) =>
      readResponse(
        await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${tenant.token}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify(body),
        }),
      );
    const countEndpoints = async () =>
      (
        await server.database.db
          .select({ id: webhookEndpoints.id })
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.organizationId, tenant.organizationId))
      ).length;
    const before = await countEndpoints();
    const body = { url: receiver.url(`/hooks/${unique(6)}`), event_types: ["supporter.created"] };
    const key = `create-${unique(8)}`;
    // Two at once, then a third: one endpoint, one secret, every answer the first.
    const answers = await Promise.all([
      keyed("/api/v1/webhook_endpoints/", key, body),
      keyed("/api/v1/webhook_endpoints/", key, body),
    ]);
    answers.push(await keyed("/api/v1/webhook_endpoints/", key, body));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201]);
    const first = answers[0]?.body as { id: number; secret: string };
    expect(first.secret).toMatch(/^whsec_/);
    for (const answer of answers) expect(answer.body).toEqual(first);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(2);
    expect(await countEndpoints()).toBe(before + 1);
    // The kept answer holds the secret sealed only.
    expect(JSON.stringify(await server.database.db.select().from(idempotencyKeys))).not.toContain(first.secret);

    const other = await keyed("/api/v1/webhook_endpoints/", key, { ...body, description: "another" });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: "idempotency_key_reused" });
    expect(await countEndpoints()).toBe(before + 1);

    const rotateKey = `rotate-${unique(8)}`;
    const rotated = await keyed(`/api/v1/webhook_endpoints/${first.id}/rotate_secret`, rotateKey);
    expect(rotated.status).toBe(200);
    const again = await keyed(`/api/v1/webhook_endpoints/${first.id}/rotate_secret`, rotateKey);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(rotated.body);
    const secret = (rotated.body as { secret: string }).secret;
    expect(secret).not.toBe(first.secret);
    // The replay rotated nothing: the endpoint signs with the first rotation's secret and the one before it.
    const [row] = await server.database.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, first.id)));
    const secrets = webhookSenderDeps(server.config).secrets;
    expect(secrets.open(row?.secretSealed as string)).toBe(secret);
    expect(secrets.open(row?.previousSecretSealed as string)).toBe(first.secret);
    const bad = await keyed("/api/v1/webhook_endpoints/", "k".repeat(256), body);
    expect(bad.status).toBe(400);
  });

  it("refuses what it cannot keep: unknown or members-only types, bad bodies, another application's endpoint", async () => {
    const bad = async (body: unknown, status: number, code: string) => {
      const answer = await send("POST", "/api/v1/webhook_endpoints/", body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.code).toBe(code);
    };
    await bad({ url: receiver.url(), event_types: ["supporter.nope"] }, 400, "invalid_request");
    await bad({ url: receiver.url(), event_types: ["membership.created"] }, 403, "insufficient_scope");
    await bad({ url: receiver.url(), event_types: [] }, 400, "invalid_request");
    await bad({ url: receiver.url(), event_types: ["*", "supporter.created"] }, 400, "invalid_request");
    await bad({ url: "ftp://example.test/", event_types: ["supporter.created"] }, 422, "webhook_url_refused");
    await bad({ url: "not a url", event_types: ["supporter.created"] }, 422, "webhook_url_refused");
    await bad({ event_types: ["supporter.created"] }, 400, "invalid_request");
    const narrow = await fakeAppToken(server.database.db, tenant, ["campaigns:read"]);
    const refused = await send(
      "POST",
      "/api/v1/webhook_endpoints/",
      { url: receiver.url(), event_types: ["payment.paid"] },
      narrow,
    );
    expect(refused.status).toBe(403);

    const endpoint = await createEndpoint();
    for (const [method, path] of [
      ["GET", ""],
      ["PATCH", ""],
      ["DELETE", ""],
      ["POST", "/rotate_secret"],
      ["GET", "/deliveries"],
    ] as const) {
      const answer = await send(
        method,
        `/api/v1/webhook_endpoints/${endpoint.id}${path}`,
        method === "PATCH" ? {} : undefined,
        narrow,
      );
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    const other = await fakeTenant(server.database.db);
    expect((await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`, undefined, other.token)).status).toBe(404);
    expect((await send("GET", "/api/v1/webhook_endpoints/", undefined, narrow)).body).toEqual({ items: [] });
    expect((await send("GET", "/api/v1/webhook_endpoints/abc")).status).toBe(404);
  });

  it("delivers each event signed (Standard Webhooks), the event as the feed gives it, and logs the attempt", async () => {
    const endpoint = await createEndpoint();
    receiver.answer((_request, response) => response.end(`accepted ${"x".repeat(2000)}`));
    const supporter = await createSupporter();
    await send("PATCH", `/api/v1/supporters/${supporter.id}`, { last_name: "Lovelace" });
    await send("POST", "/api/v1/campaigns/", { title: "Not subscribed" });
    const pass = await deliver();
    expect(pass).toMatchObject({ queued: 2, succeeded: 2 });
    const hooks = receivedAt(endpoint);
    expect(hooks).toHaveLength(2);
    const events = hooks.map((hook) => verified(endpoint.secret, hook));
    expect(events.map((event) => event.type)).toEqual(["supporter.created", "supporter.updated"]);
    expect(events[1]?.data).toMatchObject({ id: supporter.id, last_name: "Lovelace" });
    expect(hooks[0]?.headers["webhook-id"]).toBe(events[0]?.id);
    expect(hooks[0]?.headers["content-type"]).toBe("application/json");
    const feed = await send("GET", "/api/v1/events/?type=supporter.created,supporter.updated");
    expect(feed.body.items.map((event: { id: string }) => event.id)).toEqual(events.map((event) => event.id));
    expect(JSON.parse(hooks[0]?.body ?? "")).toEqual(feed.body.items[0]);

    const log = await deliveriesOf(endpoint.id);
    expect(log.map((delivery) => delivery.event.type)).toEqual(["supporter.updated", "supporter.created"]);
    expect(log[0]).toMatchObject({ state: "succeeded", attempts: 1, last_status: 200, next_attempt_date: null });
    expect(log[0]?.attempt_log).toHaveLength(1);
    expect(log[0]?.attempt_log[0]).toMatchObject({ attempt: 1, status: 200, error: null });
    expect(log[0]?.attempt_log[0]?.response).toHaveLength(1024);
    expect(await deliver()).toMatchObject({ queued: 0, succeeded: 0 });
    const paged = await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=1`);
    expect(paged.body).toMatchObject({ has_more: true, next_before: log[0]?.id });
    const rest = await deliveriesOf(endpoint.id, `?before=${paged.body.next_before}`);
    expect(rest.map((delivery) => delivery.id)).toEqual([log[1]?.id]);
  });

  it("retries a failure on the schedule under the same webhook-id, and fails it after the last attempt", async () => {
    const endpoint = await createEndpoint();
    receiver.answer((_request, response) => {
      response.statusCode = 503;
      response.end("busy");
    });
    await createSupporter();
    const start = new Date();
    expect(await deliver({ now: start })).toMatchObject({ retried: 1 });
    let [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ state: "pending", attempts: 1, last_status: 503, last_error: "answered 503" });
    expect(new Date(delivery?.next_attempt_date ?? 0).getTime() - start.getTime()).toBe(
      RETRY_SCHEDULE_SECONDS[0] * SECOND,
    );
    // Not due yet: nothing is sent.
    expect(await deliver({ now: new Date(start.getTime() + 4 * SECOND) })).toMatchObject({ retried: 0 });
    let at = start.getTime();
    for (const wait of RETRY_SCHEDULE_SECONDS) {
      at += wait * SECOND;
      await deliver({ now: new Date(at) });
    }
    [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ state: "failed", attempts: MAX_ATTEMPTS, next_attempt_date: null });
    expect(delivery?.attempt_log.map((attempt) => attempt.attempt)).toEqual(
      Array.from({ length: MAX_ATTEMPTS }, (_, index) => index + 1),
    );
    const total = RETRY_SCHEDULE_SECONDS.reduce((sum: number, wait) => sum + wait, 0);
    expect(total / 86_400).toBeGreaterThan(3);
    expect(total / 86_400).toBeLessThan(3.5);
    const hooks = receivedAt(endpoint);
    expect(hooks).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(hooks.map((hook) => hook.headers["webhook-id"])).size).toBe(1);
    for (const hook of hooks) verified(endpoint.secret, hook);

    // Retry one by hand: sent at once, the same event.
    receiver.answer((_request, response) => response.end("ok"));
    const retried = await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/deliveries/${delivery?.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ state: "pending" });
    await deliver({ now: new Date(at + SECOND) });
    [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ state: "succeeded", attempts: MAX_ATTEMPTS + 1, last_status: 200 });
    expect(receivedAt(endpoint).at(-1)?.headers["webhook-id"]).toBe(hooks[0]?.headers["webhook-id"]);
    expect((await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/deliveries/999999999/retry`)).status).toBe(
      404,
    );
  });

  it("keeps each resource's events in order: a later one waits while an earlier one is retried; others go on", async () => {
    const endpoint = await createEndpoint();
    const first = await createSupporter("First");
    await send("PATCH", `/api/v1/supporters/${first.id}`, { last_name: "Second" });
    const other = await createSupporter("Other");
    let refused = false;
    receiver.answer((request, response) => {
      const event = JSON.parse(request.body) as { type: string; data: { id: number } };
      // The first supporter's first event is refused once.
      const refuse = !refused && event.data.id === first.id && event.type === "supporter.created";
      refused ||= refuse;
      response.statusCode = refuse ? 500 : 200;
      response.end();
    });
    const now = new Date();
    await deliver({ now });
    // Other resources go on (side by side: their order between them is not promised).
    expect(
      receivedAt(endpoint)
        .map((hook) => JSON.parse(hook.body).data.id)
        .sort(),
    ).toEqual([first.id, other.id].sort());
    await deliver({ now: new Date(now.getTime() + 6 * SECOND) });
    const order = receivedAt(endpoint)
      .map((hook) => JSON.parse(hook.body) as { type: string; data: { id: number } })
      .filter((event) => event.data.id === first.id)
      .map((event) => event.type);
    expect(order).toEqual(["supporter.created", "supporter.created", "supporter.updated"]);
  });

  it("follows no redirect, gives up on a silent receiver after the timeout, and counts both as failures", async () => {
    const endpoint = await createEndpoint();
    receiver.answer((_request, response) => {
      response.statusCode = 302;
      response.setHeader("location", "http://169.254.169.254/latest/meta-data/");
      response.end();
    });
    await createSupporter();
    await deliver();
    let [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ state: "pending", last_status: 302 });
    expect(delivery?.last_error).toContain("redirect");
    expect(receivedAt(endpoint)).toHaveLength(1);

    receiver.answer(() => {
      // Never answers.
    });
    await deliver({ now: new Date(Date.now() + 6 * SECOND), timeoutMs: 300 });
    [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ state: "pending", attempts: 2, last_status: null });
    expect(delivery?.last_error).toContain("no answer within");
    expect(delivery?.attempt_log[1]?.duration_ms).toBeGreaterThanOrEqual(250);
  });

  it("loses nothing when the receiver is down for an hour or the worker dies mid-delivery (same webhook-id)", async () => {
    const endpoint = await createEndpoint();
    await receiver.down();
    try {
      await createSupporter();
      const start = Date.now();
      let at = start;
      // An hour of failed attempts on the schedule: 5 s, 1 min, 5 min, 30 min.
      for (const wait of [0, 5, 60, 300, 1800]) {
        at += wait * SECOND;
        await deliver({ now: new Date(at) });
      }
      const [delivery] = await deliveriesOf(endpoint.id);
      expect(delivery).toMatchObject({ state: "pending", attempts: 5, last_status: null });
      expect(delivery?.last_error).toMatch(/ECONNREFUSED/);
    } finally {
      await receiver.up();
    }
    await deliver({ now: new Date(Date.now() + 3 * 3600 * SECOND) });
    const hooks = receivedAt(endpoint);
    expect(hooks).toHaveLength(1);
    verified(endpoint.secret, hooks[0] as (typeof hooks)[0]);

    // A worker claims a delivery, then dies before it records anything.
    await createSupporter("Crash");
    expect(await dispatchWebhookEvents(server.database.db, { organizationIds: [tenant.organizationId] })).toBe(1);
    const claimed = await server.database.db.transaction((tx) =>
      claimDueDeliveries(tx, new Date(), new Date(Date.now() + 60 * SECOND), 10, [tenant.organizationId]),
    );
    expect(claimed).toHaveLength(1);
    expect(await deliver()).toMatchObject({ succeeded: 0 }); // leased: not sent twice at once
    await deliver({ now: new Date(Date.now() + 61 * SECOND) });
    const after = receivedAt(endpoint);
    expect(after).toHaveLength(2);
    expect(after[1]?.headers["webhook-id"]).toBe(claimed[0]?.eventId);
    const [crashed] = await deliveriesOf(endpoint.id);
    expect(crashed).toMatchObject({ state: "succeeded", attempts: 2 });
  });

  it("disables an endpoint failing for 5 days, records it, emails the admins, and sends nothing more until it is enabled again", async () => {
    const [owner, admin, member] = ["owner", "admin", "member"].map((role) => `${role}-${unique(6)}@example.test`);
    for (const [email, role] of [
      [owner, "owner"],
      [admin, "admin"],
      [member, "member"],
    ] as [string, "owner" | "admin" | "member"][]) {
      await createUser(server.database.db, {
        email,
        password: "a long enough password",
        organization: tenant.slug,
        role,
      });
    }
    const endpoint = await createEndpoint();
    receiver.answer((_request, response) => {
      response.statusCode = 500;
      response.end();
    });
    await createSupporter();
    const start = Date.now();
    // A pass a day: each retries what is due (the schedule's waits are at most 24 h), every attempt refused.
    await deliver({ now: new Date(start) });
    for (let day = 1; day <= 4; day++) {
      if (day === 2) await createSupporter();
      await deliver({ now: new Date(start + day * 86_400 * SECOND) });
    }
    expect((await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`)).body.status).toBe("enabled");
    await deliver({ now: new Date(start + 5 * 86_400 * SECOND + SECOND) });
    const disabled = (await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`)).body;
    expect(disabled).toMatchObject({ status: "disabled" });
    expect(disabled.disabled_reason).toContain("5 days");
    const log = await deliveriesOf(endpoint.id);
    expect(log.every((delivery) => delivery.state === "failed")).toBe(true);
    const rows = await auditRowsOf(server.database.db, tenant.organizationId, ["webhook_endpoint.updated"]);
    expect(rows.map((row) => row.actor)).toEqual([{ type: "system", label: "worker" }]);

    // The owners and admins are told; a plain member is not.
    const queued = await server.database.db
      .select({ to: outboxMessages.toAddress, data: outboxMessages.data })
      .from(outboxMessages)
      .where(
        and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.kind, "webhook_disabled")),
      );
    expect(queued.map((message) => message.to).sort()).toEqual([admin, owner].sort());
    expect(queued[0]?.data).toMatchObject({ endpoint_url: endpoint.url });

    const sent = receivedAt(endpoint).length;
    await createSupporter();
    await deliver({ now: new Date(start + 6 * 86_400 * SECOND) });
    expect(receivedAt(endpoint)).toHaveLength(sent);
    receiver.answer((_request, response) => response.end("ok"));
    const enabled = await send("PATCH", `/api/v1/webhook_endpoints/${endpoint.id}`, { status: "enabled" });
    expect(enabled.body).toMatchObject({ status: "enabled", disabled_reason: null });
    await createSupporter("After");
    await deliver();
    expect(receivedAt(endpoint)).toHaveLength(sent + 1);
    expect(JSON.parse(receivedAt(endpoint).at(-1)?.body ?? "").data.first_name).toBe("After");
  });

  it("keeps what it cannot store out of the log, and refuses out-of-range input with a 4xx", async () => {
    const endpoint = await createEndpoint();
    receiver.answer((_request, response) => {
      response.statusCode = 500;
      response.end("broken\u0000answer");
    });
    await createSupporter();
    expect(await deliver()).toMatchObject({ retried: 1, errors: 0 });
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery?.attempt_log[0]?.response).toBe("brokenanswer");
    expect(
      (await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}/deliveries?before=100000000000000000000`)).status,
    ).toBe(400);
    const ancient = await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/resend`, {
      since: "0000-01-01T00:00:00Z",
    });
    expect(ancient.status, JSON.stringify(ancient.body)).toBe(200);
    expect(ancient.body).toEqual({ queued: 1 });
  });

  it('sends a token\'s endpoint no type its grant does not read, even with ["*"]', async () => {
    const narrow = await fakeAppToken(server.database.db, tenant, ["campaigns:read"]);
    const created = await send(
      "POST",
      "/api/v1/webhook_endpoints/",
      { url: receiver.url("/narrow"), event_types: ["*"] },
      narrow,
    );
    expect(created.status).toBe(201);
    await createSupporter();
    await send("POST", "/api/v1/campaigns/", { title: `Narrow ${unique(6)}` });
    await deliver();
    const types = receiver.received
      .filter((hook) => hook.path === "/narrow")
      .map((hook) => JSON.parse(hook.body).type as string);
    expect(types).toEqual(["campaign.created"]);
  });

  it("signs with both secrets for 24 hours after a rotation", async () => {
    const endpoint = await createEndpoint();
    const rotated = await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(endpoint.secret);
    expect(rotated.body.previous_secret_expire_date).not.toBeNull();
    await createSupporter();
    await deliver();
    const [hook] = receivedAt(endpoint);
    expect(String(hook?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    verified(fresh, hook as NonNullable<typeof hook>);
    verified(endpoint.secret, hook as NonNullable<typeof hook>);
    await server.database.db
      .update(webhookEndpoints)
      .set({ previousSecretExpireDate: new Date(Date.now() - SECOND) })
      .where(and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, endpoint.id)));
    await createSupporter();
    await deliver();
    const late = receivedAt(endpoint)[1] as NonNullable<typeof hook>;
    verified(fresh, late);
    expect(() => verified(endpoint.secret, late)).toThrow();
    const rows = await auditRowsOf(server.database.db, tenant.organizationId, ["webhook_endpoint.updated"]);
    expect(rows[0]?.changes as object).toHaveProperty("secret");
    expect(JSON.stringify(rows)).not.toContain(fresh.slice(6));
  });

  it("resends every event since a time, and holds a paused endpoint's deliveries until it is resumed", async () => {
    const endpoint = await createEndpoint();
    const since = new Date().toISOString();
    await createSupporter();
    await createSupporter();
    await deliver();
    expect(receivedAt(endpoint)).toHaveLength(2);
    const resent = await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/resend`, { since });
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    expect(resent.body).toEqual({ queued: 2 });
    await deliver();
    const hooks = receivedAt(endpoint);
    expect(
      hooks
        .map((hook) => hook.headers["webhook-id"])
        .slice(2)
        .sort(),
    ).toEqual(
      hooks
        .map((hook) => hook.headers["webhook-id"])
        .slice(0, 2)
        .sort(),
    );
    expect((await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/resend`, { since: "yesterday" })).status).toBe(
      400,
    );
    expect(
      (await send("POST", `/api/v1/webhook_endpoints/${endpoint.id}/resend`, { since: "2999-01-01T00:00:00Z" })).status,
    ).toBe(400);

    await server.database.db
      .update(webhookEndpoints)
      .set({ status: "paused" })
      .where(and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, endpoint.id)));
    await createSupporter("While paused");
    await deliver();
    expect(receivedAt(endpoint)).toHaveLength(4);
    const waiting = await server.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.organizationId, tenant.organizationId), eq(webhookDeliveries.state, "pending")));
    expect(waiting).toHaveLength(1);
    // The application cannot lift a member's pause, not even by disabling and enabling it.
    for (const status of ["enabled", "disabled"]) {
      const refused = await send("PATCH", `/api/v1/webhook_endpoints/${endpoint.id}`, { status });
      expect(refused.status).toBe(409);
    }
    expect((await send("GET", `/api/v1/webhook_endpoints/${endpoint.id}`)).body.status).toBe("paused");
    await server.database.db
      .update(webhookEndpoints)
      .set({ status: "enabled" })
      .where(and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, endpoint.id)));
    await deliver();
    expect(JSON.parse(receivedAt(endpoint).at(-1)?.body ?? "").data.first_name).toBe("While paused");
  });
});

describe("webhooks: only public https destinations without WEBHOOK_ALLOW_PRIVATE_NETWORKS", () => {
  let server: TestServer;
  let tenant: Tenant;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.close();
  });

  const create = async (url: string) =>
    readResponse(
      await fetch(`${server.url}/api/v1/webhook_endpoints/`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
        body: JSON.stringify({ url, event_types: ["supporter.created"] }),
      }),
    );

  it("refuses loopback, private, link-local, metadata and plain-http addresses when an endpoint is saved", async () => {
    for (const url of [
      receiver.url(),
      "https://127.0.0.1/hooks",
      "https://localhost/hooks",
      "https://10.1.2.3/",
      "https://192.168.0.10/",
      "https://172.16.5.5/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[::1]/",
      "https://[::ffff:10.0.0.1]/",
      "https://[fd00:ec2::254]/",
      "https://0.0.0.0/",
      "https://100.64.0.1/",
      "http://93.184.215.14/",
      "https://user:secret@93.184.215.14/",
      "https://[::127.0.0.1]/",
    ]) {
      const answer = await create(url);
      expect(answer.status, url).toBe(422);
      expect(answer.body.code, url).toBe("webhook_url_refused");
    }
    const accepted = await create("https://93.184.215.14/hooks");
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
  });

  it("refuses at delivery too: an endpoint whose address turned private is not connected to", async () => {
    const accepted = await create("https://93.184.215.14/hooks");
    expect(accepted.status).toBe(201);
    // The name now points at this machine (as a DNS change would make it).
    await server.database.db
      .update(webhookEndpoints)
      .set({ url: `https://localhost:${new URL(receiver.url()).port}/hooks` })
      .where(
        and(eq(webhookEndpoints.organizationId, tenant.organizationId), eq(webhookEndpoints.id, accepted.body.id)),
      );
    await fetch(`${server.url}/api/v1/supporters/`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
      body: JSON.stringify({ first_name: "Eve" }),
    });
    await deliverWebhooks(server.database.db, webhookSenderDeps(server.config), {
      organizationIds: [tenant.organizationId],
    });
    const [delivery] = await server.database.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.organizationId, tenant.organizationId),
          eq(webhookDeliveries.endpointId, accepted.body.id),
        ),
      );
    expect(delivery).toMatchObject({ state: "pending", attempts: 1, lastStatus: null });
    expect(delivery?.lastError).toMatch(/refused: localhost resolves to (127\.0\.0\.1|::1)/);
    expect(receiver.received).toHaveLength(0);
  });
});
