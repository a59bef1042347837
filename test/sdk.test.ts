import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTypes, type OpenApiDocument, OUTPUT_FILE } from "../packages/sdk/scripts/generate-types.js";
import {
  AuthorizationError,
  base64url,
  codeChallengeS256,
  DonataApiError,
  DonataClient,
  type DonataClientOptions,
  DonataGraphQLError,
  InvalidStateError,
  MemoryStateStore,
  type PendingAuthorization,
  ReauthorizationRequiredError,
  type StateStore,
  WebhookVerificationError,
  webhooks,
} from "../packages/sdk/src/index.js";
import { paymentMethods as paymentMethodsTable } from "../src/db/schema.js";
import { webhookSenderDeps } from "../src/jobs/webhook.job.js";
import {
  createApplication,
  installApplication,
  uninstallApplication,
} from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { deliverWebhooks } from "../src/modules/webhooks/webhook-delivery.service.js";
import { issueTokenPair } from "../src/oauth/tokens.service.js";
import { Browser, buttons } from "./helpers/browser.js";
import {
  fakeCampaign,
  fakeCheckout,
  fakeCompletedCheckout,
  fakeDonation,
  fakePayment,
  fakePaymentMethod,
  fakeSupporter,
  givePrivacyNotice,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { startWebhookReceiver } from "./helpers/webhook-receiver.js";

const REDIRECT_URI = "https://app.example.test/callback";
const PASSWORD = "correct horse battery";

/** A fetch that records every request, so tests can count what reached the token endpoint. */
function recordingFetch(respond: (url: string) => Promise<Response | undefined> | undefined = () => undefined) {
  const calls: { url: string; method: string; grant: string | undefined }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const url = String(input);
    const grant = init?.body instanceof URLSearchParams ? (init.body.get("grant_type") ?? undefined) : undefined;
    calls.push({ url, method: init?.method ?? "GET", grant });
    return (await respond(url)) ?? fetch(input, init);
  };
  return {
    fetch: recording,
    calls,
    refreshes: () => calls.filter((call) => call.grant === "refresh_token").length,
    apiCalls: () => calls.filter((call) => call.url.includes("/api/v1/")),
  };
}

/** An organization with the application installed, a fresh token pair, and a client holding it. */
async function installed(server: TestServer, options: Partial<DonataClientOptions> = {}) {
  const db = server.database.db;
  const slug = `sdk-${unique(8)}`;
  const organization = await createOrganization(db, { slug, name: `SDK ${slug}` });
  await givePrivacyNotice(db, organization.id);
  const application = await createApplication(db, {
    name: `SDK app ${unique(6)}`,
    applicationUrl: "https://app.example.test/",
    callbackUrls: [REDIRECT_URI],
  });
  await installApplication(db, application.client_id, slug);
  const pair = await issueTokenPair(db, server.config, {
    organizationId: organization.id,
    organizationSlug: slug,
    applicationId: application.id,
  });
  const client = new DonataClient({
    baseUrl: server.url,
    clientId: application.client_id,
    clientSecret: application.client_secret,
    redirectUri: REDIRECT_URI,
    ...options,
  });
  await client.tokenStore.set(slug, client.tokenSet(pair));
  return { client, slug, organization, application, pair, api: client.forOrganization(slug) };
}

