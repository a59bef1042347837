import { and, asc, desc, eq, getTableColumns, inArray, lt, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { imports } from "../../db/schema.js";

export type ImportRow = typeof imports.$inferSelect;
/** An import as it is listed and shown: without its file and its results CSV (megabytes, read on their own). */
export type ImportSummaryRow = Omit<ImportRow, "content" | "resultsCsv">;

const { content: _content, resultsCsv: _resultsCsv, ...SUMMARY } = getTableColumns(imports);
/** The worker's queue is every organization's; a test's worker takes its own organizations' only. */
const ofOrganizations = (organizationIds?: readonly number[]) =>
  organizationIds ? inArray(imports.organizationId, [...organizationIds]) : undefined;

export async function insertImport(
  tx: Executor,
  values: Pick<
    typeof imports.$inferInsert,
    | "organizationId"
    | "kind"
    | "fileName"
    | "preset"
    | "mapping"
    | "dryRun"
    | "rowsTotal"
    | "content"
    | "origin"
    | "createdBy"
  >,
): Promise<ImportSummaryRow> {
  const [row] = await tx.insert(imports).values(values).returning(SUMMARY);
  if (!row) throw new Error("import insert returned nothing");
  return row;
}

export function listImportRows(tx: Executor, organizationId: number, kinds: readonly string[], limit: number) {
  return tx
    .select(SUMMARY)
    .from(imports)
    .where(and(eq(imports.organizationId, organizationId), inArray(imports.kind, [...kinds])))
    .orderBy(desc(imports.id))
    .limit(limit);
}

export async function findImportRow(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select(SUMMARY)
    .from(imports)
    .where(and(eq(imports.organizationId, organizationId), eq(imports.id, id)));
  return row;
}

export async function findImportResultsCsv(tx: Executor, organizationId: number, id: number) {
  const [row] = await tx
    .select({ resultsCsv: imports.resultsCsv })
    .from(imports)
    .where(and(eq(imports.organizationId, organizationId), eq(imports.id, id)));
  return row?.resultsCsv ?? null;
}

/**
 * Claims the oldest queued import for this worker: it is read without a lock (across organizations,
 * every shard on a cluster), then taken by an update that checks it is still queued; of two workers
 * that read the same one, the second finds it running and tries the next.
 */
export async function claimQueuedImport(
  tx: Executor,
  organizationIds?: readonly number[],
): Promise<ImportRow | undefined> {
  for (;;) {
    const [next] = await tx
      .select({ organizationId: imports.organizationId, id: imports.id })
      .from(imports)
      .where(and(eq(imports.state, "queued"), ofOrganizations(organizationIds)))
      .orderBy(asc(imports.createDate), asc(imports.id))
      .limit(1);
    if (!next) return undefined;
    const [claimed] = await tx
      .update(imports)
      .set({ state: "running", startDate: sql`now()`, updateDate: sql`now()` })
      .where(and(eq(imports.organizationId, next.organizationId), eq(imports.id, next.id), eq(imports.state, "queued")))
      .returning();
    if (claimed) return claimed;
  }
}

/** Rows done so far (after each batch); the update date tells that the worker is still at it. */
export async function recordImportProgress(
  tx: Executor,
  organizationId: number,
  id: number,
  rowsDone: number,
  rowsTotal: number,
) {
  await tx
    .update(imports)
    .set({ rowsDone, rowsTotal, updateDate: sql`now()` })
    .where(and(eq(imports.organizationId, organizationId), eq(imports.id, id), eq(imports.state, "running")));
}

/** The run's end: done with its counts and results, or failed with why; the file is let go either way. */
export async function finishImport(
  tx: Executor,
  organizationId: number,
  id: number,
  values: { state: "done" | "failed" } & Partial<
    Pick<
      typeof imports.$inferInsert,
      | "rowsDone"
      | "rowsTotal"
      | "created"
      | "updated"
      | "unchanged"
      | "refused"
      | "refusedRows"
      | "resultsCsv"
      | "error"
    >
  >,
) {
  await tx
    .update(imports)
    .set({ ...values, content: null, finishDate: sql`now()`, updateDate: sql`now()` })
    .where(and(eq(imports.organizationId, organizationId), eq(imports.id, id)));
}

/**
 * Running imports whose worker stopped (no batch since `before`): failed, with `error`. Read across
 * organizations, then each failed by an update that checks it is still standing still.
 */
export async function failStalledImports(
  tx: Executor,
  before: Date,
  error: string,
  organizationIds?: readonly number[],
): Promise<number> {
  const stalled = and(eq(imports.state, "running"), lt(imports.updateDate, before));
  const found = await tx
    .select({ organizationId: imports.organizationId, id: imports.id })
    .from(imports)
    .where(and(stalled, ofOrganizations(organizationIds)))
    .limit(100);
  let failed = 0;
  for (const row of found) {
    const updated = await tx
      .update(imports)
      .set({ state: "failed", error, content: null, finishDate: sql`now()`, updateDate: sql`now()` })
      .where(and(eq(imports.organizationId, row.organizationId), eq(imports.id, row.id), stalled))
      .returning({ id: imports.id });
    failed += updated.length;
  }
  return failed;
}
