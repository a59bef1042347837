import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { problemText } from "../../i18n/field-problems.js";
import { bicProblem, compactIban, ibanProblem, printableIban } from "./bank-account.js";

// Published examples (ECBS / national banks' documentation).
const VALID = [
  "IT60X0542811101000000123456",
  "DE89370400440532013000",
  "GB82WEST12345698765432",
  "FR1420041010050500013M02606",
  "NL91ABNA0417164300",
  "BE68539007547034",
  "CH9300762011623852957",
  "NO9386011117947",
];

describe("bank account checks", () => {
  it("accepts published IBANs, typed with spaces and in lower case", () => {
    for (const iban of VALID) {
      expect(ibanProblem(iban)).toBeNull();
      expect(compactIban(printableIban(iban).toLowerCase())).toBe(iban);
    }
  });

  it("refuses any single changed character of a valid IBAN (mod-97 catches every one)", () => {
    const mutation = fc.record({
      iban: fc.constantFrom(...VALID),
      position: fc.nat(),
      digit: fc.integer({ min: 0, max: 9 }),
    });
    fc.assert(
      fc.property(mutation, ({ iban, position, digit }) => {
        const at = 2 + (position % (iban.length - 2));
        fc.pre(/[0-9]/.test(iban.charAt(at)) && iban.charAt(at) !== String(digit));
        const changed = iban.slice(0, at) + String(digit) + iban.slice(at + 1);
        expect(ibanProblem(changed)).not.toBeNull();
      }),
    );
  });

  it("says which rule failed", () => {
    const words = (iban: string) => problemText(ibanProblem(iban) ?? { code: "none" });
    expect(ibanProblem("IT60X054281110100000012345")).toEqual({
      code: "iban_length",
      values: { country: "IT", length: 27, actual: 26 },
    });
    expect(words("IT60X054281110100000012345")).toBe("an IBAN from IT has 27 characters, this one has 26");
    expect(problemText(ibanProblem("IT60X054281110100000012345") ?? { code: "none" }, "it")).toBe(
      "un IBAN di IT ha 27 caratteri, questo ne ha 26",
    );
    expect(words("IT61X0542811101000000123456")).toBe("the check digits do not match (a typo?)");
    expect(words("XX60X0542811101000000123456")).toBe('"XX" is not a country that uses IBANs');
    expect(bicProblem("BPMOIT22XXX")).toBeNull();
    expect(bicProblem("BPMOIT22")).toBeNull();
    expect(bicProblem("BPMOIT2")).not.toBeNull();
    expect(bicProblem("1PMOIT22")).not.toBeNull();
  });
});
