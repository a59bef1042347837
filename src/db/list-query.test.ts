import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors/app-error.js";
import { parseDateBound } from "./list-query.js";

describe("parseDateBound", () => {
  it("accepts every calendar day as a whole-day bound", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0001-01-01"), max: new Date("9999-12-31"), noInvalidDate: true }),
        (date) => {
          const day = date.toISOString().slice(0, 10);
          expect(parseDateBound("d", day)).toEqual({ kind: "day", day });
        },
      ),
    );
  });

  it("accepts ISO date-times with an offset as exact instants", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1970-01-01"), max: new Date("9999-12-31"), noInvalidDate: true }),
        (date) => {
          expect(parseDateBound("d", date.toISOString())).toEqual({ kind: "instant", instant: date.toISOString() });
        },
      ),
    );
    expect(parseDateBound("d", "2026-03-01T10:00:00+01:00")).toEqual({
      kind: "instant",
      instant: "2026-03-01T09:00:00.000Z",
    });
  });

  it("refuses anything else with an AppError naming the parameter, never another error", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          parseDateBound("create_date_from", text);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).status).toBe(400);
          expect((error as AppError).errors?.[0]?.parameter).toBe("create_date_from");
        }
      }),
      { numRuns: 500 },
    );
    expect(() => parseDateBound("d", "9999-12-31T23:00:00-05:00")).toThrow(AppError);
    expect(parseDateBound("d", "0099-12-31")).toEqual({ kind: "day", day: "0099-12-31" });
    for (const bad of ["2026-02-29", "2026-04-31", "2026-00-10", "2026-01-01T24:00:00Z", "2026-01-01 10:00:00Z"]) {
      expect(() => parseDateBound("d", bad), bad).toThrow(AppError);
    }
  });
});
