import { and, asc, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkouts,
  consentRecords,
  donations,
  events,
  payments,
  receipts,
  supporterNotes,
  supporters,
} from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { summarize } from "../src/modules/audit/audit.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import {
  fakeCampaign,
  fakeCheckout,
  fakeDonation,
  fakePayment,
  fakeSupporter,
  fakeTenant,
  type Tenant,
  unique,
} from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;

const PREVIEW = `query ($kept: ID!, $merged: ID!) { supporterMergePreview(kept_id: $kept, merged_id: $merged) {
  kept { id } merged { id } result { id email phone city tags email_marketing sms_marketing }
  consents { consent kept merged result from } differences { field kept merged } } }`;
const MERGE = `mutation ($kept: ID!, $merged: ID!) { mergeSupporters(kept_id: $kept, merged_id: $merged) {
  merged_id supporter { id email phone city tags email_marketing sms_marketing } } }`;
const POINTER = `query ($id: ID!) { supporterMerge(id: $id) { merged_id kept_id merge_date } }`;

/**
 * Merging two records of one person through the real server (GraphQL, and REST for what applications
 * see): a preview that writes nothing; then gifts, payments, checkouts, consent records and notes move,
 * blank fields are filled, tags join, each consent is the most recently updated record's, what differed
 * is kept as a note; the merged id answers 404 naming the kept one; one `supporter.merged` event.
 */
