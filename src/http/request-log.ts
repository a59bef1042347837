import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from "fastify";
import pinoPretty from "pino-pretty";
import type { Config } from "../config.js";

/**
 * In a terminal, one line per request instead of Fastify's two ("incoming request", "request
 * completed"): `GET /api/v1/checkouts/ 200 3.1 ms`. JSON logs keep Fastify's own request lines.
 */
class ShortRequestLog extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    const line = `${request.method} ${request.url} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)} ms`;
    if (error) reply.log.error({ err: error }, line);
    else reply.log.info(line);
  }
}

/**
 * JSON lines (pino) for machines: pipes, files, CI, tests. In a terminal (LOG_FORMAT=pretty, the
 * default on a TTY) short human lines, written synchronously so that they keep their order with
 * what the CLI prints (the start-up box comes after them).
 */
export function loggerOptions(config: Config): Pick<FastifyServerOptions, "logger" | "logController"> {
  if (config.logFormat === "json") return { logger: { level: config.logLevel } };
  return {
    logger: {
      level: config.logLevel,
      stream: pinoPretty({ sync: true, singleLine: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname,reqId" }),
    },
    logController: new ShortRequestLog(),
  };
}
