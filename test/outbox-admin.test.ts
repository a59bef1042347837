import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDatabase } from "../src/db/client.js";
import { donations, outboxMessages, payments, supporters } from "../src/db/schema.js";
import {
  type EmailKind,
  enqueueEmail,
  enqueueEmails,
  type OutboxRow,
  updateMessage,
} from "../src/email/outbox.repo.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { findOrganizationBySlug, updateOrganizationColumns } from "../src/modules/organizations/organizations.repo.js";
import { createUser } from "../src/modules/users/users.service.js";
import { auditRowsOf } from "./helpers/audit.js";
import { runCli as runDonataCli } from "./helpers/cli.js";
import { testDatabaseUrl } from "./helpers/database.js";
import {
  fakeAppToken,
  fakeCampaign,
  fakeDonation,
  fakePayment,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, startSmtpServer } from "./helpers/smtp.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = Record<string, any>;
type Auth = { token?: string; cookie?: string; organization?: string };

const MESSAGE_FIELDS =
  "id kind to state attempts next_attempt_date last_error subject html text headers { name value } message_id sent_date create_date update_date supporter_id donation_id supporter { id email }";
const LIST = `query ($first: Int, $after: String, $state: String, $kind: String, $supporter_id: Int, $recipient: String) {
  outboxMessages(
    first: $first, after: $after, state: $state, kind: $kind, supporter_id: $supporter_id, recipient: $recipient
  ) {
    count has_more end_cursor items { id kind state to }
  }
}`;
const ONE = `query ($id: ID!) { outboxMessage(id: $id) { ${MESSAGE_FIELDS} } }`;
const RETRY = `mutation ($id: ID!) { retryOutboxMessage(id: $id) { id state attempts next_attempt_date last_error } }`;
const CANCEL = `mutation ($id: ID!) { cancelOutboxMessage(id: $id) { id state attempts next_attempt_date } }`;
const SETTINGS_FIELDS = "email logo_url locale gift_notifications update_date";
const READ_SETTINGS = `{ emailSettings { ${SETTINGS_FIELDS} } }`;
const UPDATE_SETTINGS = `mutation ($input: EmailSettingsInput!) { updateEmailSettings(input: $input) { ${SETTINGS_FIELDS} } }`;
const PREVIEW = `query ($kind: String!, $locale: String) { emailPreview(kind: $kind, locale: $locale) { kind subject html text } }`;
const SEND_STATEMENTS = `mutation ($year: Int!) { sendStatements(year: $year) { year supporters queued already_sent skipped_no_email } }`;

const REJECTED = "550 5.1.1 <gone@example.test>: Recipient address rejected: User unknown in virtual mailbox table";
const THIS_YEAR = new Date().getUTCFullYear();

