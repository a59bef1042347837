import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

interface RawAnswer {
  /** Everything the server sent before closing (or before the deadline). */
  text: string;
  closed: boolean;
  /** Milliseconds from the first byte sent to the close. */
  elapsedMs: number;
}

/**
 * A raw TCP client: sends `chunks` one after the other, `gapMs` apart (a trickling client when
 * the gap is long), and reads until the server closes the connection or `deadlineMs` passes.
 */
async function raw(url: string, chunks: string[], gapMs = 0, deadlineMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const started = Date.now();
  let text = "";
  let closed = false;
  socket.on("data", (data) => {
    text += data.toString("utf8");
  });
  socket.on("error", () => {});
  const gone = new Promise<void>((resolve) =>
    socket.once("close", () => {
      closed = true;
      resolve();
    }),
  );
  for (const chunk of chunks) {
    if (closed) break;
    socket.write(chunk);
    if (gapMs > 0) await Promise.race([sleep(gapMs), gone]);
  }
  await Promise.race([gone, sleep(Math.max(0, deadlineMs - (Date.now() - started)))]);
  const elapsedMs = Date.now() - started;
  socket.destroy();
  return { text, closed, elapsedMs };
}

function parse(answer: RawAnswer) {
  const [head = "", body = ""] = answer.text.split("\r\n\r\n");
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  return { statusLine, headers, body: body ? JSON.parse(body) : undefined };
}

const problem = (status: number, title: string, code: string, detail: string) => ({
  type: `urn:donata:problem:${code}`,
  title,
  status,
  detail,
  code,
});

describe("errors of the HTTP layer itself", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it("answers headers too large with a 431 problem body", async () => {
    const answer = await raw(server.url, [
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    ]);
    const { statusLine, headers, body } = parse(answer);
    expect(statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(headers["content-type"]).toBe("application/problem+json");
    expect(body).toEqual(
      problem(431, "Request Header Fields Too Large", "header_too_large", "The request headers are too large"),
    );
    expect(answer.closed).toBe(true);
  });

  it("answers a malformed request line and a bad chunked body with a 400 problem body", async () => {
    const invalid = problem(400, "Bad Request", "invalid_request", "The request is not valid HTTP");
    for (const request of [
      "GET /healthz HTTP/1.1 trailing\r\nHost: localhost\r\n\r\n",
      "NOT-HTTP\r\n\r\n",
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "POST /oauth/token/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
        "Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n",
    ]) {
      const answer = await raw(server.url, [request]);
      const { statusLine, headers, body } = parse(answer);
      expect({ request, statusLine }).toEqual({ request, statusLine: "HTTP/1.1 400 Bad Request" });
      expect(headers["content-type"]).toBe("application/problem+json");
      expect(body).toEqual(invalid);
      expect(answer.closed).toBe(true);
    }
  });
});

