import { AppError } from "../../errors/app-error.js";
import { validateAgainst } from "../../http/validate.js";
import { CONSENT_NAMES, SupporterInput } from "../supporters/supporters.schemas.js";
import type { ColumnMapping, SupporterImportField } from "./import-columns.js";

/** One problem of one row: its column as the file names it, the field, and why. */
export interface RowProblem {
  column: string;
  field: string;
  message: string;
}

export interface CheckedRow {
  /** The row's line in the file (the header is line 1). */
  line: number;
  externalId: string | null;
  /** The supporter's fields the row gives (empty cells give nothing: they never clear a value). */
  values: SupporterInput;
  problems: RowProblem[];
}

const YES = new Set(["yes", "y", "true", "1", "si", "sì", "subscribed", "opted in", "optedin", "opt in", "x"]);
const NO = new Set(["no", "n", "false", "0", "unsubscribed", "opted out", "optedout", "opt out", "not subscribed"]);

/** Country names (English and Italian) and codes to ISO 3166-1 alpha-2 codes. */
const COUNTRIES = (() => {
  const names = new Map<string, string>();
  const displays = ["en", "it"].map((locale) => new Intl.DisplayNames([locale], { type: "region" }));
  for (let first = 65; first <= 90; first++) {
    for (let second = 65; second <= 90; second++) {
      const code = String.fromCharCode(first, second);
      for (const display of displays) {
        const name = display.of(code);
        // The first code of a name wins: "Francia" is FR, not FX (metropolitan France, reserved).
        if (name && name !== code) {
          if (!names.has(countryKey(name))) names.set(countryKey(name), code);
          names.set(code.toLowerCase(), code);
        }
      }
    }
  }
  for (const [alias, code] of [
    ["usa", "US"],
    ["united states of america", "US"],
    ["uk", "GB"],
    ["great britain", "GB"],
    ["england", "GB"],
  ] as const) {
    names.set(countryKey(alias), code);
  }
  return names;
})();

function countryKey(name: string) {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z]+/g, " ")
    .trim();
}

function parseCell(field: SupporterImportField, cell: string): { value: unknown } | { problem: string } {
  if ((CONSENT_NAMES as readonly string[]).includes(field)) {
    const word = cell.toLowerCase().replace(/\s+/g, " ");
    if (YES.has(word)) return { value: true };
    if (NO.has(word)) return { value: false };
    return { problem: `"${cell}" is not a yes or no (yes, no, true, false, subscribed, unsubscribed)` };
  }
  switch (field) {
    case "tags":
      return {
        value: [
          ...new Set(
            cell
              .split(/[,;|]/)
              .map((tag) => tag.trim())
              .filter(Boolean),
          ),
        ],
      };
    case "country": {
      const code = COUNTRIES.get(countryKey(cell));
      return code ? { value: code } : { problem: `"${cell}" is not a country (a name or an ISO code such as IT)` };
    }
    case "sex": {
      const word = cell.toLowerCase();
      if (["m", "male", "man", "maschio", "uomo"].includes(word)) return { value: "MALE" };
      if (["f", "female", "woman", "femmina", "donna"].includes(word)) return { value: "FEMALE" };
      return { problem: `"${cell}" is not MALE or FEMALE` };
    }
    case "date_of_birth": {
      const match = /^(\d{4}-\d{2}-\d{2})(?:[T ].*)?$/.exec(cell);
      return match ? { value: match[1] } : { problem: `"${cell}" is not a date (YYYY-MM-DD)` };
    }
    default:
      return { value: cell };
  }
}

/**
 * A row of cells checked as the API checks a new supporter (the same schema, so the same limits),
 * each problem named by its column. The external id is kept apart: it is how the row is matched.
 */
export function checkRow(
  line: number,
  cells: readonly string[],
  headers: readonly string[],
  mapping: ColumnMapping,
): CheckedRow {
  const problems: RowProblem[] = [];
  const values: Record<string, unknown> = {};
  const columnOf = new Map<string, string>();
  let externalId: string | null = null;
  for (const [field, index] of Object.entries(mapping) as [SupporterImportField, number][]) {
    const cell = (cells[index] ?? "").trim();
    const column = headers[index] ?? field;
    columnOf.set(field, column);
    if (cell === "") continue;
    if (field === "external_id") {
      if (cell.length > 200) problems.push({ column, field, message: "is longer than 200 characters" });
      else externalId = cell;
      continue;
    }
    const parsed = parseCell(field, cell);
    if ("problem" in parsed) problems.push({ column, field, message: parsed.problem });
    else values[field] = parsed.value;
  }
  if (problems.length === 0) {
    try {
      validateAgainst<SupporterInput>(SupporterInput, values, "field");
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      for (const issue of error.errors ?? []) {
        const field = ("field" in issue ? String(issue.field) : "").split(".")[0] ?? "";
        problems.push({ column: columnOf.get(field) ?? field, field, message: issue.message });
      }
    }
  }
  if (problems.length === 0 && !values.email && !values.first_name && !values.last_name && !values.business_name) {
    problems.push({
      column: columnOf.get("email") ?? "email",
      field: "email",
      message: "a supporter needs a name, a business name or an email",
    });
  }
  return { line, externalId, values: values as SupporterInput, problems };
}
