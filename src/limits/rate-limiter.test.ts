import { randomBytes } from "node:crypto";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, testDatabaseUrl } from "../../test/helpers/database.js";
import { type Database, openDatabase } from "../db/client.js";
import { rateLimits } from "../db/schema.js";
import { type LimitRule, type LimitStore, openLimitStore, rateLimitHeaders, withinDeadline } from "./rate-limiter.js";

const rule: LimitRule = { name: "test_burst", points: 5, durationSeconds: 60 };
const namespace = () => `t${randomBytes(4).toString("hex")}:`;

async function race(stores: LimitStore[], key: string, attempts: number) {
  const outcomes = await Promise.all(
    Array.from({ length: attempts }, (_, i) => (stores[i % stores.length] as LimitStore).consume(rule, key)),
  );
  return outcomes.filter((outcome) => outcome.allowed).length;
}

const leased: LimitRule = { name: "test_leased", points: 200, durationSeconds: 60, lease: 20 };

/** Hits `stores` (processes) in turn, all at once; how many were let through. */
async function hammer(stores: LimitStore[], limit: LimitRule, key: string, attempts: number) {
  const outcomes = await Promise.all(
    Array.from({ length: attempts }, (_, i) => (stores[i % stores.length] as LimitStore).consume(limit, key)),
  );
  return outcomes.filter((outcome) => outcome.allowed).length;
}

/** Each store in turn serves what it can until it refuses: what the processes held unused. */
async function drain(stores: LimitStore[], limit: LimitRule, key: string) {
  let served = 0;
  for (const store of stores) while ((await store.consume(limit, key)).allowed) served++;
  return served;
}

