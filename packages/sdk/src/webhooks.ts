import { DonataError } from "./errors.js";
import type { Event } from "./types.js";

/** A delivery that is not Donata's: no signature of the secret, a stale timestamp, or missing headers. */
export class WebhookVerificationError extends DonataError {
  override name = "WebhookVerificationError";
}

/** The headers of a request: a Fetch `Headers`, or Node's `request.headers` object. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

export interface VerifyOptions {
  /** How far the delivery's timestamp may be from now, in seconds (default 300: replays are refused). */
  toleranceSeconds?: number;
  /** The clock, for tests. */
  now?: Date;
}

/**
 * Checks a webhook delivery as Standard Webhooks specifies and returns its event: the body must be
 * the raw text received (not re-serialized JSON), signed with the endpoint's secret (`whsec_…`) over
 * `webhook-id.webhook-timestamp.body`, its timestamp within five minutes. During the 24 hours after
 * a rotation a delivery carries two signatures and either secret verifies it. Throws
 * WebhookVerificationError otherwise. The comparison is constant-time (Web Crypto's HMAC verify).
 */
export async function verifyWebhook(
  payload: string,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<Event> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header");
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError("Invalid webhook-timestamp");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError("The webhook-timestamp is too far from now (a replay, or a wrong clock)");
  }
  let key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  try {
    key = await crypto.subtle.importKey(
      "raw",
      base64Bytes(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
  } catch {
    throw new WebhookVerificationError("The secret is not a whsec_ secret");
  }
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${payload}`);
  for (const entry of signatures.split(" ")) {
    const [version, signature] = entry.split(",", 2);
    if (version !== "v1" || !signature) continue;
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = base64Bytes(signature);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify("HMAC", key, bytes, signed)) {
      try {
        return JSON.parse(payload) as Event;
      } catch {
        throw new WebhookVerificationError("The signed body is not JSON");
      }
    }
  }
  throw new WebhookVerificationError("No signature matches this secret");
}

/** `webhooks.verify(payload, headers, secret)`: see verifyWebhook. */
export const webhooks = { verify: verifyWebhook };
