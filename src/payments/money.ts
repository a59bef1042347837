/**
 * Amounts travel as JSON numbers with at most 2 decimals; arithmetic inside Donata happens in
 * integer hundredths ("cents", whatever the currency: 1000 JPY is 100000 of them). Hundredths never
 * leave Donata: a processor gets the currency's ISO 4217 minor units (toMinorUnits).
 */
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

/**
 * ISO 4217 minor-unit exponents that are not 2 (the ISO list, not a processor's): a yen has no
 * minor unit, a Kuwaiti dinar 1000 fils. Every other code has 2.
 */
const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** The currency's ISO 4217 exponent: how many decimals its minor unit has (JPY 0, EUR 2, KWD 3). */
export function minorUnitExponent(currency: string): number {
  return EXPONENTS[currency.toUpperCase()] ?? 2;
}

/** How many decimals an amount may have in this currency: its exponent, at most the wire's 2 (JPY 0, EUR 2, KWD 2). */
export function amountDecimals(currency: string): number {
  return Math.min(minorUnitExponent(currency), 2);
}

/** True when the amount can be written in the currency: at most 2 decimals, and none for a currency without minor unit. */
export function fitsCurrency(amount: number, currency: string): boolean {
  if (!hasCentPrecision(amount)) return false;
  return amountDecimals(currency) === 2 || Number.isInteger(amount * 10 ** amountDecimals(currency));
}

/** The amount rounded half up to what the currency can hold (0.30 → 0 in JPY; unchanged in EUR). */
export function roundToCurrency(amount: number, currency: string): number {
  const unit = 10 ** (2 - amountDecimals(currency));
  return fromCents(Math.round(toCents(amount) / unit) * unit);
}

/** What fitsCurrency asks, in words after "must" ("have at most 2 decimals", "be a whole number of JPY …"). */
export function precisionRule(currency: string): string {
  const decimals = amountDecimals(currency);
  if (decimals === 0) return `be a whole number of ${currency.toUpperCase()} (it has no minor unit)`;
  return `have at most ${decimals} decimal${decimals === 1 ? "" : "s"}`;
}

/**
 * The amount in the currency's ISO 4217 minor units, as processors take it: 25.5 EUR → 2550,
 * 1000 JPY → 1000, 12.5 KWD → 12500. Computed from the exact hundredths, never from a float product.
 * An amount finer than the currency allows is a programming error here: the services refuse it first.
 */
export function toMinorUnits(amount: number, currency: string): number {
  if (!fitsCurrency(amount, currency)) {
    throw new RangeError(`${amount} ${currency} is not a whole number of the currency's minor units`);
  }
  const exponent = minorUnitExponent(currency);
  const cents = toCents(amount);
  return exponent >= 2 ? cents * 10 ** (exponent - 2) : cents / 10 ** (2 - exponent);
}

/** An amount in the currency's ISO 4217 minor units (what a processor reports) as Donata's decimal amount. */
export function fromMinorUnits(minor: number, currency: string): number {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${minor} is not a whole number of minor units`);
  const exponent = minorUnitExponent(currency);
  // Through hundredths, so 2550 euro cents is exactly 25.5 and 12500 fils exactly 12.5.
  const cents = exponent >= 2 ? minor / 10 ** (exponent - 2) : minor * 10 ** (2 - exponent);
  if (!Number.isInteger(cents)) throw new RangeError(`${minor} minor units of ${currency} is finer than 2 decimals`);
  return fromCents(cents);
}

export function formatMoney(amount: number, currency: string, locale = "en"): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency }).format(amount);
}
