import { randomInt } from "node:crypto";
import type { Executor } from "../db/client.js";
import { countUnusedRecoveryCodes, replaceRecoveryCodes } from "./factors.repo.js";
import { hashSecret } from "./secrets.js";

/** How many recovery codes a user gets at once; each works once. */
export const RECOVERY_CODE_COUNT = 10;

/** Lower-case letters and digits without the look-alikes (0/o, 1/l/i): 31 symbols, ~4.95 bits each. */
const ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz";
const GROUPS = [4, 4, 2];

/** One code as it is shown: `xxxx-xxxx-xx` (10 random symbols, about 50 bits). */
function newRecoveryCode(): string {
  return GROUPS.map((length) => Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")).join("-");
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
}

/**
 * A code as a person types it, in the one form that is hashed: spaces and dashes dropped, lower case,
 * re-grouped; undefined when it cannot be one of ours (so it is refused without a lookup).
 */
export function normalizeRecoveryCode(code: string): string | undefined {
  const symbols = code.replace(/[\s-]/g, "").toLowerCase();
  if (symbols.length !== 10 || ![...symbols].every((symbol) => ALPHABET.includes(symbol))) return undefined;
  return `${symbols.slice(0, 4)}-${symbols.slice(4, 8)}-${symbols.slice(8)}`;
}

/** Ten new recovery codes for the user, replacing any earlier ones; only their hashes are kept. Shown once. */
export async function issueRecoveryCodes(tx: Executor, userId: number): Promise<string[]> {
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    tx,
    userId,
    codes.map((code) => hashSecret(normalizeRecoveryCode(code) as string)),
  );
  return codes;
}

/**
 * The recovery codes that come with a user's first second factor (an authenticator app or a passkey):
 * issued when they have none left, else null (the ones they saved still work).
 */
export async function issueRecoveryCodesIfNone(tx: Executor, userId: number): Promise<string[] | null> {
  return (await countUnusedRecoveryCodes(tx, userId)) > 0 ? null : issueRecoveryCodes(tx, userId);
}
