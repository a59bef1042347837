import { readFile, writeFile } from "node:fs/promises";
import { systemOrigin } from "../events/origin.js";
import { giftImportResultsCsv, importGifts } from "../modules/imports/gift-import.service.js";
import { IMPORT_PRESETS, type ImportPreset } from "../modules/imports/import-columns.js";
import { importResultsCsv, importSupporters } from "../modules/imports/supporter-import.service.js";
import { requireOrganization } from "../modules/organizations/organizations.service.js";
import { type Command, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

/** At most this many refused rows are listed on the terminal; --results has them all. */
const LISTED = 20;

function parseMappings(values: unknown): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  const mapping: Record<string, string> = {};
  for (const each of values as string[]) {
    const at = each.lastIndexOf("=");
    if (at <= 0) throw new UsageError(`--map takes "Column=field" (or "Column=ignore"), not "${each}"`);
    mapping[each.slice(0, at).trim()] = each.slice(at + 1).trim();
  }
  return mapping;
}

export const importCommand: Command = {
  name: "import",
  usage:
    "donata import --org S --kind supporters|donations --file F [--preset givebutter|donorbox] [--map Column=field]… [--campaign SLUG] [--dry-run] [--results OUT.csv] [--json]",
  summary:
    "Import supporters or gift history from a CSV file (Givebutter's or Donorbox's export, or any file with --map): a dry run checks every row",
  options: {
    org: { type: "string" },
    kind: { type: "string" },
    file: { type: "string" },
    preset: { type: "string" },
    campaign: { type: "string" },
    map: { type: "string", multiple: true },
    "dry-run": { type: "boolean" },
    results: { type: "string" },
  },
  async run(values, io) {
    const slug = requiredString(values, "org");
    const kind = requiredString(values, "kind");
    if (kind !== "supporters" && kind !== "donations") {
      throw new UsageError(`--kind must be supporters or donations, not "${kind}"`);
    }
    const campaign = values.campaign as string | undefined;
    if (campaign !== undefined && kind !== "donations") throw new UsageError("--campaign is for --kind donations");
    const file = requiredString(values, "file");
    const preset = values.preset as string | undefined;
    if (preset !== undefined && !(IMPORT_PRESETS as readonly string[]).includes(preset)) {
      throw new UsageError(`--preset must be one of ${IMPORT_PRESETS.join(", ")}, not "${preset}"`);
    }
    const mapping = parseMappings(values.map);
    const dryRun = values["dry-run"] === true;
    let content: Buffer;
    try {
      content = await readFile(file);
    } catch (error) {
      throw new UsageError(`--file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const result = await withDatabase(io.env, async ({ database }) => {
      const organization = await requireOrganization(database.db, slug);
      const request = {
        organizationId: organization.id,
        fileName: file.split(/[\\/]/).at(-1) ?? file,
        content,
        preset: preset as ImportPreset | undefined,
        mapping,
        dryRun,
        origin: systemOrigin("cli"),
        onProgress: io.stderr.isTTY
          ? (done: number, total: number) => io.stderr.write(`\r${done} of ${total} rows${done === total ? "\n" : ""}`)
          : undefined,
      };
      return kind === "donations"
        ? importGifts(database.db, { ...request, campaign })
        : importSupporters(database.db, request);
    });
    const resultsFile = values.results as string | undefined;
    if (resultsFile) {
      await writeFile(
        resultsFile,
        result.kind === "donations" ? giftImportResultsCsv(result) : importResultsCsv(result),
      );
    }
    const refused = result.results.filter((row) => row.outcome === "refused");
    const { results: _rows, ...counts } = result;
    return {
      json: { organization: slug, ...counts, refused_rows: refused },
      text: [
        `${dryRun ? "Dry run (nothing written)" : "Imported"}: ${result.file} for ${slug}, ${result.rows} rows: ` +
          `${result.created} ${dryRun ? "to create" : "created"}, ${result.updated} ${dryRun ? "to update" : "updated"}, ` +
          `${result.unchanged} unchanged, ${result.refused} refused`,
        `Columns: ${Object.entries(result.columns.mapping)
          .map(([field, header]) => `${field} ← "${header}"`)
          .join(
            ", ",
          )}${result.columns.ignored.length > 0 ? `; ignored: ${result.columns.ignored.map((header) => `"${header}"`).join(", ")}` : ""}`,
        ...refused
          .slice(0, LISTED)
          .map(
            (row) =>
              `  line ${row.line}: ${row.problems.map((problem) => `${problem.column}: ${problem.message}`).join("; ")}`,
          ),
        ...(refused.length > LISTED
          ? [`  … and ${refused.length - LISTED} more refused rows (--results F lists them all)`]
          : []),
        ...(result.kind === "donations" && result.campaigns_created.length > 0
          ? [
              `Campaigns ${dryRun ? "to create" : "created"} as drafts: ${result.campaigns_created.map((name) => `"${name}"`).join(", ")}`,
            ]
          : []),
        ...(result.kind === "donations" && result.recurring_awaiting > 0
          ? [
              `${result.recurring_awaiting} recurring gifts still running on the other platform ${dryRun ? "would charge" : "charge"} nobody until turned on (docs/import.md)`,
            ]
          : []),
        ...(resultsFile ? [`Every row's outcome: ${resultsFile}`] : []),
      ],
    };
  },
};
