import { SupporterInput } from "../supporters/supporters.schemas.js";

/**
 * The columns of an import file: which field of Donata each one fills, from a preset (the export
 * columns of the platform a charity leaves) or a mapping given column by column. Headers are
 * compared loosely: case, accents, spaces and punctuation aside ("Zip Code" = "zip_code").
 */

/** The supporter fields a file can fill: the row's id on its platform, then the API's own (docs/import.md). */
export type SupporterImportField = "external_id" | Exclude<keyof SupporterInput, "image" | "code">;
export const SUPPORTER_IMPORT_FIELDS = [
  "external_id",
  ...Object.keys(SupporterInput.properties).filter((field) => field !== "image" && field !== "code"),
] as readonly SupporterImportField[];

export const IMPORT_PRESETS = ["givebutter", "donorbox"] as const;
export type ImportPreset = (typeof IMPORT_PRESETS)[number];

/**
 * Each preset's headers for each field, from the platforms' documented contact exports:
 * Givebutter's contacts export (Contacts → Export) and Donorbox's donors export (Donors → Export).
 * A field takes the first of its headers that the file has.
 */
const PRESET_HEADERS: Record<ImportPreset, Partial<Record<SupporterImportField, readonly string[]>>> = {
  givebutter: {
    external_id: ["Givebutter Contact ID", "Contact ID"],
    first_name: ["First Name"],
    last_name: ["Last Name"],
    business_name: ["Company", "Company Name"],
    email: ["Primary Email", "Email"],
    phone: ["Primary Phone", "Phone"],
    job: ["Title", "Job Title"],
    sex: ["Gender"],
    date_of_birth: ["Date of Birth"],
    address: ["Address Line 1", "Address 1"],
    address2: ["Address Line 2", "Address 2"],
    city: ["City"],
    locality: ["State", "State/Province"],
    postal_code: ["Postal Code", "Zip Code", "Zip"],
    country: ["Country"],
    email_marketing: ["Email Subscription Status", "Engage Email Subscription Status"],
    sms_marketing: ["SMS Subscription Status", "Engage SMS Subscription Status"],
    tags: ["Tags"],
    note: ["Notes"],
  },
  donorbox: {
    external_id: ["Donor ID", "Donor Id"],
    first_name: ["First Name"],
    last_name: ["Last Name"],
    business_name: ["Donating Company", "Company"],
    email: ["Email", "Donor Email"],
    phone: ["Phone", "Phone Number"],
    address: ["Address", "Address 1"],
    address2: ["Address 2"],
    city: ["City"],
    locality: ["State / Province", "State"],
    postal_code: ["Postal Code", "Zip Code"],
    country: ["Country"],
    email_marketing: ["Join Mailing List", "Mailing List"],
    tags: ["Tags"],
    note: ["Notes"],
  },
};

/**
 * The fields of a gift-history file (`--kind donations`): one row is one payment received on the
 * other platform. The gift's own fields first, then its donor's (matched or created, docs/import.md).
 */
export const GIFT_IMPORT_FIELDS = [
  "external_id",
  "amount",
  "currency",
  "date",
  "status",
  "refunded_amount",
  "campaign",
  "payment_method",
  "note",
  "frequency",
  "recurring_id",
  "recurring_status",
  "next_payment_date",
  "stripe_customer_id",
  "stripe_payment_method_id",
  "tribute_type",
  "tribute_name",
  "supporter_external_id",
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
] as const;
export type GiftImportField = (typeof GIFT_IMPORT_FIELDS)[number];

/**
 * Each preset's headers for a gift-history file, from the platforms' documented transaction exports:
 * Givebutter's transactions export (Transactions → Export) and Donorbox's donations export
 * (Donations → Export).
 */
const GIFT_PRESET_HEADERS: Record<ImportPreset, Partial<Record<GiftImportField, readonly string[]>>> = {
  givebutter: {
    external_id: ["Transaction ID", "Givebutter Transaction ID", "ID"],
    amount: ["Amount", "Donated"],
    currency: ["Currency"],
    date: ["Transaction Date", "Date", "Created At"],
    status: ["Status"],
    refunded_amount: ["Refunded Amount", "Amount Refunded"],
    campaign: ["Campaign Title", "Campaign", "Campaign Code"],
    payment_method: ["Method", "Payment Method"],
    note: ["Note", "Notes", "Message"],
    frequency: ["Frequency", "Recurring Frequency"],
    recurring_id: ["Plan ID", "Recurring Plan ID", "Recurring ID"],
    recurring_status: ["Plan Status", "Recurring Plan Status", "Recurring Status"],
    next_payment_date: ["Next Payment Date", "Next Charge Date"],
    stripe_customer_id: ["Stripe Customer ID"],
    stripe_payment_method_id: ["Stripe Payment Method ID"],
    tribute_type: ["Dedication Type"],
    tribute_name: ["Dedication Name", "Dedication"],
    supporter_external_id: ["Contact ID", "Givebutter Contact ID"],
    email: ["Email", "Primary Email"],
    first_name: ["First Name"],
    last_name: ["Last Name"],
    business_name: ["Company", "Company Name"],
    phone: ["Phone", "Primary Phone"],
    address: ["Address Line 1", "Address 1"],
    address2: ["Address Line 2", "Address 2"],
    city: ["City"],
    locality: ["State", "State/Province"],
    postal_code: ["Zip Code", "Postal Code", "Zip"],
    country: ["Country"],
  },
  donorbox: {
    external_id: ["Donation ID", "Donation Id", "Stripe Charge Id", "Paypal Transaction Id"],
    amount: ["Amount"],
    currency: ["Currency"],
    date: ["Donation Date", "Date"],
    status: ["Status", "Donation Status"],
    refunded_amount: ["Refunded Amount", "Refund Amount"],
    campaign: ["Campaign", "Form"],
    payment_method: ["Donation Type", "Payment Method", "Card Type"],
    note: ["Donor Comment", "Comment"],
    frequency: ["Recurring Interval", "Interval", "Frequency"],
    recurring_id: ["Recurring Plan ID", "Plan ID", "Stripe Subscription Id"],
    recurring_status: ["Recurring Status", "Plan Status"],
    next_payment_date: ["Next Payment Date", "Next Donation Date"],
    stripe_customer_id: ["Stripe Customer Id", "Stripe Customer ID"],
    stripe_payment_method_id: ["Stripe Payment Method Id", "Stripe Payment Method ID"],
    tribute_type: ["Honoree Type", "Dedication Type"],
    tribute_name: ["Honoree Name", "In Honor Of", "Dedication"],
    supporter_external_id: ["Donor ID", "Donor Id"],
    email: ["Donor Email", "Email"],
    first_name: ["First Name", "Donor First Name"],
    last_name: ["Last Name", "Donor Last Name"],
    business_name: ["Donating Company", "Company"],
    phone: ["Phone", "Donor Phone"],
    address: ["Address", "Address 1"],
    address2: ["Address 2"],
    city: ["City"],
    locality: ["State / Province", "State"],
    postal_code: ["Postal Code", "Zip Code"],
    country: ["Country"],
  },
};

