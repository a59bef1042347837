import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeAppToken, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { readResponse, startTestServer, type TestServer } from "./helpers/server.js";

/** REST writes of supporters and campaigns: the same services as GraphQL, idempotent creation. */
describe("REST writes: supporters and campaigns", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;

  const send = async (method: string, path: string, body: unknown, token = tenant.token, key?: string) =>
    readResponse(
      await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          ...(key ? { "idempotency-key": key } : {}),
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    );
  const countOf = async (collection: string, token = tenant.token) =>
    ((await server.get(`/api/v1/${collection}/?limit=1`, token)).body as { count: number }).count;
  const eventsOf = async (token = tenant.token) =>
    ((await server.get("/api/v1/events/?limit=1000", token)).body as { items: { type: string; resource: unknown }[] })
      .items;

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
  });
  afterAll(() => server?.close());

  it("refuses a supporter with nothing to know them by, field by field, in the language the request prefers", async () => {
    const before = await countOf("supporters");
    const refuse = (language?: string) =>
      fetch(`${server.url}/api/v1/supporters/`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tenant.token}`,
          "content-type": "application/json",
          ...(language ? { "accept-language": language } : {}),
        },
        body: JSON.stringify({ tags: ["nobody"] }),
      }).then(readResponse);
    const english = await refuse();
    expect(english.status).toBe(400);
    expect(english.body).toMatchObject({
      code: "invalid_request",
      detail: "A supporter needs a name, a business name or an email",
      errors: [
        { field: "email", code: "name_or_email_required", message: "a name, a business name or an email is required" },
      ],
    });
    const italian = await refuse("it-IT,it;q=0.9,en;q=0.5");
    expect(italian.status).toBe(400);
    expect(italian.body).toMatchObject({
      code: "invalid_request",
      errors: [
        {
          field: "email",
          code: "name_or_email_required",
          message: "serve un nome, una ragione sociale o un indirizzo email",
        },
      ],
    });
    expect((italian.body as { detail: string }).detail).not.toBe((english.body as { detail: string }).detail);
    expect(await countOf("supporters")).toBe(before);
  });

  it("creates a supporter (201, as GET returns it, with its event) and edits only the fields sent", async () => {
    const email = `ada-${unique(6)}@example.test`;
    const created = await send("POST", "/api/v1/supporters/", {
      first_name: "Ada",
      email,
      privacy: true,
      tags: ["api"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const supporter = created.body as { id: number };
    expect((await server.get(`/api/v1/supporters/${supporter.id}`, tenant.token)).body).toEqual(created.body);
    expect(created.body).toMatchObject({ first_name: "Ada", email, privacy: true, tags: ["api"], last_name: null });

    const patched = await send("PATCH", `/api/v1/supporters/${supporter.id}`, { last_name: "Lovelace", tags: [] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ first_name: "Ada", last_name: "Lovelace", email, tags: [] });
    const cleared = await send("PATCH", `/api/v1/supporters/${supporter.id}`, { email: null });
    expect(cleared.body).toMatchObject({ first_name: "Ada", email: null });
    expect((await server.get(`/api/v1/supporters/${supporter.id}`, tenant.token)).body).toEqual(cleared.body);

    const mine = (await eventsOf()).filter(
      (event) => JSON.stringify(event.resource) === JSON.stringify({ type: "supporter", id: supporter.id }),
    );
    expect(mine.map((event) => event.type)).toEqual(["supporter.created", "supporter.updated", "supporter.updated"]);
  });

  it("replays a create with the same Idempotency-Key and body, also when two race; another body is a 422", async () => {
    const before = await countOf("supporters");
    const key = `key-${unique()}`;
    const body = { first_name: "Grace", email: `grace-${unique(6)}@example.test` };
    const first = await send("POST", "/api/v1/supporters/", body, tenant.token, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await send("POST", "/api/v1/supporters/", body, tenant.token, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const reused = await send("POST", "/api/v1/supporters/", { ...body, first_name: "Other" }, tenant.token, key);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ code: "idempotency_key_reused" });
    // The key is the organization's: another organization's request with it is its own.
    expect((await send("POST", "/api/v1/supporters/", body, other.token, key)).status).toBe(201);

    const raceKey = `race-${unique()}`;
    const racing = await Promise.all(
      Array.from({ length: 4 }, () =>
        send("POST", "/api/v1/campaigns/", { title: "Race", slug: `race-${raceKey}` }, tenant.token, raceKey),
      ),
    );
    expect(racing.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(racing.map((answer) => (answer.body as { id: number }).id)).size).toBe(1);
    expect(racing.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(3);
    expect(await countOf("supporters")).toBe(before + 1);
    const raceId = (racing[0]?.body as { id: number } | undefined)?.id;
    const raceEvents = (await eventsOf()).filter(
      (event) => JSON.stringify(event.resource) === JSON.stringify({ type: "campaign", id: raceId }),
    );
    expect(raceEvents).toHaveLength(1);

    const badKey = await send("POST", "/api/v1/supporters/", body, tenant.token, "é");
    expect(badKey.status).toBe(400);
  });

  it("creates and edits a campaign, and refuses a taken slug without creating anything", async () => {
    const slug = `spring-${unique(6)}`;
    const created = await send("POST", "/api/v1/campaigns/", {
      title: "Spring",
      slug,
      goal: 5000,
      is_goal_enabled: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const campaign = created.body as { id: number };
    expect((await server.get(`/api/v1/campaigns/${campaign.id}`, tenant.token)).body).toEqual(created.body);
    const before = await countOf("campaigns");
    const taken = await send("POST", "/api/v1/campaigns/", { title: "Again", slug });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({
      code: "slug_taken",
      errors: [{ field: "slug", message: "is already used by another campaign", code: "campaign_slug_taken" }],
    });
    expect(await countOf("campaigns")).toBe(before);
    const edited = await send("PATCH", `/api/v1/campaigns/${campaign.id}`, { title: "Spring appeal" });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ title: "Spring appeal", slug, goal: 5000 });
  });

  it("refuses bad bodies, unknown fields, foreign ids and missing permissions, changing nothing", async () => {
    const supporters = await countOf("supporters");
    const events = (await eventsOf()).length;
    for (const [method, path, body, status] of [
      ["POST", "/api/v1/supporters/", { tags: ["no name"] }, 400],
      ["POST", "/api/v1/supporters/", { first_name: "A", shoe_size: 44 }, 400],
      ["POST", "/api/v1/supporters/", { first_name: 12 }, 400],
      ["POST", "/api/v1/supporters/", "{not json", 400],
      ["POST", "/api/v1/supporters/", [], 400],
      ["POST", "/api/v1/campaigns/", { title: "" }, 400],
      ["PATCH", "/api/v1/supporters/abc", { first_name: "A" }, 404],
      ["PATCH", "/api/v1/supporters/999999999", { first_name: "A" }, 404],
      ["PATCH", "/api/v1/campaigns/999999999", { title: "A" }, 404],
    ] as const) {
      const answer = await send(method, path, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)} ${JSON.stringify(answer.body)}`).toBe(status);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    // Another organization's supporter is not found.
    const foreign = (await send("POST", "/api/v1/supporters/", { first_name: "Theirs" }, other.token)).body as {
      id: number;
    };
    expect((await send("PATCH", `/api/v1/supporters/${foreign.id}`, { first_name: "Mine" })).status).toBe(404);
    expect((await server.get(`/api/v1/supporters/${foreign.id}`, other.token)).body).toMatchObject({
      first_name: "Theirs",
    });
    // Reading is not writing.
    const reader = await fakeAppToken(server.database.db, tenant, ["supporters:read", "campaigns:read"]);
    const refused = await send("POST", "/api/v1/supporters/", { first_name: "A" }, reader);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "insufficient_scope" });
    expect((await send("PATCH", "/api/v1/campaigns/1", { title: "A" }, reader)).status).toBe(403);
    expect((await send("POST", "/api/v1/supporters/", { first_name: "A" }, "not-a-token")).status).toBe(401);
    expect(await countOf("supporters")).toBe(supporters);
    expect((await eventsOf()).length).toBe(events);
  });
});
