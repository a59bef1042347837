import { type Actor, can, requirePermission } from "../../auth/actor.js";
import type { Permission } from "../../auth/permissions.js";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { AppError, invalidParameter, notFound } from "../../errors/app-error.js";
import { type EventOrigin, systemOrigin } from "../../events/origin.js";
import { parseId } from "../../http/ids.js";
import { giftImportResultsCsv, importGifts } from "./gift-import.service.js";
import { IMPORT_PRESETS, type ImportKind, type ImportPreset, importFieldsOf, mapColumns } from "./import-columns.js";
import { fileProblem, readImportFile } from "./import-file.js";
import type { RowProblem } from "./import-rows.js";
import {
  claimQueuedImport,
  failStalledImports,
  findImportResultsCsv,
  findImportRow,
  finishImport,
  type ImportRow,
  type ImportSummaryRow,
  insertImport,
  listImportRows,
  recordImportProgress,
} from "./imports.repo.js";
import {
  importResultsCsv,
  importSupporters,
  MAX_IMPORT_ROWS,
  type SupporterImportRequest,
} from "./supporter-import.service.js";

/**
 * Imports from the panel (docs/import.md): a file uploaded with its kind, preset and mapping is
 * checked (readable, its mapping sound) and queued with the file; the worker runs it with the
 * kind's importer, batch by batch, keeping the rows done, then the counts, the first refused rows
 * and every row's outcome as CSV. The importers are the command line's: same checks, same results.
 */

/** The largest file the panel takes (a 200,000-row export is far below it). */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
/** Rows of the file shown under the mapping editor. */
export const PREVIEW_ROWS = 5;
/** Refused rows kept to list in the panel; the results CSV has them all. */
const LISTED_REFUSED = 100;
/** A running import with no batch done for this long was left by a stopped worker. */
const STALLED_MS = 10 * 60_000;
const MAX_MAPPING_COLUMNS = 1000;
const DRY_RUN_WORDS = new Map([
  ["true", true],
  ["1", true],
  ["false", false],
  ["0", false],
  ["", false],
]);
const PARTLY_IMPORTED =
  "The rows of the batches before it were imported; importing the file again changes nothing for them.";

/** What every importer answers: counts, and each row's outcome with its problems. */
interface ImportOutcome {
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  results: { line: number; external_id: string | null; outcome: string; problems: RowProblem[] }[];
}

interface Importer {
  /** What a member needs to import this kind. */
  permission: Permission;
  run(db: Db, request: SupporterImportRequest): Promise<{ outcome: ImportOutcome; csv: string }>;
}

const importer = <Result extends ImportOutcome>(
  permission: Permission,
  run: (db: Db, request: SupporterImportRequest) => Promise<Result>,
  csv: (result: Result) => string,
): Importer => ({
  permission,
  run: async (db, request) => {
    const outcome = await run(db, request);
    return { outcome, csv: csv(outcome) };
  },
});

/** Each kind's importer: another kind is one more line. */
const IMPORTERS: Partial<Record<ImportKind, Importer>> = {
  supporters: importer("supporters:write", importSupporters, importResultsCsv),
  donations: importer("donations:write", importGifts, giftImportResultsCsv),
};

export interface RefusedRowWire {
  line: number;
  external_id: string | null;
  problems: RowProblem[];
}

export interface ImportWire {
  id: number;
  kind: string;
  file_name: string;
  preset: string | null;
  /** The columns the member mapped by hand (column → field or "ignore"), over the preset's. */
  mapping: Record<string, string> | null;
  dry_run: boolean;
  state: "queued" | "running" | "done" | "failed";
  rows_total: number;
  rows_done: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  /** The first refused rows (at most 100), each with every problem; the results CSV has all. */
  refused_rows: RefusedRowWire[];
  error: string | null;
  created_by: number | null;
  create_date: string;
  start_date: string | null;
  finish_date: string | null;
}

