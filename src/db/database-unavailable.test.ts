import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openDatabase } from "./client.js";
import { isDatabaseUnavailable } from "./database-unavailable.js";

const failure = (run: () => Promise<unknown>) =>
  run().then(
    () => expect.unreachable("the statement succeeded"),
    (error: unknown) => error,
  );

describe("isDatabaseUnavailable", () => {
  it("recognizes a closed embedded database, and not a wrong statement", async () => {
    const database = await openDatabase({ databaseUrl: undefined, dataDir: "memory://" });
    expect(isDatabaseUnavailable(await failure(() => database.db.execute(sql`select nope`)))).toBe(false);
    await database.close();
    expect(isDatabaseUnavailable(await failure(() => database.db.execute(sql`select 1`)))).toBe(true);
    expect(isDatabaseUnavailable(await failure(() => database.ping()))).toBe(true);
  });

  it("recognizes PostgreSQL's connection states and the drivers' connection errors, through causes", () => {
    const state = (code: string) => Object.assign(new Error("from the server"), { code });
    for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "53300", "ECONNREFUSED"]) {
      expect([code, isDatabaseUnavailable(new Error("Failed query", { cause: state(code) }))]).toEqual([code, true]);
    }
    for (const code of ["23505", "22P02", "42P01", "40001", "57014"]) {
      expect([code, isDatabaseUnavailable(state(code))]).toEqual([code, false]);
    }
    expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("something else"))).toBe(false);
    expect(isDatabaseUnavailable("Connection terminated")).toBe(false);
  });
});
