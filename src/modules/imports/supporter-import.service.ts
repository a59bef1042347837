import type { Db } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { type DeclaredConsents, declaredConsents, insertConsentRecords } from "../supporters/consent-records.repo.js";
import {
  insertSupporterRows,
  lockSupportersForImport,
  type SupporterColumns,
  type SupporterRow,
  updateSupporterRow,
} from "../supporters/supporters.repo.js";
import { CONSENT_NAMES, type ConsentName, type SupporterPatch } from "../supporters/supporters.schemas.js";
import { SUPPORTER_COLUMNS, supporterColumnsOf, supporterToWire } from "../supporters/supporters.service.js";
import { type ColumnMapping, type ImportPreset, mapColumns, SUPPORTER_IMPORT_FIELDS } from "./import-columns.js";
import { fileProblem, readCsv } from "./import-file.js";
import { importSummary, type RowOutcome, resultsCsv } from "./import-results.js";
import { type CheckedRow, checkRow, type RowProblem } from "./import-rows.js";

/** At most this many rows in one file (a larger list is split into several files). */
export const MAX_IMPORT_ROWS = 200_000;
const DEFAULT_BATCH = 500;
/** The supporter columns that hold consents (what a change to them records). */
const CONSENT_COLUMNS = CONSENT_NAMES.map((name) => SUPPORTER_COLUMNS[name]);

export type { RowOutcome };

export interface RowResult {
  line: number;
  external_id: string | null;
  outcome: RowOutcome;
  supporter_id: number | null;
  problems: RowProblem[];
}

export interface SupporterImportRequest {
  organizationId: number;
  fileName: string;
  content: string | Buffer;
  preset?: ImportPreset;
  /** Header → field (or "ignore"), over the preset's. */
  mapping?: Readonly<Record<string, string>>;
  /** Every row checked and matched, nothing written. */
  dryRun: boolean;
  batchSize?: number;
  origin?: EventOrigin;
  /** After each batch: rows done so far, of all. */
  onProgress?: (done: number, total: number) => void;
}

export interface SupporterImportResult {
  file: string;
  kind: "supporters";
  preset: ImportPreset | null;
  dry_run: boolean;
  /** Which column fills each field, and the columns left out. */
  columns: { mapping: Record<string, string>; ignored: string[] };
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  results: RowResult[];
}

/** The fields of `values` that differ from the supporter's, tags added to theirs: what an import changes. */
function changesFor(existing: SupporterRow, columns: SupporterColumns): SupporterColumns {
  const changes: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(columns)) {
    const current = existing[column as keyof SupporterRow];
    if (column === "tags") {
      const tags = [...new Set([...((current as string[] | null) ?? []), ...(value as string[])])];
      if (tags.length !== ((current as string[] | null) ?? []).length) changes.tags = tags;
      continue;
    }
    // The address matched case-insensitively is the same address: its spelling here stays.
    if (column === "email" && typeof current === "string" && current.toLowerCase() === String(value).toLowerCase())
      continue;
    if ((current ?? null) !== value) changes[column] = value;
  }
  return changes as SupporterColumns;
}

/** Rows that repeat an earlier row's external id or (without one) email are refused: which one is meant? */
function refuseRepeats(rows: CheckedRow[]) {
  const byExternalId = new Map<string, number>();
  const byEmail = new Map<string, number>();
  for (const row of rows) {
    if (row.problems.length > 0) continue;
    const email = row.values.email?.toLowerCase();
    const first = row.externalId ? byExternalId.get(row.externalId) : email ? byEmail.get(email) : undefined;
    if (first !== undefined) {
      row.problems.push(
        row.externalId
          ? { column: "external_id", field: "external_id", message: `the same external id as line ${first}` }
          : { column: "email", field: "email", message: `the same email as line ${first}` },
      );
      continue;
    }
    if (row.externalId) byExternalId.set(row.externalId, row.line);
    else if (email) byEmail.set(email, row.line);
  }
}

class DryRun extends Error {}

/**
 * Imports supporters from a CSV file (docs/import.md). Every row is checked as the API checks a
 * new supporter and matched to an existing supporter by its external id, else by email; a match
 * gets the row's non-empty fields (tags added to its own), a new person is created. Rows go in
 * batches, one transaction each, with their `supporter.created` / `supporter.updated` events; a
 * refused row never stops the others. Importing the same file again changes nothing. A dry run
 * does all of it in transactions rolled back: the same outcomes, nothing written.
 */
