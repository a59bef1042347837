import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { coverFee, coverFeeCents, DEFAULT_FEE_FORMULA } from "./cover-fee.js";
import { fromCents, hasCentPrecision } from "./money.js";

const giftCents = fc.integer({ min: 1, max: 100_000_000_000 });
const formula = fc.record({
  percent: fc.integer({ min: 0, max: 10_000 }).map((basisPoints) => basisPoints / 100),
  fixed: fc.integer({ min: 0, max: 100_000 }).map(fromCents),
});

describe("cover the fee", () => {
  it("is never negative, a whole number of cents, and at least the fixed part", () => {
    fc.assert(
      fc.property(giftCents, formula, (gift, fees) => {
        const fee = coverFeeCents(gift, fees);
        expect(Number.isSafeInteger(fee)).toBe(true);
        expect(fee).toBeGreaterThanOrEqual(Math.round(fees.fixed * 100));
        expect(hasCentPrecision(coverFee(fromCents(gift), fees, "EUR"))).toBe(true);
      }),
    );
  });

  it("is the exact percent rounded half up to the cent (checked in BigInt)", () => {
    fc.assert(
      fc.property(giftCents, formula, (gift, fees) => {
        const basisPoints = BigInt(Math.round(fees.percent * 100));
        const exact = (BigInt(gift) * basisPoints * 2n + 10_000n) / 20_000n;
        expect(BigInt(coverFeeCents(gift, fees))).toBe(exact + BigInt(Math.round(fees.fixed * 100)));
      }),
    );
  });

  it("grows with the gift", () => {
    fc.assert(
      fc.property(giftCents, giftCents, formula, (a, b, fees) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(coverFeeCents(low, fees)).toBeLessThanOrEqual(coverFeeCents(high, fees));
      }),
    );
  });

  it("adds 2.9 % + 0.30 by default: €25 → €1.03, €10 → €0.59, €0.50 → €0.31", () => {
    expect(coverFee(25, DEFAULT_FEE_FORMULA, "EUR")).toBe(1.03);
    expect(coverFee(10, DEFAULT_FEE_FORMULA, "EUR")).toBe(0.59);
    expect(coverFee(0.5, DEFAULT_FEE_FORMULA, "EUR")).toBe(0.31);
  });
});

describe("cover the fee in a currency without minor unit", () => {
  it("rounds to a whole yen, the fixed part too: ¥1,000 at 2.9 % + 0.30 → ¥29, ¥10 → ¥0", () => {
    expect(coverFee(1000, DEFAULT_FEE_FORMULA, "JPY")).toBe(29);
    expect(coverFee(10, DEFAULT_FEE_FORMULA, "JPY")).toBe(0);
    expect(coverFee(1000, { percent: 3.6, fixed: 40 }, "JPY")).toBe(76);
    expect(coverFee(12.5, DEFAULT_FEE_FORMULA, "KWD")).toBe(0.66);
  });
});
