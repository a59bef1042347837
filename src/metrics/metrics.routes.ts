import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { createMetrics, type Metrics, policyName } from "./metrics.js";

export const METRICS_PATH = "/metrics";

/** 127.0.0.0/8 and ::1, also written as IPv4-mapped IPv6 (::ffff:127.0.0.1). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.replace(/^::ffff:/i, "");
  if (plain === "::1") return true;
  return isIP(plain) === 4 && plain.startsWith("127.");
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Who may read the metrics: the bearer of METRICS_TOKEN (compared in constant time; a wrong one is
 * refused wherever it comes from), else a loopback client. Behind a trusted proxy the forwarded
 * client address must be loopback too, so a public request relayed by a local proxy is refused.
 */
function authorizeScrape(request: FastifyRequest, config: Config) {
  const header = request.headers.authorization;
  if (config.metricsToken && header !== undefined) {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? "";
    if (timingSafeEqual(digest(presented), digest(config.metricsToken))) return;
    throw new AppError("metrics_forbidden", "The metrics token is not valid");
  }
  if (isLoopback(request.socket.remoteAddress) && isLoopback(request.ip)) return;
  throw new AppError(
    "metrics_forbidden",
    config.metricsToken
      ? "The metrics are served to loopback clients, or with Authorization: Bearer <METRICS_TOKEN>"
      : "The metrics are served to loopback clients only (set METRICS_TOKEN to scrape from elsewhere)",
  );
}

/** Counts every response; registered before the plugins and routes, so that none escapes it. */
export function registerMetrics(app: FastifyInstance, config: Config, database: Database): Metrics {
  const metrics = createMetrics(config, database);
  // A refusal thrown by a service names its rule in its own headers, or is known by its code (the
  // card-testing limits do not publish their rules); the request-rate limits send theirs in the reply.
  const thrownLimits = new WeakMap<FastifyRequest, string>();
  app.addHook("onError", async (request, _reply, error) => {
    if (error instanceof AppError && error.status === 429) {
      thrownLimits.set(request, policyName(error.headers?.["ratelimit-policy"]) ?? error.code);
    }
  });
  app.addHook("onResponse", async (request, reply) => {
    metrics.observe(request, reply, thrownLimits.get(request));
  });
  return metrics;
}

/** GET /metrics in the Prometheus text format (after the OpenAPI plugin, which lists it beside /healthz). */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics, config: Config) {
  app.get(
    METRICS_PATH,
    {
      schema: {
        tags: ["health"],
        summary: "Prometheus metrics (loopback clients, or Authorization: Bearer <METRICS_TOKEN>)",
        response: {
          200: {
            description: "Prometheus text exposition format 0.0.4 (docs/observability.md lists every metric)",
            content: { "text/plain": { schema: Type.String() } },
          },
          403: {
            description: "Neither a loopback client nor the metrics token",
            content: { "application/problem+json": { schema: Type.Ref("Problem") } },
          },
        },
      },
      // Like /healthz, answered while load is shed: an overload is exactly when the numbers matter.
      config: { pressureHandler: () => undefined },
      onRequest: async (request) => authorizeScrape(request, config),
    },
    async (request, reply) => {
      const body = await metrics.scrape(request.log);
      return reply.type(metrics.registry.contentType).header("cache-control", "no-store").send(body);
    },
  );
}