describe("rate limit store", () => {
  let database: Database;
  // Writes to the counters' table: what each request costs the shared store.
  let writes = 0;
  // Sweeps sent through this connection (another process's sweeper may clear the same rows).
  let sweeps = 0;
  beforeAll(async () => {
    database = await openTestDatabase((query) => {
      if (/^insert into "rate_limits"/i.test(query)) writes++;
      if (/^delete from "rate_limits"/i.test(query)) sweeps++;
    });
  });
  afterAll(async () => {
    await database.close();
  });

  it("sweeps counters expired over an hour ago, and stops sweeping when closed", async () => {
    const prefix = namespace();
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const keysLeft = async () =>
      (
        await database.db
          .select({ key: rateLimits.key })
          .from(rateLimits)
          .where(like(rateLimits.key, `${prefix}%`))
          .orderBy(rateLimits.key)
      ).map((row) => row.key);
    await database.db.insert(rateLimits).values([
      { key: `${prefix}old`, points: 1, expire: hoursAgo(2) },
      { key: `${prefix}recent`, points: 1, expire: hoursAgo(0.5) },
      { key: `${prefix}live`, points: 1, expire: hoursAgo(-1) },
    ]);
    const store = openLimitStore({ db: database.db, namespace: prefix, sweepIntervalMs: 20 });
    await expect.poll(keysLeft).toEqual([`${prefix}live`, `${prefix}recent`]);
    await expect.poll(() => sweeps).toBeGreaterThan(0);
    await store.close();
    // The table is shared with every other test process, whose servers sweep it too: what this
    // store did after close() is read from the statements it sent, not from the rows left.
    const sweepsAtClose = sweeps;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sweeps).toBe(sweepsAtClose);
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

  it("counts an exact rule (sign-in) with one write per hit", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    writes = 0;
    for (let i = 0; i < 12; i++) await store.consume(rule, "k");
    expect(writes).toBe(12);
  });

  it("pays a leased rule ahead, one write per lease, with every request in its remaining count", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    const big: LimitRule = { ...leased, points: 1000, lease: 100 };
    writes = 0;
    const sequential = [];
    for (let i = 0; i < 250; i++) sequential.push(await store.consume(big, "k"));
    expect(sequential.map((outcome) => outcome.remaining)).toEqual(Array.from({ length: 250 }, (_, i) => 999 - i));
    expect(sequential.every((outcome) => outcome.allowed && outcome.resetSeconds <= 60)).toBe(true);
    expect(writes).toBe(3);
    // 250 at once: the 50 left of the third lease, then two more leases, never one per waiting request.
    writes = 0;
    expect(await hammer([store], big, "k", 250)).toBe(250);
    expect(writes).toBe(2);
    expect(await store.peek(big, "k")).toMatchObject({ allowed: true, remaining: 500 });
    await store.reset(big, "k");
    expect(await store.consume(big, "k")).toMatchObject({ allowed: true, remaining: 999 });
  });

  it("takes only what it needs near the limit, then refuses from memory until the window ends", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    const small: LimitRule = { ...leased, points: 100, lease: 10 };
    writes = 0;
    const outcomes = [];
    for (let i = 0; i < 110; i++) outcomes.push(await store.consume(small, "k"));
    expect(outcomes.map((outcome) => outcome.allowed)).toEqual([...Array(100).fill(true), ...Array(10).fill(false)]);
    expect(outcomes.map((outcome) => outcome.remaining)).toEqual([
      ...Array.from({ length: 100 }, (_, i) => 99 - i),
      ...Array(10).fill(0),
    ]);
    // Nine leases of 10 while the store held 20 or more, then the last 10 one by one; refusals cost nothing.
    expect(writes).toBe(19);
  });

  it("ends a lease with its window", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace() });
    const brief: LimitRule = { ...leased, points: 10, durationSeconds: 1, lease: 5 };
    writes = 0;
    for (let i = 0; i < 3; i++) await store.consume(brief, "k");
    expect(writes).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // The two points left unused belonged to the last window: a new lease, and a full budget.
    expect(await store.consume(brief, "k")).toMatchObject({ allowed: true, remaining: 9 });
    expect(writes).toBe(2);
  });

  it("keeps at most maxLeases keys' leases in memory, dropping the oldest", async () => {
    const store = openLimitStore({ db: database.db, namespace: namespace(), maxLeases: 2 });
    writes = 0;
    for (const key of ["a", "b", "c"]) await store.consume(leased, key);
    expect(writes).toBe(3);
    // a's lease made room for c's: a takes a new one (and its unused points are lost for the window).
    expect(await store.consume(leased, "a")).toMatchObject({ allowed: true, remaining: 179 });
    expect(writes).toBe(4);
    await store.consume(leased, "c");
    expect(writes).toBe(4);
  });

  it("never lets two processes leasing on one database pass the limit, and refuses at most a lease early", async () => {
    const prefix = namespace();
    const stores = [
      openLimitStore({ db: database.db, namespace: prefix }),
      openLimitStore({ db: database.db, namespace: prefix }),
    ];
    writes = 0;
    const hammered = await hammer(stores, leased, "shared", 600);
    expect(hammered).toBeLessThanOrEqual(leased.points);
    expect(hammered).toBeGreaterThanOrEqual(leased.points - (leased.lease as number));
    // What was refused early was held by the other process, which still serves it.
    expect(hammered + (await drain(stores, leased, "shared"))).toBe(leased.points);
    expect(writes).toBeLessThan(60);
  });

  it("grants a lease asked on stale knowledge only the points that still fit under the limit", async () => {
    const prefix = namespace();
    const [first, second] = [
      openLimitStore({ db: database.db, namespace: prefix }),
      openLimitStore({ db: database.db, namespace: prefix }),
    ] as const;
    const small: LimitRule = { ...leased, points: 100, lease: 10 };
    // The first process leases 10 and serves one; the second then takes 85 of the 90 left.
    expect(await first.consume(small, "k")).toMatchObject({ allowed: true, remaining: 99 });
    for (let i = 0; i < 85; i++) expect((await second.consume(small, "k")).allowed).toBe(true);
    // The first still believes 90 are left: its 9 leased points, then a lease of 10 of which only 5 fit.
    expect(await drain([first], small, "k")).toBe(14);
    expect(await drain([second], small, "k")).toBe(0);
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
      const hammered = await hammer(stores, leased, "leased", 600);
      expect(hammered).toBeLessThanOrEqual(leased.points);
      expect(hammered).toBeGreaterThanOrEqual(leased.points - (leased.lease as number));
      expect(hammered + (await drain(stores, leased, "leased"))).toBe(leased.points);
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
      const hammered = await hammer(stores, leased, "leased", 600);
      expect(hammered).toBeLessThanOrEqual(leased.points);
      expect(hammered).toBeGreaterThanOrEqual(leased.points - (leased.lease as number));
      expect(hammered + (await drain(stores, leased, "leased"))).toBe(leased.points);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it.runIf(process.env.TEST_REDIS_URL)(
    "does not blame Redis for a reply its own busy event loop read late",
    async () => {
      const store = openLimitStore({ db: database.db, redisUrl: process.env.TEST_REDIS_URL, namespace: namespace() });
      try {
        // Connected, and the counting script loaded.
        expect((await store.consume(rule, "busy")).allowed).toBe(true);
        const counted = store.consume(rule, "busy");
        // The loop is held past the 1 s deadline while Redis answers at once: the timer fires
        // first when the loop comes back, the answer waits in the socket.
        const until = Date.now() + 1500;
        while (Date.now() < until) {}
        expect(await counted).toMatchObject({ allowed: true, remaining: 3 });
      } finally {
        await store.close();
      }
    },
  );

  it("fails a store call that has not answered within its deadline, and not one answered late by a busy loop", async () => {
    await expect(withinDeadline(new Promise(() => {}), 50)).rejects.toThrow(
      "the rate limit store did not answer within 50 ms",
    );
    // Settled by I/O: a socket's data, there before the deadline, read after it by a held loop.
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    const serverSide = await accepted;
    try {
      const answer = withinDeadline(
        new Promise<string>((resolve) => client.once("data", (data) => resolve(String(data)))),
        50,
      );
      serverSide.write("pong");
      const until = Date.now() + 200;
      while (Date.now() < until) {}
      expect(await answer).toBe("pong");
    } finally {
      client.destroy();
      serverSide.destroy();
      server.close();
    }
  });

  it("renders the IETF RateLimit-Policy and RateLimit fields", () => {
    expect(rateLimitHeaders({ rule, allowed: true, remaining: 3, resetSeconds: 17 })).toEqual({
      "ratelimit-policy": '"test_burst";q=5;w=60',
      ratelimit: '"test_burst";r=3;t=17',
    });
  });
});
