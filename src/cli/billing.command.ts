import { renderDepsOf } from "../email/render.js";
import { createMailer, NO_MAIL_WARNING } from "../email/transport.js";
import { startMailer } from "../jobs/email.job.js";
import { startImportRunner } from "../jobs/import.job.js";
import { runBilling, startWorker } from "../jobs/runner.js";
import { startWebhookSender, webhookSenderDeps } from "../jobs/webhook.job.js";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { loadProcessorRegistry } from "../payments/processors/index.js";
import { type Command, UsageError } from "./cli-kit.js";
import { openMigratedDatabase, withDatabase } from "./database.js";
import { announceReady, refuseEmbeddedDatabase } from "./processes.js";

function parseNow(raw: unknown): Date {
  if (raw === undefined) return new Date();
  const text = String(raw);
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00.000Z`) : new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new UsageError(`--now must be an ISO 8601 date or date-time, got "${text}"`);
  }
  return date;
}

export const billingRunCommand: Command = {
  name: "billing run",
  usage: "donata billing run [--now <ISO date or date-time>]",
  summary:
    "Charge due renewals, reconcile stale payments and close expired checkouts once (--now moves the clock, for testing)",
  options: { now: { type: "string" } },
  async run(values, io) {
    const now = parseNow(values.now);
    const result = await withDatabase(io.env, async ({ config, database }) =>
      runBilling(database.db, {
        now,
        checkoutTtlSeconds: config.checkoutTtlSeconds,
        pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
        links: await loadDocumentLinks(database.db, config.baseUrl),
        processors: loadProcessorRegistry(database.db, config),
      }),
    );
    return {
      json: { now: now.toISOString(), ...result },
      text: [
        `Billing run at ${now.toISOString()}: ${result.renewed} renewed, ${result.failed} failed, ` +
          `${result.revoked} revoked, ${result.skipped} skipped, ${result.errors} errors, ${result.expired_checkouts} expired checkouts closed, ` +
          `${result.reconciled} reconciled`,
      ],
    };
  },
};

export const workerCommand: Command = {
  name: "worker",
  usage: "donata worker",
  summary:
    "Run the background worker alone (renewals, reconciler, checkout expiry, email and webhook delivery, the panel's imports) beside `serve --no-worker` until SIGINT/SIGTERM (PostgreSQL only)",
  options: {},
  local: true,
  async run(_values, io) {
    refuseEmbeddedDatabase(io.env, "a separate worker");
    const { config, database } = await openMigratedDatabase(io.env);
    try {
      io.stdout.write(`Worker running every ${config.workerIntervalSeconds} s (${database.kind})\n`);
      if (config.production && !config.smtpUrl) io.stdout.write(`${NO_MAIL_WARNING}\n`);
      const worker = startWorker(database.db, {
        intervalSeconds: config.workerIntervalSeconds,
        checkoutTtlSeconds: config.checkoutTtlSeconds,
        eventRetentionDays: config.eventRetentionDays,
        pendingTimeoutSeconds: config.paymentPendingTimeoutSeconds,
        links: await loadDocumentLinks(database.db, config.baseUrl),
        processors: loadProcessorRegistry(database.db, config),
        onError: (error) => io.stderr.write(`worker: ${error instanceof Error ? error.message : String(error)}\n`),
      });
      // The outbox too: `serve --no-worker` beside `worker` must still deliver email.
      const mailer = startMailer(database.db, {
        mailer: createMailer(config.smtpUrl),
        render: renderDepsOf(config),
        intervalSeconds: config.mailIntervalSeconds,
        onError: (error) =>
          io.stderr.write(`email delivery: ${error instanceof Error ? error.message : String(error)}\n`),
      });
      const webhooks = startWebhookSender(database.db, {
        ...webhookSenderDeps(config),
        intervalSeconds: config.webhookIntervalSeconds,
        onError: (error) =>
          io.stderr.write(`webhook delivery: ${error instanceof Error ? error.message : String(error)}\n`),
      });
      // The panel's imports too: an upload to `serve --no-worker` is run here.
      const imports = startImportRunner(database.db, {
        onError: (error) => io.stderr.write(`import: ${error instanceof Error ? error.message : String(error)}\n`),
      });
      await new Promise<void>((resolve) => {
        // Once: a second signal (a process manager's beside the primary's of `serve --processes`) changes nothing.
        let stopping = false;
        const stop = () => {
          if (stopping) return;
          stopping = true;
          Promise.all([worker.stop(), mailer.stop(), webhooks.stop(), imports.stop()]).finally(resolve);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
        announceReady();
      });
    } finally {
      await database.close();
    }
    return { json: { stopped: true }, text: ["Worker stopped cleanly"] };
  },
};
