import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../src/db/client.js";
import { processorAccounts } from "../src/db/schema.js";
import { ERROR_STATUS } from "../src/errors/error-codes.js";
import { systemOrigin } from "../src/events/origin.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { findOrganizationBySlug } from "../src/modules/organizations/organizations.repo.js";
import { connectStripe } from "../src/modules/organizations/payment-settings.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { createProcessorRegistry } from "../src/payments/processors/index.js";
import { createSecretBox, parseEncryptionKey } from "../src/secrets/secret-box.js";
import { auditRowsOf } from "./helpers/audit.js";
import { runCliInProcess, runCli as runDonataCli } from "./helpers/cli.js";
import { testDatabaseUrl } from "./helpers/database.js";
import { fakeCampaign, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from "./helpers/server.js";
import { STAND_IN_LIVE_KEY, type StripeStandIn, startStripeStandIn } from "./helpers/stripe-stand-in.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = Record<string, any>;
type Auth = { token?: string; cookie?: string; organization?: string };

const SETTINGS_FIELDS =
  "processor test_mode mode publishable_key secret_key_last4 webhook_secret_last4 webhook_url webhook_events update_date";
const READ = `{ paymentSettings { ${SETTINGS_FIELDS} } }`;
const CONNECT = `mutation ($input: ConnectStripeInput!) { connectStripe(input: $input) { ${SETTINGS_FIELDS} } }`;
const DISCONNECT = `mutation { disconnectStripe { ${SETTINGS_FIELDS} } }`;
const AUDIT = `query ($first: Int) { auditLog(type: ["payment_settings.updated"], first: $first) { items { id type summary actor_type actor_id actor_label changes { field before after } } has_more } }`;

const secretBox = createSecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));
const testKeys = () => ({
  secret_key: `sk_test_${unique(24)}`,
  publishable_key: `pk_test_${unique(24)}`,
  webhook_secret: `whsec_${unique(32)}`,
});

