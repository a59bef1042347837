import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from "fastify";
import pino, { type Logger } from "pino";
import pinoPretty from "pino-pretty";
import type { Config } from "../config.js";

/**
 * The URL as logged: one-time link tokens (`?token=`, the donor portal's and the welcome page's) and
 * any `dnt_…` secret in the query are replaced, so logs never hold a working sign-in link.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf("?");
  if (query === -1) return url;
  const redacted = url
    .slice(query + 1)
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      if (equals === -1) return pair;
      const name = pair.slice(0, equals);
      const value = pair.slice(equals + 1);
      return /token|secret/i.test(name) || /^dnt_/i.test(value) ? `${name}=[redacted]` : pair;
    })
    .join("&");
  return `${url.slice(0, query)}?${redacted}`;
}

/**
 * In a terminal, one line per request instead of Fastify's two ("incoming request", "request
 * completed"): `GET /api/v1/checkouts/ 200 3.1 ms`. JSON logs keep Fastify's own request lines.
 */
class ShortRequestLog extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const line = `${request.method} ${redactUrl(request.url)} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)} ms`;
    if (error) reply.log.error({ err: error }, line);
    else reply.log.info(line);
  }
}

const prettyOptions = { sync: true, singleLine: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname,reqId" };

/** The log of a process that serves no HTTP (the primary of `serve --processes`), in the same format as the server's. */
export function processLogger(config: Config): Logger {
  const options = { level: config.logLevel };
  return config.logFormat === "json" ? pino(options) : pino(options, pinoPretty(prettyOptions));
}

/**
 * JSON lines (pino) for machines: pipes, files, CI, tests. In a terminal (LOG_FORMAT=pretty, the
 * default on a TTY) short human lines, written synchronously so that they keep their order with
 * what the CLI prints (the start-up box comes after them).
 */
export function loggerOptions(config: Config): Pick<FastifyServerOptions, "logger" | "logController"> {
  const serializers = {
    req: (request: FastifyRequest) => ({
      method: request.method,
      url: redactUrl(request.url),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    }),
  };
  if (config.logFormat === "json") return { logger: { level: config.logLevel, serializers } };
  return {
    logger: {
      level: config.logLevel,
      serializers,
      stream: pinoPretty(prettyOptions),
    },
    logController: new ShortRequestLog(),
  };
}
