import { sql } from "drizzle-orm";
import type { Executor } from "./client.js";

/** The next id of a table's identity sequence, so a code can be derived from it in the same insert. */
export async function nextId(tx: Executor, table: "donations" | "supporters" | "checkout_attempts"): Promise<number> {
  const result = await tx.execute<{ id: string }>(sql`select nextval(pg_get_serial_sequence(${table}, 'id')) as id`);
  const rows = (result as unknown as { rows: { id: string }[] }).rows;
  return Number(rows[0]?.id);
}
