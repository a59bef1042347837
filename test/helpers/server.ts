import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { type AppDependencies, buildApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/client.js";
import { openLimitStore } from "../../src/limits/rate-limiter.js";
import { openTestDatabase } from "./database.js";

export interface TestServer {
  url: string;
  app: FastifyInstance;
  config: Config;
  database: Database;
  /** Every SQL statement the application ran, in order; tests may clear it. */
  queries: string[];
  get(path: string, token?: string, headers?: Record<string, string>): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field
  body: any;
}

/** The key test servers encrypt processor secrets with (so a test's CLI process can read them too). */
export const TEST_ENCRYPTION_KEY = "0123456789abcdef".repeat(4);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A response with its body parsed as JSON when it is JSON, kept as text otherwise. */
export async function readResponse(response: Response): Promise<TestResponse> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body };
}

/** The real application on an ephemeral port, over a real database; its public URLs are that port's. */
export async function startTestServer(
  overrides: Partial<Config> = {},
  options: {
    testHooks?: AppDependencies["testHooks"];
    limitNamespace?: string;
    applicationName?: string;
    /** The public URLs' host: "localhost" where a browser needs a domain (a passkey's relying party is never an IP address). */
    hostname?: "localhost";
  } = {},
): Promise<TestServer> {
  const queries: string[] = [];
  const database = await openTestDatabase((query) => queries.push(query), options.applicationName);
  const port = await freePort();
  const origin = `http://${options.hostname ?? "127.0.0.1"}:${port}`;
  // Load shedding is off unless a test turns it on: a busy shared test machine must not shed the suite.
  const config = loadConfig(
    {
      LOG_LEVEL: "silent",
      AUTH_URL: origin,
      BASE_URL: origin,
      MAX_EVENT_LOOP_DELAY: "0",
      DONATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    },
    overrides,
  );
  // Each server counts its own rate limits (files share one PostgreSQL database and one client IP),
  // unless a test makes two servers share a namespace, as two processes of one deployment do.
  const limits = openLimitStore({
    db: database.db,
    redisUrl: config.redisUrl,
    namespace: options.limitNamespace ?? `t${randomBytes(6).toString("hex")}:`,
  });
  const app = await buildApp({ config, database, limits, testHooks: options.testHooks });
  const address = await app.listen({ port, host: "127.0.0.1" });
  return {
    url: options.hostname ? origin : address,
    app,
    config,
    database,
    queries,
    async get(path, token, headers = {}) {
      const response = await fetch(`${address}${path}`, {
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });
      return readResponse(response);
    },
    async close() {
      await app.close();
      await database.close();
    },
  };
}
