import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  amountDecimals,
  fitsCurrency,
  fromCents,
  fromMinorUnits,
  hasCentPrecision,
  minorUnitExponent,
  roundToCurrency,
  toCents,
  toMinorUnits,
} from "./money.js";
import { fromStripeAmount, stripeMinimumMinor, toStripeAmount } from "./processors/stripe-currencies.js";

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

describe("minor units per currency", () => {
  const currencies = fc.constantFrom("EUR", "USD", "JPY", "KRW", "ISK", "KWD", "BHD", "IQD", "MGA", "CLF");
  const whole = fc.integer({ min: 0, max: 1_000_000_000 });

  it("follow ISO 4217's exponents: JPY 0, EUR 2, KWD 3", () => {
    expect([minorUnitExponent("JPY"), minorUnitExponent("eur"), minorUnitExponent("KWD")]).toEqual([0, 2, 3]);
    expect(toMinorUnits(1000, "JPY")).toBe(1000);
    expect(toMinorUnits(25.5, "EUR")).toBe(2550);
    expect(toMinorUnits(12.5, "KWD")).toBe(12500);
    expect(toMinorUnits(0.07, "BHD")).toBe(70);
    expect(fromMinorUnits(1000, "JPY")).toBe(1000);
    expect(fromMinorUnits(2550, "EUR")).toBe(25.5);
    expect(fromMinorUnits(12500, "KWD")).toBe(12.5);
    expect(() => toMinorUnits(1000.5, "JPY")).toThrow(RangeError);
    expect(() => fromMinorUnits(12345, "KWD")).toThrow(RangeError);
  });

  it("round-trip every amount the currency can hold, and refuse decimals a zero-decimal currency has not", () => {
    fc.assert(
      fc.property(currencies, cents, (currency, count) => {
        const amount = roundToCurrency(fromCents(count), currency);
        expect(fitsCurrency(amount, currency)).toBe(true);
        const minor = toMinorUnits(amount, currency);
        expect(Number.isSafeInteger(minor)).toBe(true);
        expect(fromMinorUnits(minor, currency)).toBe(amount);
        if (amountDecimals(currency) === 0) expect(fitsCurrency(amount + 0.5, currency)).toBe(false);
      }),
    );
  });

  it("are what Stripe takes, special cases included (ISK ×100, MGA whole, three decimals ending in 0)", () => {
    expect(toStripeAmount(1000, "JPY")).toBe(1000);
    expect(toStripeAmount(500, "ISK")).toBe(50000);
    expect(fromStripeAmount(50000, "ISK")).toBe(500);
    expect(toStripeAmount(150000, "MGA")).toBe(1500);
    expect(toStripeAmount(12500, "KWD")).toBe(12500);
    expect(stripeMinimumMinor("JPY")).toBe(50);
    expect(stripeMinimumMinor("EUR")).toBe(50);
    expect(stripeMinimumMinor("KWD")).toBeUndefined();
    fc.assert(
      fc.property(fc.constantFrom("EUR", "JPY", "ISK", "KWD", "HUF"), whole, (currency, units) => {
        const minor = toMinorUnits(units, currency);
        expect(fromStripeAmount(toStripeAmount(minor, currency), currency)).toBe(minor);
      }),
    );
  });
});
