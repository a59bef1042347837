import { parse } from "csv-parse/sync";
import { AppError } from "../../errors/app-error.js";

/**
 * An import file read before it is queued (the panel's upload and its preview): its header line, its
 * first rows, how many rows it has. It is read as the importers read it (UTF-8, the delimiter of the
 * header line, ragged rows allowed), so a file that passes here is one they accept.
 */

export const fileProblem = (message: string) =>
  new AppError("invalid_request", `The file cannot be imported: ${message}`, {
    errors: [{ field: "file", message }],
  });

/** The header line's delimiter: the one of , ; and tab it has most of (outside quotes). */
function delimiterOf(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/)).replace(/"[^"]*"/g, "");
  let best = ",";
  let most = 0;
  for (const delimiter of [",", ";", "\t"]) {
    const found = firstLine.split(delimiter).length - 1;
    if (found > most) [best, most] = [delimiter, found];
  }
  return best;
}

export interface ImportFileHead {
  headers: string[];
  /** The first rows (all of them when `rows` is not given), each cell as written. */
  rows: string[][];
}

/**
 * The file's lines as cells, the way every importer reads it: UTF-8 (else a 400 saying so), the
 * header line's delimiter, ragged rows allowed; the first `rows` rows after the header only, if given.
 */
export function readCsv(content: string | Buffer, rows?: number): string[][] {
  const text = typeof content === "string" ? content : content.toString("utf8");
  if (text.includes("\uFFFD")) throw fileProblem("it is not UTF-8 text (save it as CSV UTF-8)");
  try {
    return parse(text, {
      bom: true,
      delimiter: delimiterOf(text.replace(/^\uFEFF/, "")),
      relax_column_count: true,
      skip_empty_lines: true,
      ...(rows === undefined ? {} : { to: rows + 1 }),
    }) as string[][];
  } catch (error) {
    throw fileProblem(error instanceof Error ? error.message : String(error));
  }
}

/** Reads the file's header and its first `rows` rows (every row without `rows`); a file none can read is a 400. */
export function readImportFile(content: Buffer, rows?: number): ImportFileHead {
  if (content.length === 0) throw fileProblem("it is empty");
  const text = content.toString("utf8");
  if (text.includes("\u0000") && !text.includes("\uFFFD"))
    throw fileProblem("it holds NUL characters: it is not a CSV file (save it as CSV UTF-8)");
  const [headers, ...body] = readCsv(text, rows);
  if (!headers || headers.every((header) => header.trim() === "")) throw fileProblem("it has no header line");
  return { headers, rows: body };
}
