import { fromCents, toCents } from "./money.js";

/** An organization's estimate of what its processor keeps: percent of the charge plus a fixed amount. */
export interface FeeFormula {
  percent: number;
  fixed: number;
}

/** Stripe's standard European card price, the default until an organization sets its own. */
export const DEFAULT_FEE_FORMULA: FeeFormula = { percent: 2.9, fixed: 0.3 };

/**
 * The fee a donor covers on a gift, in whole cents: percent in hundredths of a percent (basis
 * points) times the gift's cents, rounded half up, plus the fixed cents. Integers only, so the
 * page's figure and the server's are the same cent (both run this formula; the server's counts).
 */
export function coverFeeCents(giftCents: number, formula: FeeFormula): number {
  const basisPoints = Math.round(formula.percent * 100);
  return Math.floor((giftCents * basisPoints + 5000) / 10000) + toCents(formula.fixed);
}

export const coverFee = (gift: number, formula: FeeFormula) => fromCents(coverFeeCents(toCents(gift), formula));
