import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` and 32 random
 * bytes in base64; a delivery is signed over `<webhook-id>.<webhook-timestamp>.<body>` with
 * HMAC-SHA256 of those bytes, and `webhook-signature` lists `v1,<base64 signature>` once per
 * secret that signs (two for 24 hours after a rotation), separated by spaces.
 */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The three headers of a delivery, signed with every secret given (the current one first). */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string) {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(" "),
  };
}
