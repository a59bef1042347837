export interface ValidationIssue {
  parameter?: string;
  field?: string;
  message: string;
}

/**
 * The one error family of the product: a stable snake_case code, an HTTP status and a
 * public message. The cause stays internal and is never rendered.
 */
export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly errors?: ValidationIssue[],
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.headers = options?.headers;
  }
  /** Response headers that belong to the refusal (Retry-After of a 429 or 503). */
  readonly headers?: Record<string, string>;
}

export const notFound = (what: string) => new AppError("not_found", 404, `${what} not found`);

export const invalidParameter = (parameter: string, message: string) =>
  new AppError("invalid_request", 400, `Invalid query parameter "${parameter}": ${message}`, [{ parameter, message }]);
