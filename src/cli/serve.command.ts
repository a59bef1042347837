import cluster from "node:cluster";
import { type EventEmitter, once } from "node:events";
import pino from "pino";
import { buildApp } from "../app.js";
import { renderDepsOf } from "../email/render.js";
import { createMailer } from "../email/transport.js";
import { processLogger } from "../http/request-log.js";
import { startPeriodicBackups } from "../jobs/backup.job.js";
import { startMailer } from "../jobs/email.job.js";
import { startImportRunner } from "../jobs/import.job.js";
import { startWorker } from "../jobs/runner.js";
import { startWebhookSender, webhookSenderDeps } from "../jobs/webhook.job.js";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { loadProcessorRegistry } from "../payments/processors/index.js";
import { bootstrapDemo } from "../seed/demo.js";
import type { CliIo, Command, CommandResult, CommandValues } from "./cli-kit.js";
import { openMigratedDatabase } from "./database.js";
import { openLocalChannel } from "./local-channel.js";
import { announceReady, ProcessError, processCount, refuseEmbeddedDatabase, superviseChildren } from "./processes.js";
import { refuseDemoInProduction, setupHint } from "./production.js";
import { startupBox } from "./startup-box.js";

/**
 * Waits until the logger's lines are written. pino's JSON destination (sonic-boom) writes
 * asynchronously and keeps what comes meanwhile, then emits "drain" when all is out; its flush()
 * does not wait when nothing is buffered by size, so the drain is awaited here.
 */
async function logWritten(log: object): Promise<void> {
  const stream = (log as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | (EventEmitter & { _writing?: boolean })
    | undefined;
  if (stream?._writing) await once(stream, "drain");
}

export const serveCommand: Command = {
  name: "serve",
  usage: "donata serve [--demo] [--no-worker] [--processes N]",
  summary:
    "Migrate and serve (--demo: demo data on an empty database; the worker runs unless --no-worker; " +
    "--processes N: N HTTP processes on one port plus a worker process, PostgreSQL only)",
  options: { demo: { type: "boolean" }, "no-worker": { type: "boolean" }, processes: { type: "string" } },
  local: true,
  async run(values, io) {
    // A child of `serve --processes N` (below): it serves HTTP, its primary does the rest.
    if (cluster.isWorker) return serveHttpChild(io);
    const processes = processCount(values.processes);
    refuseDemoInProduction(io.env, values.demo);
    if (processes > 1) {
      refuseEmbeddedDatabase(io.env, `--processes ${processes}`);
      return servePrimary(values, io, processes);
    }
    const { config, database } = await openMigratedDatabase(io.env, { create: true });
    const say = (line: string) => io.stdout.write(`${line}\n`);
    try {
      const demo = values.demo ? await bootstrapDemo(config, database) : null;
      const hint = values.demo ? null : await setupHint(config, database);
      const app = await buildApp({ config, database });
      await app.listen({ port: config.port, host: config.host });
      const address = app.server.address();
      const port = typeof address === "object" && address ? address.port : config.port;
      const channel = await openLocalChannel({ config, database, env: io.env, log: app.log });
      const worker = values["no-worker"]
        ? undefined
        : startWorker(database.db, {
            intervalSeconds: config.workerIntervalSeconds,
            checkoutTtlSeconds: config.checkoutTtlSeconds,
            eventRetentionDays: config.eventRetentionDays,
            pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
            links: await loadDocumentLinks(database.db, config.baseUrl),
            processors: loadProcessorRegistry(database.db, config),
            onError: (error) => app.log.error({ err: error }, "worker run failed"),
          });
      const mailer = values["no-worker"]
        ? undefined
        : startMailer(database.db, {
            mailer: createMailer(config.smtpUrl),
            render: renderDepsOf(config),
            intervalSeconds: config.mailIntervalSeconds,
            onError: (error) => app.log.error({ err: error }, "email delivery failed"),
          });
      const webhooks = values["no-worker"]
        ? undefined
        : startWebhookSender(database.db, {
            ...webhookSenderDeps(config),
            intervalSeconds: config.webhookIntervalSeconds,
            onError: (error) => app.log.error({ err: error }, "webhook delivery failed"),
          });
      const imports = values["no-worker"]
        ? undefined
        : startImportRunner(database.db, {
            onError: (error) => app.log.error({ err: error }, "import failed"),
          });
      const backups = values["no-worker"]
        ? undefined
        : startPeriodicBackups(
            { config, database },
            {
              onError: (error) => app.log.error({ err: error }, "periodic backup failed"),
              onBackup: ({ created, deleted }) => app.log.info({ created, deleted }, "periodic backup taken"),
            },
          );
      // The start-up logs before the box: pino writes its JSON lines asynchronously, the box at once.
      await logWritten(app.log);
      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) {
            io.stderr.write(`${signal} again: exiting now\n`);
            process.exit(1);
          }
          stopping = true;
          say(`${signal} received: finishing in-flight requests, then closing the database`);
          // app.close() waits for in-flight requests before resolving.
          Promise.all([
            worker?.stop(),
            mailer?.stop(),
            webhooks?.stop(),
            imports?.stop(),
            backups?.stop(),
            app.close(),
            channel?.close(),
          ]).finally(resolve);
        };
        process.on("SIGINT", () => stop("SIGINT"));
        process.on("SIGTERM", () => stop("SIGTERM"));
        // Last, once a signal stops it cleanly: whoever reads the box may stop the server at once.
        const emailCaptured = !config.smtpUrl && !values["no-worker"];
        // One write: a reader who sees its first line has the whole box.
        say(startupBox({ config, databaseKind: database.kind, port, demo: demo ?? hint, emailCaptured }).join("\n"));
      });
    } finally {
      await database.close();
    }
    return { json: { stopped: true }, text: ["Stopped cleanly"] };
  },
};

