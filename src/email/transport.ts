import nodemailer from "nodemailer";
import type { RenderedEmail } from "./render.js";

/** Where delivered messages go: an SMTP server, or nowhere ("captured": kept in the outbox to read in the panel). */
export interface Mailer {
  readonly mode: "smtp" | "capture";
  send(to: string, email: RenderedEmail): Promise<{ response: string }>;
  close(): void;
}

/** An SMTP refusal: permanent (5xx: the address does not exist, the message is refused) or worth retrying. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** What a production server without SMTP_URL says at start (and the Outbox shows): no donor gets any email. */
export const NO_MAIL_WARNING =
  "WARNING: no SMTP_URL: email is not delivered. Receipts and sign-in links are only captured in the admin panel's Outbox; set SMTP_URL (smtp:// or smtps://) to send them";

export function createMailer(smtpUrl: string | undefined): Mailer {
  if (!smtpUrl) {
    return {
      mode: "capture",
      async send() {
        return { response: "captured" };
      },
      close() {},
    };
  }
  // One pooled connection set per process; nodemailer reconnects after a server drops it.
  const transport = nodemailer.createTransport(smtpUrl, {
    pool: true,
    maxConnections: 2,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  } as never);
  return {
    mode: "smtp",
    async send(to, email) {
      const { From, "Reply-To": replyTo, "Message-ID": messageId, ...headers } = email.headers;
      try {
        const info = await transport.sendMail({
          from: From,
          to,
          replyTo,
          messageId,
          subject: email.subject,
          html: email.html,
          text: email.text,
          headers,
        });
        return { response: String(info.response ?? "") };
      } catch (error) {
        const { responseCode, response, message } = error as {
          responseCode?: number;
          response?: string;
          message: string;
        };
        const answer = response ?? message;
        throw new DeliveryError(answer, responseCode !== undefined && responseCode >= 500 && responseCode < 600);
      }
    },
    close() {
      transport.close();
    },
  };
}
