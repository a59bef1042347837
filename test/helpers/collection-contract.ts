import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/client.js";
import { fakeTenant, type Tenant } from "./factories.js";
import { startTestServer, type TestServer } from "./server.js";

export interface CollectionContract {
  collection: string;
  orderFields: readonly string[];
  wireFields: readonly string[];
  /** Inserts `count` rows for the organization; rows with index % 3 === 0 get `sharedDate`. */
  populate(db: Db, organizationId: number, count: number, sharedDate: Date): Promise<void>;
  /** The value an order field sorts by, read from a wire item. */
  orderValue?(item: Record<string, unknown>, field: string): unknown;
}

const ROWS = 23;
const OTHER_ROWS = 5;
type Item = Record<string, unknown> & { id: number };

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** The behaviour every paginated collection shares (interface.md §4.1, decisions.md §4). */
export function describeCollectionContract(contract: CollectionContract) {
  const path = `/api/v1/${contract.collection}/`;
  const sortValue = (item: Item, field: string) =>
    contract.orderValue ? contract.orderValue(item, field) : (item[field] as unknown);

  describe(`${contract.collection}: collection contract`, () => {
    let server: TestServer;
    let tenant: Tenant;
    let other: Tenant;
    let empty: Tenant;

    const walk = async (token: string, query: string, limit: number) => {
      const items: Item[] = [];
      let count = Number.POSITIVE_INFINITY;
      for (let offset = 0; offset < count; offset += limit) {
        const response = await server.get(`${path}?limit=${limit}&offset=${offset}${query}`, token);
        expect(response.status).toBe(200);
        count = response.body.count;
        expect(response.body.items.length).toBe(Math.min(limit, count - offset));
        items.push(...response.body.items);
      }
      return { items, count };
    };

    beforeAll(async () => {
      server = await startTestServer();
      const db = server.database.db;
      [tenant, other, empty] = await Promise.all([fakeTenant(db), fakeTenant(db), fakeTenant(db)]);
      const sharedDate = new Date(Date.UTC(2026, 2, 1, 9, 30));
      await contract.populate(db, tenant.organizationId, ROWS, sharedDate);
      await contract.populate(db, other.organizationId, OTHER_ROWS, sharedDate);
    });
    afterAll(() => server?.close());

    it("returns {items, count} with the default order -create_date, ties by -id", async () => {
      const response = await server.get(path, tenant.token);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(Object.keys(response.body).sort()).toEqual(["count", "items"]);
      expect(response.body.count).toBe(ROWS);
      const items: Item[] = response.body.items;
      expect(items.length).toBe(ROWS);
      for (let i = 1; i < items.length; i++) {
        const [previous, current] = [items[i - 1] as Item, items[i] as Item];
        const byDate = compareValues(previous.create_date, current.create_date);
        expect(byDate > 0 || (byDate === 0 && previous.id > current.id)).toBe(true);
      }
    });

    it("serializes exactly the fields of the wire shape, none missing and none extra", async () => {
      const response = await server.get(`${path}?limit=1`, tenant.token);
      expect(Object.keys(response.body.items[0]).sort()).toEqual([...contract.wireFields].sort());
    });

    it("visits every row exactly once when walking offsets, also across shared create_dates", async () => {
      for (const limit of [1, 4, 10, 1000]) {
        const { items, count } = await walk(tenant.token, "", limit);
        expect(count).toBe(ROWS);
        expect(new Set(items.map((item) => item.id)).size).toBe(ROWS);
      }
    });

    it("orders by every field in both directions, ties broken by id, nulls last ascending", async () => {
      const all = (await server.get(`${path}?limit=1000`, tenant.token)).body.items as Item[];
      const ids = all.map((item) => item.id).sort((a, b) => a - b);
      for (const field of contract.orderFields) {
        const ascending = (await walk(tenant.token, `&order=${field}`, 6)).items;
        const descending = (await walk(tenant.token, `&order=-${field}`, 6)).items;
        expect(
          ascending.map((item) => item.id).sort((a, b) => a - b),
          field,
        ).toEqual(ids);
        expect(
          descending.map((item) => item.id),
          field,
        ).toEqual(ascending.map((item) => item.id).reverse());
        const values = ascending.map((item) => sortValue(item, field));
        const firstNull = values.indexOf(null);
        if (firstNull >= 0)
          expect(
            values.slice(firstNull).every((value) => value === null),
            field,
          ).toBe(true);
        // Text sorts by the database collation, which JavaScript does not reproduce.
        const comparable = typeof values.find((value) => value !== null) !== "string" || field.endsWith("_date");
        for (let i = 1; i < ascending.length; i++) {
          const [a, b] = [values[i - 1], values[i]];
          if (a === null || b === null) continue;
          const order = compareValues(a, b);
          if (comparable) expect(order <= 0, `${field}: ${a} before ${b}`).toBe(true);
          if (order === 0) expect((ascending[i - 1] as Item).id < (ascending[i] as Item).id, field).toBe(true);
        }
      }
    });

    it("reads a single record as the list shows it, and 404s for ids that are not the token's", async () => {
      const listed = (await server.get(`${path}?limit=1`, tenant.token)).body.items[0] as Item;
      const single = await server.get(`${path}${listed.id}`, tenant.token);
      expect(single.status).toBe(200);
      expect(single.body).toEqual(listed);
      const foreign = (await server.get(`${path}?limit=1`, other.token)).body.items[0] as Item;
      for (const id of [String(foreign.id), "abc", "0", "-1", "1.5", "99999999999999999999", "%20"]) {
        const response = await server.get(`${path}${id}`, tenant.token);
        expect(response.status, id).toBe(404);
        expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(response.body.code).toBe("not_found");
      }
    });

    it("never shows another organization's rows, by list, count or id", async () => {
      const mine = (await walk(tenant.token, "", 1000)).items.map((item) => item.id);
      const theirs = (await walk(other.token, "", 1000)).items.map((item) => item.id);
      expect(theirs.length).toBe(OTHER_ROWS);
      expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
      const none = await server.get(path, empty.token);
      expect(none.body).toEqual({ items: [], count: 0 });
    });

    it("answers every bad list parameter with a 400 problem and never a 5xx", async () => {
      const cases: [string, string][] = [
        ["limit=0", "limit"],
        ["limit=1001", "limit"],
        ["limit=-1", "limit"],
        ["limit=abc", "limit"],
        ["limit=1.5", "limit"],
        ["limit=", "limit"],
        ["offset=-1", "offset"],
        ["offset=abc", "offset"],
        ["offset=2.5", "offset"],
        ["offset=1e300", "offset"],
        ["offset=99999999999999999999", "offset"],
        ["limit=1e3&limit=2", "limit"],
        ["order=nope", "order"],
        ["order=-", "order"],
        ["order=--create_date", "order"],
        ["create_date_from=2026-02-30", "create_date_from"],
        ["create_date_to=yesterday", "create_date_to"],
        ["update_date_from=2026-13-01", "update_date_from"],
        ["unknown_parameter=1", "unknown_parameter"],
      ];
      for (const [query, parameter] of cases) {
        const response = await server.get(`${path}?${query}`, tenant.token);
        expect(response.status, query).toBe(400);
        expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(response.body.type).toBe("urn:donata:problem:invalid_request");
        expect(response.body.errors[0].parameter, query).toBe(parameter);
      }
      const response = await server.get(`${path}?limit=0`, tenant.token);
      expect(response.body).toEqual({
        type: "urn:donata:problem:invalid_request",
        title: "Bad Request",
        status: 400,
        detail: 'Invalid query parameter "limit": must be >= 1',
        code: "invalid_request",
        errors: [{ parameter: "limit", message: "must be >= 1" }],
      });
    });

    it("accepts the limit bounds 1 and 1000 and offsets past the end", async () => {
      expect((await server.get(`${path}?limit=1`, tenant.token)).body.items.length).toBe(1);
      expect((await server.get(`${path}?limit=1000`, tenant.token)).body.items.length).toBe(ROWS);
      expect((await server.get(`${path}?offset=${ROWS}`, tenant.token)).body).toEqual({ items: [], count: ROWS });
    });

    it("requires a bearer token", async () => {
      for (const header of [undefined, "Bearer", "Bearer nope-not-a-token-at-all", `Basic ${tenant.token}`]) {
        const response = await fetch(`${server.url}${path}`, header ? { headers: { authorization: header } } : {});
        expect(response.status, header).toBe(401);
        expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="api", error="invalid_token"/);
      }
    });
  });
}
