/** Amounts travel as JSON numbers with at most 2 decimals; arithmetic happens in integer cents. */
export function toCents(amount: number): number {
  return Math.round(amount * 100);
}

export function fromCents(cents: number): number {
  return cents / 100;
}

/** True when the number has at most two decimals (25, 25.5, 25.05), as decisions.md §3 requires. */
export function hasCentPrecision(amount: number): boolean {
  // Exact: the number is the double nearest to some whole number of cents (an absolute tolerance
  // refused large amounts such as 281911833.65, whose product by 100 is off by 4e-6).
  return Number.isFinite(amount) && Math.round(amount * 100) / 100 === amount;
}

export function formatMoney(amount: number, currency: string, locale = "en"): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(amount);
}
