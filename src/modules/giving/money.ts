/** Amounts travel as JSON numbers with at most 2 decimals; arithmetic happens in integer cents. */
export function toCents(amount: number): number {
  return Math.round(amount * 100);
}

export function fromCents(cents: number): number {
  return cents / 100;
}

/** True when the number has at most two decimals (25, 25.5, 25.05), as decisions.md §3 requires. */
export function hasCentPrecision(amount: number): boolean {
  return Number.isFinite(amount) && Math.abs(amount * 100 - Math.round(amount * 100)) < 1e-6;
}

export function formatMoney(amount: number, currency: string, locale = "en"): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(amount);
}
