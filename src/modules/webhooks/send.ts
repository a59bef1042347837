import http from "node:http";
import https from "node:https";
import { BlockedDestinationError, checkLiteralHost, type DestinationPolicy, guardedLookup } from "./destination.js";

/** How long a receiver has to answer, from the connection to the last byte read. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The part of an answer kept in the delivery log. */
export const RESPONSE_BYTES_KEPT = 1024;

export interface SendOutcome {
  /** The answer's HTTP status; null when none came (refused, timed out, blocked). */
  status: number | null;
  durationMs: number;
  /** The first kilobyte of the answer's body, as text. */
  response: string | null;
  /** Why no answer came, or why it does not count (a redirect). */
  error: string | null;
}

// Connections to receivers are kept open between deliveries, as a browser would.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * POSTs one delivery: the body as it was signed, redirects not followed (a 3xx is a failure: a
 * receiver moved is told by its status, and a redirect must not take a signed body elsewhere),
 * at most DELIVERY_TIMEOUT_MS; never throws.
 */
export async function sendWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  policy: DestinationPolicy,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(target);
    checkLiteralHost(url, policy);
  } catch (error) {
    return { status: null, durationMs: 0, response: null, error: describe(error) };
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const request = client.request(
      url,
      {
        method: "POST",
        agent: url.protocol === "https:" ? agents.https : agents.http,
        lookup: guardedLookup(policy),
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": "Donata-Webhooks/1.0",
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on("data", (chunk: Buffer) => {
          if (kept < RESPONSE_BYTES_KEPT) {
            chunks.push(chunk.subarray(0, RESPONSE_BYTES_KEPT - kept));
            kept += Math.min(chunk.length, RESPONSE_BYTES_KEPT - kept);
          }
        });
        const done = () => {
          const status = response.statusCode ?? null;
          // Kept as text in the log: a NUL (which PostgreSQL's text refuses) is dropped.
          const text = Buffer.concat(chunks).toString("utf8").replaceAll("\u0000", "");
          const redirect = status !== null && status >= 300 && status < 400;
          finish({
            status,
            response: text,
            error: redirect
              ? `redirect to ${response.headers.location ?? "(no location)"} not followed: answer 2xx at the endpoint's own URL`
              : null,
          });
        };
        response.on("end", done);
        response.on("error", (error) =>
          finish({ status: response.statusCode ?? null, response: null, error: describe(error) }),
        );
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, response: null, error: `no answer within ${timeoutMs / 1000} s` });
      request.destroy();
    }, timeoutMs);
    request.on("error", (error) => finish({ status: null, response: null, error: describe(error) }));
    request.end(body);
  });
}

function describe(error: unknown): string {
  if (error instanceof BlockedDestinationError) return `refused: ${error.message}`;
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).replaceAll("\u0000", "").slice(0, 500);
}
