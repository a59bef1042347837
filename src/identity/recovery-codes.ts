import { randomInt } from "node:crypto";

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
