import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrivateDatabase, openTestDatabase, testDatabaseUrl } from "../../test/helpers/database.js";
import type { Database } from "./client.js";
import { distributeSchema, layoutProblems, TABLE_LAYOUT } from "./distribution.js";

/** Runs a catalog query with its one parameter (a schema name) inlined as a literal: PGlite and pg alike. */
function catalog(database: Database) {
  return async (text: string, params: unknown[] = []) => {
    const inlined = text.replace(
      /\$(\d+)/g,
      (_, n: string) => `'${String(params[Number(n) - 1]).replaceAll("'", "''")}'`,
    );
    const result = (await database.db.execute(sql.raw(inlined))) as unknown as { rows: Record<string, unknown>[] };
    return result.rows;
  };
}

describe("the schema is distributable (Citus's rules), on every database", () => {
  let database: Database;
  const probe = `layout_probe_${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.db.execute(sql.raw(`drop schema if exists ${probe} cascade`));
    await database.close();
  });

  it("places every table; tenant keys, unique indexes and foreign keys include organization_id", async () => {
    expect(await layoutProblems(catalog(database))).toEqual([]);
  });

  it("names each way a migration could break the layout", async () => {
    // A schema of its own with one mistake of each kind, checked against a layout that places its tables.
    const statements = `create schema ${probe};
      create table ${probe}.orgs (id bigint primary key);
      create table ${probe}.parents (organization_id bigint not null references ${probe}.orgs (id), id bigint not null,
        primary key (organization_id, id));
      create table ${probe}.globally_unique (organization_id bigint not null, id bigint not null, primary key (organization_id, id));
      create unique index on ${probe}.globally_unique (id);
      create table ${probe}.no_tenant (id bigint primary key);
      create table ${probe}.loose_child (organization_id bigint not null, id bigint not null, parent_id bigint,
        primary key (organization_id, id), unique (parent_id, organization_id));
      alter table ${probe}.loose_child add foreign key (parent_id, organization_id) references ${probe}.parents (organization_id, id);
      create table ${probe}.tokens (id bigint primary key, organization_id bigint, parent_id bigint);
      alter table ${probe}.tokens add constraint tokens_parent_fk foreign key (organization_id, parent_id) references ${probe}.parents (organization_id, id);
      create table ${probe}.stray (id bigint primary key)`;
    for (const statement of statements.split(";")) await database.db.execute(sql.raw(statement));
    const layout = {
      distributed: ["parents", "globally_unique", "no_tenant", "loose_child", "gone"],
      reference: ["orgs", "tokens"],
      coordinator: [],
    };
    const problems = await layoutProblems(catalog(database), probe, layout);
    expect(problems).toEqual(
      expect.arrayContaining([
        "stray: not placed in TABLE_LAYOUT",
        "no_tenant: distributed without a NOT NULL organization_id",
        "gone: in TABLE_LAYOUT.distributed but not in the schema",
        "globally_unique: unique index globally_unique_id_idx leaves out organization_id",
        "no_tenant: unique index no_tenant_pkey leaves out organization_id",
        expect.stringMatching(
          /^loose_child: foreign key .* to parents does not pair organization_id with organization_id$/,
        ),
        "tokens: reference table with foreign key tokens_parent_fk to parents (distributed)",
      ]),
    );
    expect(problems, problems.join("\n")).toHaveLength(7);
  });

  it("on a Citus coordinator, lays every table out as TABLE_LAYOUT says, the tenant tables colocated", async () => {
    const query = catalog(database);
    const [citus] = await query("select count(*)::int as n from pg_extension where extname = 'citus'");
    if (!citus?.n) return; // Plain PostgreSQL and PGlite: the rules above are what they can check.
    const rows = await query(
      "select table_name::text as name, citus_table_type as type, colocation_id from citus_tables",
    );
    const placed = new Map(rows.map((row) => [String(row.name), row]));
    for (const table of TABLE_LAYOUT.distributed) expect(placed.get(table)?.type, table).toBe("distributed");
    for (const table of TABLE_LAYOUT.reference) expect(placed.get(table)?.type, table).toBe("reference");
    expect(new Set(TABLE_LAYOUT.distributed.map((table) => placed.get(table)?.colocation_id)).size).toBe(1);
    expect(placed.get("jobs")?.type).toBe("local");
  });

  it("on a Citus coordinator, a later migration's tables take their place at once (an upgrade)", async () => {
    const shared = testDatabaseUrl();
    const query = catalog(database);
    const [citus] = await query("select count(*)::int as n from pg_extension where extname = 'citus'");
    if (!shared || !citus?.n) return;
    // A cluster laid out at 0015, as deployed before the events migration; then upgraded with plain migrate.
    const folder = await mkdtemp(path.join(os.tmpdir(), "donata-migrations-"));
    const source = fileURLToPath(new URL("./migrations", import.meta.url));
    await cp(source, folder, { recursive: true });
    const journalFile = path.join(folder, "meta", "_journal.json");
    const journal = JSON.parse(await readFile(journalFile, "utf8")) as { entries: { tag: string }[] };
    journal.entries = journal.entries.filter((entry) => entry.tag < "0016");
    await writeFile(journalFile, JSON.stringify(journal));
    const target = await createPrivateDatabase(shared, "upgrade");
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      await migratePg(drizzlePg(client), { migrationsFolder: folder });
      await distributeSchema(client);
      await migratePg(drizzlePg(client), { migrationsFolder: source });
      const { rows } = await client.query(
        "select table_name::text as name, citus_table_type as type, colocation_id from citus_tables where table_name::text in ('campaigns', 'events', 'event_sequences') order by 1",
      );
      expect(rows.map((row) => row.type)).toEqual(["distributed", "distributed", "distributed"]);
      expect(new Set(rows.map((row) => row.colocation_id)).size).toBe(1);
    } finally {
      await client.end();
      await target.drop();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
