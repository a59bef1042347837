import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, testDatabaseUrl } from "../../test/helpers/database.js";
import { type Database, openDatabase } from "../db/client.js";
import { type LimitRule, type LimitStore, openLimitStore, rateLimitHeaders } from "./rate-limiter.js";

const rule: LimitRule = { name: "test_burst", points: 5, durationSeconds: 60 };
const namespace = () => `t${randomBytes(4).toString("hex")}:`;

async function race(stores: LimitStore[], key: string, attempts: number) {
  const outcomes = await Promise.all(
    Array.from({ length: attempts }, (_, i) => (stores[i % stores.length] as LimitStore).consume(rule, key)),
  );
  return outcomes.filter((outcome) => outcome.allowed).length;
}

describe("rate limit store", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it("admits exactly the limit out of 41 concurrent hits on the database", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    expect(await race([store], "k", 41)).toBe(5);
    const refused = await store.consume(rule, "k");
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThan(0);
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
    expect((await store.consume(rule, "other")).allowed).toBe(true);
    await store.reset(rule, "k");
    expect(await store.consume(rule, "k")).toMatchObject({ allowed: true, remaining: 4 });
  });

  it("gives back rewarded points (a successful sign-in is not a failure of its address)", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    await store.consume(rule, "k");
    await store.consume(rule, "k");
    await store.reward(rule, "k");
    expect(await store.consume(rule, "k")).toMatchObject({ allowed: true, remaining: 3 });
  });

  it.runIf(testDatabaseUrl())("shares counters between two processes' connection pools (PostgreSQL)", async () => {
    const other = await openDatabase({ databaseUrl: testDatabaseUrl(), dataDir: "", poolSize: 4 });
    try {
      const prefix = namespace();
      const stores = [
        openLimitStore({ db: database.db, namespace: prefix }),
        openLimitStore({ db: other.db, namespace: prefix }),
      ];
      expect(await race(stores, "shared", 41)).toBe(5);
    } finally {
      await other.close();
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)("shares counters through Redis when REDIS_URL is set", async () => {
    const prefix = namespace();
    const stores = [
      openLimitStore({ db: database.db, redisUrl: process.env.TEST_REDIS_URL, namespace: prefix }),
      openLimitStore({ db: database.db, redisUrl: process.env.TEST_REDIS_URL, namespace: prefix }),
    ];
    try {
      expect(stores[0]?.kind).toBe("redis");
      expect(await race(stores, "shared", 41)).toBe(5);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("renders the IETF RateLimit-Policy and RateLimit fields", () => {
    expect(rateLimitHeaders({ rule, allowed: true, remaining: 3, resetSeconds: 17 })).toEqual({
      "ratelimit-policy": '"test_burst";q=5;w=60',
      ratelimit: '"test_burst";r=3;t=17',
    });
  });
});
