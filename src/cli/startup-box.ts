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
  /** `serve --processes N`: the HTTP children's pids, and the worker child's (undefined with --no-worker). */
  processes?: { http: number[]; worker: number | undefined };
}

const RULE = "─".repeat(72);

/**
 * What `donata serve` prints once it listens and its worker runs: after the start-up logs, so that
 * it is the last thing on the screen and does not scroll away.
 */
export function startupBox({ config, databaseKind, port, demo, emailCaptured, processes }: StartupFacts): string[] {
  return [
    RULE,
    `Donata (${databaseKind}) listening on http://${config.host}:${port}  docs: ${config.baseUrl}/docs`,
    ...(processes ? [processesLine(processes)] : []),
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

function processesLine({ http, worker }: NonNullable<StartupFacts["processes"]>): string {
  const children = `${http.length} HTTP on this port (pids ${http.join(", ")})${worker === undefined ? "" : ` and the worker (pid ${worker})`}`;
  const separate = worker === undefined ? "; no worker here (--no-worker): run `donata worker` beside them" : "";
  return `Processes: ${children}, each started again if it exits${separate}`;
}
