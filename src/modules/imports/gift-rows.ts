import { fitsCurrency, precisionRule } from "../../payments/money.js";
import type { SupporterInput } from "../supporters/supporters.schemas.js";
import type { ColumnMapping, FieldColumns, GiftImportField } from "./import-columns.js";
import { checkRow, type RowProblem } from "./import-rows.js";

/** The donor's fields a gift's row may carry: who gave it, matched or created (docs/import.md). */
const DONOR_FIELDS = [
  "email",
  "first_name",
  "last_name",
  "business_name",
  "phone",
  "address",
  "address2",
  "city",
  "locality",
  "postal_code",
  "country",
] as const satisfies readonly GiftImportField[];

/** One row of a gift-history file, read: one payment received on the other platform. */
export interface GiftRow {
  line: number;
  /** The payment's id there: how a re-import knows it. */
  externalId: string | null;
  amount: number;
  date: Date | null;
  state: "PAID" | "REFUNDED";
  refunded: number;
  campaign: string | null;
  method: string | null;
  note: string | null;
  /** Payments per year: 0 a one-off gift, 12 monthly, 1 yearly. */
  frequency: 0 | 1 | 12;
  recurringId: string | null;
  /** What the file says of the recurring gift: still running (true), ended (false), or nothing. */
  recurringActive: boolean | null;
  nextPaymentDate: Date | null;
  stripeCustomer: string | null;
  stripeMethod: string | null;
  tributeType: "honor" | "memory" | null;
  tributeName: string | null;
  supporterExternalId: string | null;
  donor: SupporterInput;
  problems: RowProblem[];
}

const word = (cell: string) =>
  cell
    .toLowerCase()
    .replace(/[\s_-]+/g, " ")
    .trim();

const PAID = new Set(["paid", "succeeded", "success", "successful", "completed", "complete", "captured", "settled"]);
const REFUNDED = new Set(["refunded", "fully refunded", "refund"]);
const PARTLY_REFUNDED = new Set(["partially refunded", "partly refunded", "partial refund"]);
const ONE_OFF = new Set(["one time", "onetime", "once", "single", "no", "false", "0", "una tantum", "one off"]);
const MONTHLY = new Set(["monthly", "month", "every month", "mensile", "12"]);
const YEARLY = new Set(["yearly", "annually", "annual", "year", "every year", "annuale", "1"]);
const ACTIVE = new Set(["active", "live", "ongoing", "running", "yes", "true", "attivo", "attiva"]);
const ENDED = new Set([
  "cancelled",
  "canceled",
  "ended",
  "inactive",
  "completed",
  "failed",
  "expired",
  "paused",
  "no",
  "false",
  "annullato",
  "annullata",
]);
const HONOR = new Set(["honor", "honour", "in honor of", "in honour of", "in onore di", "tribute"]);
const MEMORY = new Set(["memory", "in memory of", "memorial", "in memoria di"]);

/**
 * An amount as people write it: "1,234.50", "1.234,50", "€ 30", "30.00 EUR". The last separator
 * followed by one or two digits is the decimal one; followed by three, a thousands separator.
 */
export function parseAmount(cell: string, currency: string): { value: number } | { problem: string } {
  const bare = cell.replace(/[^\d.,-]/g, "");
  if (bare.startsWith("-")) return { problem: `"${cell}" is negative: only gifts received are imported` };
  if (!/^\d[\d.,]*$/.test(bare)) return { problem: `"${cell}" is not an amount` };
  const last = Math.max(bare.lastIndexOf("."), bare.lastIndexOf(","));
  let normalized: string;
  if (last === -1) normalized = bare;
  else {
    const decimals = bare.length - last - 1;
    const separators = new Set(bare.replace(/\d/g, ""));
    if (decimals === 3 && separators.size === 1) normalized = bare.replace(/[.,]/g, "");
    else normalized = `${bare.slice(0, last).replace(/[.,]/g, "")}.${bare.slice(last + 1)}`;
  }
  const value = Number(normalized);
  if (!Number.isFinite(value) || value <= 0) return { problem: `"${cell}" is not an amount above zero` };
  if (value > 1_000_000_000) return { problem: `"${cell}" is more than 1,000,000,000` };
  if (!fitsCurrency(value, currency)) return { problem: `"${cell}" must ${precisionRule(currency)}` };
  return { value };
}

