import { parse } from "csv-parse/sync";
import { and, eq, like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, segments } from "../src/db/schema.js";
import { ERROR_STATUS } from "../src/errors/error-codes.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import {
  fakeCampaign,
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
type Auth = { cookie?: string; token?: string; organization?: string; language?: string };
type Member = Auth & { userId: number; email: string };
type Filter = { name: string; value: string };

const FIELDS = "id collection name filters { name value } created_by create_date update_date can_change";
const LIST = `query ($collection: String!) { segments(collection: $collection) { ${FIELDS} } }`;
const CREATE = `mutation ($collection: String!, $name: String!, $filters: [SegmentFilterInput!]!) {
  createSegment(collection: $collection, name: $name, filters: $filters) { ${FIELDS} }
}`;
const UPDATE = `mutation ($id: ID!, $name: String, $filters: [SegmentFilterInput!]) {
  updateSegment(id: $id, name: $name, filters: $filters) { ${FIELDS} }
}`;
const DELETE = `mutation ($id: ID!) { deleteSegment(id: $id) { ${FIELDS} } }`;

/**
 * Saved segments through the real server's GraphQL: any member saves a named set of a table's
 * filters, exactly as the table's URL carries them; its creator, an owner or an admin renames,
 * changes or deletes it; an unknown filter or a value the list refuses is a field error that saves
 * nothing; a name is unique per table in any case; another organization's segments are out of
 * reach; every change is a members-only event with its audit sentence; and the CSV export given a
 * segment's filters answers exactly the rows they match.
 */