export function importToWire(row: ImportSummaryRow): ImportWire {
  return {
    id: row.id,
    kind: row.kind,
    file_name: row.fileName,
    preset: row.preset,
    mapping: row.mapping ?? null,
    dry_run: row.dryRun,
    state: row.state as ImportWire["state"],
    rows_total: row.rowsTotal,
    rows_done: row.rowsDone,
    created: row.created,
    updated: row.updated,
    unchanged: row.unchanged,
    refused: row.refused,
    refused_rows: (row.refusedRows as RefusedRowWire[] | null) ?? [],
    error: row.error,
    created_by: row.createdBy,
    create_date: row.createDate.toISOString(),
    start_date: row.startDate?.toISOString() ?? null,
    finish_date: row.finishDate?.toISOString() ?? null,
  };
}

/** An upload's settings as its query gives them (strings), before they are checked. */
export interface ImportQuery {
  kind?: string;
  preset?: string;
  mapping?: string;
  dry_run?: string;
  file_name?: string;
}

export interface ImportSettings {
  kind: ImportKind;
  importer: Importer;
  preset: ImportPreset | undefined;
  mapping: Record<string, string> | undefined;
  dryRun: boolean;
  fileName: string;
}

/**
 * The upload's settings, checked: a known kind, a known preset, a mapping that is a JSON object of
 * column → field. Checked before the file is read, so a wrong one costs no upload.
 */
export function importSettingsOf(query: ImportQuery): ImportSettings {
  const kinds = Object.keys(IMPORTERS) as ImportKind[];
  const kind = kinds.find((known) => known === query.kind);
  if (!kind) throw invalidParameter("kind", `must be one of: ${kinds.join(", ")}`);
  const preset = query.preset || undefined;
  if (preset !== undefined && !(IMPORT_PRESETS as readonly string[]).includes(preset)) {
    throw invalidParameter("preset", `must be one of: ${IMPORT_PRESETS.join(", ")}`);
  }
  let mapping: Record<string, string> | undefined;
  if (query.mapping) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(query.mapping);
    } catch {}
    const entries = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? Object.entries(parsed) : null;
    if (!entries || entries.length > MAX_MAPPING_COLUMNS || entries.some(([, field]) => typeof field !== "string")) {
      throw invalidParameter("mapping", 'must be a JSON object of column → field or "ignore", e.g. {"E-mail":"email"}');
    }
    mapping = Object.fromEntries(entries) as Record<string, string>;
  }
  const dryRun = DRY_RUN_WORDS.get(query.dry_run ?? "");
  if (dryRun === undefined) throw invalidParameter("dry_run", "must be true or false");
  return {
    kind,
    importer: IMPORTERS[kind] as Importer,
    preset: preset as ImportPreset | undefined,
    mapping,
    dryRun,
    fileName: (query.file_name ?? "").trim().slice(0, 255) || `${kind}.csv`,
  };
}

/** The member may import this kind (an owner or an admin), else 403. */
export function requireImporter(actor: Actor, settings: ImportSettings) {
  requirePermission(actor, settings.importer.permission);
}

/** Which field each column fills under the preset and the mapping; a mapping the file cannot take is a 400. */
function columnsOf(headers: string[], settings: ImportSettings) {
  const outcome = mapColumns(headers, { preset: settings.preset, explicit: settings.mapping }, settings.kind);
  const fieldOf = new Map<number, string>();
  for (const [field, index] of Object.entries(outcome.mapping)) if (index !== undefined) fieldOf.set(index, field);
  return {
    columns: headers.map((name, index) => ({ name, field: fieldOf.get(index) ?? null })),
    problems: outcome.problems,
  };
}

export interface ImportPreview {
  kind: ImportKind;
  file_name: string;
  preset: ImportPreset | null;
  /** Every field a column of this kind of file can fill (the mapping editor's choices). */
  fields: readonly string[];
  /** The file's columns in order, each with the field it fills (null: left out). */
  columns: { name: string; field: string | null }[];
  /** The first rows, each cell as written. */
  rows: string[][];
  /** Why the file could not be imported with this mapping yet (none: it can). */
  problems: string[];
}

