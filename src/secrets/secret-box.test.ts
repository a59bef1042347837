import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createSecretBox, KEY_FILE_NAME, loadSecretBox, parseEncryptionKey, SecretBoxError } from "./secret-box.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "donata-secret-box-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("secret box", () => {
  const box = createSecretBox(Buffer.alloc(32, 7));

  it("opens what it sealed, for any text, never showing the plaintext", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (plaintext) => {
        const sealed = box.seal(plaintext);
        expect(box.open(sealed)).toBe(plaintext);
        if (plaintext.length >= 8) expect(sealed).not.toContain(plaintext);
      }),
    );
  });

  it("seals the same text differently every time (a fresh nonce)", () => {
    expect(box.seal("sk_test_123")).not.toBe(box.seal("sk_test_123"));
  });

  it("refuses an altered value and names the key a value was sealed with", () => {
    const sealed = box.seal("whsec_abc");
    const parts = sealed.split(".");
    const tampered = [...parts.slice(0, 4), `${parts[4]?.slice(0, -2)}AA`].join(".");
    expect(() => box.open(tampered)).toThrow(SecretBoxError);
    expect(() => box.open("garbage")).toThrow(/not a value sealed by Donata/);
    const other = createSecretBox(Buffer.alloc(32, 8));
    expect(() => other.open(sealed)).toThrow(new RegExp(`encrypted with the key ${box.keyId}`));
  });

  it("parses hex and base64 keys and refuses anything else", () => {
    expect(parseEncryptionKey("ab".repeat(32))).toHaveLength(32);
    expect(parseEncryptionKey(Buffer.alloc(32, 1).toString("base64"))).toHaveLength(32);
    expect(parseEncryptionKey(Buffer.alloc(32, 255).toString("base64url"))).toHaveLength(32);
    for (const bad of ["", "short", "ab".repeat(31), "ab".repeat(33), Buffer.alloc(16).toString("base64")]) {
      expect(() => parseEncryptionKey(bad)).toThrow(SecretBoxError);
    }
  });

  it("generates one key file (mode 0600) in the data directory and reuses it", () => {
    const dataDir = path.join(tempDir(), "data");
    const first = loadSecretBox({ encryptionKey: undefined, dataDir });
    const file = path.join(dataDir, KEY_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = loadSecretBox({ encryptionKey: undefined, dataDir });
    expect(second.keyId).toBe(first.keyId);
    expect(second.open(first.seal("kept"))).toBe("kept");
    expect(readFileSync(file, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("prefers DONATA_ENCRYPTION_KEY to the key file", () => {
    const key = "cd".repeat(32);
    const box = loadSecretBox({ encryptionKey: key, dataDir: tempDir() });
    expect(box.keyId).toBe(createSecretBox(Buffer.from(key, "hex")).keyId);
  });
});