describe("saved segments", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Member;
  let admin: Member;
  let member: Member;
  let colleague: Member;
  let outsider: Member;

  const graphql = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
        ...(auth.cookie ? { cookie: auth.cookie } : {}),
        ...(auth.organization ? { "x-donata-organization": auth.organization } : {}),
        ...(auth.language ? { "accept-language": auth.language } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
    expect(response.status).toBeLessThan(500);
    return (await response.json()) as Json;
  };
  const ok = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const answer = await graphql(query, variables, auth);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data;
  };
  const errorOf = async (query: string, variables: Record<string, unknown>, auth: Auth) => {
    const answer = await graphql(query, variables, auth);
    expect(answer.errors).toHaveLength(1);
    return answer.errors[0] as { message: string; extensions: { code: string; errors?: Json[] } };
  };
  const signIn = async (organization: string, role: "owner" | "admin" | "member") => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
    return { cookie, organization, email, userId: user.id };
  };
  const create = async (collection: string, name: string, filters: Filter[], auth: Auth = member) =>
    (await ok(CREATE, { collection, name, filters }, auth)).createSegment as Json;
  const list = async (collection: string, auth: Auth = owner) =>
    (await ok(LIST, { collection }, auth)).segments as Json[];
  const stored = (organizationId = tenant.organizationId) =>
    server.database.db.select().from(segments).where(eq(segments.organizationId, organizationId));
  const segmentEvents = (organizationId = tenant.organizationId) =>
    server.database.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, organizationId), like(events.type, "segment.%")))
      .orderBy(events.seq);
  /** The CSV export as the panel's link asks for it: the organization, then the segment's filters. */
  const exportCsv = async (collection: string, filters: Filter[], auth: Auth = owner) => {
    const query = new URLSearchParams({ organization: tenant.slug });
    for (const { name, value } of filters) query.append(name, value);
    const response = await fetch(`${server.url}/admin/export/${collection}.csv?${query}`, {
      headers: { cookie: auth.cookie ?? "" },
    });
    expect(response.status).toBe(200);
    return parse(await response.text(), { columns: true }) as Record<string, string>[];
  };

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
    owner = await signIn(tenant.slug, "owner");
    admin = await signIn(tenant.slug, "admin");
    member = await signIn(tenant.slug, "member");
    colleague = await signIn(tenant.slug, "member");
    outsider = await signIn(other.slug, "owner");
  });
  afterAll(() => server?.close());

  it("a member saves a segment as the table's URL carries it; listed by name, in the table's filter order", async () => {
    const before = Date.now();
    const italians = await create("supporters", "  Italian volunteers ", [
      { name: "tag", value: "volunteer" },
      { name: "country", value: "IT" },
      { name: "create_date_from", value: "2026-01-01" },
    ]);
    expect(italians).toEqual({
      id: expect.any(Number),
      collection: "supporters",
      name: "Italian volunteers",
      filters: [
        { name: "country", value: "IT" },
        { name: "tag", value: "volunteer" },
        { name: "create_date_from", value: "2026-01-01" },
      ],
      created_by: member.userId,
      create_date: expect.any(String),
      update_date: expect.any(String),
      can_change: true,
    });
    expect(Date.parse(italians.create_date)).toBeGreaterThanOrEqual(before - 1000);
    const [row] = (await stored()).filter((segment) => segment.id === italians.id);
    expect(row?.filters).toEqual({ country: "IT", tag: "volunteer", create_date_from: "2026-01-01" });

    const monthly = await create(
      "donations",
      "Monthly donors this year",
      [
        { name: "frequency", value: "12" },
        { name: "state", value: "active" },
        { name: "completed_date_from", value: "2026-01-01T00:00:00+01:00" },
      ],
      owner,
    );
    const archived = await create("campaigns", "Archived", [{ name: "archived", value: "true" }], admin);
    const paid = await create("payments", "Paid", [{ name: "state", value: "PAID" }], colleague);
    const closed = await create("checkouts", "Closed", [{ name: "state", value: "CLOSED" }], colleague);
    const another = await create("supporters", "abroad", [{ name: "country", value: "FR" }], owner);

    // By name in any case; each list holds its own table's segments only.
    expect((await list("supporters")).map((segment) => segment.name)).toEqual(["abroad", "Italian volunteers"]);
    expect((await list("donations")).map((segment) => segment.id)).toEqual([monthly.id]);
    expect((await list("campaigns")).map((segment) => segment.id)).toEqual([archived.id]);
    expect((await list("payments")).map((segment) => segment.id)).toEqual([paid.id]);
    expect((await list("checkouts")).map((segment) => segment.id)).toEqual([closed.id]);
    // Every member reads them, each told what they may change.
    const canChange = async (auth: Auth) =>
      Object.fromEntries((await list("supporters", auth)).map((segment) => [segment.name, segment.can_change]));
    expect(await canChange(member)).toEqual({ abroad: false, "Italian volunteers": true });
    expect(await canChange(colleague)).toEqual({ abroad: false, "Italian volunteers": false });
    expect(await canChange(admin)).toEqual({ abroad: true, "Italian volunteers": true });
    expect(another.can_change).toBe(true);
  });

  it("refuses an unknown filter, a value the list refuses, a bad name or collection field by field, and saves nothing", async () => {
    const rowsBefore = await stored();
    const eventsBefore = await segmentEvents();
    const refusals: [Record<string, unknown>, Json[]][] = [
      [
        { collection: "supporters", name: "Unknown", filters: [{ name: "city", value: "Rome" }] },
        [
          {
            field: "filters.0.name",
            code: "segment_filter_unknown",
            message:
              '"city" is not a filter of this table; use one of q, email, country, tag, create_date_from, create_date_to',
          },
        ],
      ],
      [
        // A filter of another table, or one the list takes but the table does not show.
        {
          collection: "supporters",
          name: "Not here",
          filters: [
            { name: "state", value: "active" },
            { name: "update_date_from", value: "2026-01-01" },
          ],
        },
        [
          { field: "filters.0.name", code: "segment_filter_unknown" },
          { field: "filters.1.name", code: "segment_filter_unknown" },
        ],
      ],
      [
        {
          collection: "donations",
          name: "Bad values",
          filters: [
            { name: "frequency", value: "7" },
            { name: "state", value: "lost" },
            { name: "campaign_id", value: "0" },
            { name: "supporter_id", value: "1e3" },
            { name: "create_date_from", value: "2026-02-30" },
            { name: "tag", value: " " },
            { name: "tag", value: "again" },
          ],
        },
        [
          { field: "filters.0.value", code: "one_of", message: "use one of 0, 12, 1" },
          {
            field: "filters.1.value",
            code: "one_of",
            message: "use one of draft, pending, active, past_due, done, revoked",
          },
          { field: "filters.2.value", code: "whole_number_from", message: "must be a whole number from 1" },
          { field: "filters.3.value", code: "whole_number_from" },
          {
            field: "filters.4.value",
            code: "date_or_date_time",
            message: "must be a date (YYYY-MM-DD) or an ISO 8601 date-time with a time zone",
          },
          { field: "filters.5.value", code: "required" },
          { field: "filters.6.name", code: "segment_filter_repeated", message: '"tag" is given more than once' },
        ],
      ],
      [
        { collection: "campaigns", name: "Maybe", filters: [{ name: "archived", value: "yes" }] },
        [{ field: "filters.0.value", code: "one_of", message: "use one of true, false" }],
      ],
      [
        { collection: "supporters", name: "Long", filters: [{ name: "q", value: "x".repeat(201) }] },
        [{ field: "filters.0.value", code: "too_long", message: "at most 200 characters" }],
      ],
      [
        { collection: "supporters", name: "Everyone", filters: [] },
        [{ field: "filters", code: "segment_filters_empty", message: "choose at least one filter" }],
      ],
      [
        { collection: "supporters", name: "   ", filters: [{ name: "country", value: "IT" }] },
        [{ field: "name", code: "required" }],
      ],
      [
        { collection: "supporters", name: "é".repeat(81), filters: [{ name: "country", value: "IT" }] },
        [{ field: "name", code: "too_long", values: { max: 80 } }],
      ],
      [
        { collection: "receipts", name: "Receipts", filters: [{ name: "year", value: "2026" }] },
        [
          {
            field: "collection",
            code: "one_of",
            message: "use one of campaigns, supporters, donations, payments, checkouts",
          },
        ],
      ],
    ];
    for (const [variables, issues] of refusals) {
      const error = await errorOf(CREATE, variables, member);
      expect(error.extensions.code).toBe("invalid_request");
      expect(ERROR_STATUS.invalid_request).toBe(400);
      expect(error.message).toBe(`Invalid field "${issues[0].field}": ${error.extensions.errors?.[0].message}`);
      expect(error.extensions.errors).toHaveLength(issues.length);
      for (const [index, issue] of issues.entries()) expect(error.extensions.errors?.[index]).toMatchObject(issue);
    }
    // 80 characters outside the BMP are 160 UTF-16 units: still 80 characters.
    const longest = await create("supporters", "😀".repeat(80), [{ name: "country", value: "IT" }]);
    expect([...longest.name]).toHaveLength(80);
    await ok(DELETE, { id: String(longest.id) }, member);

    // An update with a bad filter changes nothing either.
    const segment = await create("payments", `Refunded ${unique(4)}`, [{ name: "state", value: "REFUNDED" }]);
    const bad = await errorOf(
      UPDATE,
      { id: String(segment.id), name: "Renamed", filters: [{ name: "donation_id", value: "-3" }] },
      member,
    );
    expect(bad.extensions).toMatchObject({
      code: "invalid_request",
      errors: [{ field: "filters.0.value", code: "whole_number_from" }],
    });
    expect((await list("payments")).find((row) => row.id === segment.id)).toEqual(segment);
    await ok(DELETE, { id: String(segment.id) }, member);

    expect(await stored()).toEqual(rowsBefore);
    const types = (await segmentEvents()).slice(eventsBefore.length).map((event) => event.type);
    expect(types).toEqual(["segment.created", "segment.deleted", "segment.created", "segment.deleted"]);
  });

  it("a name is unique in its table in any case; another table or organization may reuse it", async () => {
    const name = `Major donors ${unique(4)}`;
    const first = await create("donations", name, [{ name: "state", value: "done" }]);
    const clash = await errorOf(
      CREATE,
      { collection: "donations", name: ` ${name.toUpperCase()} `, filters: [{ name: "state", value: "active" }] },
      owner,
    );
    expect(clash).toMatchObject({
      message: `Another segment of donations is named "${name.toUpperCase()}"`,
      extensions: {
        code: "segment_name_taken",
        errors: [
          {
            field: "name",
            code: "segment_name_taken",
            message: "is already the name of another segment of this table",
          },
        ],
      },
    });
    expect(ERROR_STATUS.segment_name_taken).toBe(409);
    expect(
      (await list("donations")).filter((segment) => segment.name.toLowerCase() === name.toLowerCase()),
    ).toHaveLength(1);

    await create("supporters", name, [{ name: "tag", value: "major" }]);
    await create("donations", name, [{ name: "state", value: "done" }], outsider);

    // Renaming onto another's name clashes; changing the case of its own does not.
    const second = await create("donations", `Small donors ${unique(4)}`, [{ name: "state", value: "done" }]);
    const renamed = await errorOf(UPDATE, { id: String(second.id), name: name.toLowerCase() }, member);
    expect(renamed.extensions.code).toBe("segment_name_taken");
    const recased = (await ok(UPDATE, { id: String(first.id), name: name.toUpperCase() }, member)).updateSegment;
    expect(recased.name).toBe(name.toUpperCase());
  });

  it("its creator, an owner or an admin renames it, changes or deletes it; another member cannot", async () => {
    const segment = await create("supporters", `Lapsed ${unique(4)}`, [{ name: "tag", value: "lapsed" }]);
    for (const [query, variables] of [
      [UPDATE, { id: String(segment.id), name: "Mine now" }],
      [DELETE, { id: String(segment.id) }],
    ] as const) {
      const refused = await errorOf(query, variables, colleague);
      expect(refused.extensions.code).toBe("insufficient_role");
      expect(refused.message).toMatch(/^Only the segment's creator, an owner or an admin can (change|delete) it$/);
    }
    const eventsBefore = (await segmentEvents()).length;
    // Given nothing new, nothing is written or recorded.
    const same = (await ok(UPDATE, { id: String(segment.id), name: segment.name }, member)).updateSegment;
    expect(same).toEqual(segment);
    expect(await segmentEvents()).toHaveLength(eventsBefore);

    const renamed = (await ok(UPDATE, { id: String(segment.id), name: "Lapsed in Italy" }, member)).updateSegment;
    expect(renamed).toMatchObject({ name: "Lapsed in Italy", filters: segment.filters });
    const refiltered = (
      await ok(
        UPDATE,
        {
          id: String(segment.id),
          filters: [
            { name: "tag", value: "lapsed" },
            { name: "country", value: "IT" },
          ],
        },
        admin,
      )
    ).updateSegment;
    expect(refiltered).toMatchObject({
      name: "Lapsed in Italy",
      filters: [
        { name: "country", value: "IT" },
        { name: "tag", value: "lapsed" },
      ],
      created_by: member.userId,
    });
    expect(Date.parse(refiltered.update_date)).toBeGreaterThanOrEqual(Date.parse(segment.update_date));
    const deleted = (await ok(DELETE, { id: String(segment.id) }, owner)).deleteSegment;
    expect(deleted).toMatchObject({ id: segment.id, name: "Lapsed in Italy" });
    expect((await list("supporters")).map((row) => row.id)).not.toContain(segment.id);
    const again = await errorOf(DELETE, { id: String(segment.id) }, owner);
    expect(again).toMatchObject({ message: "Segment not found", extensions: { code: "not_found" } });
  });

  it("records each change as a members-only event with its audit sentence, in English and Italian", async () => {
    const segment = await create("supporters", "Gala guests", [{ name: "tag", value: "gala" }]);
    await ok(UPDATE, { id: String(segment.id), name: "Gala 2026 guests" }, member);
    await ok(DELETE, { id: String(segment.id) }, member);

    const recorded = (await segmentEvents()).filter((event) => event.resourceId === segment.id);
    expect(recorded.map((event) => [event.type, event.resourceType])).toEqual([
      ["segment.created", "segment"],
      ["segment.updated", "segment"],
      ["segment.deleted", "segment"],
    ]);
    expect(recorded[0]?.actor).toMatchObject({ type: "user", user_id: member.userId });
    expect(recorded[0]?.data).toEqual({
      id: segment.id,
      collection: "supporters",
      name: "Gala guests",
      filters: [{ name: "tag", value: "gala" }],
      created_by: member.userId,
      create_date: segment.create_date,
      update_date: segment.update_date,
    });
    expect(recorded[1]?.changes).toEqual({ name: { before: "Gala guests", after: "Gala 2026 guests" } });
    expect(recorded[2]?.data).toMatchObject({ name: "Gala 2026 guests" });

    const AUDIT = `query ($id: Int) { auditLog(resource_type: "segment", resource_id: $id) { items { type summary } } }`;
    const english = (await ok(AUDIT, { id: segment.id }, owner)).auditLog.items;
    expect(english).toEqual([
      { type: "segment.deleted", summary: `Deleted segment #${segment.id} "Gala 2026 guests" of supporters` },
      { type: "segment.updated", summary: `Changed segment #${segment.id} "Gala 2026 guests": name` },
      { type: "segment.created", summary: `Saved segment #${segment.id} "Gala guests" of supporters` },
    ]);
    const italian = (await ok(AUDIT, { id: segment.id }, { ...owner, language: "it" })).auditLog.items;
    expect(italian.map((item: Json) => item.summary)).toEqual([
      `Eliminato il segmento n. ${segment.id} «Gala 2026 guests» di supporters`,
      `Modificato il segmento n. ${segment.id} «Gala 2026 guests»: name`,
      `Salvato il segmento n. ${segment.id} «Gala guests» di supporters`,
    ]);

    // Never shown to an application.
    const feed = await fetch(`${server.url}/api/v1/events/?limit=1000`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(feed.status).toBe(200);
    expect(JSON.stringify(await feed.json())).not.toContain("segment.");
  });

  it("another organization's segments are out of reach, and an application reaches none", async () => {
    const ours = await create("supporters", `Ours ${unique(4)}`, [{ name: "country", value: "IT" }], owner);
    const theirs = await create("supporters", `Theirs ${unique(4)}`, [{ name: "country", value: "DE" }], outsider);
    expect((await list("supporters", outsider)).map((segment) => segment.id)).toEqual([theirs.id]);
    expect((await list("supporters", owner)).map((segment) => segment.id)).not.toContain(theirs.id);

    for (const [query, variables, auth] of [
      [UPDATE, { id: String(theirs.id), name: "Taken over" }, owner],
      [DELETE, { id: String(theirs.id) }, owner],
      [UPDATE, { id: String(ours.id), name: "Taken over" }, outsider],
      [DELETE, { id: String(ours.id) }, outsider],
      [DELETE, { id: "999999999999" }, owner],
      [DELETE, { id: "not-a-number" }, owner],
    ] as const) {
      const error = await errorOf(query, variables, auth);
      expect(error).toMatchObject({ message: "Segment not found", extensions: { code: "not_found" } });
    }
    // Their member naming our organization is refused before anything runs.
    const named = await errorOf(DELETE, { id: String(ours.id) }, { ...outsider, organization: tenant.slug });
    expect(named.extensions.code).toBe("not_a_member");
    expect((await stored(other.organizationId)).find((row) => row.id === theirs.id)?.name).toBe(theirs.name);
    expect((await list("supporters", owner)).find((segment) => segment.id === ours.id)?.name).toBe(ours.name);

    // Applications, whatever they were granted, neither read nor write segments.
    for (const [query, variables] of [
      [LIST, { collection: "supporters" }],
      [CREATE, { collection: "supporters", name: "From an app", filters: [{ name: "country", value: "IT" }] }],
      [UPDATE, { id: String(ours.id), name: "From an app" }],
      [DELETE, { id: String(ours.id) }],
    ] as const) {
      const error = await errorOf(query, variables, tenant);
      expect(error.extensions.code).toBe("insufficient_scope");
    }
    expect((await list("supporters", owner)).find((segment) => segment.id === ours.id)?.name).toBe(ours.name);
  });

  it("the CSV export given a segment's filters answers exactly the rows they match, as the table does", async () => {
    const db = server.database.db;
    const tag = `export-${unique(6)}`;
    const matching = [];
    for (const [country, tags] of [
      ["IT", [tag]],
      ["IT", [tag, "volunteer"]],
      ["FR", [tag]],
      ["IT", ["volunteer"]],
      ["IT", [tag]],
    ] as const) {
      const supporter = await fakeSupporter(db, tenant.organizationId, { country, tags: [...tags] });
      if (country === "IT" && tags.includes(tag as never)) matching.push(supporter.id);
    }
    const supportersSegment = await create("supporters", `Export ${tag}`, [
      { name: "country", value: "IT" },
      { name: "tag", value: tag },
    ]);
    const supporterRows = await exportCsv("supporters", supportersSegment.filters);
    expect(supporterRows.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(matching.sort((a, b) => a - b));
    expect(supporterRows.every((row) => row.country === "IT")).toBe(true);
    // The table's list with the same filters answers the same rows.
    const table = await ok(
      `query { supporters(limit: 100, country: "IT", tag: "${tag}") { count items { id } } }`,
      {},
      owner,
    );
    expect(table.supporters.count).toBe(matching.length);

    // Donations: a select, a number and a campaign, as the URL carries them.
    const campaign = await fakeCampaign(db, tenant.organizationId);
    const elsewhere = await fakeCampaign(db, tenant.organizationId);
    const donor = await fakeSupporter(db, tenant.organizationId);
    const monthlyActive = [];
    for (const [campaignId, state, frequency] of [
      [campaign.id, "active", 12],
      [campaign.id, "active", 12],
      [campaign.id, "active", 0],
      [campaign.id, "done", 12],
      [elsewhere.id, "active", 12],
    ] as const) {
      const donation = await fakeDonation(db, tenant.organizationId, {
        supporterId: donor.id,
        campaignId,
        state,
        frequency,
      });
      if (campaignId === campaign.id && state === "active" && frequency === 12) monthlyActive.push(donation.id);
    }
    const donationsSegment = await create("donations", `Monthly ${unique(4)}`, [
      { name: "state", value: "active" },
      { name: "frequency", value: "12" },
      { name: "campaign_id", value: String(campaign.id) },
    ]);
    const donationRows = await exportCsv("donations", donationsSegment.filters);
    expect(donationRows.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(
      monthlyActive.sort((a, b) => a - b),
    );

    // Payments: a state and a donation id.
    const [donationId] = monthlyActive as [number];
    const paid = [];
    for (const state of ["PAID", "FAILED", "PAID", "REFUNDED"] as const) {
      const payment = await fakePayment(db, tenant.organizationId, { donationId, state });
      if (state === "PAID") paid.push(payment.id);
    }
    const paymentsSegment = await create("payments", `Paid of ${donationId}`, [
      { name: "state", value: "PAID" },
      { name: "donation_id", value: String(donationId) },
    ]);
    const paymentRows = await exportCsv("payments", paymentsSegment.filters);
    expect(paymentRows.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(paid.sort((a, b) => a - b));
  });
});
