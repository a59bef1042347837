import { getTableColumns, getTableName, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Executor } from "../db/client.js";
import { type CountedCollection, countInsertedRows } from "../db/collection-counts.js";

const BULK_CHUNK = 5000;
const COUNTED = new Set<string>(["campaigns", "supporters", "donations", "payments", "checkouts", "payment_methods"]);

export async function allocateIds(tx: Executor, table: string, n: number): Promise<number[]> {
  if (n === 0) return [];
  const result = (await tx.execute(
    sql`select nextval(pg_get_serial_sequence(${table}, 'id')) as id from generate_series(1, ${n})`,
  )) as { rows: { id: string | number }[] };
  return result.rows.map((row) => Number(row.id));
}

/**
 * Bulk insert: each chunk travels as one JSON parameter expanded by json_populate_recordset, which
 * costs a fraction of building a multi-row VALUES statement with a parameter per value.
 */
export async function insertChunks<T extends Record<string, unknown>>(
  tx: Executor,
  table: PgTable,
  rows: T[],
  onChunk: (n: number) => void,
) {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name }));
  const tableName = getTableName(table);
  // Each chunk's JSON is built while the database inserts the previous chunk.
  let inserting: Promise<void> = Promise.resolve();
  try {
    for (let start = 0; start < rows.length; start += BULK_CHUNK) {
      const chunk = rows.slice(start, start + BULK_CHUNK);
      const present = columns.filter(({ key }) => chunk.some((row) => row[key] !== undefined));
      const records = chunk.map((row) =>
        Object.fromEntries(
          present.map(({ key, name }) => {
            const value = row[key];
            return [name, value instanceof Date ? value.toISOString() : (value ?? null)];
          }),
        ),
      );
      const names = sql.raw(present.map(({ name }) => `"${name}"`).join(", "));
      const statement = sql`insert into ${sql.identifier(tableName)} (${names}) select ${names} from json_populate_recordset(null::${sql.identifier(tableName)}, ${JSON.stringify(records)}::json)`;
      await inserting;
      inserting = tx.execute(statement).then(() => onChunk(chunk.length));
    }
  } finally {
    await inserting;
  }
  if (COUNTED.has(tableName)) {
    await countInsertedRows(tx, tableName as CountedCollection, rows as { organizationId?: number | null }[]);
  }
}

/** Each supporter's yearly-statement link, in one statement. */
export async function setCertificationUrls(tx: Executor, organizationId: number, links: { id: number; url: string }[]) {
  await tx.execute(sql`
    update supporters s set certification_url = v.url
    from json_to_recordset(${JSON.stringify(links)}::json) as v(id bigint, url text)
    where s.organization_id = ${organizationId} and s.id = v.id`);
}

/** Fresh statistics and visibility map after a bulk load. */
export async function vacuumAnalyze(db: Executor, tables: string[]) {
  for (const table of tables) await db.execute(sql.raw(`vacuum analyze ${table}`));
}

/** The organization's live campaign with the most PAID gifts (the demo's showcase). */
export async function busiestCampaign(db: Executor, organizationId: number): Promise<number> {
  const result = (await db.execute(sql`
    select c.id from campaigns c
    left join donations d on d.organization_id = c.organization_id and d.campaign_id = c.id
    left join payments p on p.organization_id = d.organization_id and p.donation_id = d.id and p.state = 'PAID'
    where c.organization_id = ${organizationId} and c.archive_date is null
    group by c.id
    order by count(p.id) desc, c.id
    limit 1`)) as { rows: { id: string | number }[] };
  const id = result.rows[0]?.id;
  if (id === undefined) throw new Error("the demo organization has no live campaign");
  return Number(id);
}