describe("slow clients", () => {
  let server: TestServer;
  const timedOut = problem(408, "Request Timeout", "request_timeout", "The request was not received in time");

  beforeAll(async () => {
    server = await startTestServer({ headersTimeoutSeconds: 1, requestTimeoutSeconds: 2, keepAliveTimeoutSeconds: 1 });
  });
  afterAll(() => server?.close());

  it("cuts off a client that trickles its headers, a byte every 200 ms", async () => {
    const head = `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${"a".repeat(100)}\r\n\r\n`;
    const answer = await raw(server.url, [...head], 200, 8000);
    expect(answer.closed).toBe(true);
    // 1 s of headers timeout, checked every 500 ms, plus scheduling slack.
    expect(answer.elapsedMs).toBeLessThan(3000);
    const { statusLine, body } = parse(answer);
    expect(statusLine).toBe("HTTP/1.1 408 Request Timeout");
    expect(body).toEqual(timedOut);
  });

  it("cuts off a client that trickles its body, a byte every 200 ms", async () => {
    const form = `grant_type=client_credentials&client_id=${"x".repeat(100)}`;
    const head =
      "POST /oauth/token/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
      `Content-Length: ${form.length}\r\n\r\n`;
    const answer = await raw(server.url, [head, ...form], 200, 8000);
    expect(answer.closed).toBe(true);
    expect(answer.elapsedMs).toBeLessThan(4000);
    const { statusLine, body } = parse(answer);
    expect(statusLine).toBe("HTTP/1.1 408 Request Timeout");
    expect(body).toEqual(timedOut);
  });

  it("closes a keep-alive connection left idle after its request", async () => {
    const answer = await raw(server.url, ["GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"], 0, 8000);
    expect(parse(answer).statusLine).toBe("HTTP/1.1 200 OK");
    expect(answer.closed).toBe(true);
    expect(answer.elapsedMs).toBeLessThan(3000);
  });

  it("still serves a client that sends at a normal pace", async () => {
    expect((await server.get("/healthz")).body).toEqual({ status: "ok" });
    const answer = await raw(server.url, ["GET /healthz HTTP/1.1\r\nHost: localhost\r\n", "Connection: close\r\n\r\n"]);
    expect(parse(answer).statusLine).toBe("HTTP/1.1 200 OK");
    expect(parse(answer).body).toEqual({ status: "ok" });
  });
});

describe("a server that is closing", () => {
  it("answers a request that arrives during the close with a 503 problem body", async () => {
    const server = await startTestServer();
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    let text = "";
    socket.on("data", (data) => {
      text += data.toString("utf8");
    });
    const gone = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    // A request in flight (half its body sent) keeps the connection open while the server closes...
    const form = "grant_type=client_credentials";
    socket.write(
      "POST /oauth/token/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
        `Content-Length: ${form.length}\r\n\r\n${form.slice(0, 5)}`,
    );
    await sleep(200);
    const closed = server.close();
    await sleep(200);
    // ...and a second request pipelined behind it arrives after the close began.
    socket.write(`${form.slice(5)}GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    await Promise.race([gone, sleep(5000)]);
    socket.destroy();
    await closed;
    const second = text.slice(text.indexOf("HTTP/1.1", 1));
    const [head = "", body = ""] = second.split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable");
    expect(head.toLowerCase()).toContain("content-type: application/problem+json");
    expect(head.toLowerCase()).toContain("retry-after: 5");
    expect(JSON.parse(body)).toEqual(
      problem(503, "Service Unavailable", "shutting_down", "The server is shutting down; retry shortly"),
    );
  });
});

describe("timeouts and load shedding configuration", () => {
  it("has defaults and refuses values out of range", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres" })).toMatchObject({
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
      keepAliveTimeoutSeconds: 72,
      maxEventLoopDelayMs: 1000,
      eventLoopSampleIntervalMs: 1000,
    });
    // The embedded database runs queries on the event loop: a long one is not overload.
    expect(loadConfig({})).toMatchObject({ maxEventLoopDelayMs: 0 });
    expect(loadConfig({ MAX_EVENT_LOOP_DELAY: "0", HEADERS_TIMEOUT: "5", REQUEST_TIMEOUT: "5" })).toMatchObject({
      maxEventLoopDelayMs: 0,
      headersTimeoutSeconds: 5,
      requestTimeoutSeconds: 5,
    });
    expect(() => loadConfig({ HEADERS_TIMEOUT: "40" })).toThrow(
      new ConfigError("HEADERS_TIMEOUT (40) must not exceed REQUEST_TIMEOUT (30)"),
    );
    expect(() => loadConfig({ REQUEST_TIMEOUT: "0" })).toThrow(
      new ConfigError('REQUEST_TIMEOUT must be an integer between 1 and 3600, got "0"'),
    );
    expect(() => loadConfig({ KEEP_ALIVE_TIMEOUT: "1.5" })).toThrow(ConfigError);
    expect(() => loadConfig({ EVENT_LOOP_SAMPLE_INTERVAL: "5" })).toThrow(ConfigError);
  });
});