/** The file's columns, the field each fills (the preset's, the mapping's) and its first rows; nothing stored. */
export function previewImport(settings: ImportSettings, content: Buffer): ImportPreview {
  const { headers, rows } = readImportFile(content, PREVIEW_ROWS);
  const { columns, problems } = columnsOf(headers, settings);
  return {
    kind: settings.kind,
    file_name: settings.fileName,
    preset: settings.preset ?? null,
    fields: importFieldsOf(settings.kind),
    columns,
    rows: rows.map((cells) => headers.map((_, index) => cells[index] ?? "")),
    problems,
  };
}

/**
 * Checks the file (readable, at most 200,000 rows, its mapping sound) and queues it with the file
 * for the worker; a file it refuses stores nothing.
 */
export async function queueImport(
  db: Db,
  scope: Scope,
  actor: Actor,
  settings: ImportSettings,
  content: Buffer,
): Promise<ImportWire> {
  requireImporter(actor, settings);
  if (content.length > MAX_IMPORT_BYTES) throw fileTooLarge();
  const { headers, rows } = readImportFile(content);
  if (rows.length > MAX_IMPORT_ROWS) {
    throw fileProblem(`it has ${rows.length} rows; at most ${MAX_IMPORT_ROWS} in one file (split it)`);
  }
  const { problems } = columnsOf(headers, settings);
  if (problems.length > 0) {
    throw new AppError("invalid_request", `The file cannot be imported: ${problems.join("; ")}`, {
      errors: problems.map((message) => ({ parameter: "mapping", message })),
    });
  }
  const row = await insertImport(db, {
    organizationId: scope.organizationId,
    kind: settings.kind,
    fileName: settings.fileName,
    preset: settings.preset ?? null,
    mapping: settings.mapping ?? null,
    dryRun: settings.dryRun,
    rowsTotal: rows.length,
    content,
    origin: scope.origin ?? null,
    createdBy: actor.kind === "member" ? actor.userId : null,
  });
  return importToWire(row);
}

export const fileTooLarge = () =>
  new AppError(
    "request_too_large",
    `The file is larger than the ${MAX_IMPORT_BYTES / 1024 / 1024} MB an import takes: split it into smaller files`,
  );

/** The kinds whose imports the actor may see: those they may run. */
function kindsOf(actor: Actor): ImportKind[] {
  const entries = Object.entries(IMPORTERS) as [ImportKind, Importer][];
  const kinds = entries.filter(([, each]) => can(actor, each.permission)).map(([kind]) => kind);
  if (kinds.length === 0) requirePermission(actor, (entries[0] as [ImportKind, Importer])[1].permission);
  return kinds;
}

/** The organization's imports, newest first (the kinds the actor may import). */
export async function listImports(db: Db, scope: Scope, actor: Actor, first: number): Promise<ImportWire[]> {
  if (!Number.isInteger(first) || first < 1 || first > 100) throw invalidParameter("first", "must be 1 to 100");
  const rows = await listImportRows(db, scope.organizationId, kindsOf(actor), first);
  return rows.map(importToWire);
}

async function visibleImport(db: Db, scope: Scope, actor: Actor, rawId: string): Promise<ImportSummaryRow> {
  const id = parseId(rawId, "Import");
  const row = await findImportRow(db, scope.organizationId, id);
  if (!row || !(kindsOf(actor) as string[]).includes(row.kind)) throw notFound("Import");
  return row;
}

export async function findImport(db: Db, scope: Scope, actor: Actor, id: string): Promise<ImportWire> {
  return importToWire(await visibleImport(db, scope, actor, id));
}