/**
 * A date, or a date and time: `YYYY-MM-DD` (taken at noon UTC, the same day from UTC−12 to UTC+12),
 * or `YYYY-MM-DD HH:MM[:SS]` with an offset (`Z`, `+01:00`, `-0500`; none is UTC).
 */
export function parseDate(cell: string): { value: Date } | { problem: string } {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?)?$/i.exec(
      cell.trim(),
    );
  if (!match) return { problem: `"${cell}" is not a date (write it as YYYY-MM-DD, or YYYY-MM-DD HH:MM)` };
  const [, year, month, day, hour, minute, second, zone] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) {
    return { problem: `"${cell}" is not a date` };
  }
  const offset = !zone || /^(z|utc)$/i.test(zone) ? "Z" : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2");
  const value = new Date(
    hour === undefined
      ? `${year}-${month}-${day}T12:00:00Z`
      : `${year}-${month}-${day}T${hour}:${minute}:${second ?? "00"}${offset}`,
  );
  if (Number.isNaN(value.getTime())) return { problem: `"${cell}" is not a date` };
  return { value };
}

/**
 * A row of a gift-history file read and checked: every problem named by its column. The donor's
 * fields are checked as a new supporter's (the supporters import's own rules).
 */
export function checkGiftRow(
  line: number,
  cells: readonly string[],
  headers: readonly string[],
  mapping: FieldColumns,
  currency: string,
  now: Date,
): GiftRow {
  const problems: RowProblem[] = [];
  const columnOf = (field: GiftImportField) => {
    const index = mapping[field];
    return index === undefined ? field : (headers[index] ?? field);
  };
  const cellOf = (field: GiftImportField) => {
    const index = mapping[field];
    return index === undefined ? "" : (cells[index] ?? "").trim();
  };
  const problem = (field: GiftImportField, message: string) =>
    problems.push({ column: columnOf(field), field, message });
  const text = (field: GiftImportField, max: number) => {
    const cell = cellOf(field);
    if (cell === "") return null;
    if (cell.length > max) {
      problem(field, `is longer than ${max} characters`);
      return null;
    }
    return cell;
  };

  const row: GiftRow = {
    line,
    externalId: text("external_id", 200),
    amount: 0,
    date: null,
    state: "PAID",
    refunded: 0,
    campaign: text("campaign", 200),
    method: text("payment_method", 60),
    note: text("note", 2000),
    frequency: 0,
    recurringId: text("recurring_id", 200),
    recurringActive: null,
    nextPaymentDate: null,
    stripeCustomer: text("stripe_customer_id", 200),
    stripeMethod: text("stripe_payment_method_id", 200),
    tributeType: null,
    tributeName: text("tribute_name", 200),
    supporterExternalId: text("supporter_external_id", 200),
    donor: {} as SupporterInput,
    problems,
  };
  if (row.externalId === null && !problems.some((each) => each.field === "external_id")) {
    problem("external_id", "a gift needs its id on the platform it comes from (importing again must find it)");
  }

  const amount = cellOf("amount");
  if (amount === "") problem("amount", "a gift needs its amount");
  else {
    const parsed = parseAmount(amount, currency);
    if ("problem" in parsed) problem("amount", parsed.problem);
    else row.amount = parsed.value;
  }
  const currencyCell = cellOf("currency");
  if (currencyCell !== "" && currencyCell.toUpperCase() !== currency) {
    problem("currency", `"${currencyCell}" is not the organization's currency (${currency})`);
  }

  const date = cellOf("date");
  if (date === "") problem("date", "a gift needs its date");
  else {
    const parsed = parseDate(date);
    if ("problem" in parsed) problem("date", parsed.problem);
    else if (parsed.value.getTime() > now.getTime() + 86_400_000) problem("date", `"${date}" is in the future`);
    else row.date = parsed.value;
  }

  const status = word(cellOf("status"));
  const refundedCell = cellOf("refunded_amount");
  let refunded: number | null = null;
  if (refundedCell !== "" && !/^0+([.,]0+)?$/.test(refundedCell.replace(/[^\d.,]/g, ""))) {
    const parsed = parseAmount(refundedCell, currency);
    if ("problem" in parsed) problem("refunded_amount", parsed.problem);
    else if (row.amount > 0 && parsed.value > row.amount) problem("refunded_amount", "is more than the amount");
    else refunded = parsed.value;
  }
  if (status === "" || PAID.has(status)) {
    row.refunded = refunded ?? 0;
  } else if (REFUNDED.has(status)) {
    row.refunded = refunded ?? row.amount;
  } else if (PARTLY_REFUNDED.has(status)) {
    if (refunded === null) problem("refunded_amount", "a partly refunded gift needs the amount refunded");
    row.refunded = refunded ?? 0;
  } else {
    problem("status", `"${cellOf("status")}": only gifts received are imported (paid, refunded)`);
  }
  if (row.amount > 0 && row.refunded >= row.amount) row.state = "REFUNDED";

  const frequency = word(cellOf("frequency"));
  if (frequency === "") row.frequency = row.recurringId ? 12 : 0;
  else if (ONE_OFF.has(frequency)) row.frequency = 0;
  else if (MONTHLY.has(frequency)) row.frequency = 12;
  else if (YEARLY.has(frequency)) row.frequency = 1;
  else problem("frequency", `"${cellOf("frequency")}" is not one-time, monthly or yearly`);

  const recurringStatus = word(cellOf("recurring_status"));
  if (recurringStatus !== "") {
    if (ACTIVE.has(recurringStatus)) row.recurringActive = true;
    else if (ENDED.has(recurringStatus)) row.recurringActive = false;
    else problem("recurring_status", `"${cellOf("recurring_status")}" is not active or cancelled`);
  }
  const next = cellOf("next_payment_date");
  if (next !== "") {
    const parsed = parseDate(next);
    if ("problem" in parsed) problem("next_payment_date", parsed.problem);
    else row.nextPaymentDate = parsed.value;
  }
  if (row.frequency === 0 && (row.recurringActive !== null || row.nextPaymentDate !== null)) {
    problem("frequency", "a one-time gift has no recurring status or next payment date");
  }

  if ((row.stripeCustomer === null) !== (row.stripeMethod === null)) {
    problem(
      row.stripeCustomer === null ? "stripe_customer_id" : "stripe_payment_method_id",
      "a Stripe customer and payment method come together",
    );
  } else if (row.stripeCustomer !== null) {
    if (!/^cus_\w+$/.test(row.stripeCustomer)) problem("stripe_customer_id", "is not a Stripe customer id (cus_…)");
    if (!/^(pm|card|src)_\w+$/.test(row.stripeMethod ?? "")) {
      problem("stripe_payment_method_id", "is not a Stripe payment method id (pm_…)");
    }
  }

  const tribute = word(cellOf("tribute_type"));
  if (tribute !== "") {
    if (HONOR.has(tribute)) row.tributeType = "honor";
    else if (MEMORY.has(tribute)) row.tributeType = "memory";
    else problem("tribute_type", `"${cellOf("tribute_type")}" is not in honour of or in memory of`);
    if (row.tributeName === null) problem("tribute_name", "a tribute needs the name of whom it honours");
  } else if (row.tributeName !== null) row.tributeType = "honor";

  // The donor, checked as the supporters import checks a new supporter.
  const donorMapping: ColumnMapping = {};
  for (const field of DONOR_FIELDS) if (mapping[field] !== undefined) donorMapping[field] = mapping[field];
  const donor = checkRow(line, cells, headers, donorMapping);
  const namesNobody = (each: RowProblem) => each.message === "a supporter needs a name, a business name or an email";
  for (const each of donor.problems) {
    if (namesNobody(each)) {
      if (row.supporterExternalId === null) {
        problems.push({ ...each, message: "a gift needs its donor: an email, a name or the donor's id" });
      }
    } else problems.push(each);
  }
  row.donor = donor.values;
  return row;
}