describe("SDK: PKCE and state (no server)", () => {
  const offline = (options: Partial<DonataClientOptions> = {}) =>
    new DonataClient({
      baseUrl: "http://donata.invalid",
      clientId: "dnt_app_test",
      clientSecret: "dnt_cs_test",
      redirectUri: REDIRECT_URI,
      fetch: () => {
        throw new Error("no request may leave the client");
      },
      ...options,
    });

  it("derives the RFC 7636 appendix B verifier and S256 challenge", async () => {
    const octets = [
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240,
      91, 88, 5, 88, 83, 132, 141, 121,
    ];
    const verifier = base64url(new Uint8Array(octets));
    expect(verifier).toBe("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    expect(await codeChallengeS256(verifier)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("builds the authorization URL and stores the verifier and organization under the state", async () => {
    const stored = new Map<string, PendingAuthorization>();
    const stateStore: StateStore = {
      async set(state, pending, ttlSeconds) {
        expect(ttlSeconds).toBe(600);
        stored.set(state, pending);
      },
      async take(state) {
        const pending = stored.get(state);
        stored.delete(state);
        return pending;
      },
    };
    const client = offline({ authUrl: "https://auth.donata.invalid/", stateStore });
    const { url, state } = await client.authorizationUrl({ organization: "demo" });
    const parsed = new URL(url);
    expect(parsed.origin + parsed.pathname).toBe("https://auth.donata.invalid/oauth/authorize/");
    expect(Object.fromEntries(parsed.searchParams)).toEqual({
      response_type: "code",
      client_id: "dnt_app_test",
      redirect_uri: REDIRECT_URI,
      state,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
      __organization: "demo",
    });
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pending = stored.get(state) as PendingAuthorization;
    expect(pending.organization).toBe("demo");
    expect(pending.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await codeChallengeS256(pending.codeVerifier)).toBe(parsed.searchParams.get("code_challenge"));
    const second = await client.authorizationUrl({ organization: "demo" });
    expect(second.state).not.toBe(state);
  });

  it("rejects a missing, unknown, reused or expired state before any token request", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => now;
    const client = offline({ now: clock, stateStore: new MemoryStateStore(clock) });
    const reason = async (query: Parameters<DonataClient["handleCallback"]>[0]) => {
      const error = await client.handleCallback(query).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidStateError);
      expect((error as InvalidStateError).status).toBe(400);
      return (error as InvalidStateError).reason;
    };
    expect(await reason({ code: "dnt_ac_x" })).toBe("missing");
    expect(await reason(new URLSearchParams("code=dnt_ac_x&state=a&state=b"))).toBe("missing");
    expect(await reason({ code: "dnt_ac_x", state: "forged" })).toBe("unknown");

    // The callback reports an error: state checked first, then the error surfaces; the state is spent.
    const denied = await client.authorizationUrl({ organization: "demo" });
    const error = await client
      .handleCallback(`${REDIRECT_URI}?error=access_denied&error_description=No&state=${denied.state}`)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error).toMatchObject({ error: "access_denied", errorDescription: "No", organization: "demo" });
    expect(await reason({ code: "dnt_ac_x", state: denied.state })).toBe("unknown");

    const late = await client.authorizationUrl({ organization: "demo" });
    now += 601_000;
    expect(await reason({ code: "dnt_ac_x", state: late.state })).toBe("expired");
    expect(await reason({ code: "dnt_ac_x", state: late.state })).toBe("unknown");

    const mixUp = await client.authorizationUrl();
    await expect(
      client.handleCallback({ code: "dnt_ac_x", state: mixUp.state, iss: "https://evil.invalid" }),
    ).rejects.toMatchObject({ name: "AuthorizationError", error: "invalid_issuer" });
  });
});

