import { buildApp } from "../app.js";
import { renderDepsOf } from "../email/render.js";
import { createMailer } from "../email/transport.js";
import { startMailer } from "../jobs/email.job.js";
import { startWorker } from "../jobs/runner.js";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { loadProcessorRegistry } from "../payments/processors/index.js";
import { bootstrapDemo } from "../seed/demo.js";
import type { Command } from "./cli-kit.js";
import { openMigratedDatabase } from "./database.js";
import { openLocalChannel } from "./local-channel.js";

export const serveCommand: Command = {
  name: "serve",
  usage: "donata serve [--demo] [--no-worker]",
  summary: "Migrate and serve (with --demo: demo data on an empty database; the worker runs unless --no-worker)",
  options: { demo: { type: "boolean" }, "no-worker": { type: "boolean" } },
  local: true,
  async run(values, io) {
    const { config, database } = await openMigratedDatabase(io.env, { create: true });
    const say = (line: string) => io.stdout.write(`${line}\n`);
    try {
      if (values.demo) {
        const lines = await bootstrapDemo(config, database);
        for (const line of lines ?? []) say(line);
      }
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
      if (!config.smtpUrl && !values["no-worker"]) {
        say("Email: no SMTP_URL, messages are captured (admin panel → Outbox)");
      }
      say(`Donata (${database.kind}) listening on http://${config.host}:${port}  docs: ${config.baseUrl}/docs`);
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
          Promise.all([worker?.stop(), mailer?.stop(), app.close(), channel?.close()]).finally(resolve);
        };
        process.on("SIGINT", () => stop("SIGINT"));
        process.on("SIGTERM", () => stop("SIGTERM"));
      });
    } finally {
      await database.close();
    }
    return { json: { stopped: true }, text: ["Stopped cleanly"] };
  },
};
