/** CSV cells as every export of ours writes them (the panel's exports, an import's results). */

/** Text a spreadsheet would run as a formula starts with = + - @ (or a tab/CR before one); numbers are safe. */
function defused(value: unknown): string {
  const text = String(value);
  return typeof value === "string" && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/**
 * RFC 4180 quoting, and no spreadsheet formula injection: text starting with = + - @ is prefixed
 * with '. Every piece of text is guarded, list items included, and so is the joined cell.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text: string;
  if (Array.isArray(value)) text = defused(value.map((item) => defused(item ?? "")).join("; "));
  else if (typeof value === "object") text = String((value as { id?: unknown }).id ?? "");
  else text = defused(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