describe("SDK against the real server", () => {
  let server: TestServer;
  let shortLived: TestServer;

  beforeAll(async () => {
    [server, shortLived] = await Promise.all([startTestServer(), startTestServer({ accessTokenTtlSeconds: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), shortLived?.close()]);
  });

  it("runs the whole code flow through the login and consent pages, then calls the API", async () => {
    const db = server.database.db;
    const slug = `flow-${unique(8)}`;
    const organization = await createOrganization(db, { slug, name: "Flow Org" });
    const email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: PASSWORD, organization: slug, role: "owner" });
    await fakeCheckout(db, organization.id);
    await fakeCheckout(db, organization.id);
    const application = await createApplication(db, {
      name: "SDK Flow App",
      applicationUrl: "https://app.example.test/",
      callbackUrls: [REDIRECT_URI],
    });
    const client = new DonataClient({
      baseUrl: server.url,
      authUrl: server.config.authUrl,
      clientId: application.client_id,
      clientSecret: application.client_secret,
      redirectUri: REDIRECT_URI,
    });

    const { url, state } = await client.authorizationUrl({ organization: slug });
    const browser = new Browser(server.url);
    const login = await browser.get(url);
    expect(login.status).toBe(200);
    const afterLogin = await browser.submit(login, { email, password: PASSWORD });
    expect(afterLogin.status).toBe(303);
    const consent = await browser.get(afterLogin.location as string);
    expect(consent.status).toBe(200);
    expect(buttons(consent.html, "decision").sort()).toEqual(["allow", "deny"]);
    const callback = await browser.submit(consent, { decision: "allow" });
    expect(callback.status).toBe(303);
    const callbackUrl = new URL(callback.location as string);
    expect(callbackUrl.searchParams.get("state")).toBe(state);

    const result = await client.handleCallback(callbackUrl.searchParams);
    expect(result.organization).toBe(slug);
    expect(result.tokens.accessToken).toMatch(/^dnt_at_/);
    expect(result.tokens.refreshToken).toMatch(/^dnt_rt_/);
    expect(result.tokens.expiresIn).toBe(3600);
    expect(await client.tokenStore.get(slug)).toEqual(result.tokens);

    const api = client.forOrganization(slug);
    const page = await api.checkouts.list({ order: "-create_date" });
    const direct = await server.get("/api/v1/checkouts/", result.tokens.accessToken);
    expect(page).toEqual(direct.body);
    expect(page.count).toBe(2);

    // The callback works once: replaying it is refused before the code is spent again.
    await expect(client.handleCallback(callbackUrl.searchParams)).rejects.toBeInstanceOf(InvalidStateError);

    // Installed now: with __organization the server sends the user straight back with a code.
    const again = await client.authorizationUrl({ organization: slug });
    const direct302 = await browser.get(again.url);
    expect(direct302.status).toBe(302);
    expect((await client.handleCallback(direct302.location as string)).organization).toBe(slug);
  });

  it("runs the flow as a public client (no secret) with a narrower scope, and refreshes", async () => {
    const db = server.database.db;
    const slug = `public-${unique(8)}`;
    const organization = await createOrganization(db, { slug, name: "Public Org" });
    const email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: PASSWORD, organization: slug, role: "owner" });
    await fakeCheckout(db, organization.id);
    const application = await createApplication(db, {
      name: "SDK SPA",
      applicationUrl: "https://app.example.test/",
      callbackUrls: [REDIRECT_URI],
      permissions: ["campaigns:read", "checkouts:read"],
      clientType: "public",
    });
    await installApplication(db, application.client_id, slug);
    const client = new DonataClient({
      baseUrl: server.url,
      authUrl: server.config.authUrl,
      clientId: application.client_id,
      redirectUri: REDIRECT_URI,
    });
    const { url } = await client.authorizationUrl({ organization: slug, scope: ["checkouts:read"] });
    expect(new URL(url).searchParams.get("scope")).toBe("checkouts:read");
    const browser = new Browser(server.url);
    const afterLogin = await browser.submit(await browser.get(url), { email, password: PASSWORD });
    const callback = await browser.get(afterLogin.location as string);
    const result = await client.handleCallback(callback.location as string);
    expect(result.tokens.scope).toBe("checkouts:read");
    const api = client.forOrganization(slug);
    expect((await api.checkouts.list()).count).toBe(1);
    await expect(api.campaigns.list()).rejects.toMatchObject({ status: 403 });
    const refreshed = await client.refresh(slug);
    expect(refreshed.refreshToken).not.toBe(result.tokens.refreshToken);
    expect(refreshed.scope).toBe("checkouts:read");
  });

  it("walks every page when the page size does not divide the count", async () => {
    const recorder = recordingFetch();
    const { api, organization, pair } = await installed(server, { fetch: recorder.fetch });
    for (let index = 0; index < 23; index++) await fakeCheckout(server.database.db, organization.id);
    const all = await server.get("/api/v1/checkouts/?limit=100", pair.access_token);
    expect(all.body.count).toBe(23);
    const allIds = all.body.items.map((checkout: { id: number }) => checkout.id);

    const ids: number[] = [];
    for await (const checkout of api.checkouts.iterate({ limit: 5 })) ids.push(checkout.id);
    expect(ids).toEqual(allIds);
    const offsets = () => recorder.apiCalls().map((call) => new URL(call.url).searchParams.get("offset"));
    expect(offsets()).toEqual(["0", "5", "10", "15", "20"]);

    // From an offset, ascending, with a filter.
    recorder.calls.length = 0;
    const closed = await server.get("/api/v1/checkouts/?limit=100&state=CLOSED&order=id", pair.access_token);
    const closedIds = closed.body.items.map((checkout: { id: number }) => checkout.id);
    const seen: number[] = [];
    for await (const checkout of api.checkouts.iterate({ limit: 4, offset: 2, state: "CLOSED", order: "id" })) {
      seen.push(checkout.id);
    }
    expect(seen).toEqual(closedIds.slice(2));
    const pages = Math.max(1, Math.ceil((closed.body.count - 2) / 4));
    expect(offsets()).toEqual(Array.from({ length: pages }, (_unused, index) => String(2 + index * 4)));

    // An empty collection: one request, nothing yielded.
    const empty = await installed(server);
    const none: unknown[] = [];
    for await (const supporter of empty.api.supporters.iterate()) none.push(supporter);
    expect(none).toEqual([]);
  });

  it("turns problem bodies into DonataApiError", async () => {
    const { api } = await installed(server);
    const missing = await api.checkouts.retrieve(987_654_321).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(DonataApiError);
    expect(missing).toMatchObject({
      status: 404,
      code: "not_found",
      type: "urn:donata:problem:not_found",
      errors: [],
    });
    const invalid = await api.checkouts.list({ limit: 0 }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(DonataApiError);
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });
    expect((invalid as DonataApiError).errors).toEqual([expect.objectContaining({ parameter: "limit" })]);
    expect((invalid as DonataApiError).detail).toEqual(expect.any(String));
  });

  it("calls the write operations and GraphQL", async () => {
    const { api, organization } = await installed(server);
    const db = server.database.db;
    const completed = await fakeCompletedCheckout(db, organization.id);
    await db
      .update(paymentMethodsTable)
      .set({ processor: "sandbox" })
      .where(eq(paymentMethodsTable.id, completed.method.id));
    const refunded = await api.payments.refund(completed.payment.id);
    expect(refunded).toMatchObject({ id: completed.payment.id, state: "REFUNDED" });
    await expect(api.payments.refund(completed.payment.id)).rejects.toMatchObject({ status: 409 });
    expect((await api.payments.retrieve(completed.payment.id)).state).toBe("REFUNDED");

    const campaign = await fakeCampaign(db, organization.id);
    const supporter = await fakeSupporter(db, organization.id);
    const manual = await fakePaymentMethod(db, organization.id, { processor: "manual", supporterId: supporter.id });
    const pendingGift = await fakeDonation(db, organization.id, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "pending",
      frequency: 0,
    });
    const pendingPayment = await fakePayment(db, organization.id, {
      donationId: pendingGift.id,
      paymentMethodId: manual.id,
      state: "PENDING",
    });
    expect(await api.payments.markPaid(pendingPayment.id)).toMatchObject({ id: pendingPayment.id, state: "PAID" });
    expect((await api.donations.retrieve(pendingGift.id)).state).toBe("done");

    const monthly = await fakeDonation(db, organization.id, {
      supporterId: supporter.id,
      campaignId: campaign.id,
      state: "active",
      frequency: 12,
    });
    expect(await api.donations.cancel(monthly.id)).toMatchObject({ id: monthly.id, state: "revoked" });

    const gift = { supporter_id: supporter.id, campaign_id: campaign.id, amount: 42.5, label: "Cash" };
    const idempotencyKey = `gift-${unique(8)}`;
    const first = await api.donations.createOffline(gift, { idempotencyKey });
    const retried = await api.donations.createOffline(gift, { idempotencyKey });
    expect(first.donation).toMatchObject({ amount: 42.5, supporter_id: supporter.id, campaign_id: campaign.id });
    expect(retried.donation.id).toBe(first.donation.id);
    expect(first.payment.state).toBe("PAID");

    const data = await api.graphql<{ checkouts: { count: number; items: { id: string }[] } }>(
      "query Latest($limit: Int) { checkouts(limit: $limit) { count items { id } } }",
      { limit: 1 },
    );
    const rest = await api.checkouts.list({ limit: 1 });
    expect(data.checkouts.count).toBe(rest.count);
    expect(data.checkouts.items.map((item) => Number(item.id))).toEqual(rest.items.map((item) => item.id));
    const failure = await api.graphql("{ nope }").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DonataGraphQLError);
    expect((failure as DonataGraphQLError).errors[0]?.message).toMatch(/nope/);
  });

  it("creates and edits supporters and campaigns, and reads the events feed from where it left off", async () => {
    const { api } = await installed(server);
    const key = `sup-${unique(8)}`;
    const supporter = await api.supporters.create({ first_name: "Ada", privacy: true }, { idempotencyKey: key });
    expect(await api.supporters.create({ first_name: "Ada", privacy: true }, { idempotencyKey: key })).toEqual(
      supporter,
    );
    const edited = await api.supporters.update(supporter.id, { last_name: "Lovelace" });
    expect(edited).toMatchObject({ id: supporter.id, first_name: "Ada", last_name: "Lovelace" });
    const campaign = await api.campaigns.create({ title: "Spring", slug: `spring-${unique(6)}` });
    await expect(api.campaigns.update(campaign.id, { title: "" })).rejects.toBeInstanceOf(DonataApiError);

    const all = [];
    for await (const event of api.events.iterate({ limit: 2 })) all.push(event);
    expect(all.map((event) => event.type)).toEqual(["supporter.created", "supporter.updated", "campaign.created"]);
    expect(all[1]?.data).toEqual(edited);
    // Resumed from the cursor of the last event handled: only what came after.
    await api.campaigns.update(campaign.id, { title: "Spring appeal" });
    const resumed = [];
    for await (const event of api.events.iterate({ after: all.at(-1)?.cursor })) resumed.push(event);
    expect(resumed.map((event) => [event.type, event.data.title])).toEqual([["campaign.updated", "Spring appeal"]]);
    expect(await api.events.retrieve(resumed[0]?.id ?? "")).toEqual(resumed[0]);
  });

  it("refreshes an expired access token once for ten concurrent calls", async () => {
    const recorder = recordingFetch();
    const { api, pair, client, slug } = await installed(shortLived, { fetch: recorder.fetch });
    expect(pair.expires_in).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect((await shortLived.get("/api/v1/checkouts/", pair.access_token)).status).toBe(401);

    const pages = await Promise.all(Array.from({ length: 10 }, () => api.checkouts.list({ limit: 1 })));
    expect(pages.map((page) => page.count)).toEqual(Array(10).fill(0));
    expect(recorder.refreshes()).toBe(1);
    expect(recorder.apiCalls()).toHaveLength(10);
    const stored = await client.tokenStore.get(slug);
    expect(stored?.accessToken).not.toBe(pair.access_token);
    expect(stored?.refreshToken).not.toBe(pair.refresh_token);
    expect((await shortLived.get("/api/v1/checkouts/", stored?.accessToken)).status).toBe(200);
  });

  it("refreshes once when ten concurrent calls meet a 401 the clock did not foresee", async () => {
    const recorder = recordingFetch();
    const { api, pair, client, slug } = await installed(shortLived, { fetch: recorder.fetch });
    // The client believes the token lives an hour; the server expires it after 2 s.
    await client.tokenStore.set(slug, client.tokenSet({ ...pair, expires_in: 3600 }));
    await new Promise((resolve) => setTimeout(resolve, 2_200));

    const pages = await Promise.all(Array.from({ length: 10 }, () => api.supporters.list({ limit: 1 })));
    expect(pages).toHaveLength(10);
    expect(recorder.refreshes()).toBe(1);
    const unauthorized = recorder.apiCalls().length - 10;
    expect(unauthorized).toBeGreaterThanOrEqual(1);
    expect(recorder.apiCalls()).toHaveLength(10 + unauthorized);
  });

  it("refreshes once after a 401, then gives up with the server's problem", async () => {
    const recorder = recordingFetch(async (url) =>
      url.includes("/api/v1/")
        ? new Response(
            JSON.stringify({
              type: "urn:donata:problem:invalid_token",
              title: "Unauthorized",
              status: 401,
              detail: "The access token is invalid, expired or revoked",
              code: "invalid_token",
            }),
            { status: 401, headers: { "content-type": "application/problem+json" } },
          )
        : undefined,
    );
    const { api } = await installed(server, { fetch: recorder.fetch });
    const error = await api.checkouts.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DonataApiError);
    expect(error).toMatchObject({ status: 401, code: "invalid_token" });
    expect(recorder.refreshes()).toBe(1);
    expect(recorder.apiCalls()).toHaveLength(2);
  });

  it("asks for a new authorization once the application is uninstalled", async () => {
    const { api, client, slug, application } = await installed(server);
    expect((await api.campaigns.list()).count).toBe(0);
    await uninstallApplication(server.database.db, application.client_id, slug);
    const error = await api.campaigns.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReauthorizationRequiredError);
    expect((error as ReauthorizationRequiredError).organization).toBe(slug);
    expect(await client.tokenStore.get(slug)).toBeUndefined();
    await expect(client.forOrganization("never-authorized").checkouts.list()).rejects.toBeInstanceOf(
      ReauthorizationRequiredError,
    );
  });

  it("has generated types that match the server's OpenAPI document", async () => {
    const document = (await server.get("/api/v1/openapi.json")).body as OpenApiDocument;
    const committed = readFileSync(OUTPUT_FILE, "utf8");
    // On failure: npx tsx packages/sdk/scripts/generate-types.ts, then review and commit the diff.
    expect(generateTypes(document)).toBe(committed);
  });
});

