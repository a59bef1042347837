import { AppError } from "../../errors/app-error.js";
import { formatMoney, fromMinorUnits, minorUnitExponent } from "../money.js";

/**
 * What Stripe says of currencies (docs.stripe.com/currencies, as of late 2025), kept in one place:
 * which it charges in, how it writes their amounts, and its minimum charge. Donata hands this
 * adapter ISO 4217 minor units; Stripe's own units differ for a few currencies (see stripeDecimals).
 */

/** Stripe's presentment currencies: an organization with Stripe may only use one of these. */
export const STRIPE_CURRENCIES: ReadonlySet<string> = new Set(
  (
    "USD AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BWP BYN BZD " +
    "CAD CDF CHF CLP CNY COP CRC CVE CZK DJF DKK DOP DZD EGP ETB EUR FJD FKP GBP GEL GIP GMD GNF GTQ GYD " +
    "HKD HNL HTG HUF IDR ILS INR ISK JMD JOD JPY KES KGS KHR KMF KRW KWD KYD KZT LAK LBP LKR LRD LSL MAD " +
    "MDL MGA MKD MMK MNT MOP MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN " +
    "PYG QAR RON RSD RUB RWF SAR SBD SCR SEK SGD SHP SLE SOS SRD STD SZL THB TJS TND TOP TRY TTD TWD TZS " +
    "UAH UGX UYU UZS VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW"
  ).split(" "),
);

/** Stripe's zero-decimal currencies: amounts in whole units (MGA too, although ISO gives it 2 decimals). */
const ZERO_DECIMAL = new Set("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split(" "));

/** Stripe's three-decimal currencies: amounts in thousandths whose last digit must be 0. */
const THREE_DECIMAL = new Set("BHD JOD KWD OMR TND".split(" "));

/**
 * Stripe's special case: ISK has no minor unit (ISO 0) but Stripe still takes it as a two-decimal
 * value whose decimals are 00 (500 ISK is `amount: 50000`). HUF and TWD are charged with two
 * decimals (their zero-decimal rule is for payouts only), so they need nothing here.
 */
const TWO_DECIMAL_WHOLE = new Set(["ISK"]);

/** How many decimals Stripe's `amount` has in this currency. */
export function stripeDecimals(currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

/** Stripe's minimum charge (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts), in major units; elsewhere about 0.50 USD, which Stripe itself enforces. */
const MINIMUM_CHARGE: Readonly<Record<string, number>> = {
  USD: 0.5,
  AED: 2,
  AUD: 0.5,
  BGN: 1,
  BRL: 0.5,
  CAD: 0.5,
  CHF: 0.5,
  CZK: 15,
  DKK: 2.5,
  EUR: 0.5,
  GBP: 0.3,
  HKD: 4,
  HUF: 175,
  INR: 0.5,
  JPY: 50,
  MXN: 10,
  MYR: 2,
  NOK: 3,
  NZD: 0.5,
  PLN: 2,
  RON: 2,
  SEK: 3,
  SGD: 0.5,
  THB: 10,
};

/** The minimum charge in ISO minor units, or undefined where Stripe's table has none. */
export function stripeMinimumMinor(currency: string): number | undefined {
  const minimum = MINIMUM_CHARGE[currency.toUpperCase()];
  return minimum === undefined ? undefined : Math.round(minimum * 10 ** minorUnitExponent(currency));
}

const amountRefused = (code: "amount_below_minimum" | "invalid_amount", message: string) =>
  new AppError(code, message, { errors: [{ field: "amount", message }] });

/** Refuses what Stripe would: a currency it does not take, an amount under its minimum or finer than it charges. */
export function checkStripeAmount(amountMinor: number, currency: string): void {
  const code = currency.toUpperCase();
  if (!STRIPE_CURRENCIES.has(code)) {
    throw new AppError("currency_not_supported", `Stripe does not take payments in ${code}`, {
      errors: [{ field: "currency", message: `${code} is not one of Stripe's currencies` }],
    });
  }
  const minimum = stripeMinimumMinor(code);
  if (minimum !== undefined && amountMinor < minimum) {
    const shown = formatMoney(fromMinorUnits(minimum, code), code);
    throw amountRefused("amount_below_minimum", `The smallest amount Stripe charges in ${code} is ${shown}`);
  }
  const shift = minorUnitExponent(code) - stripeDecimals(code);
  if (shift > 0 && amountMinor % 10 ** shift !== 0) {
    throw amountRefused("invalid_amount", `Stripe charges ${code} in whole units; the amount must be a whole number`);
  }
}

/** How many decimals Stripe's `amount` is written with (ISK 2, although it charges whole krónur): Stripe.js's Elements take it too. */
export function stripeAmountDecimals(currency: string): number {
  const code = currency.toUpperCase();
  return TWO_DECIMAL_WHOLE.has(code) ? 2 : stripeDecimals(code);
}

/** ISO minor units → Stripe's `amount` (ISK ×100, MGA ÷100, the rest as is). */
export function toStripeAmount(amountMinor: number, currency: string): number {
  const code = currency.toUpperCase();
  const decimals = stripeAmountDecimals(code);
  const shift = decimals - minorUnitExponent(code);
  const amount = shift >= 0 ? amountMinor * 10 ** shift : amountMinor / 10 ** -shift;
  if (!Number.isSafeInteger(amount) || (THREE_DECIMAL.has(code) && amount % 10 !== 0)) {
    throw new RangeError(`${amountMinor} minor units of ${code} cannot be written as a Stripe amount`);
  }
  return amount;
}

/** Stripe's `amount` (a charge, a refund, a dispute) → ISO minor units. */
export function fromStripeAmount(amount: number, currency: string): number {
  const code = currency.toUpperCase();
  const shift = minorUnitExponent(code) - stripeAmountDecimals(code);
  return shift >= 0 ? amount * 10 ** shift : Math.round(amount / 10 ** -shift);
}
