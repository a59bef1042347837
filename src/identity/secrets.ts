import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 256 bits of randomness, base64url, with a prefix that secret scanners can recognise. */
export function generateSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

/** Tokens are high-entropy, so a fast hash is enough to store them safely. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function secretMatches(secret: string, hash: string): boolean {
  const candidate = Buffer.from(hashSecret(secret), "hex");
  const expected = Buffer.from(hash, "hex");
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}
