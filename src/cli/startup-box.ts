import type { Config } from "../config.js";
import { NO_MAIL_WARNING } from "../email/transport.js";

export interface StartupFacts {
  config: Config;
  databaseKind: string;
  /** The port actually listened on (PORT=0 picks one). */
  port: number;
  /** What the demo bootstrap printed once (login, client, tokens), null when it did not run. */
  demo: string[] | null;
  /** Messages are captured instead of sent (no SMTP_URL) and the worker delivers them. */
  emailCaptured: boolean;
}

const RULE = "─".repeat(72);

/**
 * What `donata serve` prints once it listens and its worker runs: after the start-up logs, so that
 * it is the last thing on the screen and does not scroll away.
 */
export function startupBox({ config, databaseKind, port, demo, emailCaptured }: StartupFacts): string[] {
  return [
    RULE,
    `Donata (${databaseKind}) listening on http://${config.host}:${port}  docs: ${config.baseUrl}/docs`,
    ...(demo ?? []),
    ...(config.production && !config.smtpUrl
      ? [NO_MAIL_WARNING]
      : emailCaptured
        ? ["Email: no SMTP_URL, messages are captured (admin panel → Outbox)"]
        : []),
    "Request logs: mute them with LOG_LEVEL=warn npm start (or LOG_LEVEL=warn donata serve); Ctrl-C stops",
    RULE,
  ];
}
