import type { AppError, ValidationIssue } from "./app-error.js";
import type { ErrorCode, ErrorStatus } from "./error-codes.js";

/** RFC 9457 problem details: the REST wire form of an error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: ValidationIssue[];
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The status is the code's own (the type checker refuses any other). */
export function problemOf<C extends ErrorCode>(
  status: ErrorStatus<C>,
  code: C,
  detail: string,
  errors?: ValidationIssue[],
): Problem {
  return {
    type: `urn:donata:problem:${code}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    code,
    ...(errors ? { errors } : {}),
  };
}

/** The body of an AppError; its headers and cause are not part of it. */
export function problemBodyOf(error: AppError): Problem {
  return problemOf(error.status as ErrorStatus<ErrorCode>, error.code, error.message, error.errors);
}
