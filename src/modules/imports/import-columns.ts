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

/** A header as compared: lower case, no accents, letters and digits only. */
export const headerKey = (header: string) =>
  header
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");

/** Which column (by index) fills each field. */
export type ColumnMapping = Partial<Record<SupporterImportField, number>>;

export interface MappingOutcome {
  mapping: ColumnMapping;
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
): MappingOutcome {
  const problems: string[] = [];
  const byKey = new Map<string, number>();
  headers.forEach((header, index) => {
    const key = headerKey(header);
    if (key && !byKey.has(key)) byKey.set(key, index);
  });
  const mapping: ColumnMapping = {};
  const presetHeaders = options.preset ? PRESET_HEADERS[options.preset] : undefined;
  for (const field of SUPPORTER_IMPORT_FIELDS) {
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
      for (const [name, at] of Object.entries(mapping)) if (at === index) delete mapping[name as SupporterImportField];
      continue;
    }
    if (!(SUPPORTER_IMPORT_FIELDS as readonly string[]).includes(field)) {
      problems.push(
        `the mapping's field "${field}" (column "${header}") is not one of: ${SUPPORTER_IMPORT_FIELDS.join(", ")}`,
      );
      continue;
    }
    mapping[field as SupporterImportField] = index;
  }
  const used = new Map<number, string>();
  for (const [field, index] of Object.entries(mapping)) {
    const other = used.get(index);
    if (other) problems.push(`the column "${headers[index]}" is mapped to both ${other} and ${field}`);
    used.set(index, field);
  }
  if (
    problems.length === 0 &&
    !["email", "first_name", "last_name", "business_name", "external_id"].some((field) => field in mapping)
  ) {
    problems.push(
      options.preset
        ? `no column of the file is one of ${options.preset}'s export columns (found: ${headers.join(", ")})`
        : "no column names a supporter's email, name, business name or external id: give a mapping",
    );
  }
  const ignored = headers.filter((_, index) => !used.has(index));
  return { mapping, ignored, problems };
}