/** What a file of each kind may fill, and what says which row is which. */
export const IMPORT_KINDS = ["supporters", "donations"] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

interface KindColumns {
  fields: readonly string[];
  presets: Record<ImportPreset, Partial<Record<string, readonly string[]>>>;
  /** The mapping must give one of these, or the file cannot say what its rows are. */
  needsOneOf: readonly string[];
  needs: string;
}

const KIND_COLUMNS: Record<ImportKind, KindColumns> = {
  supporters: {
    fields: SUPPORTER_IMPORT_FIELDS,
    presets: PRESET_HEADERS,
    needsOneOf: ["email", "first_name", "last_name", "business_name", "external_id"],
    needs: "no column names a supporter's email, name, business name or external id: give a mapping",
  },
  donations: {
    fields: GIFT_IMPORT_FIELDS,
    presets: GIFT_PRESET_HEADERS,
    needsOneOf: ["amount"],
    needs: "no column names a gift's amount: give a mapping",
  },
};

/** The fields a file of this kind can fill (the panel's mapping editor offers them). */
export const importFieldsOf = (kind: ImportKind): readonly string[] => KIND_COLUMNS[kind].fields;

/** A header as compared: lower case, no accents, letters and digits only. */
export const headerKey = (header: string) =>
  header
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");

/** Which column (by index) fills each field. */
export type ColumnMapping = Partial<Record<SupporterImportField, number>>;
/** The same for a file of any kind. */
export type FieldColumns = Partial<Record<string, number>>;

export interface MappingOutcome {
  mapping: FieldColumns;
  /** Headers no field takes: listed in the dry run, never read. */
  ignored: string[];
  /** Problems that stop the whole file (a mapping naming a column the file lacks, a field twice). */
  problems: string[];
}

/**
 * The mapping of a file's headers: a preset's, then `explicit` (header → field, from the panel's
 * mapping editor or the CLI's --map) over it; without either, a header that is a field's own name
 * ("email", "First name") fills that field.
 */
export function mapColumns(
  headers: readonly string[],
  options: { preset?: ImportPreset; explicit?: Readonly<Record<string, string>> },
  kind: ImportKind = "supporters",
): MappingOutcome {
  const { fields, presets, needsOneOf, needs } = KIND_COLUMNS[kind];
  const problems: string[] = [];
  const byKey = new Map<string, number>();
  headers.forEach((header, index) => {
    const key = headerKey(header);
    if (key && !byKey.has(key)) byKey.set(key, index);
  });
  const mapping: FieldColumns = {};
  const presetHeaders = options.preset ? presets[options.preset] : undefined;
  for (const field of fields) {
    const candidates = presetHeaders ? (presetHeaders[field] ?? []) : options.explicit ? [] : [field];
    for (const candidate of candidates) {
      const index = byKey.get(headerKey(candidate));
      if (index !== undefined) {
        mapping[field] = index;
        break;
      }
    }
  }
  for (const [header, field] of Object.entries(options.explicit ?? {})) {
    const index = byKey.get(headerKey(header));
    if (index === undefined) {
      problems.push(`the mapping names the column "${header}", which the file does not have`);
      continue;
    }
    if (field === "" || field === "ignore") {
      for (const [name, at] of Object.entries(mapping)) if (at === index) delete mapping[name];
      continue;
    }
    if (!fields.includes(field)) {
      problems.push(`the mapping's field "${field}" (column "${header}") is not one of: ${fields.join(", ")}`);
      continue;
    }
    mapping[field] = index;
  }
  const used = new Map<number, string>();
  for (const [field, index] of Object.entries(mapping) as [string, number][]) {
    const other = used.get(index);
    if (other) problems.push(`the column "${headers[index]}" is mapped to both ${other} and ${field}`);
    used.set(index, field);
  }
  if (problems.length === 0 && !needsOneOf.some((field) => field in mapping)) {
    problems.push(
      options.preset
        ? `no column of the file is one of ${options.preset}'s export columns (found: ${headers.join(", ")})`
        : needs,
    );
  }
  const ignored = headers.filter((_, index) => !used.has(index));
  return { mapping, ignored, problems };
}
