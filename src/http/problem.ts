import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isDatabaseUnavailable } from "../db/database-unavailable.js";
import { AppError, type ValidationIssue } from "../errors/app-error.js";
import { ERROR_STATUS, type ErrorCode, isErrorCode } from "../errors/error-codes.js";
import { type Problem, problemBodyOf, problemOf } from "../errors/problem-body.js";
import { localizedIssues } from "../i18n/field-problems.js";
import { DEFAULT_LOCALE } from "../i18n/locales.js";
import { hasMessage, t } from "../i18n/messages.js";
import { negotiateLocale } from "../i18n/negotiate.js";

export { type Problem, problemOf } from "../errors/problem-body.js";

/** Headers sent with a problem (kept off the body). */
const problemHeaders = new WeakMap<Problem, Record<string, string>>();

/** Seconds a client should wait before retrying a 503 (overload, lost database connection). */
export const RETRY_AFTER_SECONDS = 5;

export function withHeaders(problem: Problem, headers: Record<string, string> | undefined): Problem {
  if (headers) problemHeaders.set(problem, headers);
  return problem;
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  const headers = problemHeaders.get(problem);
  if (headers) reply.headers(headers);
  return reply.code(problem.status).type("application/problem+json").serializer(JSON.stringify).send(problem);
}

export interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

export function describeIssue(issue: AjvIssue): string {
  switch (issue.keyword) {
    case "enum":
      return `must be one of: ${(issue.params.allowedValues as unknown[]).join(", ")}`;
    case "additionalProperties":
      return "is not a known parameter";
    case "type":
      return `must be ${issue.params.type === "integer" ? "an integer" : `of type ${issue.params.type}`}`;
    case "minimum":
      return `must be >= ${issue.params.limit}`;
    case "maximum":
      return `must be <= ${issue.params.limit}`;
    case "pattern":
    case "format":
      return issue.message ? issue.message.replace(/"/g, "'") : "has an invalid format";
    default:
      return issue.message ?? "is invalid";
  }
}

/** Where an issue is, as a dotted path; a missing or unknown property by its whole path (tribute.type, supporter.email). */
export function issuePath(issue: AjvIssue): string {
  const at = issue.instancePath.replace(/^\//, "").replace(/\//g, ".");
  const within = (property: unknown) => (at ? `${at}.${String(property)}` : String(property));
  if (issue.keyword === "additionalProperties") return within(issue.params.additionalProperty);
  if (issue.keyword === "required") return within(issue.params.missingProperty);
  return at;
}

function validationIssues(error: FastifyError): ValidationIssue[] {
  const context = error.validationContext ?? "body";
  const key = context === "body" ? "field" : "parameter";
  return (error.validation as AjvIssue[]).map((issue) => {
    const name = issuePath(issue);
    const message = issue.keyword === "required" ? "is required" : describeIssue(issue);
    return { [key]: name || context, message } as ValidationIssue;
  });
}

/** Fastify's own 4xx refusals (FST_ERR_CTP_BODY_TOO_LARGE → ctp_body_too_large); any other is a bad request. */
function frameworkCode(fastifyCode: string | undefined, status: number): ErrorCode {
  const code = (fastifyCode ?? "bad_request").replace(/^FST_ERR_/, "").toLowerCase();
  return isErrorCode(code) && ERROR_STATUS[code] === status ? code : "bad_request";
}

/**
 * Renders every error as RFC 9457 problem details; internals never reach the client. The `code`
 * stays English and stable; the `detail` is meant for people, so a request that prefers another
 * language (Accept-Language) gets the catalog's message for the code in it (src/i18n/catalogs,
 * `errors.<code>`), and English keeps the server's own, more specific sentence.
 */
export function toProblem(error: unknown, request: FastifyRequest): Problem {
  const problem = problemOfError(error, request);
  const locale = negotiateLocale({ acceptLanguage: request.headers["accept-language"] });
  if (locale !== DEFAULT_LOCALE && hasMessage(`errors.${problem.code}`)) {
    problem.detail = t(locale, `errors.${problem.code}`);
  }
  if (problem.errors) problem.errors = localizedIssues(problem.errors, locale);
  return problem;
}

function problemOfError(error: unknown, request: FastifyRequest): Problem {
  if (error instanceof AppError) {
    return withHeaders(problemBodyOf(error), error.headers);
  }
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) {
    const errors = validationIssues(fastifyError);
    const first = errors[0];
    const where = first?.parameter ? `query parameter "${first.parameter}"` : `field "${first?.field}"`;
    return problemOf(400, "invalid_request", `Invalid ${where}: ${first?.message}`, errors);
  }
  const status = fastifyError?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return problemBodyOf(new AppError(frameworkCode(fastifyError.code, status), fastifyError.message));
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, "database unavailable");
    return withHeaders(
      problemOf(503, "database_unavailable", "The database is not reachable right now; retry shortly"),
      { "retry-after": String(RETRY_AFTER_SECONDS) },
    );
  }
  request.log.error({ err: error }, "unhandled error");
  return problemOf(500, "internal_error", "An internal error occurred; it has been logged.");
}
