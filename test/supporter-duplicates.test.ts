import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_COOKIE } from "../src/http/session-cookie.js";
import { createSession } from "../src/identity/sessions.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { fakeAppToken, fakeSupporter, fakeTenant, type Tenant, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are asserted field by field
type Json = any;
type Auth = { cookie?: string; token?: string; organization?: string };

const DUPLICATES = `query ($limit: Int, $offset: Int) {
  supporterDuplicates(limit: $limit, offset: $offset) { count items { reason supporters { id email erase_date } } }
}`;
const ERASE = `mutation ($id: ID!) { eraseSupporter(id: $id) { id erase_date } }`;

/**
 * Suggested duplicates through the real server's GraphQL: the organization's live supporters sharing
 * an email (trimmed, any case), or else a name (trimmed, any case) and postal code (spaces removed),
 * each group oldest first and the newest group first; erased supporters and other organizations'
 * supporters are never in a group; a supporter grouped by email is not grouped again by name; pages
 * by limit and offset, bad values refused; supporters:read required.
 */
describe("supporter duplicates", () => {
  let server: TestServer;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Auth;
  let outsider: Auth;

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
  const duplicates = async (auth: Auth, variables: Record<string, unknown> = {}) => {
    const answer = await graphql(DUPLICATES, variables, auth);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data.supporterDuplicates as { count: number; items: { reason: string; supporters: Json[] }[] };
  };
  /** The groups as [reason, ids] pairs. */
  const groups = async (auth: Auth, variables: Record<string, unknown> = {}) =>
    (await duplicates(auth, variables)).items.map((group) => [
      group.reason,
      group.supporters.map((supporter) => supporter.id as number),
    ]);
  const errorOf = async (variables: Record<string, unknown>, auth: Auth = owner) => {
    const answer = await graphql(DUPLICATES, variables, auth);
    expect(answer.data).toBeNull();
    expect(answer.errors).toHaveLength(1);
    return answer.errors[0] as { message: string; extensions: { code: string; errors?: unknown[] } };
  };
  const signIn = async (organization: string) => {
    const email = `owner-${unique(6)}@example.test`;
    const user = await createUser(server.database.db, {
      email,
      password: "long enough password",
      organization,
      role: "owner",
    });
    return {
      cookie: `${SESSION_COOKIE}=${await createSession(server.database.db, server.config, user.id)}`,
      organization,
    };
  };
  const person = (organizationId: number, values: Parameters<typeof fakeSupporter>[2]) =>
    fakeSupporter(server.database.db, organizationId, { postalCode: null, ...values });

  beforeAll(async () => {
    server = await startTestServer();
    tenant = await fakeTenant(server.database.db);
    other = await fakeTenant(server.database.db);
    // One after the other: users are rows of reference tables on a cluster.
    owner = await signIn(tenant.slug);
    outsider = await signIn(other.slug);
  });
  afterAll(() => server?.close());

  it("groups the same email in any case and the same name and postal code with any spacing; an erased supporter is left out", async () => {
    const { organizationId } = tenant;
    const mail = `ada-${unique(6)}@example.org`;
    const ada = await person(organizationId, { email: mail, firstName: "Ada", lastName: "Lovelace" });
    const adaAgain = await person(organizationId, { email: `  ${mail.toUpperCase()} `, firstName: "A." });
    const giuseppe = await person(organizationId, { firstName: "Giuseppe", lastName: "Verdi", postalCode: "43011" });
    const giuseppeAgain = await person(organizationId, {
      firstName: " giuseppe ",
      lastName: "VERDI",
      postalCode: "430 11",
    });
    // The same name elsewhere, or no postal code: not a duplicate.
    await person(organizationId, { firstName: "Giuseppe", lastName: "Verdi", postalCode: "20121" });
    await person(organizationId, { firstName: "Giuseppe", lastName: "Verdi" });
    const erased = await person(organizationId, { firstName: "Giuseppe", lastName: "Verdi", postalCode: "4 3 0 1 1" });

    // An erased supporter's email is gone; erasing one of a pair leaves no group.
    const single = `single-${unique(6)}@example.org`;
    await person(organizationId, { email: single });
    const soonErased = await person(organizationId, { email: single.toUpperCase() });

    expect((await graphql(ERASE, { id: String(erased.id) }, owner)).errors).toBeUndefined();
    expect((await graphql(ERASE, { id: String(soonErased.id) }, owner)).errors).toBeUndefined();

    const page = await duplicates(owner);
    expect(page.count).toBe(2);
    expect(page.items).toEqual([
      {
        reason: "name_and_postal_code",
        supporters: [
          { id: giuseppe.id, email: giuseppe.email, erase_date: null },
          { id: giuseppeAgain.id, email: giuseppeAgain.email, erase_date: null },
        ],
      },
      {
        reason: "email",
        supporters: [
          { id: ada.id, email: mail, erase_date: null },
          { id: adaAgain.id, email: `  ${mail.toUpperCase()} `, erase_date: null },
        ],
      },
    ]);
  });

  it("a supporter matching by email and by name and postal code is in one group only", async () => {
    const org = await fakeTenant(server.database.db);
    const auth = await signIn(org.slug);
    const mail = `twice-${unique(6)}@example.org`;
    const first = await person(org.organizationId, {
      email: mail,
      firstName: "Maria",
      lastName: "Rossi",
      postalCode: "00184",
    });
    const second = await person(org.organizationId, {
      email: mail,
      firstName: "Maria",
      lastName: "Rossi",
      postalCode: "00184",
    });
    // Matches the two by name only: alone once they are grouped by email.
    await person(org.organizationId, { firstName: "maria", lastName: "rossi", postalCode: "00 184" });
    expect(await groups(auth)).toEqual([["email", [first.id, second.id]]]);
  });

  it("another organization's supporters are never grouped with the organization's, nor seen", async () => {
    const mail = `shared-${unique(6)}@example.org`;
    const mine = await person(tenant.organizationId, { email: mail });
    const theirs = await person(other.organizationId, { email: mail.toUpperCase() });
    const theirsToo = await person(other.organizationId, {
      firstName: "Luigi",
      lastName: "Bianchi",
      postalCode: "10121",
    });
    await person(tenant.organizationId, { firstName: "Luigi", lastName: "Bianchi", postalCode: "10121" });
    const seen = JSON.stringify(await duplicates(owner)).toLowerCase();
    expect(seen).not.toContain(mail);
    expect(seen).not.toContain(String(theirsToo.email));
    expect((await duplicates(owner)).count).toBe(2);
    expect(mine.email).toBe(mail);
    expect(theirs.organizationId).toBe(other.organizationId);
    expect(await duplicates(outsider)).toEqual({ count: 0, items: [] });
    // The application of the other organization sees its own supporters only.
    expect(await duplicates({ token: other.token })).toEqual({ count: 0, items: [] });
  });

  it("pages by limit and offset, newest group first; bad values are refused with invalid_request", async () => {
    const org = await fakeTenant(server.database.db);
    const auth = await signIn(org.slug);
    const expected: [string, number[]][] = [];
    for (let index = 0; index < 3; index += 1) {
      const mail = `page-${index}-${unique(6)}@example.org`;
      const a = await person(org.organizationId, { email: mail });
      const b = await person(org.organizationId, { email: mail });
      expected.unshift(["email", [a.id, b.id]]);
    }
    expect(await groups(auth)).toEqual(expected);
    expect(await groups(auth, { limit: 2 })).toEqual(expected.slice(0, 2));
    expect(await groups(auth, { limit: 2, offset: 2 })).toEqual(expected.slice(2));
    expect(await duplicates(auth, { limit: 1, offset: 3 })).toEqual({ count: 3, items: [] });
    expect(await duplicates(auth, { limit: 200 })).toMatchObject({ count: 3 });

    for (const [variables, message] of [
      [{ limit: 0 }, 'Invalid argument "limit": must be >= 1'],
      [{ limit: 201 }, 'Invalid argument "limit": must be <= 200'],
      [{ offset: -1 }, 'Invalid argument "offset": must be >= 0'],
    ] as const) {
      const error = await errorOf(variables, auth);
      expect(error.message).toBe(message);
      expect(error.extensions.code).toBe("invalid_request");
    }
    // Not an integer: refused by GraphQL itself, never a server error.
    const answer = await graphql(DUPLICATES, { limit: "ten" }, auth);
    expect(answer.errors?.length).toBe(1);
  });

  it("needs supporters:read", async () => {
    const token = await fakeAppToken(server.database.db, tenant, ["donations:read"]);
    expect((await errorOf({}, { token })).extensions.code).toBe("insufficient_scope");
    const reader = await fakeAppToken(server.database.db, tenant, ["supporters:read"]);
    expect((await duplicates({ token: reader })).count).toBeGreaterThan(0);
  });
});