describe("Outbox and email settings (admin GraphQL)", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Auth & { email: string };
  let admin: Auth;
  let member: Auth;
  let otherOwner: Auth;
  let appToken: Auth;
  const messages: Record<string, OutboxRow> = {};
  let otherCaptured: OutboxRow;
  let supporterId: number;

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
    return { status: response.status, body: (await response.json()) as Json };
  };

  /** The one error of a refused request, as GraphQL renders an AppError. */
  const refusal = (answer: { body: Json }) => {
    expect(answer.body.errors).toHaveLength(1);
    const [error] = answer.body.errors;
    return { message: error.message, code: error.extensions.code, errors: error.extensions.errors };
  };

  const signIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
    return { cookie, organization, email };
  };

  /** A message in the state a delivery would leave it in. */
  const seed = async (
    organizationId: number,
    kind: EmailKind,
    values: Parameters<typeof updateMessage>[3],
    extra: { supporterId?: number } = {},
  ) => {
    const db = server.database.db;
    const id = await enqueueEmail(db, {
      organizationId,
      kind,
      to: `donor-${unique(6)}@example.test`,
      supporterId: extra.supporterId,
    });
    if (id === null) throw new Error("not enqueued");
    return (await updateMessage(db, organizationId, id, values)) as OutboxRow;
  };

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    owner = await signIn(tenant.slug, "owner");
    admin = await signIn(tenant.slug, "admin");
    member = await signIn(tenant.slug, "member");
    otherOwner = await signIn(other.slug, "owner");
    appToken = { token: await fakeAppToken(server.database.db, tenant, ["supporters:read", "donations:read"]) };
    supporterId = (await fakeSupporter(server.database.db, tenant.organizationId)).id;
    const sent = new Date("2026-03-01T09:30:00.000Z");
    messages.captured = await seed(
      tenant.organizationId,
      "receipt",
      {
        state: "captured",
        attempts: 1,
        subject: "Thank you for your gift",
        html: "<!doctype html><html><body><h1>Thank you</h1></body></html>",
        text: "Thank you",
        headers: { From: '"Org" <no-reply@example.test>', "Auto-Submitted": "auto-generated" },
        messageId: "<outbox.1.1@example.test>",
        sentDate: sent,
      },
      { supporterId },
    );
    messages.failed = await seed(tenant.organizationId, "renewal_failed", {
      state: "failed",
      attempts: 3,
      lastError: REJECTED,
    });
    messages.queued = await seed(tenant.organizationId, "receipt", {});
    messages.sent = await seed(tenant.organizationId, "statement", { state: "sent", attempts: 1, sentDate: sent });
    otherCaptured = await seed(other.organizationId, "receipt", { state: "captured", attempts: 1, sentDate: sent });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists the organization's messages newest first, with filters and keyset pages", async () => {
    const all = await graphql(LIST, {}, member);
    expect(all.body.errors).toBeUndefined();
    const ids = [messages.sent, messages.queued, messages.failed, messages.captured].map((row) => row?.id);
    expect(all.body.data.outboxMessages).toEqual({
      count: 4,
      has_more: false,
      end_cursor: null,
      items: ids.map((id) => expect.objectContaining({ id })),
    });
    expect(all.body.data.outboxMessages.items[0]).toEqual({
      id: messages.sent?.id,
      kind: "statement",
      state: "sent",
      to: messages.sent?.toAddress,
    });

    const failed = await graphql(LIST, { state: "failed" }, member);
    expect(failed.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([messages.failed?.id]);
    expect(failed.body.data.outboxMessages.count).toBe(1);
    const receipts = await graphql(LIST, { kind: "receipt" }, member);
    expect(receipts.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([
      messages.queued?.id,
      messages.captured?.id,
    ]);
    const bySupporter = await graphql(LIST, { supporter_id: supporterId }, member);
    expect(bySupporter.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([messages.captured?.id]);

    const first = await graphql(LIST, { first: 3 }, member);
    expect(first.body.data.outboxMessages).toMatchObject({ count: 4, has_more: true, end_cursor: String(ids[2]) });
    const next = await graphql(LIST, { first: 3, after: first.body.data.outboxMessages.end_cursor }, member);
    expect(next.body.data.outboxMessages).toEqual({
      count: 4,
      has_more: false,
      end_cursor: null,
      items: [expect.objectContaining({ id: ids[3] })],
    });
  });

  it("refuses bad list arguments with the parameter named", async () => {
    const cases: [Record<string, unknown>, string, string, string][] = [
      [
        { state: "bounced" },
        "state",
        "use one of queued, sending, sent, captured, failed, cancelled",
        "Invalid state: use one of queued, sending, sent, captured, failed, cancelled",
      ],
      [{ kind: "newsletter" }, "kind", expect.stringMatching(/^use one of receipt, /) as never, ""],
      [{ first: 0 }, "first", "use 1 to 100", "Invalid first: use 1 to 100"],
      [{ first: 101 }, "first", "use 1 to 100", "Invalid first: use 1 to 100"],
      [
        { after: "abc" },
        "after",
        "use the end_cursor of the previous page",
        "Invalid after: use the end_cursor of the previous page",
      ],
      [
        { supporter_id: 0 },
        "supporter_id",
        "use a supporter id (a positive integer)",
        "Invalid supporter_id: use a supporter id (a positive integer)",
      ],
      ...["", "   ", `${"a".repeat(313)}@example`, "ada\n@example.org"].map(
        (recipient) =>
          [
            { recipient },
            "recipient",
            "use 1 to 320 characters of an email address",
            "Invalid recipient: use 1 to 320 characters of an email address",
          ] as [Record<string, unknown>, string, string, string],
      ),
    ];
    for (const [variables, parameter, message, full] of cases) {
      const answer = await graphql(LIST, variables, member);
      expect(answer.body.data).toBeNull();
      const error = refusal(answer);
      expect(error.code).toBe("invalid_request");
      expect(error.errors).toEqual([{ parameter, message }]);
      if (full) expect(error.message).toBe(full);
    }
  });

  it("finds a message by part of its recipient's address, in any case, among hundreds; never another organization's", async () => {
    const db = server.database.db;
    const [org, otherOrg] = await Promise.all([fakeTenant(db), fakeTenant(db)]);
    const reader = await signIn(org.slug, "member");
    const marker = unique(6);
    // A billing run's worth of receipts, and the one looked for among them.
    await enqueueEmails(
      db,
      Array.from({ length: 290 }, (_, i) => ({
        organizationId: org.organizationId,
        kind: "receipt" as const,
        to: `donor-${i}-${marker}@example.test`,
      })),
    );
    const wanted = await enqueueEmail(db, {
      organizationId: org.organizationId,
      kind: "receipt",
      to: `Ada.Lovelace+${marker}@Example.ORG`,
    });
    // LIKE's wildcards are the characters they are: "_" is not any character, "%" not any run.
    const underscored = await enqueueEmail(db, {
      organizationId: org.organizationId,
      kind: "statement",
      to: `under_score-${marker}@example.test`,
    });
    await enqueueEmail(db, {
      organizationId: org.organizationId,
      kind: "receipt",
      to: `underXscore-${marker}@example.test`,
    });
    // The same address in another organization's Outbox.
    await enqueueEmail(db, {
      organizationId: otherOrg.organizationId,
      kind: "receipt",
      to: `ada.lovelace+${marker}@example.org`,
    });

    const found = await graphql(LIST, { recipient: ` lovelace+${marker.toUpperCase()}@example.org ` }, reader);
    expect(found.body.errors).toBeUndefined();
    expect(found.body.data.outboxMessages).toEqual({
      count: 1,
      has_more: false,
      end_cursor: null,
      items: [{ id: wanted, kind: "receipt", state: "queued", to: `Ada.Lovelace+${marker}@Example.ORG` }],
    });
    const byPrefix = await graphql(LIST, { recipient: "ADA.", first: 100 }, reader);
    expect(byPrefix.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([wanted]);
    const literal = await graphql(LIST, { recipient: `under_score-${marker}` }, reader);
    expect(literal.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([underscored]);
    const percent = await graphql(LIST, { recipient: "%" }, reader);
    expect(percent.body.data.outboxMessages).toMatchObject({ count: 0, items: [] });
    // With the other filters: a receipt to that address, not a statement.
    const both = await graphql(LIST, { recipient: marker, kind: "statement" }, reader);
    expect(both.body.data.outboxMessages).toMatchObject({ count: 1, items: [{ id: underscored }] });
    const many = await graphql(LIST, { recipient: `${marker}@example.test`, first: 100 }, reader);
    expect(many.body.data.outboxMessages).toMatchObject({ count: 292, has_more: true });

    // The other organization's member finds its own message only.
    const otherReader = await signIn(otherOrg.slug, "member");
    const theirs = await graphql(LIST, { recipient: "ada.lovelace" }, otherReader);
    expect(theirs.body.data.outboxMessages.count).toBe(1);
    expect(theirs.body.data.outboxMessages.items[0].to).toBe(`ada.lovelace+${marker}@example.org`);
  });

  it("shows one message with what was captured: subject, both parts, headers, supporter", async () => {
    const answer = await graphql(ONE, { id: messages.captured?.id }, member);
    expect(answer.body).toEqual({
      data: {
        outboxMessage: {
          id: messages.captured?.id,
          kind: "receipt",
          to: messages.captured?.toAddress,
          state: "captured",
          attempts: 1,
          next_attempt_date: null,
          last_error: null,
          subject: "Thank you for your gift",
          html: "<!doctype html><html><body><h1>Thank you</h1></body></html>",
          text: "Thank you",
          headers: [
            { name: "From", value: '"Org" <no-reply@example.test>' },
            { name: "Auto-Submitted", value: "auto-generated" },
          ],
          message_id: "<outbox.1.1@example.test>",
          sent_date: "2026-03-01T09:30:00.000Z",
          create_date: messages.captured?.createDate.toISOString(),
          update_date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          supporter_id: supporterId,
          donation_id: null,
          supporter: { id: supporterId, email: expect.stringContaining("@") },
        },
      },
    });
    const failed = await graphql(ONE, { id: messages.failed?.id }, member);
    expect(failed.body.data.outboxMessage).toMatchObject({ state: "failed", attempts: 3, last_error: REJECTED });
    const queued = await graphql(ONE, { id: messages.queued?.id }, member);
    expect(queued.body.data.outboxMessage.next_attempt_date).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it("never shows another organization's message: null for reads, not found for actions", async () => {
    for (const id of [otherCaptured.id, 999_999_999, "abc", "-1", "1.5"]) {
      const answer = await graphql(ONE, { id }, owner);
      expect(answer.body).toEqual({ data: { outboxMessage: null } });
    }
    const listed = await graphql(LIST, {}, owner);
    expect(listed.body.data.outboxMessages.items.map((item: Json) => item.id)).not.toContain(otherCaptured.id);
    // The other organization sees its own message, and none of ours.
    const theirs = await graphql(LIST, {}, otherOwner);
    expect(theirs.body.data.outboxMessages).toMatchObject({ count: 1, items: [{ id: otherCaptured.id }] });
    expect((await graphql(ONE, { id: messages.captured?.id }, otherOwner)).body.data.outboxMessage).toBeNull();

    for (const mutation of [RETRY, CANCEL]) {
      for (const id of [otherCaptured.id, "abc"]) {
        const answer = await graphql(mutation, { id }, owner);
        expect(refusal(answer)).toEqual({ message: "Message not found", code: "not_found", errors: undefined });
      }
    }
    const [untouched] = await server.database.db
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, other.organizationId), eq(outboxMessages.id, otherCaptured.id)));
    expect(untouched?.state).toBe("captured");
  });

  it("retries a failed message (back to queued, attempts kept) and cancels a queued one; other states are refused", async () => {
    const retried = await graphql(RETRY, { id: messages.failed?.id }, admin);
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data.retryOutboxMessage).toEqual({
      id: messages.failed?.id,
      state: "queued",
      attempts: 3,
      next_attempt_date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      last_error: REJECTED,
    });
    expect(Date.parse(retried.body.data.retryOutboxMessage.next_attempt_date)).toBeLessThanOrEqual(Date.now());

    const again = await graphql(RETRY, { id: messages.failed?.id }, owner);
    expect(refusal(again)).toEqual({
      message: `Message ${messages.failed?.id} is queued; only a failed message can be retried`,
      code: "invalid_state_transition",
      errors: undefined,
    });
    for (const [row, state] of [
      [messages.captured, "captured"],
      [messages.sent, "sent"],
    ] as const) {
      expect(refusal(await graphql(RETRY, { id: row?.id }, owner))).toMatchObject({
        message: `Message ${row?.id} is ${state}; only a failed message can be retried`,
        code: "invalid_state_transition",
      });
      expect(refusal(await graphql(CANCEL, { id: row?.id }, owner))).toMatchObject({
        message: `Message ${row?.id} is ${state}; only a queued message can be cancelled`,
        code: "invalid_state_transition",
      });
    }

    const cancelled = await graphql(CANCEL, { id: messages.queued?.id }, owner);
    expect(cancelled.body.data.cancelOutboxMessage).toEqual({
      id: messages.queued?.id,
      state: "cancelled",
      attempts: 0,
      next_attempt_date: null,
    });
    expect(refusal(await graphql(CANCEL, { id: messages.queued?.id }, owner))).toEqual({
      message: `Message ${messages.queued?.id} is cancelled; only a queued message can be cancelled`,
      code: "invalid_state_transition",
      errors: undefined,
    });
    expect(refusal(await graphql(RETRY, { id: messages.queued?.id }, owner)).message).toBe(
      `Message ${messages.queued?.id} is cancelled; only a failed message can be retried`,
    );
    const listed = await graphql(LIST, { state: "cancelled" }, member);
    expect(listed.body.data.outboxMessages.items.map((item: Json) => item.id)).toEqual([messages.queued?.id]);
  });

  it("members read but may not retry, cancel, change settings or send statements; applications may not read", async () => {
    const failed = await seed(tenant.organizationId, "receipt", { state: "failed", attempts: 1, lastError: REJECTED });
    const memberRefusal = {
      message: 'Your role (member) does not allow "organization:manage"',
      code: "insufficient_scope",
      errors: undefined,
    };
    expect(refusal(await graphql(RETRY, { id: failed.id }, member))).toEqual(memberRefusal);
    expect(refusal(await graphql(CANCEL, { id: failed.id }, member))).toEqual(memberRefusal);
    expect(
      refusal(
        await graphql(UPDATE_SETTINGS, { input: { email: null, locale: "it", gift_notifications: "off" } }, member),
      ),
    ).toEqual(memberRefusal);
    expect(refusal(await graphql(SEND_STATEMENTS, { year: THIS_YEAR }, member))).toEqual(memberRefusal);
    expect((await graphql(READ_SETTINGS, {}, member)).body.data.emailSettings.locale).toBe("en");

    const appRead = {
      message: 'This application was not granted the "organization:read" permission',
      code: "insufficient_scope",
      errors: undefined,
    };
    const appManage = {
      message: 'This application was not granted the "organization:manage" permission',
      code: "insufficient_scope",
      errors: undefined,
    };
    expect(refusal(await graphql(LIST, {}, appToken))).toEqual(appRead);
    expect(refusal(await graphql(ONE, { id: failed.id }, appToken))).toEqual(appRead);
    expect(refusal(await graphql(READ_SETTINGS, {}, appToken))).toEqual(appRead);
    expect(refusal(await graphql(RETRY, { id: failed.id }, appToken))).toEqual(appManage);
    expect(refusal(await graphql(SEND_STATEMENTS, { year: THIS_YEAR }, appToken))).toEqual(appManage);
    // Even an application granted every permission it can be.
    expect(refusal(await graphql(LIST, {}, { token: tenant.token }))).toEqual(appRead);

    const [row] = await server.database.db
      .select()
      .from(outboxMessages)
      .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.id, failed.id)));
    expect(row?.state).toBe("failed");
  });

  it("email settings: read, validated field by field, saved and audited", async () => {
    const start = await graphql(READ_SETTINGS, {}, owner);
    expect(start.body.data.emailSettings).toEqual({
      email: null,
      logo_url: null,
      locale: "en",
      gift_notifications: "off",
      update_date: expect.stringMatching(/^\d{4}-/),
    });

    const bad = await graphql(
      UPDATE_SETTINGS,
      {
        input: {
          email: "not-an-email",
          logo_url: "javascript:alert(1)",
          locale: "fr",
          gift_notifications: "weekly",
        },
      },
      owner,
    );
    expect(bad.body.data).toBeNull();
    expect(refusal(bad)).toEqual({
      code: "invalid_request",
      message:
        "The email settings were not saved: email must be an email address, like donations@example.org; " +
        "logo_url use a web address starting with https:// (or http://); locale use one of en, it; " +
        "gift_notifications use one of off, each, daily",
      errors: [
        { field: "email", message: "must be an email address, like donations@example.org", code: "email" },
        {
          field: "logo_url",
          message: "use a web address starting with https:// (or http://)",
          code: "web_address_http",
        },
        { field: "locale", message: "use one of en, it", code: "one_of", values: { choices: "en, it" } },
        {
          field: "gift_notifications",
          message: "use one of off, each, daily",
          code: "one_of",
          values: { choices: "off, each, daily" },
        },
      ],
    });
    const noAddress = await graphql(
      UPDATE_SETTINGS,
      {
        input: {
          email: "  ",
          logo_url: `https://cdn.example.test/${"a".repeat(2000)}.png`,
          locale: "it",
          gift_notifications: "daily",
        },
      },
      owner,
    );
    expect(refusal(noAddress).errors).toEqual([
      { field: "logo_url", message: "at most 2000 characters", code: "too_long", values: { max: 2000 } },
      {
        field: "gift_notifications",
        message: "gift notifications go to the organization's email address; enter it first",
        code: "gift_notifications_need_email",
      },
    ]);
    expect(await auditRows()).toEqual([]);

    const saved = await graphql(
      UPDATE_SETTINGS,
      {
        input: {
          email: " gifts@example.org ",
          logo_url: "https://cdn.example.test/logo.png",
          locale: "it",
          gift_notifications: "each",
        },
      },
      admin,
    );
    expect(saved.body.errors).toBeUndefined();
    expect(saved.body.data.updateEmailSettings).toMatchObject({
      email: "gifts@example.org",
      logo_url: "https://cdn.example.test/logo.png",
      locale: "it",
      gift_notifications: "each",
    });
    expect((await graphql(READ_SETTINGS, {}, member)).body.data.emailSettings).toEqual(
      saved.body.data.updateEmailSettings,
    );
    // The other organization keeps its own settings.
    expect((await graphql(READ_SETTINGS, {}, otherOwner)).body.data.emailSettings.email).toBeNull();

    const cleared = await graphql(
      UPDATE_SETTINGS,
      { input: { email: "gifts@example.org", logo_url: "", locale: "it", gift_notifications: "off" } },
      owner,
    );
    expect(cleared.body.data.updateEmailSettings).toMatchObject({ logo_url: null, gift_notifications: "off" });

    expect((await auditRows()).map((row) => [(row.actor as { label: string }).label, row.changes])).toEqual([
      [
        expect.stringMatching(/^admin-/),
        {
          email: { before: null, after: "gifts@example.org" },
          logo_url: { before: null, after: "https://cdn.example.test/logo.png" },
          locale: { before: "en", after: "it" },
          gift_notifications: { before: expect.any(String), after: "each" },
        },
      ],
      [
        owner.email,
        {
          logo_url: { before: "https://cdn.example.test/logo.png", after: null },
          gift_notifications: { before: "each", after: "off" },
        },
      ],
    ]);
    const LOG = `{ auditLog(type: ["email_settings.updated"], first: 5) { items { type summary actor_label } } }`;
    expect((await graphql(LOG, {}, member)).body.errors[0].extensions.code).toBe("insufficient_scope");
    expect((await graphql(LOG, {}, owner)).body.data.auditLog.items[0]).toEqual({
      type: "email_settings.updated",
      // The organization now speaks Italian and the owner chose no language (nor sent one): Italian.
      summary: "Modificate le impostazioni email: logo_url, gift_notifications",
      actor_label: owner.email,
    });
  });

  it("shows what the delivery captured or the SMTP server refused; a retried message is then sent", async () => {
    const db = server.database.db;
    const org = await fakeTenant(db);
    const orgOwner = await signIn(org.slug, "owner");
    const signInEmail = (to: string, supporter?: number) =>
      enqueueEmail(db, {
        organizationId: org.organizationId,
        kind: "donor_sign_in",
        to,
        supporterId: supporter,
        data: { url: `${server.config.baseUrl}/donor/${org.slug}/enter?token=t${unique(8)}` },
      });

    // Without SMTP_URL: captured, rendered, readable in the Outbox.
    const capturedId = await signInEmail("captured@example.test");
    expect(await flushOutbox(server, org.organizationId)).toMatchObject({ captured: 1 });
    const captured = (await graphql(ONE, { id: capturedId }, orgOwner)).body.data.outboxMessage;
    expect(captured).toMatchObject({
      state: "captured",
      attempts: 1,
      to: "captured@example.test",
      subject: expect.stringContaining("sign-in link"),
      html: expect.stringContaining("<!doctype html>"),
      text: expect.stringContaining("/enter?token=t"),
      message_id: expect.stringMatching(/^<outbox\./),
      sent_date: expect.stringMatching(/^\d{4}-/),
    });
    expect(captured.headers).toEqual(
      expect.arrayContaining([
        { name: "Auto-Submitted", value: "auto-generated" },
        { name: "Message-ID", value: captured.message_id },
      ]),
    );

    // A mail server that refuses the address for good: failed with its answer, until an admin retries.
    const smtp = await startSmtpServer();
    try {
      const withSmtp = { config: { ...server.config, smtpUrl: smtp.url }, database: server.database };
      const donor = await fakeSupporter(db, org.organizationId, { email: "gone@example.test" });
      const refusedId = await signInEmail("gone@example.test", donor.id);
      smtp.failNext(550, 1, "5.1.1 <gone@example.test>: Recipient address rejected");
      expect(await flushOutbox(withSmtp, org.organizationId)).toMatchObject({ failed: 1 });
      const failed = (await graphql(ONE, { id: refusedId }, orgOwner)).body.data.outboxMessage;
      expect(failed).toMatchObject({ state: "failed", attempts: 1, next_attempt_date: null });
      expect(failed.last_error).toContain("5.1.1 <gone@example.test>: Recipient address rejected");
      expect((await graphql(LIST, { state: "failed" }, orgOwner)).body.data.outboxMessages.count).toBe(1);

      // The admin corrects the supporter's address, then retries: the message goes to the new one.
      await db
        .update(supporters)
        .set({ email: "fixed@example.test" })
        .where(and(eq(supporters.organizationId, org.organizationId), eq(supporters.id, donor.id)));
      const retried = await graphql(RETRY, { id: refusedId }, orgOwner);
      expect(retried.body.data.retryOutboxMessage).toMatchObject({ state: "queued", attempts: 1 });
      expect(await flushOutbox(withSmtp, org.organizationId)).toMatchObject({ sent: 1 });
      const sent = (await graphql(ONE, { id: refusedId }, orgOwner)).body.data.outboxMessage;
      expect(sent).toMatchObject({ state: "sent", attempts: 2, last_error: null, to: "fixed@example.test" });
      expect(smtp.to("gone@example.test")).toEqual([]);
      expect(smtp.to("fixed@example.test")).toHaveLength(1);
      expect(smtp.to("fixed@example.test")[0]?.subject).toBe(sent.subject);

      // A cancelled message is never delivered.
      const cancelledId = await signInEmail("never@example.test");
      expect((await graphql(CANCEL, { id: cancelledId }, orgOwner)).body.data.cancelOutboxMessage.state).toBe(
        "cancelled",
      );
      expect(await flushOutbox(withSmtp, org.organizationId)).toMatchObject({ sent: 0, captured: 0 });
      expect(smtp.to("never@example.test")).toEqual([]);
    } finally {
      await smtp.close();
    }
  });

  it("without SMTP_URL a captured message keeps its sign-in link, shown to owners and admins only", async () => {
    const db = server.database.db;
    const org = await fakeTenant(db);
    const [orgOwner, orgAdmin, orgMember] = [
      await signIn(org.slug, "owner"),
      await signIn(org.slug, "admin"),
      await signIn(org.slug, "member"),
    ];
    const donor = await fakeSupporter(db, org.organizationId);
    const signInPage = await fetch(`${server.url}/donor/${org.slug}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: donor.email as string }).toString(),
    });
    expect(signInPage.status).toBe(200);
    let id: number | undefined;
    for (let wait = 0; wait < 100 && id === undefined; wait++) {
      const listed = (await graphql(LIST, { kind: "donor_sign_in" }, orgOwner)).body.data.outboxMessages.items;
      id = listed[0]?.id;
      if (id === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await flushOutbox(server, org.organizationId)).toMatchObject({ captured: 1 });
    const live = /\/enter\?token=(dnt_dl_[A-Za-z0-9_-]+)/;

    const forOwner = (await graphql(ONE, { id }, orgOwner)).body.data.outboxMessage;
    const forAdmin = (await graphql(ONE, { id }, orgAdmin)).body.data.outboxMessage;
    const token = live.exec(forOwner.text)?.[1] as string;
    expect(token).toMatch(/^dnt_dl_(?!redacted)/);
    expect(forOwner.html).toContain(token);
    expect(forAdmin.text).toContain(token);

    const forMember = (await graphql(ONE, { id }, orgMember)).body.data.outboxMessage;
    expect(forMember.state).toBe("captured");
    expect(JSON.stringify(forMember)).not.toContain(token);
    expect(forMember.text).toContain(`/donor/${org.slug}/enter?token=dnt_dl_redacted`);
    expect(forMember.html).toContain("dnt_dl_redacted");

    // The owner's link is the donor's: it signs in.
    const entered = await fetch(`${server.url}/donor/${org.slug}/enter?token=${token}`, { redirect: "manual" });
    expect(entered.status).toBe(303);
  });

  it("tells members whether email is delivered (SMTP_URL) and whether the server is in production", async () => {
    const DELIVERY = "{ emailDelivery { delivered production } }";
    expect((await graphql(DELIVERY, {}, member)).body.data.emailDelivery).toEqual({
      delivered: false,
      production: false,
    });
    expect(refusal(await graphql(DELIVERY, {}, appToken)).code).toBe("insufficient_scope");
    const production = await startTestServer({ production: true, allowHttp: true, smtpUrl: "smtp://127.0.0.1:2525" });
    try {
      const org = await fakeTenant(production.database.db);
      const user = await createUser(production.database.db, {
        email: `member-${unique(6)}@example.test`,
        password: "long enough password",
        organization: org.slug,
        role: "member",
      });
      const cookie = `${SESSION_COOKIE}=${await createSession(production.database.db, production.config, user.id)}`;
      const answer = await fetch(`${production.url}/admin/graphql/`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, "x-donata-organization": org.slug },
        body: JSON.stringify({ query: DELIVERY }),
      });
      expect(((await answer.json()) as Json).data.emailDelivery).toEqual({ delivered: true, production: true });
    } finally {
      await production.close();
    }
  });

  it("previews a message with sample data in the organization's name, in its language or another", async () => {
    const db = server.database.db;
    const org = await fakeTenant(db);
    const orgMember = await signIn(org.slug, "member");
    const orgOwner = await signIn(org.slug, "owner");
    const saved = await graphql(
      UPDATE_SETTINGS,
      {
        input: {
          email: "hello@example.org",
          logo_url: "https://cdn.example.test/logo.png",
          locale: "it",
          gift_notifications: "off",
        },
      },
      orgOwner,
    );
    expect(saved.body.errors).toBeUndefined();
    const name = (await findOrganizationBySlug(db, org.slug))?.name ?? "";

    const italian = await graphql(PREVIEW, { kind: "donor_sign_in" }, orgMember);
    expect(italian.body.errors).toBeUndefined();
    expect(italian.body.data.emailPreview).toMatchObject({
      kind: "donor_sign_in",
      subject: `Il tuo link di accesso per ${name}`,
      text: expect.stringContaining(`/donor/${org.slug}/`),
    });
    expect(italian.body.data.emailPreview.html).toContain('src="https://cdn.example.test/logo.png"');
    expect(italian.body.data.emailPreview.html).toContain("hello@example.org");
    const english = await graphql(PREVIEW, { kind: "donor_sign_in", locale: "en" }, orgMember);
    expect(english.body.data.emailPreview.subject).toBe(`Your sign-in link for ${name}`);
    // Nothing is queued by a preview.
    expect((await graphql(LIST, {}, orgOwner)).body.data.outboxMessages.count).toBe(0);

    expect(refusal(await graphql(PREVIEW, { kind: "newsletter" }, orgMember))).toMatchObject({
      code: "invalid_request",
      errors: [{ parameter: "kind", message: expect.stringMatching(/^use one of receipt, /) }],
    });
    expect(refusal(await graphql(PREVIEW, { kind: "receipt", locale: "fr" }, orgMember))).toEqual({
      code: "invalid_request",
      message: "Invalid locale: use one of en, it",
      errors: [{ parameter: "locale", message: "use one of en, it" }],
    });
    expect(refusal(await graphql(PREVIEW, { kind: "donor_sign_in" }, appToken))).toEqual({
      message: 'This application was not granted the "organization:read" permission',
      code: "insufficient_scope",
      errors: undefined,
    });
  });

  const auditRows = () => auditRowsOf(server.database.db, tenant.organizationId, ["email_settings.updated"]);

  describe("yearly statements", () => {
    /** A supporter with one payment in the given state on the given date. */
    const giver = async (
      db: Db,
      organizationId: number,
      paymentDate: string,
      options: { email?: string | null; state?: string; eraseDate?: Date } = {},
    ) => {
      const supporter = await fakeSupporter(db, organizationId, {
        ...(options.email !== undefined ? { email: options.email } : {}),
        ...(options.eraseDate ? { eraseDate: options.eraseDate } : {}),
      });
      const campaign = await fakeCampaign(db, organizationId);
      const donation = await fakeDonation(db, organizationId, {
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "done",
      });
      await fakePayment(db, organizationId, {
        donationId: donation.id,
        state: options.state ?? "PAID",
        paymentDate: new Date(paymentDate),
      });
      return supporter;
    };

    const statementsOf = (db: Db, organizationId: number) =>
      db
        .select()
        .from(outboxMessages)
        .where(and(eq(outboxMessages.organizationId, organizationId), eq(outboxMessages.kind, "statement")))
        .orderBy(asc(outboxMessages.supporterId));

    it("queues one statement per supporter who gave in the year (organization's time zone), resumably", async () => {
      const db = server.database.db;
      const org = await fakeTenant(db, { timeZone: "Europe/Rome" });
      const orgOwner = await signIn(org.slug, "owner");
      const year = THIS_YEAR - 1;
      const gave = [
        await giver(db, org.organizationId, `${year}-03-01T10:00:00Z`),
        await giver(db, org.organizationId, `${year}-06-01T10:00:00Z`),
        // 00:30 on 1 January in Rome: still this year's gift there.
        await giver(db, org.organizationId, `${year - 1}-12-31T23:30:00Z`),
        await giver(db, org.organizationId, `${year}-09-01T10:00:00Z`),
      ];
      const noEmail = await giver(db, org.organizationId, `${year}-05-01T10:00:00Z`, { email: null });
      const erased = await giver(db, org.organizationId, `${year}-05-01T10:00:00Z`, { eraseDate: new Date() });
      // Not statements of the year: a failed payment, a gift at 23:30 on 31 December in Rome of the year after, another year.
      await giver(db, org.organizationId, `${year}-05-01T10:00:00Z`, { state: "FAILED" });
      await giver(db, org.organizationId, `${year}-12-31T23:30:00Z`);
      await giver(db, org.organizationId, `${year - 2}-05-01T10:00:00Z`);
      // Another organization's donors are never walked.
      await giver(db, other.organizationId, `${year}-05-01T10:00:00Z`);

      // A run that stopped after its first batch (of 2 supporters, by id) left their statements queued.
      for (const supporter of gave.slice(0, 2)) {
        await enqueueEmail(db, {
          organizationId: org.organizationId,
          kind: "statement",
          to: supporter.email ?? "",
          supporterId: supporter.id,
          data: { year },
          dedupeKey: `statement:${year}:${supporter.id}`,
        });
      }

      const resumed = await graphql(SEND_STATEMENTS, { year }, orgOwner);
      expect(resumed.body.errors).toBeUndefined();
      expect(resumed.body.data.sendStatements).toEqual({
        year,
        supporters: 6,
        queued: 2,
        already_sent: 2,
        skipped_no_email: 2,
      });
      const again = await graphql(SEND_STATEMENTS, { year }, orgOwner);
      expect(again.body.data.sendStatements).toEqual({
        year,
        supporters: 6,
        queued: 0,
        already_sent: 4,
        skipped_no_email: 2,
      });

      const rows = await statementsOf(db, org.organizationId);
      expect(rows.map((row) => [row.supporterId, row.toAddress, row.data, row.dedupeKey, row.state])).toEqual(
        gave.map((supporter) => [
          supporter.id,
          supporter.email,
          { year },
          `statement:${year}:${supporter.id}`,
          "queued",
        ]),
      );
      // Each is a real statement once delivered: captured here (no SMTP_URL), with the year's subject.
      expect(await flushOutbox(server, org.organizationId)).toMatchObject({ captured: 4, failed: 0 });
      const delivered = await statementsOf(db, org.organizationId);
      const orgName = (await findOrganizationBySlug(db, org.slug))?.name;
      expect(delivered.map((row) => [row.state, row.subject])).toEqual(
        gave.map(() => ["captured", `Your ${year} statement of donations to ${orgName}`]),
      );
      expect(rows.map((row) => row.supporterId)).not.toContain(noEmail.id);
      expect(rows.map((row) => row.supporterId)).not.toContain(erased.id);
      expect(await statementsOf(db, other.organizationId)).toEqual([]);

      const [audit] = await auditRowsOf(db, org.organizationId, ["statements.sent"]);
      expect(audit).toMatchObject({
        actor: { type: "user", label: orgOwner.email },
        data: { year, supporters: 6, queued: 2, already_sent: 2, skipped_no_email: 2 },
      });
    });

    it("walks more supporters in one request than the GraphQL statement budget would allow one by one", async () => {
      const db = server.database.db;
      const org = await fakeTenant(db);
      const orgOwner = await signIn(org.slug, "owner");
      const year = THIS_YEAR - 1;
      const count = 1_050;
      const campaign = await fakeCampaign(db, org.organizationId);
      const people = await db
        .insert(supporters)
        .values(
          Array.from({ length: count }, (_, index) => ({
            organizationId: org.organizationId,
            email: `giver-${index}-${unique(4)}@example.test`,
          })),
        )
        .returning({ id: supporters.id });
      const gifts = await db
        .insert(donations)
        .values(
          people.map((person, index) => ({
            organizationId: org.organizationId,
            code: `don-${index}-${unique(8)}`,
            supporterId: person.id,
            campaignId: campaign.id,
            state: "done",
            amount: 10,
            currency: "EUR",
            frequency: 0,
          })),
        )
        .returning({ id: donations.id });
      await db.insert(payments).values(
        gifts.map((gift) => ({
          organizationId: org.organizationId,
          donationId: gift.id,
          state: "PAID",
          amount: 10,
          currency: "EUR",
          paymentDate: new Date(`${year}-04-01T10:00:00Z`),
        })),
      );
      const answer = await graphql(SEND_STATEMENTS, { year }, orgOwner);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.sendStatements).toEqual({
        year,
        supporters: count,
        queued: count,
        already_sent: 0,
        skipped_no_email: 0,
      });
      expect(await statementsOf(db, org.organizationId)).toHaveLength(count);
    });

    it("refuses a year before 2000 or after the current one", async () => {
      for (const year of [1999, THIS_YEAR + 1, -5]) {
        const answer = await graphql(SEND_STATEMENTS, { year }, owner);
        const last = Number(new Intl.DateTimeFormat("en", { year: "numeric", timeZone: "UTC" }).format(new Date()));
        expect(refusal(answer)).toEqual({
          message: `Invalid year: use a year from 2000 to ${last}`,
          code: "invalid_request",
          errors: [{ field: "year", message: `use a year from 2000 to ${last}` }],
        });
      }
    });

    describe("donata statements send", () => {
      const children = new Set<ChildProcess>();
      let dataDir = "";
      let slug = "";

      const target = (): Record<string, string> => {
        const url = testDatabaseUrl();
        return url ? { DATABASE_URL: url } : { DATA_DIR: dataDir };
      };
      const runCli = (...args: string[]) => runDonataCli(args, target(), { children });

      /** The CLI's database in this process (PGlite: only while no CLI process has it open). */
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
        dataDir = await mkdtemp(path.join(os.tmpdir(), "donata-statements-"));
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

      it("queues the statements of a year once, resumes, and refuses bad arguments", async () => {
        const year = THIS_YEAR - 1;
        const supporters = await withCliDatabase(async (db) => {
          const organization = await findOrganizationBySlug(db, slug);
          const id = organization?.id ?? 0;
          await updateOrganizationColumns(db, id, { email: "gifts@example.org" });
          return [
            await giver(db, id, `${year}-02-01T10:00:00Z`),
            await giver(db, id, `${year}-03-01T10:00:00Z`),
            await giver(db, id, `${year}-04-01T10:00:00Z`),
            await giver(db, id, `${year}-04-01T10:00:00Z`, { email: null }),
          ];
        });
        const first = await runCli("statements", "send", "--org", slug, "--year", String(year), "--batch-size", "2");
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout).toBe(
          `Statements ${year} for ${slug}: 3 queued, 0 already sent, 1 without an email (4 supporters gave in ${year})\n`,
        );
        const second = await runCli("statements", "send", "--org", slug, "--year", String(year), "--json");
        expect(second.code, second.stderr).toBe(0);
        expect(JSON.parse(second.stdout)).toEqual({
          organization: slug,
          year,
          supporters: 4,
          queued: 0,
          already_sent: 3,
          skipped_no_email: 1,
        });
        const rows = await withCliDatabase(async (db) => {
          const id = (await findOrganizationBySlug(db, slug))?.id ?? 0;
          return {
            statements: await statementsOf(db, id),
            audits: await auditRowsOf(db, id, ["statements.sent"]),
          };
        });
        expect(rows.statements.map((row) => row.supporterId)).toEqual(supporters.slice(0, 3).map((s) => s.id));
        expect(rows.audits.map((audit) => [audit.actor, audit.type])).toEqual([
          [{ type: "system", label: "cli" }, "statements.sent"],
          [{ type: "system", label: "cli" }, "statements.sent"],
        ]);

        const early = await runCli("statements", "send", "--org", slug, "--year", "1999");
        expect(early.code).toBe(1);
        expect(early.stderr).toBe(`donata statements send: Invalid year: use a year from 2000 to ${THIS_YEAR}\n`);
        const word = await runCli("statements", "send", "--org", slug, "--year", "last");
        expect(word.code).toBe(2);
        expect(word.stderr).toContain('--year must be a four-digit year, not "last"');
        const noOrg = await runCli("statements", "send", "--year", String(year));
        expect(noOrg.code).toBe(2);
        expect(noOrg.stderr).toContain("--org is required");
        const unknown = await runCli("statements", "send", "--org", `nope-${unique(6)}`, "--year", String(year));
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(/^donata statements send: No organization with slug "nope-[0-9a-f]{6}"\n$/);
      }, 240_000);
    });
  });
});
