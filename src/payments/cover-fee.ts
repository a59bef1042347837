import { amountDecimals, fromCents, toCents } from "./money.js";

/** An organization's estimate of what its processor keeps: percent of the charge plus a fixed amount. */
export interface FeeFormula {
  percent: number;
  fixed: number;
}

/** Stripe's standard European card price, the default until an organization sets its own. */
export const DEFAULT_FEE_FORMULA: FeeFormula = { percent: 2.9, fixed: 0.3 };

/**
 * The fee a donor covers on a gift, in whole cents: percent in hundredths of a percent (basis
 * points) times the gift's cents, rounded half up to the currency's smallest amount (`unitCents`:
 * 1 cent for EUR, 100 for a whole yen), plus the fixed cents (rounded to that too). Integers only, so the page's figure
 * and the server's are the same (both run this formula; the server's counts).
 */
export function coverFeeCents(giftCents: number, formula: FeeFormula, unitCents = 1): number {
  const basisPoints = Math.round(formula.percent * 100);
  const units = Math.floor((giftCents * basisPoints + 5000 * unitCents) / (10000 * unitCents));
  return units * unitCents + Math.round(toCents(formula.fixed) / unitCents) * unitCents;
}

/** The smallest amount of the currency in cents: 1 for EUR (and KWD, whose amounts keep 2 decimals), 100 for JPY. */
export const unitCentsOf = (currency: string) => 10 ** (2 - amountDecimals(currency));

export const coverFee = (gift: number, formula: FeeFormula, currency: string) =>
  fromCents(coverFeeCents(toCents(gift), formula, unitCentsOf(currency)));
