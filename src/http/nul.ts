/** Whether a parsed request value holds a NUL character (PostgreSQL text cannot store one). */
export function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (depth > 32 || value === null || typeof value !== "object") return false;
  // Raw bytes (an uploaded image, a signed webhook body) are not text for the database, and walking a
  // 5 MB Buffer entry by entry would stall the event loop.
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return false;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes("\u0000") || containsNul(item, depth + 1)) return true;
  }
  return false;
}