/** Every row's outcome as CSV, once the import ran; its file name says which file and run it was. */
export async function importResults(
  db: Db,
  scope: Scope,
  actor: Actor,
  id: string,
): Promise<{ fileName: string; csv: string }> {
  const row = await visibleImport(db, scope, actor, id);
  const csv = row.state === "done" ? await findImportResultsCsv(db, scope.organizationId, row.id) : null;
  if (csv === null) throw new AppError("not_found", `Import ${row.id} has no results yet (it is ${row.state})`);
  const base = row.fileName.replace(/\.csv$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-") || "import";
  return { fileName: `${base}-${row.dryRun ? "dry-run" : "import"}-${row.id}-results.csv`, csv };
}

/** The worker stopping: the import under way ends after its batch. */
class ImportStopped extends Error {}

/**
 * The worker's pass: imports left running by a stopped worker are failed, then each queued one is run
 * in turn (oldest first) until none is left or `signal` stops the worker. How many ran.
 * `organizationIds` keeps a test's worker to its own organizations; `checkStalled: false` skips the first
 * step (a read of every organization's, which the runner does once a minute).
 */
export async function runQueuedImports(
  db: Db,
  options: { now?: Date; signal?: AbortSignal; organizationIds?: readonly number[]; checkStalled?: boolean } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  if (options.checkStalled ?? true) {
    await failStalledImports(
      db,
      new Date(now.getTime() - STALLED_MS),
      `The import stopped before its end (its worker was stopped). ${PARTLY_IMPORTED}`,
      options.organizationIds,
    );
  }
  let ran = 0;
  while (!options.signal?.aborted) {
    const row = await claimQueuedImport(db, options.organizationIds);
    if (!row) break;
    await runImport(db, row, options.signal);
    ran += 1;
  }
  return ran;
}

/**
 * Runs one claimed import with its kind's importer, keeping the rows done after each batch; then its
 * counts, first refused rows and results, or why it failed. A failure that is not the file's is
 * rethrown after it is recorded (the worker reports it).
 */
async function runImport(db: Db, row: ImportRow, signal?: AbortSignal): Promise<void> {
  const where = [row.organizationId, row.id] as const;
  let progress: Promise<void> = Promise.resolve();
  try {
    const importer = IMPORTERS[row.kind as ImportKind];
    if (!importer) throw new AppError("invalid_request", `Files of kind "${row.kind}" cannot be imported yet`);
    if (!row.content) throw new Error(`import ${row.id} was claimed without its file`);
    const { outcome, csv } = await importer.run(db, {
      organizationId: row.organizationId,
      fileName: row.fileName,
      content: row.content,
      preset: (row.preset as ImportPreset | null) ?? undefined,
      mapping: row.mapping ?? undefined,
      dryRun: row.dryRun,
      origin: (row.origin as EventOrigin | null) ?? systemOrigin("worker"),
      // After each batch: the rows done, and the batch the import stops after when the worker stops.
      onProgress: (done, total) => {
        progress = progress.then(() => recordImportProgress(db, ...where, done, total));
        if (signal?.aborted && done < total) throw new ImportStopped();
      },
    });
    await progress;
    await finishImport(db, ...where, {
      state: "done",
      rowsDone: outcome.rows,
      rowsTotal: outcome.rows,
      created: outcome.created,
      updated: outcome.updated,
      unchanged: outcome.unchanged,
      refused: outcome.refused,
      refusedRows: outcome.results
        .filter((result) => result.outcome === "refused")
        .slice(0, LISTED_REFUSED)
        .map(({ line, external_id, problems }) => ({ line, external_id, problems })),
      resultsCsv: csv,
      error: null,
    });
  } catch (error) {
    await progress.catch(() => {});
    const known = error instanceof AppError || error instanceof ImportStopped;
    const partly = row.dryRun ? "" : ` ${PARTLY_IMPORTED}`;
    await finishImport(db, ...where, {
      state: "failed",
      error:
        error instanceof AppError
          ? error.message
          : error instanceof ImportStopped
            ? `The import stopped before its end (the server was stopped).${partly}`
            : `The import stopped on an error of the server.${partly}`,
    });
    if (!known) throw error;
  }
}
