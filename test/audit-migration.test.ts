import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distributeSchema } from "../src/db/distribution.js";
import { summarize } from "../src/modules/audit/audit.service.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";

/**
 * Upgrading to the audit log read from the events (0017): what the old audit table recorded moves
 * into the events as `audit.legacy`, numbered after each organization's events, nothing lost, and the
 * table goes. On PGlite, PostgreSQL, and a Citus cluster laid out before the upgrade.
 */

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

const source = path.resolve("src/db/migrations");

describe("upgrading to the audit log read from the events", () => {
  let folder: string;
  let query: Query;
  let upgrade: () => Promise<void>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    // The migrations as deployed before this one.
    folder = await mkdtemp(path.join(os.tmpdir(), "donata-migrations-"));
    await cp(source, folder, { recursive: true });
    const journalFile = path.join(folder, "meta", "_journal.json");
    const journal = JSON.parse(await readFile(journalFile, "utf8")) as { entries: { tag: string }[] };
    journal.entries = journal.entries.filter((entry) => entry.tag < "0017");
    await writeFile(journalFile, JSON.stringify(journal));

    const shared = testDatabaseUrl();
    if (shared) {
      const target = await createPrivateDatabase(shared, "auditup");
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      await migratePg(drizzlePg(client), { migrationsFolder: folder });
      const [citus] = (await client.query("select 1 from pg_extension where extname = 'citus'")).rows;
      if (citus) await distributeSchema(client);
      query = async (text, params = []) => (await client.query(text, params)).rows;
      upgrade = async () => {
        await migratePg(drizzlePg(client), { migrationsFolder: source });
      };
      close = async () => {
        await client.end();
        await target.drop();
      };
    } else {
      const client = new PGlite();
      await migratePglite(drizzlePglite(client), { migrationsFolder: folder });
      query = async (text, params = []) => (await client.query<Record<string, unknown>>(text, params)).rows;
      upgrade = async () => {
        await migratePglite(drizzlePglite(client), { migrationsFolder: source });
      };
      close = () => client.close();
    }
  });
  afterAll(async () => {
    await close?.();
    await rm(folder, { recursive: true, force: true });
  });

  it("moves every old audit record into the events, after the organization's own, and drops the table", async () => {
    const [org] = await query("insert into organizations (slug, name) values ('upgraded', 'Upgraded') returning id");
    const [other] = await query("insert into organizations (slug, name) values ('quiet', 'Quiet') returning id");
    const [user] = await query("insert into users (email, password_hash) values ('ada@example.org', 'x') returning id");
    // One event recorded before the upgrade (0016 already had events).
    await query("insert into event_sequences (organization_id, last_seq) values ($1, 1)", [org?.id]);
    await query(
      `insert into events (organization_id, seq, id, type, resource_type, resource_id, actor, data)
       values ($1, 1, 'evt_bbbbbbbbbbbbbbbbbbbb', 'campaign.created', 'campaign', 7, '{"type":"system","label":"cli"}', '{"id":7}')`,
      [org?.id],
    );
    const old = [
      [
        user?.id,
        "ada@example.org",
        "payments.stripe_connected",
        { processor: "stripe", mode: "test", secret_key_last4: "4242" },
      ],
      [null, "cli", "payments.test_mode_enabled", { processor: "sandbox" }],
      [null, "donor grace@example.org", "donations.cancelled", { donation_id: 12, by: "donor", reason: null }],
      [null, "application 3", "donations.amount_changed", { donation_id: 12, by: "admin", from: 15, to: 20 }],
      [null, "former@example.org", "email.settings_updated", { locale: "it" }],
    ] as const;
    for (const [index, [userId, actor, action, details]] of old.entries()) {
      await query(
        `insert into audit_events (organization_id, actor_user_id, actor, action, details, create_date)
         values ($1, $2, $3, $4, $5, $6)`,
        [org?.id, userId, actor, action, JSON.stringify(details), new Date(Date.UTC(2026, 0, 1 + index)).toISOString()],
      );
    }

    await upgrade();

    const rows = await query(
      "select seq::int as seq, id, type, resource_type, actor, data, create_date from events where organization_id = $1 order by seq",
      [org?.id],
    );
    expect(rows.map((row) => [row.seq, row.type])).toEqual([
      [1, "campaign.created"],
      [2, "audit.legacy"],
      [3, "audit.legacy"],
      [4, "audit.legacy"],
      [5, "audit.legacy"],
      [6, "audit.legacy"],
    ]);
    expect(rows.slice(1).map((row) => row.actor)).toEqual([
      { type: "user", user_id: Number(user?.id), label: "ada@example.org" },
      { type: "system", label: "cli" },
      { type: "donor", supporter_id: null, label: "donor" },
      { type: "application", application_id: 3, label: "application 3" },
      { type: "user", user_id: null, label: "former@example.org" },
    ]);
    expect(rows[1]?.data).toEqual({ action: "payments.stripe_connected", details: old[0][3] });
    expect(new Date(String(rows[1]?.create_date)).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    for (const row of rows) expect(row.id).toMatch(/^evt_[A-Za-z0-9_-]{20}$/);
    // Nothing personal of a donor survives in the actor (the old label carried their email).
    expect(JSON.stringify(rows)).not.toContain("grace@example.org");
    // The sentences the audit log shows for them are the ones it showed before.
    expect(summarize({ type: "audit.legacy", resourceId: null, data: rows[1]?.data ?? {}, changes: null })).toBe(
      "Connected Stripe (test mode, secret key ending 4242)",
    );
    const [counter] = await query("select last_seq::int as last from event_sequences where organization_id = $1", [
      org?.id,
    ]);
    expect(counter?.last).toBe(6);
    // An organization without old records gets neither events nor a counter from the move.
    expect(await query("select 1 from events where organization_id = $1", [other?.id])).toEqual([]);
    expect(await query("select to_regclass('public.audit_events') as name")).toEqual([{ name: null }]);
  });
});
