import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromCents, hasCentPrecision, toCents } from "../payments/money.js";
import { buildWireValidator } from "./wire-validator.js";

const seed = 20261123;
const build = buildWireValidator({});
const query = build({
  httpPart: "querystring",
  schema: {
    type: "object",
    properties: {
      limit: { type: "integer", minimum: 1, maximum: 1000 },
      offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    },
    additionalProperties: false,
  },
});
const body = build({
  httpPart: "body",
  schema: {
    type: "object",
    properties: { amount: { type: "number" }, frequency: { type: "integer", enum: [0, 1, 12] } },
  },
});

describe("wire integer parser", () => {
  it("accepts exactly the decimal integers within range, and coerces them to their value", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.integer().map(String), fc.double().map(String), fc.bigInt().map(String)),
        (raw) => {
          const data: Record<string, unknown> = { offset: raw };
          const valid = query(data);
          const expected = /^-?[0-9]+$/.test(raw) && Number(raw) >= 0 && Number(raw) <= Number.MAX_SAFE_INTEGER;
          expect(valid, raw).toBe(expected);
          if (valid) expect(data.offset).toBe(Number(raw));
        },
      ),
      { seed, numRuns: 2000 },
    );
  });

  it("never lets a non-finite, hexadecimal, exponent or padded form through", () => {
    const spelled = fc.tuple(
      fc.constantFrom("", " ", "+", "-", "0x", "0b", "0o", "\t"),
      fc.integer({ min: 1, max: 1000 }),
      fc.constantFrom("", "e0", ".0", " ", "n", "_0"),
    );
    fc.assert(
      fc.property(spelled, ([prefix, value, suffix]) => {
        const raw = `${prefix}${value}${suffix}`;
        const plain = (prefix === "" || prefix === "-") && suffix === "";
        expect(query({ limit: raw }), raw).toBe(plain && prefix === "");
      }),
      { seed, numRuns: 500 },
    );
    for (const raw of ["Infinity", "-Infinity", "NaN", "1e309", "0x10", "1e2", "[]", "", " "]) {
      expect(query({ limit: raw }), raw).toBe(false);
      expect(query.errors?.[0]).toMatchObject({ instancePath: "/limit", keyword: "type", params: { type: "integer" } });
    }
    expect(query({ limit: ["1", "2"] })).toBe(false);
  });
});

describe("JSON body amounts and frequencies", () => {
  it("take JSON numbers only: no string, boolean or array is read as a number", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }), fc.constant(null)),
        (amount) => {
          expect(body({ amount, frequency: 0 })).toBe(false);
          expect(body.errors?.[0]).toMatchObject({ instancePath: "/amount", keyword: "type" });
        },
      ),
      { seed, numRuns: 500 },
    );
    for (const frequency of [true, false, "12", "0", 12.5, null]) expect(body({ amount: 5, frequency })).toBe(false);
    for (const frequency of [0, 1, 12]) expect(body({ amount: 5, frequency })).toBe(true);
  });

  it("cent precision: every whole number of cents is accepted and converted back exactly", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000_000 }), (cents) => {
        const amount = fromCents(cents);
        expect(hasCentPrecision(amount)).toBe(true);
        expect(toCents(amount)).toBe(cents);
      }),
      { seed, numRuns: 2000 },
    );
  });

  it("cent precision: a third decimal or a non-finite number is refused", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 9 }), (cents, mills) => {
        expect(
          hasCentPrecision(Number(`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}${mills}`)),
        ).toBe(false);
      }),
      { seed, numRuns: 1000 },
    );
    for (const amount of [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN])
      expect(hasCentPrecision(amount)).toBe(false);
  });
});
