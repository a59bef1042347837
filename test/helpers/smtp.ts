import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { renderDepsOf } from "../../src/email/render.js";
import { createMailer } from "../../src/email/transport.js";
import { type DeliveryResult, deliverOutbox } from "../../src/jobs/email.job.js";
import type { TestServer } from "./server.js";

export interface TestSmtpServer {
  /** smtp://127.0.0.1:<port>, for SMTP_URL. */
  url: string;
  /** Every message the server accepted, parsed, in arrival order. */
  messages: ParsedMail[];
  /** Refuses the next `count` messages with this SMTP code (451: try later; 550: refused for good). */
  failNext(code: number, count?: number, text?: string): void;
  /** Messages to one address. */
  to(address: string): ParsedMail[];
  close(): Promise<void>;
}

/** A real SMTP server (smtp-server) on an ephemeral port; what it receives is parsed with mailparser. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: ParsedMail[] = [];
  let failures: { code: number; count: number; text: string } | undefined;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (failures && failures.count > 0) {
          failures.count -= 1;
          const error = Object.assign(new Error(failures.text), { responseCode: failures.code });
          callback(error);
          return;
        }
        simpleParser(Buffer.concat(chunks))
          .then((parsed) => {
            messages.push(parsed);
            callback();
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    failNext(code, count = 1, text = code >= 500 ? "5.1.1 Mailbox unavailable" : "4.3.0 Try again later") {
      failures = { code, count, text };
    },
    to(address) {
      const wanted = address.toLowerCase();
      return messages.filter((message) =>
        [message.to].flat().some((to) => to?.value.some((entry) => entry.address?.toLowerCase() === wanted)),
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Delivers the due messages of these organizations now, as the worker's mail loop does: to the SMTP
 * server of the server's config (smtpUrl), or captured when it has none. Only the test's own
 * organizations: files running side by side on one database must not deliver each other's mail.
 */
export async function flushOutbox(
  server: Pick<TestServer, "config" | "database">,
  organizationIds: number | readonly number[],
  options: { now?: Date } = {},
): Promise<DeliveryResult> {
  const mailer = createMailer(server.config.smtpUrl);
  try {
    return await deliverOutbox(
      server.database.db,
      { mailer, render: renderDepsOf(server.config) },
      { ...options, organizationIds: typeof organizationIds === "number" ? [organizationIds] : organizationIds },
    );
  } finally {
    mailer.close();
  }
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  "#39": "'",
  "#x27": "'",
  "#x3D": "=",
  "#x60": "`",
};

/** Every link of an HTML message (href values, entities decoded), in order, without duplicates. */
export function linksOf(html: string | false | null | undefined): string[] {
  if (!html) return [];
  const links = [...html.matchAll(/href="([^"]*)"/g)].map((match) =>
    (match[1] as string).replace(
      /&(amp|lt|gt|quot|#39|#x27|#x3D|#x60);/g,
      (_, name: string) => ENTITIES[name] as string,
    ),
  );
  return [...new Set(links)];
}
