/** Where a page may send someone back to on this server: the panel's pages and the OAuth authorization. */
const RETURN_PREFIXES = ["/admin/", "/oauth/authorize/"];
const BASE = "http://return.invalid";

/**
 * A return address from a query or a form, kept only when it is a path of this server under one of
 * RETURN_PREFIXES: never another origin, `//host`, a backslash or a control character. Undefined
 * otherwise, and the caller uses its own default.
 */
export function sameOriginReturnPath(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > 2000 || !value.startsWith("/")) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE || !RETURN_PREFIXES.some((prefix) => url.pathname.startsWith(prefix))) return undefined;
  return `${url.pathname}${url.search}`;
}