/**
 * `serve --processes N`: migrates once and prints the demo or setup hint, then runs no HTTP and
 * opens no database itself. It starts N HTTP children (`serve --no-worker`, sharing the port) and,
 * unless --no-worker, one worker child (`worker`), restarts one that exits, and on SIGTERM / SIGINT
 * has them all finish what is in flight before it exits.
 */
async function servePrimary(values: CommandValues, io: CliIo, processes: number): Promise<CommandResult> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const { config, database } = await openMigratedDatabase(io.env, { create: true });
  const databaseKind = database.kind;
  let demo: string[] | null;
  try {
    demo = values.demo ? await bootstrapDemo(config, database) : await setupHint(config, database);
  } finally {
    await database.close();
  }
  const log = processLogger(config);
  const withWorker = !values["no-worker"];
  const http = Array.from({ length: processes }, (_, index) => `HTTP process ${index + 1}`);
  const supervisor = superviseChildren(
    [
      ...http.map((label) => ({ label, args: ["serve", "--no-worker"] })),
      ...(withWorker ? [{ label: "worker", args: ["worker"] }] : []),
    ],
    { env: io.env, log },
  );
  let started: Awaited<typeof supervisor.started>;
  try {
    started = await supervisor.started;
  } catch (error) {
    await supervisor.stop();
    throw error;
  }
  await logWritten(log);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        // The children see their primary go and exit at once.
        io.stderr.write(`${signal} again: exiting now\n`);
        process.exit(1);
      }
      stopping = true;
      say(`${signal} received: every process finishes its in-flight requests and work, then stops`);
      resolve();
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
    say(
      startupBox({
        config,
        databaseKind,
        port: started.port ?? config.port,
        demo,
        emailCaptured: !config.smtpUrl && withWorker,
        processes: {
          http: http.map((label) => started.pids[label] as number),
          worker: withWorker ? started.pids.worker : undefined,
        },
      }).join("\n"),
    );
  });
  const unclean = await supervisor.stop();
  if (unclean.length > 0) throw new ProcessError(`not every process stopped cleanly: ${unclean.join("; ")}`);
  return { json: { stopped: true }, text: ["Stopped cleanly"] };
}

/**
 * One HTTP process of `serve --processes N`: the database is migrated and the worker runs
 * elsewhere. SIGTERM and SIGINT (its primary's, or Ctrl-C reaching the whole process group) both
 * mean: finish in-flight requests, close, exit 0; a second one changes nothing, the primary decides.
 */
async function serveHttpChild(io: CliIo): Promise<CommandResult> {
  const { config, database } = await openMigratedDatabase(io.env);
  try {
    const app = await buildApp({ config, database });
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        app.close().finally(resolve);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
      announceReady(typeof address === "object" && address ? address.port : config.port);
    });
  } finally {
    await database.close();
  }
  return { json: { stopped: true }, text: [] };
}