/** Organization settings → Payments: an organization's Stripe keys through GraphQL and the CLI. */
describe("payment settings (Stripe keys per organization)", () => {
  let standIn: StripeStandIn;
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Auth & { email: string; userId: number };
  let member: Auth;
  let otherOwner: Auth;
  /** Every GraphQL answer of the file, as text: no secret may appear in any. */
  const answers: string[] = [];
  /** Every secret the file saved or tried to save. */
  const secretsSent = new Set<string>();

  const graphql = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
        ...(auth.organization ? { "x-donata-organization": auth.organization } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    answers.push(text);
    return { status: response.status, body: JSON.parse(text) as Json };
  };

  const connect = (keys: ReturnType<typeof testKeys>, auth: Auth = owner) => {
    for (const secret of [keys.secret_key, keys.webhook_secret])
      if (secret.trim().length >= 12) secretsSent.add(secret);
    return graphql(CONNECT, { input: keys }, auth);
  };

  const signIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
    return { cookie, organization, email, userId: user.id };
  };

  const offeredProcessors = async (organization: Tenant) => {
    const campaign = await fakeCampaign(server.database.db, organization.organizationId);
    const response = await server.get(`/api/v1/public/organizations/${organization.slug}/campaigns/${campaign.slug}`);
    expect(response.status).toBe(200);
    return (response.body.processors as { name: string }[]).map((processor) => processor.name);
  };

  const accountRow = async (organizationId: number) =>
    (
      await server.database.db
        .select()
        .from(processorAccounts)
        .where(and(eq(processorAccounts.organizationId, organizationId), eq(processorAccounts.processor, "stripe")))
    )[0];

  const auditRows = (organizationId: number) =>
    auditRowsOf(server.database.db, organizationId, ["payment_settings.updated"]);

  const balanceChecks = () => standIn.requests.filter((request) => request.path === "/v1/balance").length;

  /** The refusal of a bad key: 422's code, the message and the field problems; nothing saved, nothing audited. */
  const expectRefused = (
    answer: { body: Json },
    expected: { field: string; message: string | RegExp; code?: string; values?: Json }[],
  ) => {
    expect(answer.body.data).toBeNull();
    const [error] = answer.body.errors;
    expect(error.extensions.code).toBe("invalid_processor_keys");
    expect(ERROR_STATUS.invalid_processor_keys).toBe(422);
    expect(error.extensions.errors).toHaveLength(expected.length);
    for (const [index, problem] of expected.entries()) {
      expect(error.extensions.errors[index].field).toBe(problem.field);
      expect(error.extensions.errors[index].message).toMatch(problem.message);
      if (problem.code) expect(error.extensions.errors[index].code).toBe(problem.code);
      if (problem.values) expect(error.extensions.errors[index].values).toEqual(problem.values);
    }
    expect(error.message).toMatch(/^The Stripe (keys were not saved|secret key was refused): /);
  };

  beforeAll(async () => {
    standIn = await startStripeStandIn();
    server = await startTestServer({ stripeApiUrl: `http://127.0.0.1:${standIn.api.port}` });
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    owner = await signIn(tenant.slug, "owner");
    member = await signIn(tenant.slug, "member");
    otherOwner = await signIn(other.slug, "owner");
  });
  afterAll(async () => {
    await server?.close();
    await standIn?.close();
  });

  it("starts on the sandbox, with the webhook URL to give Stripe", async () => {
    const { body } = await graphql(READ, {}, owner);
    expect(body).toEqual({
      data: {
        paymentSettings: {
          processor: "sandbox",
          test_mode: false,
          mode: null,
          publishable_key: null,
          secret_key_last4: null,
          webhook_secret_last4: null,
          webhook_url: `${server.config.baseUrl}/webhooks/stripe/${tenant.slug}`,
          webhook_events: expect.arrayContaining(["payment_intent.succeeded", "charge.refunded"]),
          update_date: null,
        },
      },
    });
    expect(await offeredProcessors(tenant)).toEqual(["sandbox", "manual"]);
  });

  it("connects test keys checked with Stripe: donors are offered Stripe, the keys are sealed, the change audited", async () => {
    const keys = testKeys();
    const checksBefore = balanceChecks();
    const { body } = await connect(keys);
    expect(body.errors).toBeUndefined();
    expect(body.data.connectStripe).toEqual({
      processor: "stripe",
      test_mode: false,
      mode: "test",
      publishable_key: keys.publishable_key,
      secret_key_last4: keys.secret_key.slice(-4),
      webhook_secret_last4: keys.webhook_secret.slice(-4),
      webhook_url: `${server.config.baseUrl}/webhooks/stripe/${tenant.slug}`,
      webhook_events: expect.any(Array),
      update_date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(balanceChecks()).toBe(checksBefore + 1);
    expect(await offeredProcessors(tenant)).toEqual(["stripe", "manual"]);
    expect(await offeredProcessors(other)).toEqual(["sandbox", "manual"]);

    const row = await accountRow(tenant.organizationId);
    expect(row?.mode).toBe("test");
    for (const [column, secret] of [
      [row?.secretKeyCiphertext, keys.secret_key],
      [row?.webhookSecretCiphertext, keys.webhook_secret],
    ] as const) {
      expect(column).toMatch(/^v1\.[0-9a-f]{8}\./);
      expect(column).not.toContain(secret);
      expect(column).not.toContain(secret.slice(8));
      expect(Buffer.from(column?.split(".")[4] ?? "", "base64url").toString("utf8")).not.toContain(secret);
      expect(secretBox.open(column ?? "")).toBe(secret);
    }

    const [audit] = await auditRows(tenant.organizationId);
    expect(audit).toMatchObject({
      actor: { type: "user", user_id: owner.userId, label: owner.email },
      data: {
        processor: "stripe",
        mode: "test",
        secret_key_last4: keys.secret_key.slice(-4),
        webhook_secret_last4: keys.webhook_secret.slice(-4),
      },
      changes: {
        processor: { before: "sandbox", after: "stripe" },
        mode: { before: null, after: "test" },
        secret_key_last4: { before: null, after: keys.secret_key.slice(-4) },
        webhook_secret_last4: { before: null, after: keys.webhook_secret.slice(-4) },
      },
    });
    for (const secret of [keys.secret_key, keys.webhook_secret]) expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it("refuses a secret key Stripe does not know (422 on secret_key), keeping the keys saved before", async () => {
    const before = await accountRow(tenant.organizationId);
    const audits = (await auditRows(tenant.organizationId)).length;
    const answer = await connect({ ...testKeys(), secret_key: `sk_test_unknown${unique(12)}` });
    await expectRefused(answer, [{ field: "secret_key", message: "Stripe does not know this key" }]);
    expect(await accountRow(tenant.organizationId)).toEqual(before);
    expect(await auditRows(tenant.organizationId)).toHaveLength(audits);

    const liveUnknown = await connect({
      ...testKeys(),
      secret_key: "sk_live_unknown0000",
      publishable_key: "pk_live_x1",
    });
    await expectRefused(liveUnknown, [{ field: "secret_key", message: "Stripe does not know this key" }]);
  });

  it("refuses Stripe for an organization whose currency Stripe does not take (IQD): 422, nothing saved or asked", async () => {
    const iqd = await fakeTenant(server.database.db, { currency: "IQD" });
    const iqdOwner = await signIn(iqd.slug, "owner");
    const balanceCalls = standIn.requests.filter((sent) => sent.path === "/v1/balance").length;
    const answer = await connect(testKeys(), iqdOwner);
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors[0]).toMatchObject({
      message: "Stripe does not take payments in IQD, this organization's currency",
      extensions: {
        code: "currency_not_supported",
        errors: [
          {
            field: "currency",
            message: "IQD is not one of Stripe's currencies",
            code: "not_stripe_currency",
            values: { currency: "IQD" },
          },
        ],
      },
    });
    expect(ERROR_STATUS.currency_not_supported).toBe(422);
    expect(await accountRow(iqd.organizationId)).toBeUndefined();
    expect(await auditRows(iqd.organizationId)).toHaveLength(0);
    expect(standIn.requests.filter((sent) => sent.path === "/v1/balance")).toHaveLength(balanceCalls);
    // A currency Stripe takes, such as JPY, connects.
    const yen = await fakeTenant(server.database.db, { currency: "JPY" });
    const connected = await connect(testKeys(), await signIn(yen.slug, "owner"));
    expect(connected.body.data.connectStripe).toMatchObject({ processor: "stripe", mode: "test" });
  });

  it("refuses keys of the wrong form or of mixed modes before asking Stripe, naming each field", async () => {
    const checksBefore = balanceChecks();
    const mixed = await connect({ ...testKeys(), publishable_key: `pk_live_${unique(20)}` });
    await expectRefused(mixed, [
      {
        field: "publishable_key",
        message:
          "the secret key is a test key but this publishable key is a live key; use both keys from the same mode",
        code: "key_modes_differ",
        values: { secret: "test", publishable: "live" },
      },
    ]);
    const badWebhook = await connect({ ...testKeys(), webhook_secret: "we_1234567890abcdef" });
    await expectRefused(badWebhook, [
      {
        field: "webhook_secret",
        message: "a webhook signing secret starts with whsec_ (shown on the webhook endpoint's page in Stripe)",
        code: "webhook_secret_form",
      },
    ]);
    const swapped = await connect({ ...testKeys(), secret_key: "pk_test_abc123", publishable_key: "sk_test_abc123" });
    await expectRefused(swapped, [
      {
        field: "secret_key",
        message: "this is the publishable key; paste the secret key (sk_test_… or sk_live_…)",
        code: "secret_key_is_publishable",
      },
      {
        field: "publishable_key",
        message: "this is a secret key; paste the publishable key (pk_test_… or pk_live_…)",
        code: "publishable_key_is_secret",
      },
    ]);
    const empty = await connect({ secret_key: " ", publishable_key: "", webhook_secret: "" });
    await expectRefused(empty, [
      {
        field: "secret_key",
        message: "a secret key starts with sk_test_ or sk_live_ (a restricted key with rk_test_ or rk_live_)",
        code: "secret_key_form",
      },
      {
        field: "publishable_key",
        message: "a publishable key starts with pk_test_ or pk_live_",
        code: "publishable_key_form",
      },
      { field: "webhook_secret", message: /starts with whsec_/, code: "webhook_secret_form" },
    ]);
    expect(balanceChecks()).toBe(checksBefore);
    expect((await accountRow(tenant.organizationId))?.mode).toBe("test");
  });

  it("replaces test keys with live keys (Stripe answers livemode) and audits the replacement", async () => {
    const keys = { ...testKeys(), secret_key: STAND_IN_LIVE_KEY, publishable_key: `pk_live_${unique(20)}` };
    const { body } = await connect(keys);
    expect(body.errors).toBeUndefined();
    expect(body.data.connectStripe).toMatchObject({ processor: "stripe", mode: "live", secret_key_last4: "4242" });
    const audit = (await auditRows(tenant.organizationId)).at(-1);
    expect(audit).toMatchObject({
      data: { mode: "live", secret_key_last4: "4242" },
      changes: { mode: { before: "test", after: "live" }, secret_key_last4: { after: "4242" } },
    });
  });

  it("answers 503 processor_unavailable when Stripe cannot be reached, saving nothing", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = createProcessorRegistry(server.database.db, {
      secrets: secretBox,
      stripeApi: { host: "127.0.0.1", port, protocol: "http" },
    });
    const before = await accountRow(other.organizationId);
    const attempt = connectStripe(
      { db: server.database.db, processors: unreachable, baseUrl: server.config.baseUrl },
      { id: other.organizationId, slug: other.slug },
      testKeys(),
      systemOrigin("cli"),
    );
    await expect(attempt).rejects.toMatchObject({ code: "processor_unavailable", status: 503 });
    expect(before).toBeUndefined();
    expect(await accountRow(other.organizationId)).toBeUndefined();
    expect(await auditRows(other.organizationId)).toEqual([]);
  });

  it("lets members read the settings; only owners and admins read the audit log and change them", async () => {
    const read = await graphql(READ, {}, member);
    expect(read.body.data.paymentSettings).toMatchObject({ processor: "stripe", mode: "live" });
    const refused = await connect(testKeys(), member);
    expect(refused.body.errors[0].extensions.code).toBe("insufficient_scope");
    const disconnect = await graphql(DISCONNECT, {}, member);
    expect(disconnect.body.errors[0].extensions.code).toBe("insufficient_scope");

    const hidden = await graphql(AUDIT, { first: 10 }, member);
    expect(hidden.body.errors[0].extensions.code).toBe("insufficient_scope");
    const audit = await graphql(AUDIT, { first: 10 }, owner);
    const events = audit.body.data.auditLog.items as Json[];
    expect(events.map((event) => event.type)).toEqual(["payment_settings.updated", "payment_settings.updated"]);
    expect(events[0]).toMatchObject({
      actor_type: "user",
      actor_id: owner.userId,
      actor_label: owner.email,
      summary: expect.stringMatching(/^Replaced the Stripe keys \(live mode, secret key ending 4242\)$/),
    });
    expect(events[0]?.changes).toContainEqual({ field: "mode", before: '"test"', after: '"live"' });
    const one = await graphql(AUDIT, { first: 1 }, owner);
    expect(one.body.data.auditLog).toMatchObject({ items: [events[0]], has_more: true });
    const tooMany = await graphql(AUDIT, { first: 101 }, owner);
    expect(tooMany.body.errors[0].extensions).toMatchObject({ code: "invalid_request", errors: [{ field: "first" }] });
  });

  it("keeps each organization's settings to its own members; applications can neither read nor change them", async () => {
    const before = await accountRow(tenant.organizationId);
    // A member of another organization naming this one is refused outright.
    const crossRead = await graphql(READ, {}, { ...otherOwner, organization: tenant.slug });
    expect(crossRead.body.errors[0].extensions.code).toBe("not_a_member");
    const crossWrite = await connect(testKeys(), { ...otherOwner, organization: tenant.slug });
    expect(crossWrite.body.errors[0].extensions.code).toBe("not_a_member");
    const crossAudit = await graphql(AUDIT, {}, { ...otherOwner, organization: tenant.slug });
    expect(crossAudit.body.errors[0].extensions.code).toBe("not_a_member");
    // In their own organization they see their own settings and log, never this one's.
    const own = await graphql(READ, {}, otherOwner);
    expect(own.body.data.paymentSettings).toMatchObject({
      processor: "sandbox",
      webhook_url: `${server.config.baseUrl}/webhooks/stripe/${other.slug}`,
    });
    expect((await graphql(AUDIT, {}, otherOwner)).body.data.auditLog.items).toEqual([]);

    // An installed application with every permission it can be granted.
    const app = { token: tenant.token };
    for (const [query, variables] of [
      [READ, {}],
      [AUDIT, {}],
      [CONNECT, { input: testKeys() }],
      [DISCONNECT, {}],
    ] as const) {
      const answer = await graphql(query, variables, app);
      expect(answer.body.errors[0].extensions.code).toBe("insufficient_scope");
      expect(answer.body.data).toBeNull();
    }
    expect(await accountRow(tenant.organizationId)).toEqual(before);
  });

  it("disconnects back to the sandbox, audited; disconnecting again changes nothing", async () => {
    const { body } = await graphql(DISCONNECT, {}, owner);
    expect(body.data.disconnectStripe).toMatchObject({ processor: "sandbox", mode: null, secret_key_last4: null });
    expect(await accountRow(tenant.organizationId)).toBeUndefined();
    expect(await offeredProcessors(tenant)).toEqual(["sandbox", "manual"]);
    const audits = await auditRows(tenant.organizationId);
    expect(audits.at(-1)).toMatchObject({
      actor: { type: "user", label: owner.email },
      changes: {
        processor: { before: "stripe", after: "sandbox" },
        mode: { before: "live", after: null },
        secret_key_last4: { before: "4242", after: null },
      },
    });
    await graphql(DISCONNECT, {}, owner);
    expect(await auditRows(tenant.organizationId)).toHaveLength(audits.length);
  });

  it("never answers a secret: not in any GraphQL answer, and the schema has no field for one", async () => {
    const introspection = await graphql(`{ __type(name: "PaymentSettings") { fields { name } } }`, {}, owner);
    expect(introspection.body.data.__type.fields.map((field: Json) => field.name).sort()).toEqual(
      SETTINGS_FIELDS.split(" ").sort(),
    );
    expect(secretsSent.size).toBeGreaterThan(10);
    for (const answer of answers) {
      for (const secret of secretsSent) expect(answer).not.toContain(secret);
    }
  });

  describe("donata org set-processor", () => {
    const children = new Set<ChildProcess>();
    let dataDir = "";
    let slug = "";

    /** The CLI's database: the run's PostgreSQL (shared with the server), or a PGlite directory of its own. */
    const target = (): Record<string, string> => {
      const url = testDatabaseUrl();
      return url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
    };

    const runCli = (...args: string[]) =>
      runDonataCli(
        args,
        {
          BASE_URL: "https://give.example.org",
          DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
          STRIPE_API_URL: `http://127.0.0.1:${standIn.api.port}`,
          ...target(),
        },
        { children },
      );

    /** The CLI's database in this process (PGlite: only once no CLI process has it open). */
    const withCliDatabase = async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
      if (testDatabaseUrl()) return work(server.database.db);
      const database = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1 });
      try {
        return await work(database.db);
      } finally {
        await database.close();
      }
    };

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), "donata-set-processor-"));
      slug = `cli-${unique(8)}`;
      // A command that expects data refuses an empty DATA_DIR: migrate creates the database first.
      const migrated = await runCli("migrate");
      expect(migrated.code, migrated.stderr).toBe(0);
      const created = await runCli("org", "create", "--slug", slug, "--name", "CLI Trust", "--json");
      expect(created.code, created.stderr).toBe(0);
    }, 120_000);
    afterAll(async () => {
      for (const child of children) child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    });

    it("connects Stripe keys checked with Stripe, refuses bad ones, goes back to the sandbox; audited as cli", async () => {
      const keys = testKeys();
      const args = (processor: string, extra: string[] = []) => [
        "org",
        "set-processor",
        "--org",
        slug,
        "--processor",
        processor,
        ...extra,
      ];
      const connected = await runCli(
        ...args("stripe", [
          "--secret-key",
          keys.secret_key,
          "--publishable-key",
          keys.publishable_key,
          "--webhook-secret",
          keys.webhook_secret,
          "--json",
        ]),
      );
      expect(connected.code, connected.stderr).toBe(0);
      expect(JSON.parse(connected.stdout)).toMatchObject({
        organization: slug,
        processor: "stripe",
        mode: "test",
        publishable_key: keys.publishable_key,
        secret_key_last4: keys.secret_key.slice(-4),
        webhook_secret_last4: keys.webhook_secret.slice(-4),
        webhook_url: `https://give.example.org/webhooks/stripe/${slug}`,
      });
      expect(connected.stdout).not.toContain(keys.secret_key);
      expect(connected.stdout).not.toContain(keys.webhook_secret);

      const wrong = await runCli(
        ...args("stripe", [
          "--secret-key",
          `sk_test_unknown${unique(10)}`,
          "--publishable-key",
          keys.publishable_key,
          "--webhook-secret",
          keys.webhook_secret,
        ]),
      );
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toBe("");
      expect(wrong.stderr).toBe(
        "donata org set-processor: The Stripe secret key was refused: Stripe does not know this key\n",
      );

      const mixed = await runCli(
        ...args("stripe", [
          "--secret-key",
          keys.secret_key,
          "--publishable-key",
          "pk_live_abc",
          "--webhook-secret",
          keys.webhook_secret,
        ]),
      );
      expect(mixed.code).toBe(1);
      expect(mixed.stderr).toMatch(
        /^donata org set-processor: The Stripe keys were not saved: publishable_key the secret key is a test key but this publishable key is a live key/,
      );

      const missing = await runCli(...args("stripe", ["--secret-key", keys.secret_key]));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("--publishable-key is required");
      const unknown = await runCli(...args("paypal"));
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--processor must be stripe, sandbox or none, not "paypal"');

      const saved = await withCliDatabase(async (db) => {
        const id = (await findOrganizationBySlug(db, slug))?.id ?? 0;
        const [account] = await db.select().from(processorAccounts).where(eq(processorAccounts.organizationId, id));
        return { id, account };
      });
      expect(saved.account?.secretKeyCiphertext).not.toContain(keys.secret_key);
      expect(secretBox.open(saved.account?.secretKeyCiphertext ?? "")).toBe(keys.secret_key);

      // The sandbox is test mode: the explicit switch, the same in production and outside it.
      const sandbox = await runCli(...args("sandbox"));
      expect(sandbox.code, sandbox.stderr).toBe(0);
      expect(sandbox.stdout).toBe(
        `${slug} is in test mode: the sandbox takes gifts, no real money moves, pages show a test banner (Stripe keys, if any, deleted)\n`,
      );
      // `none` in production: no card processor at all (bank transfer once the IBAN is set).
      const none = await runCliInProcess([...args("none"), "--json"], {
        NODE_ENV: "production",
        BASE_URL: "https://give.example.org",
        AUTH_URL: "https://give.example.org",
        LOG_LEVEL: "silent",
        DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        ...target(),
      });
      expect(none.code, none.stderr).toBe(0);
      expect(JSON.parse(none.stdout)).toMatchObject({ organization: slug, processor: "none", test_mode: false });

      const audits = await withCliDatabase((db) => auditRowsOf(db, saved.id, ["payment_settings.updated"]));
      expect(audits.map((audit) => [audit.actor, audit.changes])).toEqual([
        [
          { type: "system", label: "cli" },
          expect.objectContaining({ processor: { before: "sandbox", after: "stripe" } }),
        ],
        [
          { type: "system", label: "cli" },
          expect.objectContaining({
            processor: { before: "stripe", after: "sandbox" },
            test_mode: { before: false, after: true },
          }),
        ],
        [
          { type: "system", label: "cli" },
          expect.objectContaining({
            processor: { before: "sandbox", after: "none" },
            test_mode: { before: true, after: false },
          }),
        ],
      ]);
      const account = await withCliDatabase(async (db) =>
        db.select().from(processorAccounts).where(eq(processorAccounts.organizationId, saved.id)),
      );
      expect(account).toEqual([]);
    }, 240_000);
  });
});
