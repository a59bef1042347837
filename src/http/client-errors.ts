import type { Socket } from "node:net";
import { type Problem, problemOf } from "./problem.js";

/** What Node's HTTP parser or its timers refused, before any route or hook ran. */
export function clientErrorProblem(code: string | undefined): Problem {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return problemOf(408, "request_timeout", "The request was not received in time");
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return problemOf(431, "header_too_large", "The request headers are too large");
  }
  return problemOf(400, "invalid_request", "The request is not valid HTTP");
}

/**
 * Fastify's clientErrorHandler: the same problem+json body as every other refusal, then the
 * connection is closed (its parser state is unknown, so nothing more can be read from it).
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !pending?.headersSent) {
    const problem = clientErrorProblem(error.code);
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        "Content-Type: application/problem+json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  }
  socket.destroy();
}