describe("merging supporters", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;

  const graphql = async (
    query: string,
    variables: Record<string, unknown>,
    auth: { token?: string; cookie?: string },
  ) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie, "x-donata-organization": tenant.slug } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    expect(response.status).toBeLessThan(500);
    return (await response.json()) as Json;
  };
  const ok = async (query: string, variables: Record<string, unknown>, token = tenant.token) => {
    const answer = await graphql(query, variables, { token });
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data;
  };
  const refusal = async (
    query: string,
    variables: Record<string, unknown>,
    auth: { token?: string; cookie?: string },
  ) => {
    const answer = await graphql(query, variables, auth);
    expect(answer.errors, JSON.stringify(answer)).toHaveLength(1);
    return answer.errors[0] as { message: string; extensions: { code: string } };
  };
  const countOf = async () => (await server.get("/api/v1/supporters/?limit=1", tenant.token)).body.count as number;

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
  });
  afterAll(() => server?.close());

  /** Two records of one person, with gifts, a checkout, consents and a note each. */
  async function twoRecords() {
    const { db } = server.database;
    const organizationId = tenant.organizationId;
    const campaign = await fakeCampaign(db, organizationId);
    // The same person: what the factory would pick at random is the same on both records.
    const person = { sex: "FEMALE", dateOfBirth: "1980-05-17", country: "IT", privacy: true } as const;
    const kept = await fakeSupporter(db, organizationId, {
      ...person,
      firstName: "Anna",
      lastName: "Neri",
      email: `anna.${unique()}@example.org`,
      phone: null,
      city: null,
      tags: ["volunteer"],
      emailMarketing: true,
      smsMarketing: null,
      externalId: null,
      updateDate: new Date("2025-01-01T00:00:00Z"),
    });
    const merged = await fakeSupporter(db, organizationId, {
      ...person,
      firstName: "Anna",
      lastName: "Neri",
      email: `a.neri.${unique()}@example.org`,
      phone: "+39 333 1234567",
      city: "Roma",
      tags: ["monthly", "volunteer"],
      emailMarketing: false,
      smsMarketing: true,
      externalId: `GB-${unique()}`,
      updateDate: new Date("2026-03-01T00:00:00Z"),
    });
    const owned = async (supporterId: number) => {
      const donation = await fakeDonation(db, organizationId, { supporterId, campaignId: campaign.id, state: "done" });
      const payment = await fakePayment(db, organizationId, { donationId: donation.id, state: "PAID" });
      const checkout = await fakeCheckout(db, organizationId, { supporterId, campaignId: campaign.id });
      await db.insert(consentRecords).values({
        organizationId,
        supporterId,
        donationId: donation.id,
        source: "checkout",
        consents: { email_marketing: true },
        applied: false,
      });
      await db
        .insert(supporterNotes)
        .values({ organizationId, supporterId, authorName: "Carla", body: `About ${supporterId}` });
      return { donation, payment, checkout };
    };
    return { kept, merged, keptOwns: await owned(kept.id), mergedOwns: await owned(merged.id) };
  }

  it("previews a merge without writing anything, then merges: everything moves, the merged id points to the kept one", async () => {
    const { db } = server.database;
    const { kept, merged, mergedOwns } = await twoRecords();
    const before = await countOf();

    const preview = (await ok(PREVIEW, { kept: kept.id, merged: merged.id })).supporterMergePreview;
    expect(preview.kept.id).toBe(kept.id);
    expect(preview.merged.id).toBe(merged.id);
    // Blank fields filled, tags joined; the kept email stays, the merged one is a difference.
    expect(preview.result).toMatchObject({
      id: kept.id,
      email: kept.email,
      phone: "+39 333 1234567",
      city: "Roma",
      tags: ["volunteer", "monthly"],
    });
    expect(preview.differences).toEqual([{ field: "email", kept: kept.email, merged: merged.email }]);
    // The merged record was updated last: its consents win where both said one.
    expect(preview.consents.find((row: Json) => row.consent === "email_marketing")).toEqual({
      consent: "email_marketing",
      kept: true,
      merged: false,
      result: false,
      from: "merged",
    });
    expect(preview.consents.find((row: Json) => row.consent === "sms_marketing")).toEqual({
      consent: "sms_marketing",
      kept: null,
      merged: true,
      result: true,
      from: "merged",
    });
    expect(preview.result).toMatchObject({ email_marketing: false, sms_marketing: true });
    // Nothing written by the preview.
    expect((await server.get(`/api/v1/supporters/${merged.id}`, tenant.token)).status).toBe(200);
    expect(await countOf()).toBe(before);

    const eventsBefore = await db
      .select({ seq: events.seq })
      .from(events)
      .where(eq(events.organizationId, tenant.organizationId));
    const result = (await ok(MERGE, { kept: kept.id, merged: merged.id })).mergeSupporters;
    expect(result.merged_id).toBe(merged.id);
    expect(result.supporter).toEqual(preview.result);

    // The merged id answers 404, saying where the record went; the pointer is in GraphQL too.
    const gone = await server.get(`/api/v1/supporters/${merged.id}`, tenant.token);
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toBe(`Supporter not found: it was merged into supporter ${kept.id}`);
    const pointer = (await ok(POINTER, { id: merged.id })).supporterMerge;
    expect(pointer).toMatchObject({ merged_id: merged.id, kept_id: kept.id });
    expect((await ok(POINTER, { id: kept.id })).supporterMerge).toBeNull();
    expect(await countOf()).toBe(before - 1);

    // Everything of the merged record is the kept one's now.
    const scope = (table: typeof donations | typeof checkouts | typeof consentRecords | typeof supporterNotes) =>
      and(eq(table.organizationId, tenant.organizationId), inArray(table.supporterId, [kept.id, merged.id]));
    const donationRows = await db.select().from(donations).where(scope(donations));
    expect(donationRows.map((row) => row.supporterId)).toEqual([kept.id, kept.id]);
    expect(donationRows.map((row) => row.id)).toContain(mergedOwns.donation.id);
    expect((await db.select().from(checkouts).where(scope(checkouts))).map((row) => row.supporterId)).toEqual([
      kept.id,
      kept.id,
    ]);
    expect((await db.select().from(consentRecords).where(scope(consentRecords))).map((row) => row.supporterId)).toEqual(
      [kept.id, kept.id],
    );
    const [payment] = await db
      .select()
      .from(payments)
      .where(and(eq(payments.organizationId, tenant.organizationId), eq(payments.id, mergedOwns.payment.id)));
    expect(payment?.donationId).toBe(mergedOwns.donation.id);
    const notes = await db.select().from(supporterNotes).where(scope(supporterNotes)).orderBy(asc(supporterNotes.id));
    expect(notes.map((note) => [note.supporterId, note.body])).toEqual([
      [kept.id, `About ${kept.id}`],
      [kept.id, `About ${merged.id}`],
      [kept.id, `Merged from supporter ${merged.id} (${merged.code}), who also had:\nemail: ${merged.email}`],
    ]);
    const [row] = await db
      .select()
      .from(supporters)
      .where(and(eq(supporters.organizationId, tenant.organizationId), eq(supporters.id, kept.id)));
    expect(row?.externalId).toBe(merged.externalId);

    // One event, with the merged id among its changes; the audit log says it in a sentence.
    const written = (
      await db.select().from(events).where(eq(events.organizationId, tenant.organizationId)).orderBy(asc(events.seq))
    ).slice(eventsBefore.length);
    expect(written.map((event) => event.type)).toEqual(["supporter.merged"]);
    expect(written[0]?.resourceId).toBe(kept.id);
    expect(written[0]?.changes).toMatchObject({
      merged_id: { before: null, after: merged.id },
      phone: { before: null, after: "+39 333 1234567" },
      email_marketing: { before: true, after: false },
    });
    expect(summarize(written[0] as never, "en")).toMatch(
      new RegExp(`^Merged supporter #${merged.id} into supporter #${kept.id}: `),
    );
    expect(summarize(written[0] as never, "it")).toMatch(
      new RegExp(`^Unito il sostenitore n. ${merged.id} al sostenitore n. ${kept.id}`),
    );

    // Merged again into a third record: the first pointer follows.
    const third = await fakeSupporter(db, tenant.organizationId, { email: `third.${unique()}@example.org` });
    await ok(MERGE, { kept: third.id, merged: kept.id });
    expect((await ok(POINTER, { id: merged.id })).supporterMerge.kept_id).toBe(third.id);
    expect((await ok(POINTER, { id: kept.id })).supporterMerge.kept_id).toBe(third.id);
  });

  it("refuses a merge into itself, of an erased record, across organizations, by a member, and over two statements of one year", async () => {
    const { db } = server.database;
    const { kept, merged } = await twoRecords();
    expect((await refusal(MERGE, { kept: kept.id, merged: kept.id }, { token: tenant.token })).extensions.code).toBe(
      "invalid_request",
    );
    const foreign = await fakeSupporter(db, other.organizationId);
    for (const pair of [
      { kept: kept.id, merged: foreign.id },
      { kept: foreign.id, merged: kept.id },
    ]) {
      const refused = await refusal(MERGE, pair, { token: tenant.token });
      expect(refused).toMatchObject({ message: "Supporter not found", extensions: { code: "not_found" } });
    }
    expect((await refusal(MERGE, { kept: kept.id, merged: foreign.id }, { token: other.token })).extensions.code).toBe(
      "not_found",
    );

    const email = `member-${unique(6)}@example.test`;
    const user = await createUser(db, {
      email,
      password: "long enough password",
      organization: tenant.slug,
      role: "member",
    });
    const cookie = `${SESSION_COOKIE}=${await createSession(db, server.config, user.id)}`;
    expect((await refusal(MERGE, { kept: kept.id, merged: merged.id }, { cookie })).extensions.code).toBe(
      "insufficient_scope",
    );

    const statement = (supporterId: number, number: number) => ({
      organizationId: tenant.organizationId,
      kind: "statement",
      year: 2025,
      number,
      supporterId,
      amount: 10,
      currency: "EUR",
      giftDate: new Date("2025-12-31T23:00:00Z"),
      traceable: true,
      organization: {},
      donor: {},
      legalText: "",
      locale: "en",
    });
    await db.insert(receipts).values([statement(kept.id, 900_001), statement(merged.id, 900_002)]);
    const conflict = await refusal(MERGE, { kept: kept.id, merged: merged.id }, { token: tenant.token });
    expect(conflict.extensions.code).toBe("merge_refused");
    expect(conflict.message).toMatch(/yearly statement for 2025/);

    const erased = await fakeSupporter(db, tenant.organizationId, { eraseDate: new Date() });
    expect(
      (await refusal(PREVIEW, { kept: erased.id, merged: kept.id }, { token: tenant.token })).extensions.code,
    ).toBe("supporter_erased");
    // Nothing moved by any refusal.
    expect((await server.get(`/api/v1/supporters/${merged.id}`, tenant.token)).status).toBe(200);
  });
});
