import { randomBytes } from "node:crypto";
import { generateSecret, hashSecret } from "./secrets.js";

/**
 * The secrets of a new browser session, member's or donor's alike: the cookie's random token (with a
 * prefix secret scanners recognise), the hash the database keeps instead, and the CSRF token its forms
 * and JSON calls carry.
 */
export function newSessionSecrets(prefix: string) {
  const token = generateSecret(prefix);
  return { token, tokenHash: hashSecret(token), csrfToken: randomBytes(24).toString("base64url") };
}

/** Where a session is used is written at most once a minute, not on every request. */
export const TOUCH_INTERVAL_SECONDS = 60;
