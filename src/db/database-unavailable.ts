import { DatabaseUnavailableError } from "./client.js";

/**
 * SQLSTATEs that mean the server ended or refused the connection, not that the statement was wrong:
 * class 08 (connection exception), 57P01 admin_shutdown (pg_terminate_backend), 57P02 crash_shutdown,
 * 57P03 cannot_connect_now, 53300 too_many_connections.
 */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/;

/** Errors of the drivers (node-postgres, pg-pool, PGlite) and sockets for a lost or refused connection. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client (has encountered a connection error|was closed) and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
  /^PGlite is clos(ed|ing)/,
];
const UNAVAILABLE_SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether an error (or any error in its cause chain: Drizzle wraps the driver's) means the database
 * could not be reached, so the request may succeed if retried: a 503, not a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(current instanceof Error ? current.message : ""))) {
      return true;
    }
    current = current.cause;
  }
  return false;
}
