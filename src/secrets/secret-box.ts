import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Encryption at rest for the secrets Donata must be able to read back (an organization's Stripe
 * secret key and webhook secret): AES-256-GCM with a fresh 96-bit nonce per value. A sealed value
 * reads `v1.<key id>.<nonce>.<tag>.<ciphertext>` (base64url), the key id being the first bytes of
 * the key's SHA-256, so a value sealed with another key is refused by name instead of failing as
 * garbage. Secrets Donata only compares (passwords, tokens, client secrets) are hashed, never sealed.
 */
export interface SecretBox {
  /** A short, public fingerprint of the key (safe to log and show). */
  readonly keyId: string;
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export class SecretBoxError extends Error {
  override name = "SecretBoxError";
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
export const KEY_FILE_NAME = "encryption.key";

const b64 = (buffer: Buffer) => buffer.toString("base64url");

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new SecretBoxError(`an encryption key is ${KEY_BYTES} bytes, got ${key.length}`);
  const keyId = createHash("sha256").update(key).digest("hex").slice(0, 8);
  return {
    keyId,
    seal(plaintext) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, nonce);
      // The key id is authenticated too: a value cannot be moved under another key's name.
      cipher.setAAD(Buffer.from(keyId));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", keyId, b64(nonce), b64(cipher.getAuthTag()), b64(ciphertext)].join(".");
    },
    open(sealed) {
      const [version, id, nonce, tag, ciphertext, extra] = sealed.split(".");
      if (version !== "v1" || !id || !nonce || !tag || ciphertext === undefined || extra !== undefined) {
        throw new SecretBoxError("not a value sealed by Donata");
      }
      if (id !== keyId) {
        throw new SecretBoxError(
          `the value was encrypted with the key ${id}, but this server has the key ${keyId} ` +
            "(restore the key file or DONATA_ENCRYPTION_KEY it was saved with, or enter the secret again)",
        );
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64url"));
        decipher.setAAD(Buffer.from(keyId));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch (cause) {
        throw new SecretBoxError("the sealed value was altered or is damaged", { cause });
      }
    },
  };
}

/** DONATA_ENCRYPTION_KEY's forms: 64 hex digits, or 32 bytes in base64 / base64url. */
export function parseEncryptionKey(raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64")
      : undefined;
  if (key?.length !== KEY_BYTES) {
    throw new SecretBoxError(
      "DONATA_ENCRYPTION_KEY must be 32 random bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)",
    );
  }
  return key;
}

/**
 * The server's key: DONATA_ENCRYPTION_KEY when set; else the key file in DATA_DIR, generated (mode
 * 0600) on first use, so the embedded default needs no setup. An in-memory data directory gets a key
 * for the life of the process. Two processes starting together agree: the file is created once
 * (exclusive create) and whoever loses the race reads it.
 */
export function loadSecretBox(options: { encryptionKey: string | undefined; dataDir: string }): SecretBox {
  if (options.encryptionKey) return createSecretBox(parseEncryptionKey(options.encryptionKey));
  if (options.dataDir === "memory://") return createSecretBox(randomBytes(KEY_BYTES));
  const file = path.join(options.dataDir, KEY_FILE_NAME);
  try {
    return createSecretBox(parseEncryptionKey(readFileSync(file, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      if (error instanceof SecretBoxError) throw new SecretBoxError(`${file}: ${error.message}`);
      throw error;
    }
  }
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return createSecretBox(parseEncryptionKey(readFileSync(file, "utf8")));
}
