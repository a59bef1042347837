import { ERROR_STATUS, type ErrorCode } from "./error-codes.js";

export interface ValidationIssue {
  parameter?: string;
  field?: string;
  message: string;
  /** The problem's stable code (src/i18n/catalogs/<locale>/fields.json words it in each language). */
  code?: string;
  /** The particulars the words name (a length, a country). */
  values?: Record<string, string | number>;
}

export interface AppErrorOptions {
  errors?: ValidationIssue[];
  /** Response headers that belong to the refusal (Retry-After of a 429 or 503, WWW-Authenticate of a 401). */
  headers?: Record<string, string>;
  /** Internal: logged, never rendered. */
  cause?: unknown;
}

/**
 * The one error family of the product: a code from the catalog (which fixes its HTTP status) and a
 * public message. The cause stays internal and is never rendered.
 */
export class AppError extends Error {
  override name = "AppError";
  readonly status: number;
  readonly errors?: ValidationIssue[];
  readonly headers?: Record<string, string>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = ERROR_STATUS[code];
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

export const invalidParameter = (parameter: string, message: string) =>
  new AppError("invalid_request", `Invalid query parameter "${parameter}": ${message}`, {
    errors: [{ parameter, message }],
  });
