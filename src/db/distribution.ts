import type pg from "pg";

/**
 * Where each table lives on a Citus cluster (docs/scaling.md says why). Every table of the schema
 * is in exactly one list; a schema test fails on a table that is in none, and checks the rules that
 * make the distributed ones distributable. On plain PostgreSQL and PGlite these lists change nothing.
 */
export const TABLE_LAYOUT = {
  /** Hash-distributed by organization_id, all colocated: an organization's rows live on one shard. Parents first. */
  distributed: [
    "campaigns",
    "supporters",
    "payment_methods",
    "donations",
    "payments",
    "checkouts",
    "checkout_attempts",
    "checkout_protection",
    "refunds",
    "consent_records",
    "supporter_notes",
    "supporter_merges",
    "segments",
    "collection_counts",
    "idempotency_keys",
    "outbox_messages",
    "processor_accounts",
    "processor_events",
    "event_sequences",
    "events",
    "donor_links",
    "donor_sessions",
    "webhook_endpoints",
    "webhook_deliveries",
    "webhook_attempts",
    "organization_profiles",
    "receipt_counters",
    "receipts",
    "images",
    "image_renditions",
    "imports",
  ],
  /**
   * Copied to every node: the platform's own tables, and the few with an organization that a request
   * must find before it knows the organization (a bearer token, an authorization code, a member's
   * organizations, an application's installations). Read locally everywhere; written rarely.
   */
  reference: [
    "organizations",
    "users",
    "applications",
    "platform_keys",
    "memberships",
    "installations",
    "oauth_authorization_codes",
    "oauth_tokens",
    "sessions",
    "user_sign_in_links",
    "user_factors",
    "recovery_codes",
    "identity_challenges",
  ],
  /** Kept on the coordinator: work queues and counters read across organizations by nature. */
  coordinator: ["jobs", "rate_limits", "sandbox_charges"],
} as const;

export type Placement = keyof typeof TABLE_LAYOUT;

/**
 * Tables of earlier schemas that a later migration drops, with the place they had: a database of an
 * earlier version (an older backup restored onto a cluster, an upgrade in steps) is laid out as it
 * was, then migrated.
 */
const RETIRED_TABLES: Record<string, Placement> = { audit_events: "distributed" };

/** Every table of a placement, the retired ones last (parents first within the current ones). */
const tablesOf = (placement: Placement): string[] => [
  ...TABLE_LAYOUT[placement],
  ...Object.keys(RETIRED_TABLES).filter((table) => RETIRED_TABLES[table] === placement),
];

export function placementOf(table: string): Placement | undefined {
  for (const placement of Object.keys(TABLE_LAYOUT) as Placement[]) {
    if ((TABLE_LAYOUT[placement] as readonly string[]).includes(table)) return placement;
  }
  return RETIRED_TABLES[table];
}

/** Whether the database is a Citus coordinator (the extension is installed in it). */
export async function hasCitus(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query("select 1 from pg_extension where extname = 'citus'");
  return rows.length > 0;
}

export class DistributionError extends Error {
  override name = "DistributionError";
}

/**
 * Lays the schema out on a Citus cluster: reference tables first, then the tenant tables
 * distributed by organization_id and colocated, then the coordinator's tables added to Citus's
 * metadata where they point at a reference table. Idempotent: a table already in place is left
 * alone, so it runs after every migration and places the tables a migration created. A table
 * that holds rows is moved to its shards (the way a single-node database joins a cluster).
 */
