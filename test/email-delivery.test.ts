import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { organizations, outboxMessages } from "../src/db/schema.js";
import { enqueueEmail, findMessage } from "../src/email/outbox.repo.js";
import { renderDepsOf } from "../src/email/render.js";
import { createMailer } from "../src/email/transport.js";
import { deliverOutbox, MAX_DELIVERY_ATTEMPTS } from "../src/jobs/email.job.js";
import { fakeCampaign, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { flushOutbox, linksOf, startSmtpServer, type TestSmtpServer } from "./helpers/smtp.js";

const MINUTE = 60_000;

/** The outbox and its delivery, against a real SMTP server (smtp-server) and a real database. */
describe("email delivery", () => {
  let smtp: TestSmtpServer;
  let server: TestServer;
  let tenant: Tenant;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    server = await startTestServer({ smtpUrl: smtp.url, mailFrom: "donations@donata.test" });
    tenant = await fakeTenant(server.database.db);
    await server.database.db
      .update(organizations)
      .set({ email: "hello@charity.test" })
      .where(eq(organizations.id, tenant.organizationId));
  });

  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  const signInLink = () => `${server.url}/donor/${tenant.slug}/enter?token=${unique(20)}`;
  const enqueue = async (to: string, data: Record<string, unknown> = { url: signInLink() }, dedupeKey?: string) =>
    server.database.db.transaction((tx) =>
      enqueueEmail(tx, { organizationId: tenant.organizationId, kind: "donor_sign_in", to, data, dedupeKey }),
    );
  const row = async (id: number | null) => {
    const found = await findMessage(server.database.db, tenant.organizationId, id as number);
    if (!found) throw new Error(`no outbox message ${id}`);
    return found;
  };

  it("sends a committed message once, with both parts, the organization as sender and automatic-mail headers", async () => {
    const to = `donor-${unique()}@example.test`;
    const data = { url: signInLink() };
    const id = await enqueue(to, data);
    const result = await flushOutbox(server, tenant.organizationId);
    expect(result).toMatchObject({ sent: 1, failed: 0, retried: 0 });
    const [mail, ...more] = smtp.to(to);
    expect(more).toEqual([]);
    expect(mail?.subject).toBe(`Your sign-in link for ${await orgName()}`);
    expect(mail?.from?.value).toEqual([{ address: "donations@donata.test", name: await orgName() }]);
    expect(mail?.replyTo?.value).toEqual([{ address: "hello@charity.test", name: "" }]);
    expect(mail?.headers.get("auto-submitted")).toBe("auto-generated");
    expect(mail?.headers.has("list-unsubscribe")).toBe(false);
    expect(mail?.messageId).toBe(`<outbox.${tenant.organizationId}.${id}@127.0.0.1>`);
    expect(linksOf(mail?.html)).toEqual([data.url]);
    expect(mail?.text).toContain(data.url);
    expect(mail?.text).toContain("The link works once, for 15 minutes.");
    const stored = await row(id);
    expect(stored).toMatchObject({ state: "sent", attempts: 1, lastError: null, messageId: mail?.messageId });
    expect(stored.html).toBe(mail?.html);
    // A second pass finds nothing to do: sent once.
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ sent: 0 });
    expect(smtp.to(to)).toHaveLength(1);
  });

  /** The donor portal tokens a stored message holds (row and bodies), and those of them that still sign in. */
  const usableTokens = async (id: number) => {
    const stored = JSON.stringify(await row(id));
    const usable: string[] = [];
    for (const token of new Set(stored.match(/dnt_dl_[A-Za-z0-9_-]+/g) ?? [])) {
      const entered = await fetch(`${server.url}/donor/${tenant.slug}/enter?token=${token}`, { redirect: "manual" });
      if (entered.status !== 410) usable.push(token);
    }
    return usable;
  };

  /** The message of this kind queued for an address (the sign-in form queues it once it has answered). */
  const queuedFor = async (to: string, kind: string) => {
    for (let wait = 0; wait < 100; wait++) {
      const [found] = await server.database.db
        .select({ id: outboxMessages.id })
        .from(outboxMessages)
        .where(
          and(
            eq(outboxMessages.organizationId, tenant.organizationId),
            eq(outboxMessages.toAddress, to),
            eq(outboxMessages.kind, kind),
          ),
        );
      if (found) return found.id;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${kind} message queued for ${to}`);
  };

  const portalLinkOf = (html: string | false | undefined) =>
    linksOf(html).find((link) => link.startsWith(`${server.url}/donor/${tenant.slug}/enter?token=`)) as string;

  it("keeps no usable sign-in or receipt link in the Outbox, whatever the delivery outcome; each attempt mails a link of its own", async () => {
    const db = server.database.db;
    const askForLink = (email: string) =>
      fetch(`${server.url}/donor/${tenant.slug}/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email }).toString(),
      });

    // Refused for now: the message waits in the queue with no link that works.
    const held = (await fakeSupporter(db, tenant.organizationId)).email as string;
    expect((await askForLink(held)).status).toBe(200);
    const heldId = await queuedFor(held, "donor_sign_in");
    smtp.failNext(451);
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ retried: 1, sent: 0 });
    expect(await row(heldId)).toMatchObject({ state: "queued", attempts: 1 });
    expect(await usableTokens(heldId)).toEqual([]);
    expect((await row(heldId)).text).toContain(`/donor/${tenant.slug}/enter?token=dnt_dl_redacted`);
    // The next attempt mails a link minted for it, which works; the Outbox still has none.
    expect(await flushOutbox(server, tenant.organizationId, { now: new Date(Date.now() + 2 * MINUTE) })).toMatchObject({
      sent: 1,
    });
    const link = portalLinkOf(smtp.to(held)[0]?.html);
    expect(link).toMatch(/enter\?token=dnt_dl_(?!redacted)/);
    expect((await fetch(link, { redirect: "manual" })).status).toBe(303);
    expect(await usableTokens(heldId)).toEqual([]);

    // Refused for good: failed, with no link that works.
    const bounced = (await fakeSupporter(db, tenant.organizationId)).email as string;
    await askForLink(bounced);
    const bouncedId = await queuedFor(bounced, "donor_sign_in");
    smtp.failNext(550);
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ failed: 1 });
    expect(await row(bouncedId)).toMatchObject({ state: "failed" });
    expect(await usableTokens(bouncedId)).toEqual([]);

    // A receipt's portal link: the same.
    const campaign = await fakeCampaign(db, tenant.organizationId, {
      hasOneOff: true,
      allowCustomAmount: true,
      shownFields: ["first_name", "email"],
      requiredFields: ["email"],
      archiveDate: null,
    });
    const giver = `giver-${unique()}@example.test`;
    const started = await (
      await fetch(`${server.url}/api/v1/public/organizations/${tenant.slug}/campaigns/${campaign.slug}/checkouts/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })
    ).json();
    const completed = await fetch(
      `${server.url}/api/v1/public/organizations/${tenant.slug}/checkouts/${started.id}/complete`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_secret: started.client_secret,
          amount: 20,
          frequency: 0,
          processor: "sandbox",
          card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
          supporter: { first_name: "Ada", email: giver },
          consents: { privacy: true },
        }),
      },
    );
    expect(completed.status).toBe(200);
    const receiptId = await queuedFor(giver, "receipt");
    smtp.failNext(451);
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ retried: 1 });
    expect(await usableTokens(receiptId)).toEqual([]);
    expect(await flushOutbox(server, tenant.organizationId, { now: new Date(Date.now() + 2 * MINUTE) })).toMatchObject({
      sent: 1,
    });
    const receiptLink = portalLinkOf(smtp.to(giver)[0]?.html);
    expect((await fetch(receiptLink, { redirect: "manual" })).status).toBe(303);
    expect(await usableTokens(receiptId)).toEqual([]);
  });

  it("sends nothing for a transaction that rolled back", async () => {
    const to = `rolled-back-${unique()}@example.test`;
    await expect(
      server.database.db.transaction(async (tx) => {
        await enqueueEmail(tx, {
          organizationId: tenant.organizationId,
          kind: "donor_sign_in",
          to,
          data: { url: signInLink() },
        });
        throw new Error("the event failed");
      }),
    ).rejects.toThrow("the event failed");
    await flushOutbox(server, tenant.organizationId);
    expect(smtp.to(to)).toEqual([]);
    const rows = await server.database.db.select().from(outboxMessages).where(eq(outboxMessages.toAddress, to));
    expect(rows).toEqual([]);
  });

  it("enqueues one message per dedupe key", async () => {
    const to = `dedupe-${unique()}@example.test`;
    const key = `test:${unique()}`;
    expect(await enqueue(to, undefined, key)).toEqual(expect.any(Number));
    expect(await enqueue(to, undefined, key)).toBeNull();
    await flushOutbox(server, tenant.organizationId);
    expect(smtp.to(to)).toHaveLength(1);
  });

  it("retries with backoff while the server refuses for now, then sends the same message once", async () => {
    const to = `retry-${unique()}@example.test`;
    const id = await enqueue(to);
    smtp.failNext(451, 2);
    const start = new Date();
    expect(await flushOutbox(server, tenant.organizationId, { now: start })).toMatchObject({ retried: 1, sent: 0 });
    const first = await row(id);
    expect(first).toMatchObject({ state: "queued", attempts: 1 });
    expect(first.lastError).toContain("4.3.0 Try again later");
    expect(first.nextAttemptDate.getTime()).toBe(start.getTime() + MINUTE);
    // Not before its time.
    await flushOutbox(server, tenant.organizationId, { now: new Date(start.getTime() + 30_000) });
    expect((await row(id)).attempts).toBe(1);
    const second = new Date(start.getTime() + MINUTE);
    expect(await flushOutbox(server, tenant.organizationId, { now: second })).toMatchObject({ retried: 1 });
    expect((await row(id)).nextAttemptDate.getTime()).toBe(second.getTime() + 5 * MINUTE);
    expect(smtp.to(to)).toEqual([]);
    const third = new Date(second.getTime() + 5 * MINUTE);
    expect(await flushOutbox(server, tenant.organizationId, { now: third })).toMatchObject({ sent: 1 });
    const [mail, ...more] = smtp.to(to);
    expect(more).toEqual([]);
    expect(mail?.messageId).toBe(`<outbox.${tenant.organizationId}.${id}@127.0.0.1>`);
    expect(await row(id)).toMatchObject({ state: "sent", attempts: 3, lastError: null });
  });

  it("fails a message the server refuses for good (5xx) at once, with the server's answer, and never retries it", async () => {
    const to = `bounce-${unique()}@example.test`;
    const id = await enqueue(to);
    smtp.failNext(550, 1, "5.1.1 <nobody@example.test>: Recipient address rejected");
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ failed: 1 });
    const failed = await row(id);
    expect(failed).toMatchObject({ state: "failed", attempts: 1 });
    expect(failed.lastError).toContain("550 5.1.1 <nobody@example.test>: Recipient address rejected");
    await flushOutbox(server, tenant.organizationId, { now: new Date(Date.now() + 7 * 86_400_000) });
    expect(smtp.to(to)).toEqual([]);
    expect((await row(id)).attempts).toBe(1);
  });

  it("gives up after the last attempt when the server keeps refusing for now", async () => {
    const to = `gives-up-${unique()}@example.test`;
    const id = await enqueue(to);
    smtp.failNext(421, MAX_DELIVERY_ATTEMPTS);
    let now = new Date();
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      await flushOutbox(server, tenant.organizationId, { now });
      now = new Date(now.getTime() + 2 * 86_400_000);
    }
    expect(await row(id)).toMatchObject({ state: "failed", attempts: MAX_DELIVERY_ATTEMPTS });
    await flushOutbox(server, tenant.organizationId, { now });
    expect(smtp.to(to)).toEqual([]);
  });

  it("keeps a message queued while the SMTP server cannot be reached", async () => {
    const port = await closedPort();
    const to = `unreachable-${unique()}@example.test`;
    const id = await enqueue(to);
    const mailer = createMailer(`smtp://127.0.0.1:${port}`);
    try {
      const result = await deliverOutbox(
        server.database.db,
        { mailer, render: renderDepsOf(server.config) },
        { organizationIds: [tenant.organizationId] },
      );
      expect(result).toMatchObject({ retried: 1, failed: 0 });
    } finally {
      mailer.close();
    }
    const queued = await row(id);
    expect(queued.state).toBe("queued");
    expect(queued.lastError).toMatch(/ECONNREFUSED|connect/i);
    await flushOutbox(server, tenant.organizationId, { now: new Date(Date.now() + 2 * MINUTE) });
    expect(smtp.to(to)).toHaveLength(1);
  });

  it("delivers again a message whose delivery was cut off, once its lease ran out", async () => {
    const to = `lease-${unique()}@example.test`;
    const id = await enqueue(to);
    // What a process that died after claiming leaves behind: "sending", leased for 5 minutes.
    await server.database.db
      .update(outboxMessages)
      .set({ state: "sending", attempts: 1, nextAttemptDate: new Date(Date.now() + 5 * MINUTE) })
      .where(and(eq(outboxMessages.organizationId, tenant.organizationId), eq(outboxMessages.id, id as number)));
    await flushOutbox(server, tenant.organizationId);
    expect(smtp.to(to)).toEqual([]);
    await flushOutbox(server, tenant.organizationId, { now: new Date(Date.now() + 6 * MINUTE) });
    expect(smtp.to(to)).toHaveLength(1);
    expect(await row(id)).toMatchObject({ state: "sent", attempts: 2 });
  });

  it("cancels a message whose data is gone, and fails one whose template cannot render", async () => {
    const gone = await enqueue(`gone-${unique()}@example.test`, {});
    await flushOutbox(server, tenant.organizationId);
    expect(await row(gone)).toMatchObject({ state: "cancelled" });
    const broken = await server.database.db.transaction((tx) =>
      enqueueEmail(tx, {
        organizationId: tenant.organizationId,
        kind: "no_such_kind" as "donor_sign_in",
        to: `broken-${unique()}@example.test`,
      }),
    );
    expect(await flushOutbox(server, tenant.organizationId)).toMatchObject({ failed: 1 });
    expect((await row(broken)).lastError).toMatch(/^Rendering failed: /);
  });

  it("writes in the organization's language", async () => {
    const italian = await fakeTenant(server.database.db);
    await server.database.db
      .update(organizations)
      .set({ locale: "it" })
      .where(eq(organizations.id, italian.organizationId));
    const to = `italiano-${unique()}@example.test`;
    await server.database.db.transaction((tx) =>
      enqueueEmail(tx, {
        organizationId: italian.organizationId,
        kind: "donor_sign_in",
        to,
        data: { url: `${server.url}/donor/${italian.slug}/enter?token=x` },
      }),
    );
    await flushOutbox(server, italian.organizationId);
    const [mail] = smtp.to(to);
    expect(mail?.subject).toMatch(/^Il tuo link di accesso per /);
    expect(mail?.html).toContain('lang="it"');
    expect(mail?.text).toContain("Il link funziona una sola volta, per 15 minuti.");
  });

  it("shares the outbox between workers: each message is delivered once", async () => {
    const tos = Array.from({ length: 12 }, () => `shared-${randomUUID()}@example.test`);
    for (const to of tos) await enqueue(to);
    await Promise.all([
      flushOutbox(server, tenant.organizationId),
      flushOutbox(server, tenant.organizationId),
      flushOutbox(server, tenant.organizationId),
    ]);
    for (const to of tos) expect(smtp.to(to)).toHaveLength(1);
  });

  async function orgName() {
    const [org] = await server.database.db
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, tenant.organizationId));
    return org?.name;
  }
});