export async function importSupporters(db: Db, request: SupporterImportRequest): Promise<SupporterImportResult> {
  const organization = await findOrganizationById(db, request.organizationId);
  if (!organization) throw new AppError("organization_not_found", "Organization not found");
  const table = readCsv(request.content);
  const [headers, ...body] = table;
  if (!headers || headers.every((header) => header.trim() === "")) throw fileProblem("it has no header line");
  if (body.length > MAX_IMPORT_ROWS) {
    throw fileProblem(`it has ${body.length} rows; at most ${MAX_IMPORT_ROWS} in one file (split it)`);
  }
  const { mapping, ignored, problems } = mapColumns(headers, { preset: request.preset, explicit: request.mapping });
  if (problems.length > 0) throw fileProblem(problems.join("; "));

  const rows = body.map((cells, index) => checkRow(index + 2, cells, headers, mapping as ColumnMapping));
  refuseRepeats(rows);
  const results: RowResult[] = rows.map((row) => ({
    line: row.line,
    external_id: row.externalId,
    outcome: "refused",
    supporter_id: null,
    problems: row.problems,
  }));
  const batchSize = request.batchSize ?? DEFAULT_BATCH;
  const scope = { organizationId: organization.id, timeZone: organization.timeZone, origin: request.origin };
  for (let start = 0; start < rows.length; start += batchSize) {
    const batch = rows.slice(start, start + batchSize).filter((row) => row.problems.length === 0);
    const outcomes = new Map<number, { outcome: RowOutcome; id: number }>();
    try {
      await withEvents(db, async (tx) => {
        const existing = await lockSupportersForImport(
          tx,
          organization.id,
          batch.flatMap((row) => (row.externalId ? [row.externalId] : [])),
          batch.flatMap((row) => (row.values.email ? [row.values.email] : [])),
        );
        const byExternalId = new Map(existing.flatMap((row) => (row.externalId ? [[row.externalId, row]] : [])));
        const byEmail = new Map<string, SupporterRow>();
        for (const row of existing) {
          const email = row.email?.toLowerCase();
          if (email && !byEmail.has(email)) byEmail.set(email, row);
        }
        const created: { line: number; columns: SupporterColumns; consents: DeclaredConsents }[] = [];
        // What the file says of a person's consents is kept as said, when it changes their flags
        // (a new supporter, or one whose flags the row changes): a re-import records nothing again.
        const consentRecords: Parameters<typeof insertConsentRecords>[1] = [];
        const recordConsents = (supporterId: number, consents: DeclaredConsents) => {
          if (Object.keys(consents).length === 0) return;
          consentRecords.push({
            organizationId: organization.id,
            supporterId,
            donationId: null,
            source: "import",
            consents,
            applied: true,
          });
        };
        for (const row of batch) {
          const consents = declaredConsents(row.values as Partial<Record<ConsentName, unknown>>);
          const columns: SupporterColumns = {
            ...supporterColumnsOf(row.values as SupporterPatch),
            ...(row.externalId ? { externalId: row.externalId } : {}),
          };
          const byEmailMatch = row.values.email ? byEmail.get(row.values.email.toLowerCase()) : undefined;
          const match =
            (row.externalId ? byExternalId.get(row.externalId) : undefined) ??
            (byEmailMatch && (!byEmailMatch.externalId || !row.externalId) ? byEmailMatch : undefined);
          if (!match) {
            created.push({ line: row.line, columns, consents });
            continue;
          }
          const changes = changesFor(match, columns);
          if (Object.keys(changes).length === 0) {
            outcomes.set(row.line, { outcome: "unchanged", id: match.id });
            continue;
          }
          const updated = await updateSupporterRow(tx, scope, match.id, changes);
          if (!updated) throw new Error("an import's locked supporter vanished");
          await recordEvent(tx, scope, "supporter.updated", updated.id, supporterToWire(updated), {
            before: supporterToWire(match),
          });
          if (CONSENT_COLUMNS.some((column) => column in changes)) recordConsents(match.id, consents);
          outcomes.set(row.line, { outcome: "updated", id: match.id });
        }
        const inserted = await insertSupporterRows(
          tx,
          organization.id,
          created.map((each) => each.columns),
        );
        for (const [index, row] of inserted.entries()) {
          const source = created[index] as (typeof created)[number];
          await recordEvent(tx, scope, "supporter.created", row.id, supporterToWire(row));
          recordConsents(row.id, source.consents);
          outcomes.set(source.line, { outcome: "created", id: row.id });
        }
        await insertConsentRecords(tx, consentRecords);
        if (request.dryRun) throw new DryRun();
      });
    } catch (error) {
      if (!(error instanceof DryRun)) throw error;
    }
    for (const row of batch) {
      const outcome = outcomes.get(row.line);
      const result = results[row.line - 2] as RowResult;
      if (!outcome) continue;
      result.outcome = outcome.outcome;
      // A dry run's new supporters have no id: nothing was written.
      result.supporter_id = request.dryRun && outcome.outcome === "created" ? null : outcome.id;
    }
    request.onProgress?.(Math.min(start + batchSize, rows.length), rows.length);
  }

  const result: SupporterImportResult = {
    file: request.fileName,
    kind: "supporters",
    preset: request.preset ?? null,
    dry_run: request.dryRun,
    ...importSummary(SUPPORTER_IMPORT_FIELDS, headers, mapping, ignored, results),
    results,
  };
  if (!request.dryRun) {
    await withEvents(db, (tx) =>
      recordEvent(tx, scope, "supporters.imported", organization.id, {
        file: result.file,
        preset: result.preset,
        rows: result.rows,
        created: result.created,
        updated: result.updated,
        unchanged: result.unchanged,
        refused: result.refused,
      }),
    );
  }
  return result;
}

/** The results as CSV: one line per row of the file, its outcome, the supporter, and every problem. */
export function importResultsCsv(result: SupporterImportResult): string {
  return resultsCsv(
    ["line", "external_id", "outcome", "supporter_id", "problems"],
    result.results.map((row) => [row.line, row.external_id, row.outcome, row.supporter_id, problemsText(row.problems)]),
  );
}

/** A row's problems in one cell: "column: reason; …". */
export const problemsText = (problems: readonly RowProblem[]) =>
  problems.map((problem) => `${problem.column}: ${problem.message}`).join("; ");
