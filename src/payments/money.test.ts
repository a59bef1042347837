import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromCents, hasCentPrecision, toCents } from "./money.js";

// Up to 10^11 cents (a billion with margin): every such c/100 is the double nearest to it.
const cents = fc.integer({ min: -100_000_000_000, max: 100_000_000_000 });
/** The written form a client sends: an integer part and at most two decimals. */
const TWO_DECIMALS = /^-?\d+(\.\d{1,2})?$/;

describe("money", () => {
  it("round-trips every whole number of cents", () => {
    fc.assert(
      fc.property(cents, (count) => {
        const amount = fromCents(count);
        expect(hasCentPrecision(amount)).toBe(true);
        expect(toCents(amount)).toBe(count);
        expect(fromCents(toCents(amount))).toBe(amount);
      }),
    );
  });

  it("accepts a number exactly when it is written with at most two decimals", () => {
    const amounts = fc.oneof(
      fc.double({ min: -1e9, max: 1e9, noNaN: true }),
      cents.map(fromCents),
      cents.map((count) => fromCents(count) + 0.001),
    );
    fc.assert(
      fc.property(amounts, (amount) => {
        expect(hasCentPrecision(amount)).toBe(TWO_DECIMALS.test(String(amount)));
      }),
    );
  });

  it("orders amounts as their cents", () => {
    fc.assert(
      fc.property(cents, cents, (a, b) => {
        expect(Math.sign(toCents(fromCents(a)) - toCents(fromCents(b)))).toBe(Math.sign(fromCents(a) - fromCents(b)));
      }),
    );
  });

  it("refuses what a regex on the written form got wrong or never saw", () => {
    expect(hasCentPrecision(0.1 + 0.2)).toBe(false);
    expect(toCents(0.1 + 0.2)).toBe(30);
    expect(hasCentPrecision(1e-7)).toBe(false);
    expect(hasCentPrecision(281911833.65)).toBe(true);
    expect(hasCentPrecision(-25.5)).toBe(true);
    for (const amount of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(hasCentPrecision(amount)).toBe(false);
    }
  });
});