describe("email without SMTP_URL", () => {
  let server: TestServer;
  let tenant: Tenant;

  beforeAll(async () => {
    server = await startTestServer({ smtpUrl: undefined });
    tenant = await fakeTenant(server.database.db);
  });

  afterAll(async () => {
    await server?.close();
  });

  it("keeps messages as captured, rendered, with their headers", async () => {
    // Captured, the message is the only copy: its link stays usable (an instance without SMTP sends no mail).
    const url = `${server.url}/donor/${tenant.slug}/enter?token=dnt_dl_${unique(32)}`;
    const id = await server.database.db.transaction((tx) =>
      enqueueEmail(tx, {
        organizationId: tenant.organizationId,
        kind: "donor_sign_in",
        to: "a@example.test",
        data: { url },
      }),
    );
    const flushed = await flushOutbox(server, tenant.organizationId);

    expect(flushed).toMatchObject({ captured: 1, sent: 0 });
    const row = await findMessage(server.database.db, tenant.organizationId, id as number);
    expect(row).toMatchObject({ state: "captured", attempts: 1 });
    expect(row?.subject).toMatch(/^Your sign-in link for /);
    expect(linksOf(row?.html)).toEqual([url]);
    expect(row?.text).toContain(url);
    expect(row?.headers).toMatchObject({ "Auto-Submitted": "auto-generated", "X-Donata-Message": "donor_sign_in" });
  });
});

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("email configuration", () => {
  it("takes smtp:// and smtps:// URLs and a bare From address, and refuses anything else by name", () => {
    expect(loadConfig({})).toMatchObject({
      smtpUrl: undefined,
      mailFrom: "no-reply@localhost",
      mailIntervalSeconds: 5,
    });
    expect(
      loadConfig({ SMTP_URL: "smtps://user:pass@mail.example.org:465", MAIL_FROM: "gifts@example.org" }),
    ).toMatchObject({ smtpUrl: "smtps://user:pass@mail.example.org:465", mailFrom: "gifts@example.org" });
    expect(() => loadConfig({ SMTP_URL: "http://mail.example.org" })).toThrow(
      new ConfigError('SMTP_URL must start with smtp:// or smtps://, got "http://"'),
    );
    expect(() => loadConfig({ SMTP_URL: "mail.example.org:25" })).toThrow(ConfigError);
    expect(() => loadConfig({ MAIL_FROM: "Gifts <gifts@example.org>" })).toThrow(
      new ConfigError(
        'MAIL_FROM must be a bare email address such as donations@example.org, got "Gifts <gifts@example.org>"',
      ),
    );
    expect(() => loadConfig({ MAIL_INTERVAL: "0" })).toThrow(ConfigError);
  });
});
