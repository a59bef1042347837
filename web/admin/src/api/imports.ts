import { ApiError, type FieldIssue } from "./graphql";

/** The panel's imports (src/modules/imports/imports.routes.ts): the body is the CSV file itself. */

export interface ImportPreview {
  kind: string;
  file_name: string;
  preset: string | null;
  fields: string[];
  columns: { name: string; field: string | null }[];
  rows: string[][];
  problems: string[];
}

export interface ImportProblem {
  column: string;
  field: string;
  message: string;
}

export interface ImportRun {
  id: number;
  kind: string;
  file_name: string;
  preset: string | null;
  dry_run: boolean;
  state: "queued" | "running" | "done" | "failed";
  rows_total: number;
  rows_done: number;
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
  refused_rows: { line: number; external_id: string | null; problems: ImportProblem[] }[];
  results_url: string | null;
  error: string | null;
  create_date: string;
}

export interface ImportSettings {
  kind: string;
  preset: string;
  /** Column → field or "ignore", for every column of the file. */
  mapping?: Record<string, string>;
  dryRun?: boolean;
}

async function send<T>(path: string, org: string, file: File, settings: ImportSettings): Promise<T> {
  const query = new URLSearchParams({ organization: org, kind: settings.kind, file_name: file.name });
  if (settings.preset) query.set("preset", settings.preset);
  if (settings.mapping) query.set("mapping", JSON.stringify(settings.mapping));
  if (settings.dryRun !== undefined) query.set("dry_run", String(settings.dryRun));
  let response: Response;
  try {
    response = await fetch(`${path}?${query}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { accept: "application/json", "content-type": "text/csv" },
      body: file,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) {
    let body: { code?: string; detail?: string; errors?: FieldIssue[] } = {};
    try {
      body = await response.json();
    } catch {
      // Not JSON: keep the status.
    }
    throw new ApiError(
      body.detail ?? `The server answered ${response.status}.`,
      body.code ?? "http_error",
      response.status,
      body.errors ?? [],
    );
  }
  return (await response.json()) as T;
}

/** The file's columns, the field each fills under the preset, and its first rows; nothing is stored. */
export const previewImport = (org: string, file: File, settings: ImportSettings) =>
  send<ImportPreview>("/admin/imports/preview", org, file, settings);

/** Queues the file for the worker: a dry run, or the import. */
export const startImport = (org: string, file: File, settings: ImportSettings) =>
  send<ImportRun>("/admin/imports", org, file, settings);
