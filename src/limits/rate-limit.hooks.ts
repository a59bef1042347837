import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RateLimitRules } from "../config.js";
import { AppError } from "../errors/app-error.js";
import { problemBodyOf } from "../errors/problem-body.js";
import { sendProblem, toProblem } from "../http/problem.js";
import { SESSION_COOKIE } from "../http/session-cookie.js";
import { clientAddressKey } from "./client-address.js";
import { type LimitOutcome, type LimitRule, type LimitStore, rateLimitHeaders } from "./rate-limiter.js";

// Health checks and scrapes never share a limit with public traffic; /metrics refuses strangers before any work.
const UNLIMITED_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);
/** Endpoints anyone may call without credentials: limited per client address, whatever the request carries. */
const PUBLIC_PREFIXES = ["/oauth/", "/.well-known/", "/api/v1/public/", "/donate/", "/documents/"];

/** A credential as a counter key: never stored in clear, and the same for every process. */
const digest = (value: string) => createHash("sha256").update(value).digest("base64url").slice(0, 32);

interface Subject {
  rule: LimitRule;
  key: string;
  what: string;
  /** The request carries a token or session cookie (each made-up one would get a fresh counter). */
  credentialed?: boolean;
}

const rateLimited = (message: string, headers: Record<string, string>) =>
  new AppError("rate_limited", message, { headers });

function subjectOf(request: FastifyRequest, rules: RateLimitRules): Subject | undefined {
  const path = request.url.split("?")[0] as string;
  if (UNLIMITED_PATHS.has(path.replace(/\/+$/, ""))) return undefined;
  const byAddress = { rule: rules.ip, key: clientAddressKey(request.ip), what: "this client address" };
  if (PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix))) return byAddress;
  const authorization = request.headers.authorization;
  if (authorization) {
    return { rule: rules.token, key: digest(authorization), what: "this access token", credentialed: true };
  }
  const session = request.cookies?.[SESSION_COOKIE];
  if (session) return { rule: rules.session, key: digest(session), what: "this session", credentialed: true };
  return byAddress;
}

/**
 * One counter per request: per access token, per admin session, or per client address, leased by
 * default (a process pays a share of the budget in the shared store at once, then counts the
 * requests it serves from it in memory); health checks are never counted. Every counted
 * response carries the IETF RateLimit-Policy and RateLimit fields; over the limit, 429 with
 * Retry-After. Runs before routing's own hooks, so a refused request costs nothing else.
 */
export function registerRateLimits(app: FastifyInstance, limits: LimitStore, rules: RateLimitRules) {
  const outcomes = new WeakMap<FastifyRequest, LimitOutcome>();
  const subjects = new WeakMap<FastifyRequest, Subject>();

  app.addHook("onRequest", async (request, reply) => {
    const subject = subjectOf(request, rules);
    if (!subject) return;
    subjects.set(request, subject);
    let outcome: LimitOutcome;
    try {
      outcome = await limits.consume(subject.rule, subject.key);
    } catch (error) {
      // An unreachable counter store must not take the API down with it: serve, uncounted.
      request.log.warn({ err: error }, "rate limit store unavailable");
      return;
    }
    outcomes.set(request, outcome);
    if (!outcome.allowed) {
      const { points, durationSeconds } = subject.rule;
      // Sent, not thrown: the OAuth endpoints' error handler would make a thrown 429 an RFC 6749 400.
      const refusal = rateLimited(
        `Too many requests from ${subject.what}: at most ${points} per ${durationSeconds} seconds. Retry in ${outcome.resetSeconds} seconds.`,
        { "retry-after": String(outcome.resetSeconds) },
      );
      return sendProblem(reply, toProblem(refusal, request));
    }
  });

  // Made-up credentials each get a fresh counter of their own, so their 401s are also counted per
  // client address (shared by all processes); past that limit the address's 401s become 429s.
  // Valid credentials from the same address (a shared network) keep working.
  app.addHook("onSend", async (request, reply, payload) => {
    if (reply.statusCode === 401 && subjects.get(request)?.credentialed) {
      let refused: LimitOutcome | undefined;
      try {
        const counted = await limits.consume(rules.invalidCredentials, clientAddressKey(request.ip));
        if (!counted.allowed) refused = counted;
      } catch (error) {
        request.log.warn({ err: error }, "rate limit store unavailable");
      }
      if (refused) {
        const { points, durationSeconds } = rules.invalidCredentials;
        const refusal = rateLimited(
          `Too many requests with invalid credentials from this client address: at most ${points} per ${durationSeconds} seconds. Retry in ${refused.resetSeconds} seconds.`,
          { "retry-after": String(refused.resetSeconds), ...rateLimitHeaders(refused) },
        );
        reply
          .code(refusal.status)
          .type("application/problem+json")
          .removeHeader("www-authenticate")
          .headers(refusal.headers ?? {});
        return JSON.stringify(problemBodyOf(refusal));
      }
    }
    const outcome = outcomes.get(request);
    // A refusal that names a tighter limit of its own (sign-in throttling) keeps its fields.
    if (outcome && !reply.hasHeader("ratelimit")) reply.headers(rateLimitHeaders(outcome));
    return payload;
  });
}