export async function distributeSchema(client: pg.ClientBase): Promise<{ placed: string[] }> {
  const { rows: tables } = await client.query<{ name: string }>(
    "select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace " +
      "where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition",
  );
  const unplaced = tables.map((row) => row.name).filter((name) => !placementOf(name));
  if (unplaced.length > 0) {
    throw new DistributionError(
      `no place on the cluster for ${unplaced.join(", ")}: add ${unplaced.length === 1 ? "it" : "them"} to TABLE_LAYOUT in src/db/distribution.ts`,
    );
  }
  const { rows: present } = await client.query<{ name: string; type: string }>(
    "select table_name::text as name, citus_table_type as type from citus_tables",
  );
  const placedAs = new Map(present.map((row) => [row.name, row.type]));
  const misplaced = [...tablesOf("reference"), ...tablesOf("distributed")].filter(
    (table) => placedAs.has(table) && placedAs.get(table) !== placementOf(table),
  );
  if (misplaced.length > 0) {
    throw new DistributionError(
      `${misplaced.map((table) => `${table} (${placedAs.get(table)}, should be ${placementOf(table)})`).join(", ")}: ` +
        "a migration gave a new table a foreign key before its place; call donata_place('table', 'distributed' or 'reference') " +
        "right after its CREATE TABLE (docs/scaling.md)",
    );
  }
  const existing = new Set(tables.map((row) => row.name));
  const placed: string[] = [];
  const toPlace = new Set<string>(
    [...tablesOf("reference"), ...tablesOf("distributed"), ...tablesOf("coordinator")].filter(
      (table) => existing.has(table) && !placedAs.has(table),
    ),
  );
  if (toPlace.size === 0) return { placed };
  // Citus places a table only when no local table points at it, and cannot turn a table it already
  // took in on its own (a local table pointing at a new reference table) into a distributed one
  // when it has an identity column: the foreign keys of the tables to place step aside meanwhile,
  // and come back once every table is in place. One transaction: all of it or none.
  await client.query("begin");
  try {
    // The foreign keys come back after shards were created in parallel: one connection per node from here.
    await client.query("set local citus.multi_shard_modify_mode to 'sequential'");
    const { rows: foreignKeys } = await client.query<{ table: string; name: string; definition: string }>(
      "select c.conrelid::regclass::text as table, c.conname as name, pg_get_constraintdef(c.oid) as definition " +
        "from pg_constraint c where c.contype = 'f' and (c.conrelid::regclass::text = any($1) or c.confrelid::regclass::text = any($1))",
      [[...toPlace]],
    );
    for (const key of foreignKeys) {
      await client.query(`alter table ${quote(key.table)} drop constraint ${quote(key.name)}`);
    }
    for (const table of tablesOf("reference")) {
      if (!toPlace.has(table)) continue;
      await client.query("select create_reference_table($1)", [table]);
      placed.push(table);
    }
    let colocateWith: string | undefined = tablesOf("distributed").find(
      (table) => placedAs.get(table) === "distributed",
    );
    for (const table of tablesOf("distributed")) {
      if (!toPlace.has(table)) continue;
      await client.query("select create_distributed_table($1, 'organization_id', colocate_with => $2)", [
        table,
        colocateWith ?? "none",
      ]);
      colocateWith ??= table;
      placed.push(table);
    }
    // A coordinator table that points at a reference table must be known to Citus (a "Citus local
    // table"); the others stay plain PostgreSQL tables on the coordinator.
    const pointing = new Set(
      foreignKeys
        .filter((key) => placementOf(key.table) === "coordinator" && toPlace.has(key.table))
        .map((key) => key.table),
    );
    for (const table of pointing) {
      await client.query("select citus_add_local_table_to_metadata($1)", [table]);
      placed.push(table);
    }
    for (const key of foreignKeys) {
      await client.query(`alter table ${quote(key.table)} add constraint ${quote(key.name)} ${key.definition}`);
    }
    // Plans made for the values at hand: a prepared statement's generic plan, made without the
    // organization's id, would be planned for every shard, and Citus refuses some such plans.
    await client.query(
      "do $$ begin execute format('alter database %I set plan_cache_mode = force_custom_plan', current_database()); end $$",
    );
    await client.query("commit");
  } catch (error) {
    await client.query("rollback");
    throw error;
  }
  return { placed };
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * What would keep a schema from being laid out on a cluster, in words (none: it is distributable).
 * Checked on every database by the schema test, so a migration that breaks the rules fails there
 * first: every table placed; a distributed table has a NOT NULL organization_id, and every primary
 * key and unique index of it includes that column; a foreign key between distributed tables pairs
 * organization_id with organization_id; a reference table points only at reference tables.
 */
export async function layoutProblems(
  query: Query,
  schema = "public",
  layout: Record<Placement, readonly string[]> = TABLE_LAYOUT,
): Promise<string[]> {
  const placement = (table: string): Placement | undefined =>
    (Object.keys(layout) as Placement[]).find((key) => (layout[key] as readonly string[]).includes(table));
  const problems: string[] = [];
  const tables = (
    await query(
      "select c.relname as name, exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' " +
        "and a.attnotnull and not a.attisdropped) as org from pg_class c join pg_namespace n on n.oid = c.relnamespace " +
        "where n.nspname = $1 and c.relkind in ('r', 'p') and not c.relispartition order by 1",
      [schema],
    )
  ).map((row) => ({ name: String(row.name), org: Boolean(row.org) }));
  const names = new Set(tables.map((table) => table.name));
  for (const table of tables) {
    const where = placement(table.name);
    if (!where) problems.push(`${table.name}: not placed in TABLE_LAYOUT`);
    if (where === "distributed" && !table.org)
      problems.push(`${table.name}: distributed without a NOT NULL organization_id`);
  }
  for (const key of Object.keys(layout) as Placement[]) {
    for (const table of layout[key])
      if (!names.has(table)) problems.push(`${table}: in TABLE_LAYOUT.${key} but not in the schema`);
  }
  const indexes = await query(
    "select t.relname as table, i.relname as index, array(select a.attname::text from unnest(x.indkey) k " +
      "join pg_attribute a on a.attrelid = t.oid and a.attnum = k) as columns from pg_index x " +
      "join pg_class t on t.oid = x.indrelid join pg_class i on i.oid = x.indexrelid join pg_namespace n on n.oid = t.relnamespace " +
      "where n.nspname = $1 and x.indisunique order by 1, 2",
    [schema],
  );
  for (const row of indexes) {
    const table = String(row.table);
    if (placement(table) !== "distributed") continue;
    if (!(row.columns as string[]).includes("organization_id")) {
      problems.push(`${table}: unique index ${String(row.index)} leaves out organization_id`);
    }
  }
  const keys = await query(
    "select c.conname as name, s.relname as table, r.relname as referenced, " +
      "array(select a.attname::text from unnest(c.conkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.i) as columns, " +
      "array(select a.attname::text from unnest(c.confkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.i) as referenced_columns " +
      "from pg_constraint c join pg_class s on s.oid = c.conrelid join pg_class r on r.oid = c.confrelid " +
      "join pg_namespace n on n.oid = s.relnamespace where n.nspname = $1 and c.contype = 'f' order by 2, 1",
    [schema],
  );
  for (const row of keys) {
    const [table, referenced, name] = [String(row.table), String(row.referenced), String(row.name)];
    const columns = row.columns as string[];
    const referencedColumns = row.referenced_columns as string[];
    const from = placement(table);
    const to = placement(referenced);
    if (from === "distributed" && to === "distributed") {
      const at = columns.indexOf("organization_id");
      if (at < 0 || referencedColumns[at] !== "organization_id") {
        problems.push(
          `${table}: foreign key ${name} to ${referenced} does not pair organization_id with organization_id`,
        );
      }
    }
    if (from === "reference" && to !== "reference") {
      problems.push(`${table}: reference table with foreign key ${name} to ${referenced} (${to ?? "unplaced"})`);
    }
    if (from === "coordinator" && to === "distributed") {
      problems.push(`${table}: coordinator table with foreign key ${name} to the distributed ${referenced}`);
    }
  }
  return problems;
}