describe("SDK: webhook endpoints and verifying deliveries", () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    [server, receiver] = await Promise.all([
      startTestServer({ webhookAllowPrivateNetworks: true }),
      startWebhookReceiver(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), receiver?.close()]);
  });

  it("manages the application's endpoints and verifies each delivery with webhooks.verify", async () => {
    const { api, organization } = await installed(server);
    const deliver = () =>
      deliverWebhooks(server.database.db, webhookSenderDeps(server.config), { organizationIds: [organization.id] });
    const endpoint = await api.webhookEndpoints.create({
      url: receiver.url("/sdk"),
      event_types: ["supporter.created"],
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(await api.webhookEndpoints.list()).toEqual([
      expect.objectContaining({ id: endpoint.id, url: endpoint.url, status: "enabled" }),
    ]);
    const supporter = await api.supporters.create({ first_name: "Ada" });
    await deliver();
    const [hook] = receiver.received.filter((received) => received.path === "/sdk");
    if (!hook) throw new Error("no delivery");

    const event = await webhooks.verify(hook.body, hook.headers, endpoint.secret);
    expect(event).toMatchObject({ type: "supporter.created", data: { id: supporter.id } });
    // Fetch Headers too, as a Request handler gets them.
    expect(
      (await webhooks.verify(hook.body, new Headers(hook.headers as Record<string, string>), endpoint.secret)).id,
    ).toBe(event.id);
    const other = (await api.webhookEndpoints.rotateSecret(endpoint.id)).secret;
    await expect(webhooks.verify(hook.body, hook.headers, other)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(webhooks.verify(hook.body.replace("Ada", "Eve"), hook.headers, endpoint.secret)).rejects.toThrow(
      "No signature matches",
    );
    await expect(
      webhooks.verify(hook.body, hook.headers, endpoint.secret, { now: new Date(Date.now() + 10 * 60_000) }),
    ).rejects.toThrow("too far from now");
    await expect(webhooks.verify(hook.body, {}, endpoint.secret)).rejects.toThrow("Missing");

    // After the rotation both secrets verify, for 24 hours.
    await api.supporters.create({ first_name: "Grace" });
    await deliver();
    const late = receiver.received.filter((received) => received.path === "/sdk")[1];
    if (!late) throw new Error("no second delivery");
    expect((await webhooks.verify(late.body, late.headers, other)).type).toBe("supporter.created");
    expect((await webhooks.verify(late.body, late.headers, endpoint.secret)).type).toBe("supporter.created");

    const page = await api.webhookEndpoints.deliveries(endpoint.id, { limit: 1 });
    expect(page).toMatchObject({ has_more: true, items: [{ state: "succeeded", attempts: 1 }] });
    const first = page.items[0];
    if (!first) throw new Error("no delivery in the log");
    expect(await api.webhookEndpoints.retryDelivery(endpoint.id, first.id)).toMatchObject({ state: "pending" });
    expect(await api.webhookEndpoints.resend(endpoint.id, new Date(Date.now() - 60_000))).toEqual({ queued: 2 });
    expect(await api.webhookEndpoints.update(endpoint.id, { description: "CRM" })).toMatchObject({
      description: "CRM",
    });
    expect((await api.webhookEndpoints.retrieve(endpoint.id)).description).toBe("CRM");
    await api.webhookEndpoints.delete(endpoint.id);
    expect(await api.webhookEndpoints.list()).toEqual([]);
    await expect(api.webhookEndpoints.retrieve(endpoint.id)).rejects.toMatchObject({ status: 404 });
  });
});
