import type { Problem } from "./generated/openapi-types.js";

/** Base class of every error the SDK throws on purpose. */
export class DonataError extends Error {
  override name = "DonataError";
}

export type InvalidStateReason = "missing" | "unknown" | "expired";

const STATE_MESSAGES: Record<InvalidStateReason, string> = {
  missing: "The callback carries no state parameter",
  unknown: "The callback's state matches no pending authorization (unknown, or already used)",
  expired: "The authorization request behind this state has expired; start again",
};

/**
 * The callback's `state` is missing, unknown, already used or expired: it may be a forged or
 * replayed request, so the application answers 400 and exchanges nothing (spec §7).
 */
export class InvalidStateError extends DonataError {
  override name = "InvalidStateError";
  /** The HTTP status an application should answer with. */
  readonly status = 400;
  constructor(readonly reason: InvalidStateReason) {
    super(STATE_MESSAGES[reason]);
  }
}

/**
 * The authorization server sent the user back with an error (`access_denied` when they refused,
 * `invalid_request`, …), or the callback is unusable (no code, another issuer).
 */
export class AuthorizationError extends DonataError {
  override name = "AuthorizationError";
  constructor(
    /** RFC 6749 §4.1.2.1 error code, e.g. `access_denied`. */
    readonly error: string,
    readonly errorDescription: string | undefined,
    /** The organization the authorization was started for, when known. */
    readonly organization?: string,
  ) {
    super(errorDescription ? `${error}: ${errorDescription}` : error);
  }
}

/** The token endpoint refused a request (RFC 6749 §5.2 body). */
export class OAuthTokenError extends DonataError {
  override name = "OAuthTokenError";
  constructor(
    readonly status: number,
    /** e.g. `invalid_grant`, `invalid_client`. */
    readonly error: string,
    readonly errorDescription: string | undefined,
  ) {
    super(errorDescription ? `${error}: ${errorDescription}` : error);
  }
}

/**
 * No usable tokens for the organization: never authorized, or the refresh token was refused
 * (revoked, expired, or the application was uninstalled). Send the user through the flow again.
 */
export class ReauthorizationRequiredError extends DonataError {
  override name = "ReauthorizationRequiredError";
  constructor(
    readonly organization: string,
    options?: { cause?: unknown },
  ) {
    super(`The application must be authorized again for organization "${organization}"`, options);
  }
}

export type ProblemFieldError = NonNullable<Problem["errors"]>[number];

/** A REST request failed; the RFC 9457 problem body, field by field. */
export class DonataApiError extends DonataError {
  override name = "DonataApiError";
  readonly status: number;
  /** Stable snake_case code, e.g. `invalid_request`, `not_found`, `insufficient_scope`. */
  readonly code: string;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** Per-parameter or per-field validation errors, when the server listed them. */
  readonly errors: ProblemFieldError[];

  constructor(problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
  }

  static async fromResponse(response: Response): Promise<DonataApiError> {
    const text = await response.text();
    let body: Partial<Problem> | undefined;
    try {
      body = JSON.parse(text) as Partial<Problem>;
    } catch {
      body = undefined;
    }
    const code = typeof body?.code === "string" ? body.code : `http_${response.status}`;
    return new DonataApiError({
      status: response.status,
      code,
      type: typeof body?.type === "string" ? body.type : "about:blank",
      title: typeof body?.title === "string" ? body.title : response.statusText || `HTTP ${response.status}`,
      detail: typeof body?.detail === "string" ? body.detail : text.slice(0, 500),
      errors: Array.isArray(body?.errors) ? body.errors : undefined,
    });
  }
}

export interface GraphQLErrorEntry {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** A GraphQL response carried `errors`; `data` holds whatever part of the result was resolved. */
export class DonataGraphQLError extends DonataError {
  override name = "DonataGraphQLError";
  constructor(
    readonly errors: GraphQLErrorEntry[],
    readonly data: unknown,
    readonly status: number,
  ) {
    super(
      errors.map((error) => (error.extensions?.code ? `${error.extensions.code}: ` : "") + error.message).join("; "),
    );
  }
}
