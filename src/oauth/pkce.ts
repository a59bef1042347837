import { createHash, timingSafeEqual } from "node:crypto";

/** RFC 7636 §4.1 / §4.2: 43 to 128 characters of the unreserved set. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function verifyS256(verifier: string, challenge: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier).digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
