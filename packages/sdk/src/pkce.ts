/** RFC 4648 §5 base64url without padding, as RFC 7636 requires for verifiers and challenges. */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A random base64url string carrying `byteLength` random bytes (32 bytes: 256 bits, 43 characters). */
export function randomToken(byteLength = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** A PKCE code verifier (RFC 7636 §4.1): 43 characters from 32 random bytes. */
export function createCodeVerifier(): string {
  return randomToken(32);
}

/** The S256 code challenge of a verifier: BASE64URL(SHA-256(ASCII(verifier))) (RFC 7636 §4.2). */
export async function codeChallengeS256(codeVerifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}
