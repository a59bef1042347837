import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";

/** At most this many sites may embed one organization's donation pages (docs/embed.md). */
export const MAX_EMBED_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 300;
const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$/;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * One origin a donation page may be framed by, in the form CSP frame-ancestors and postMessage's
 * targetOrigin both take: https://host[:port], lowercase, nothing after it (a trailing slash is
 * dropped), http:// only for a machine's own pages. No wildcards: postMessage cannot target one,
 * and a whole domain's subdomains are rarely all the charity's.
 */
function originOf(value: string): { origin: string } | { problem: FieldProblem } {
  const text = value.trim();
  const at = { origin: text.slice(0, 100) };
  const bad = (problem: FieldProblem) => ({ problem });
  if (text.length === 0) return { problem: fieldProblem("required") };
  if (text.length > MAX_ORIGIN_LENGTH) return { problem: fieldProblem("too_long", { max: MAX_ORIGIN_LENGTH }) };
  if (text.includes("*")) return bad(fieldProblem("embed_origin_wildcard", at));
  if (!/^https?:\/\//i.test(text)) return bad(fieldProblem("embed_origin_form", at));
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad(fieldProblem("embed_origin_form", at));
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return bad(fieldProblem("embed_origin_form", at));
  // Letters, digits, dots and hyphens (an international name arrives in punycode) or an IPv6 literal:
  // nothing that could end a CSP source (";", ",", quotes) reaches the header.
  if (url.username || url.password || !HOST.test(url.hostname)) return bad(fieldProblem("embed_origin_form", at));
  // Only "https://host" or "https://host/" may follow the authority: a path, query or fragment is not an origin.
  const afterAuthority = text.slice(text.indexOf("//") + 2).replace(/^[^/?#]*/, "");
  if (afterAuthority !== "" && afterAuthority !== "/") return bad(fieldProblem("embed_origin_path", at));
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) return bad(fieldProblem("embed_origin_https", at));
  return { origin: url.origin.toLowerCase() };
}

/** The list checked and normalized, every problem at once by field (`origins.2`), or an invalid_request. */
export function checkEmbedOrigins(values: readonly string[]): string[] {
  const errors: ValidationIssue[] = [];
  if (values.length > MAX_EMBED_ORIGINS) {
    errors.push(fieldIssue("origins", fieldProblem("embed_origins_too_many", { max: MAX_EMBED_ORIGINS })));
  }
  const origins: string[] = [];
  values.slice(0, MAX_EMBED_ORIGINS + 1).forEach((value, index) => {
    const parsed = originOf(value);
    if ("problem" in parsed) {
      errors.push(fieldIssue(`origins.${index}`, parsed.problem));
    } else if (origins.includes(parsed.origin)) {
      errors.push(fieldIssue(`origins.${index}`, fieldProblem("embed_origin_duplicate", { origin: parsed.origin })));
    } else {
      origins.push(parsed.origin);
    }
  });
  if (errors.length > 0) {
    throw new AppError(
      "invalid_request",
      `The allowed origins were not saved: ${errors.map((error) => `${error.field} ${error.message}`).join("; ")}`,
      { errors },
    );
  }
  return origins;
}

/** CSP frame-ancestors of a donation page: the organization's allowed origins, or 'none'. */
export const frameAncestorsOf = (origins: readonly string[]): string =>
  origins.length === 0 ? "'none'" : origins.join(" ");
