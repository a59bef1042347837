import { type EventEmitter, once } from "node:events";
import pino from "pino";
import { buildApp } from "../app.js";
import { renderDepsOf } from "../email/render.js";
import { createMailer } from "../email/transport.js";
import { startPeriodicBackups } from "../jobs/backup.job.js";
import { startMailer } from "../jobs/email.job.js";
import { startWorker } from "../jobs/runner.js";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { loadProcessorRegistry } from "../payments/processors/index.js";
import { bootstrapDemo } from "../seed/demo.js";
import type { Command } from "./cli-kit.js";
import { openMigratedDatabase } from "./database.js";
import { openLocalChannel } from "./local-channel.js";
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
  usage: "donata serve [--demo] [--no-worker]",
  summary: "Migrate and serve (with --demo: demo data on an empty database; the worker runs unless --no-worker)",
  options: { demo: { type: "boolean" }, "no-worker": { type: "boolean" } },
  local: true,
  async run(values, io) {
    refuseDemoInProduction(io.env, values.demo);
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
          Promise.all([worker?.stop(), mailer?.stop(), backups?.stop(), app.close(), channel?.close()]).finally(
            resolve,
          );
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
