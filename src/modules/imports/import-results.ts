import { csvCell } from "../../http/csv.js";
import type { FieldColumns } from "./import-columns.js";

/** What an import did with a row of its file. */
export type RowOutcome = "created" | "updated" | "unchanged" | "refused";

/**
 * What every importer's result says beside its rows: which column filled each field (in the kind's
 * field order), the columns left out, and how many rows had each outcome.
 */
export function importSummary(
  fields: readonly string[],
  headers: readonly string[],
  mapping: FieldColumns,
  ignored: string[],
  results: readonly { outcome: RowOutcome }[],
) {
  const count = (outcome: RowOutcome) => results.filter((result) => result.outcome === outcome).length;
  return {
    columns: {
      mapping: Object.fromEntries(
        fields.flatMap((field) =>
          mapping[field] === undefined ? [] : [[field, headers[mapping[field] as number] as string]],
        ),
      ) as Record<string, string>,
      ignored,
    },
    rows: results.length,
    created: count("created"),
    updated: count("updated"),
    unchanged: count("unchanged"),
    refused: count("refused"),
  };
}

/** Results as CSV: the header, then one line per row of the file. */
export function resultsCsv(header: readonly string[], lines: readonly (readonly unknown[])[]): string {
  return `${[header.join(","), ...lines.map((line) => line.map(csvCell).join(","))].join("\r\n")}\r\n`;
}
