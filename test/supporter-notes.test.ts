import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, supporterNotes, users } from "../src/db/schema.js";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;
type Auth = { cookie?: string; token?: string; organization?: string };
type Member = Auth & { userId: number; email: string };

const NOTES = `query ($id: ID!) { supporter(id: $id) { id notes { id supporter_id author_user_id author_name body create_date can_delete } } }`;
const ADD = `mutation ($supporter_id: ID!, $body: String!) {
  addSupporterNote(supporter_id: $supporter_id, body: $body) { id supporter_id author_user_id author_name body create_date can_delete }
}`;
const DELETE = `mutation ($supporter_id: ID!, $note_id: ID!) { deleteSupporterNote(supporter_id: $supporter_id, note_id: $note_id) { id body } }`;
const ERASE = `mutation ($id: ID!) { eraseSupporter(id: $id) { id erase_date } }`;

/**
 * Notes about a supporter through the real server's GraphQL: dated, signed by their author (a member,
 * or an application by name), newest first; any member writes one, only its author, an owner or an
 * admin deletes it, never an application; empty or over-long notes are refused field by field; another
 * organization's supporter or note is not found; an erasure deletes the notes, and their events keep
 * no words of them.
 */
describe("supporter notes", () => {
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
    return answer.errors[0] as { message: string; extensions: { code: string; errors?: unknown[] } };
  };
  const signIn = async (organization: string, role: "owner" | "admin" | "member", name?: string) => {
    const email = `${role}-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, { email, password: "long enough password", organization, role });
    if (name) await server.database.db.update(users).set({ name }).where(eq(users.id, user.id));
    const cookie = `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`;
    return { cookie, organization, email, userId: user.id };
  };
  const newSupporter = async (organizationId = tenant.organizationId) =>
    String((await fakeSupporter(server.database.db, organizationId)).id);
  const notesOf = async (supporterId: string, auth: Auth = owner) =>
    (await ok(NOTES, { id: supporterId }, auth)).supporter.notes as Json[];
  const add = async (supporterId: string, body: string, auth: Auth) =>
    (await ok(ADD, { supporter_id: supporterId, body }, auth)).addSupporterNote as Json;

  beforeAll(async () => {
    server = await startTestServer();
    [tenant, other] = await Promise.all([fakeTenant(server.database.db), fakeTenant(server.database.db)]);
    owner = await signIn(tenant.slug, "owner", "Olivia Owner");
    admin = await signIn(tenant.slug, "admin");
    member = await signIn(tenant.slug, "member", "Mario Member");
    colleague = await signIn(tenant.slug, "member", "Carla Colleague");
    outsider = await signIn(other.slug, "owner", "Oscar Outsider");
  });
  afterAll(() => server?.close());

  it("a member adds notes: signed with their name and account, dated now, listed newest first", async () => {
    const supporterId = await newSupporter();
    expect(await notesOf(supporterId)).toEqual([]);
    const before = Date.now();
    const first = await add(supporterId, "  Called about the gala.\nWill come with two friends.  ", member);
    expect(first).toEqual({
      id: expect.any(Number),
      supporter_id: Number(supporterId),
      author_user_id: member.userId,
      author_name: "Mario Member",
      body: "Called about the gala.\nWill come with two friends.",
      create_date: expect.any(String),
      can_delete: true,
    });
    expect(Date.parse(first.create_date)).toBeGreaterThanOrEqual(before - 1000);
    const second = await add(supporterId, "Prefers email.", admin);
    // An admin without a name is signed with their email.
    expect(second.author_name).toBe(admin.email);
    const third = await add(supporterId, "Thanked by phone.", owner);
    expect((await notesOf(supporterId)).map((note) => note.id)).toEqual([third.id, second.id, first.id]);
    expect((await notesOf(supporterId)).map((note) => note.body)).toEqual([
      "Thanked by phone.",
      "Prefers email.",
      "Called about the gala.\nWill come with two friends.",
    ]);

    // The supporter's data export (their access request) holds the notes about them, newest first.
    const exported = (
      await ok(
        `mutation ($id: ID!) { exportSupporter(id: $id) { notes { id create_date author_name body } } }`,
        { id: supporterId },
        owner,
      )
    ).exportSupporter;
    expect(exported.notes).toEqual(
      [third, second, first].map((note) => ({
        id: note.id,
        create_date: note.create_date,
        author_name: note.author_name,
        body: note.body,
      })),
    );
  });

  it("refuses an empty or over-long note field by field, counting characters as the table does", async () => {
    const supporterId = await newSupporter();
    for (const body of ["", "   \n\t "]) {
      const error = await errorOf(ADD, { supporter_id: supporterId, body }, member);
      expect(error).toMatchObject({
        message: "A note cannot be empty",
        extensions: { code: "invalid_request", errors: [{ field: "body", code: "required" }] },
      });
    }
    const tooLong = await errorOf(ADD, { supporter_id: supporterId, body: "a".repeat(5001) }, member);
    expect(tooLong).toMatchObject({
      message: "A note has at most 5000 characters",
      extensions: {
        code: "invalid_request",
        errors: [{ field: "body", code: "too_long", values: { max: 5000 }, message: "at most 5000 characters" }],
      },
    });
    // 5000 characters outside the BMP are 10000 UTF-16 units: still 5000 characters.
    const longest = await add(supporterId, "😀".repeat(5000), member);
    expect([...longest.body]).toHaveLength(5000);
    expect(await notesOf(supporterId)).toHaveLength(1);
  });

  it("deletes a note only for its author, an owner or an admin; never for an application", async () => {
    const supporterId = await newSupporter();
    const byMember = await add(supporterId, "Member's note", member);
    const byColleague = await add(supporterId, "Colleague's note", colleague);
    const byOwner = await add(supporterId, "Owner's note", owner);

    // Each reader is told what they may delete.
    const canDelete = async (auth: Auth) =>
      Object.fromEntries((await notesOf(supporterId, auth)).map((note) => [note.body, note.can_delete]));
    expect(await canDelete(member)).toEqual({
      "Member's note": true,
      "Colleague's note": false,
      "Owner's note": false,
    });
    expect(await canDelete(admin)).toEqual({ "Member's note": true, "Colleague's note": true, "Owner's note": true });

    for (const note of [byColleague, byOwner]) {
      const refused = await errorOf(DELETE, { supporter_id: supporterId, note_id: String(note.id) }, member);
      expect(refused).toMatchObject({
        message: "Only the note's author, an owner or an admin can delete it",
        extensions: { code: "insufficient_role" },
      });
    }
    const app = await errorOf(DELETE, { supporter_id: supporterId, note_id: String(byMember.id) }, tenant);
    expect(app.extensions.code).toBe("insufficient_scope");

    expect(
      (await ok(DELETE, { supporter_id: supporterId, note_id: String(byMember.id) }, member)).deleteSupporterNote,
    ).toEqual({
      id: byMember.id,
      body: "Member's note",
    });
    await ok(DELETE, { supporter_id: supporterId, note_id: String(byColleague.id) }, admin);
    expect((await notesOf(supporterId)).map((note) => note.body)).toEqual(["Owner's note"]);
    // Gone: deleting again is not found.
    const again = await errorOf(DELETE, { supporter_id: supporterId, note_id: String(byMember.id) }, owner);
    expect(again).toMatchObject({ message: "Note not found", extensions: { code: "not_found" } });

    // Members-only events say who wrote and who deleted, never the words.
    const recorded = await server.database.db
      .select({ type: events.type, data: events.data, resourceType: events.resourceType })
      .from(events)
      .where(
        and(
          eq(events.organizationId, tenant.organizationId),
          eq(events.resourceType, "supporter"),
          eq(events.resourceId, Number(supporterId)),
        ),
      );
    expect(recorded.map((event) => event.type).sort()).toEqual([
      "supporter_note.created",
      "supporter_note.created",
      "supporter_note.created",
      "supporter_note.deleted",
      "supporter_note.deleted",
    ]);
    for (const words of ["Member's note", "Colleague's note", "Owner's note"]) {
      expect(JSON.stringify(recorded)).not.toContain(words);
    }
    expect(recorded.find((event) => event.type === "supporter_note.deleted")?.data).toMatchObject({
      supporter_id: Number(supporterId),
      author_name: "Mario Member",
    });
    // An application is never shown them.
    const feed = await fetch(`${server.url}/api/v1/events/?limit=1000`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(JSON.stringify(await feed.json())).not.toContain("supporter_note");
  });

  it("an application with supporters:write adds a note signed with its name; without it, it is refused", async () => {
    const supporterId = await newSupporter();
    const note = await add(supporterId, "Imported from the CRM.", tenant);
    expect(note).toMatchObject({ author_user_id: null, can_delete: false });
    expect(note.author_name).toMatch(/^App /);
    const readOnly = await fakeTenant(server.database.db, { permissions: ["supporters:read"] });
    const theirs = await newSupporter(readOnly.organizationId);
    const refused = await errorOf(ADD, { supporter_id: theirs, body: "no" }, readOnly);
    expect(refused.extensions.code).toBe("insufficient_scope");
  });

  it("another organization's supporter or note is not found, whoever asks", async () => {
    const ours = await newSupporter();
    const note = await add(ours, "Ours only.", owner);
    const theirs = await newSupporter(other.organizationId);
    const theirNote = await add(theirs, "Theirs only.", outsider);

    for (const [variables, auth] of [
      [{ supporter_id: theirs, body: "Sneaking in." }, owner],
      [{ supporter_id: ours, body: "Sneaking in." }, outsider],
      [{ supporter_id: ours, body: "Sneaking in." }, other],
      [{ supporter_id: "999999999999", body: "Nobody." }, owner],
      [{ supporter_id: "not-a-number", body: "Nobody." }, owner],
    ] as const) {
      const error = await errorOf(ADD, variables, auth);
      expect(error).toMatchObject({ message: "Supporter not found", extensions: { code: "not_found" } });
    }
    // Their supporter is not ours to read, nor are its notes.
    expect((await ok(NOTES, { id: theirs }, owner)).supporter).toBeNull();
    // A note of theirs through a supporter of ours, or their supporter through ours: not found.
    for (const [variables, auth, what] of [
      [{ supporter_id: ours, note_id: String(theirNote.id) }, owner, "Note"],
      [{ supporter_id: theirs, note_id: String(theirNote.id) }, owner, "Supporter"],
      [{ supporter_id: ours, note_id: String(note.id) }, outsider, "Supporter"],
    ] as const) {
      const error = await errorOf(DELETE, variables, auth);
      expect(error).toMatchObject({ message: `${what} not found`, extensions: { code: "not_found" } });
    }
    expect((await notesOf(ours)).map((row) => row.body)).toEqual(["Ours only."]);
    expect((await notesOf(theirs, outsider)).map((row) => row.body)).toEqual(["Theirs only."]);
  });

  it("erasing a supporter deletes their notes and the words of their events; no note is added after", async () => {
    const supporterId = await newSupporter();
    const keep = await newSupporter();
    const secret = `Lives at ${unique(8)} street`;
    await add(supporterId, secret, member);
    await add(supporterId, "Second note", owner);
    await add(keep, "Another supporter's note", owner);

    await ok(ERASE, { id: supporterId }, admin);
    expect(await notesOf(supporterId)).toEqual([]);
    const left = await server.database.db
      .select({ supporterId: supporterNotes.supporterId })
      .from(supporterNotes)
      .where(eq(supporterNotes.organizationId, tenant.organizationId));
    expect(left.map((row) => String(row.supporterId))).not.toContain(supporterId);
    expect((await notesOf(keep)).map((row) => row.body)).toEqual(["Another supporter's note"]);
    const stored = JSON.stringify(
      await server.database.db.select().from(events).where(eq(events.organizationId, tenant.organizationId)),
    );
    expect(stored).not.toContain(secret);

    const refused = await errorOf(ADD, { supporter_id: supporterId, body: "After the erasure" }, owner);
    expect(refused.extensions.code).toBe("supporter_erased");
  });
});
