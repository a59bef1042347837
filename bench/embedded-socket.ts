/**
 * `npx tsx bench/embedded-socket.ts`: the psql socket under load (docs/embedded-database.md).
 * Starts `donata serve` on a new PGlite data directory, sets it up with CLI commands run beside it,
 * then at the same time: autocannon creating checkouts (public API, a write) and listing them
 * (API token, a read), and a pg client over the server's psql socket looping BEGIN / INSERT / SELECT
 * / ROLLBACK (extended protocol) and plain SELECTs. Checks every HTTP response is 2xx, every
 * checkout the server answered 201 for is in the database, and none of the rolled-back rows is;
 * prints the figures as Markdown.
 *
 * Environment: BENCH_REQUESTS (default 3000), BENCH_CONNECTIONS (default 10), BENCH_PSQL=0 for
 * the HTTP load alone (the baseline).
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import pg from "pg";
import { socketDirectory } from "../src/cli/local-channel.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = path.join(ROOT, "bin", "donata.js");
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const dataDir = mkdtempSync(path.join(os.tmpdir(), "donata-socket-bench-"));
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  DATABASE_URL: "",
  LOG_LEVEL: "warn",
  MAX_EVENT_LOOP_DELAY: "0",
  RATE_LIMIT_IP: "1000000/1m",
  RATE_LIMIT_TOKEN: "1000000/1m",
  CHECKOUTS_PER_IP: "1000000",
};

function cli(...args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "--json"], { cwd: ROOT, env });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${args[0]}: ${err}`))));
  });
}

function serve(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, "serve", "--no-worker"], {
    cwd: ROOT,
    env: { ...env, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1]) resolve({ url: match[1], child });
    });
    child.on("close", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function main() {
  await cli("migrate");
  const { url, child } = await serve();
  try {
    await cli("org", "create", "--slug", "bench", "--name", "Bench");
    const app = await cli(
      ...["app", "create", "--name", "Bench", "--url", "https://bench.example.org/"],
      ...[
        "--callback",
        "https://bench.example.org/cb",
        "--permission",
        "checkouts:read",
        "--permission",
        "campaigns:read",
      ],
    );
    await cli("app", "install", "--client-id", String(app.client_id), "--org", "bench");
    await cli("seed", "--org", "bench", "--campaigns", "1", "--supporters", "5", "--checkouts", "5");
    const tokens = await cli("token", "create", "--client-id", String(app.client_id), "--org", "bench");
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    const campaigns = (await (await fetch(`${url}/api/v1/campaigns/`, { headers: auth })).json()) as {
      items: { slug: string }[];
    };
    const campaign = campaigns.items[0]?.slug;
    const checkoutsBefore = await countCheckouts(url, auth);

    const statuses = new Map<number, number>();
    const load = autocannon({
      url,
      connections: CONNECTIONS,
      // A number of requests rather than a duration: every response is counted, none cut off at the end.
      amount: REQUESTS,
      requests: [
        {
          method: "POST",
          path: `/api/v1/public/organizations/bench/campaigns/${campaign}/checkouts/`,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ amount: 10, frequency: 0 }),
        },
        { method: "GET", path: "/api/v1/checkouts/?limit=20", headers: auth },
      ],
    }) as unknown as Promise<autocannon.Result> & EventEmitter;
    load.on("response", (_client: unknown, status: number, _size: number, _responseTime: number) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    });
    load.on("reqError", () => statuses.set(0, (statuses.get(0) ?? 0) + 1));

    const psql = { transactions: 0, selects: 0, errors: [] as string[], latencies: [] as number[] };
    let loading = process.env.BENCH_PSQL !== "0";
    const client = new pg.Client({ host: socketDirectory(dataDir), user: "postgres", database: "postgres" });
    await client.connect();
    const transactionLoop = (async () => {
      for (let index = 0; loading; index++) {
        const started = performance.now();
        try {
          await client.query("BEGIN");
          await client.query(
            "insert into organizations (slug, name, currency, time_zone) values ($1, $2, 'EUR', 'UTC')",
            [`rolled-back-${index}`, "Never"],
          );
          await client.query(
            "select count(*) from checkouts where organization_id = (select id from organizations where slug = $1)",
            ["bench"],
          );
          await client.query("ROLLBACK");
          psql.transactions++;
        } catch (error) {
          psql.errors.push((error as Error).message);
        }
        psql.latencies.push(performance.now() - started);
      }
    })();
    const reader = new pg.Client({ host: socketDirectory(dataDir), user: "postgres", database: "postgres" });
    await reader.connect();
    const selectLoop = (async () => {
      while (loading) {
        try {
          await reader.query("select count(*) from checkouts");
          psql.selects++;
        } catch (error) {
          psql.errors.push((error as Error).message);
        }
      }
    })();
    const started = performance.now();
    const result = await load;
    const seconds = (performance.now() - started) / 1000;
    loading = false;
    await Promise.all([transactionLoop, selectLoop]);
    const created = statuses.get(201) ?? 0;
    const checkoutsAfter = await countCheckouts(url, auth);
    const rolled = await reader.query("select count(*)::int as n from organizations where slug like 'rolled-back-%'");
    await client.end();
    await reader.end();

    const non2xx = [...statuses].filter(([status]) => status < 200 || status >= 300);
    const sorted = [...psql.latencies].sort((a, b) => a - b);
    const pct = (p: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0).toFixed(1);
    const lines = [
      `| ${REQUESTS} HTTP requests over ${CONNECTIONS} connections, ${seconds.toFixed(1)} s | |`,
      "|---|---|",
      `| HTTP requests (create checkout + list checkouts) | ${result.requests.total} (${result.requests.average.toFixed(0)}/s), latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms |`,
      `| HTTP statuses | ${[...statuses].map(([status, count]) => `${status}: ${count}`).join(", ")} |`,
      `| checkouts answered 201 / found in the database afterwards | ${created} / ${checkoutsAfter - checkoutsBefore} |`,
      `| psql transactions (BEGIN, INSERT, SELECT, ROLLBACK) | ${psql.transactions}, each p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms |`,
      `| psql plain SELECTs | ${psql.selects} |`,
      `| rolled-back rows found afterwards | ${rolled.rows[0].n} |`,
      `| psql errors | ${psql.errors.length}${psql.errors.length ? ` (${[...new Set(psql.errors)].join("; ")})` : ""} |`,
    ];
    console.log(lines.join("\n"));
    const ok =
      non2xx.length === 0 &&
      created === checkoutsAfter - checkoutsBefore &&
      rolled.rows[0].n === 0 &&
      psql.errors.length === 0;
    console.log(ok ? "\nOK" : "\nFAILED");
    process.exitCode = ok ? 0 : 1;
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.on("close", resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function countCheckouts(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(`${url}/api/v1/checkouts/?limit=1`, { headers });
  return ((await response.json()) as { count: number }).count;
}

await main();
