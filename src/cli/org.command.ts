import { readFile } from "node:fs/promises";
import path from "node:path";
import { systemOrigin } from "../events/origin.js";
import {
  type LegalProfileInput,
  readLegalProfile,
  removeLogo,
  updateLegalProfile,
  uploadLogo,
} from "../modules/legal-profile/legal-profile.service.js";
import {
  createOrganization,
  organizationToWire,
  requireOrganization,
} from "../modules/organizations/organizations.service.js";
import {
  connectStripe,
  disconnectStripe,
  setPaymentTestMode,
} from "../modules/organizations/payment-settings.service.js";
import { loadProcessorRegistry } from "../payments/processors/index.js";
import { type Command, requiredString, UsageError } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const orgCreateCommand: Command = {
  name: "org create",
  usage: "donata org create --slug S --name N [--currency C] [--timezone TZ] [--json]",
  summary: "Create an organization",
  options: {
    slug: { type: "string" },
    name: { type: "string" },
    currency: { type: "string" },
    timezone: { type: "string" },
  },
  async run(values, io) {
    const slug = requiredString(values, "slug");
    const name = requiredString(values, "name");
    const row = await withDatabase(io.env, ({ database }) =>
      createOrganization(database.db, {
        slug,
        name,
        currency: values.currency as string | undefined,
        timeZone: values.timezone as string | undefined,
      }),
    );
    const organization = organizationToWire(row);
    return {
      json: organization,
      text: [`Created organization ${organization.slug} (${organization.currency}, ${organization.time_zone})`],
    };
  },
};

export const orgSetProcessorCommand: Command = {
  name: "org set-processor",
  usage:
    "donata org set-processor --org S --processor stripe --secret-key sk_… --publishable-key pk_… --webhook-secret whsec_… [--json]\n" +
    "       donata org set-processor --org S --processor sandbox [--json]   (test mode: no real money moves)\n" +
    "       donata org set-processor --org S --processor none [--json]",
  summary: "Connect an organization's Stripe account, switch it to test mode (the sandbox), or to no card processor",
  options: {
    org: { type: "string" },
    processor: { type: "string" },
    "secret-key": { type: "string" },
    "publishable-key": { type: "string" },
    "webhook-secret": { type: "string" },
  },
  async run(values, io) {
    const slug = requiredString(values, "org");
    const processor = requiredString(values, "processor");
    if (processor !== "stripe" && processor !== "sandbox" && processor !== "none") {
      throw new UsageError(`--processor must be stripe, sandbox or none, not "${processor}"`);
    }
    const keys =
      processor === "stripe"
        ? {
            secret_key: requiredString(values, "secret-key"),
            publishable_key: requiredString(values, "publishable-key"),
            webhook_secret: requiredString(values, "webhook-secret"),
          }
        : undefined;
    if (!keys && ["secret-key", "publishable-key", "webhook-secret"].some((name) => values[name] !== undefined)) {
      throw new UsageError(
        `--processor ${processor} takes no keys; leave out --secret-key, --publishable-key and --webhook-secret`,
      );
    }
    const settings = await withDatabase(io.env, async ({ config, database }) => {
      const organization = await requireOrganization(database.db, slug);
      const deps = {
        db: database.db,
        processors: loadProcessorRegistry(database.db, config),
        baseUrl: config.baseUrl,
      };
      const target = { id: organization.id, slug: organization.slug };
      if (keys) return connectStripe(deps, target, keys, systemOrigin("cli"));
      return processor === "sandbox"
        ? setPaymentTestMode(deps, target, true, systemOrigin("cli"))
        : disconnectStripe(deps, target, systemOrigin("cli"));
    });
    const text =
      settings.processor === "stripe"
        ? [
            `${slug} now takes payments with Stripe (${settings.mode} mode): secret key …${settings.secret_key_last4}, webhook secret …${settings.webhook_secret_last4}`,
            `In Stripe's dashboard (Developers → Webhooks), send these events to ${settings.webhook_url}:`,
            `  ${settings.webhook_events.join(", ")}`,
          ]
        : settings.test_mode
          ? [
              `${slug} is in test mode: the sandbox takes gifts, no real money moves, pages show a test banner (Stripe keys, if any, deleted)`,
            ]
          : settings.processor === "sandbox"
            ? [
                `${slug} has no card processor of its own: the sandbox takes gifts outside production (Stripe keys, if any, deleted)`,
              ]
            : [
                `${slug} takes no card payments: bank transfer only, once its IBAN is set (Stripe keys, if any, deleted; test mode off)`,
              ];
    return { json: { organization: slug, ...settings }, text };
  },
};

/** The legal profile's fields, as CLI options (--legal-name, --tax-code, …). */
const PROFILE_FIELDS = [
  "legal_name",
  "legal_form",
  "address_line1",
  "address_line2",
  "postal_code",
  "city",
  "province",
  "country",
  "tax_code",
  "vat_number",
  "runts_number",
  "ets_status",
  "charity_number",
  "ein",
  "us_501c3",
  "website",
  "privacy_policy_url",
  "receipt_legal_text",
  "receipt_mode",
  "default_locale",
  "contact_email",
  "account_holder",
  "iban",
  "bic",
] as const;
const optionOf = (field: string) => field.replace(/_/g, "-");

const LOGO_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
};

/** A logo file and its type, by its extension (the upload checks the bytes say the same). */
async function readLogoFile(file: string) {
  const contentType = LOGO_TYPES[path.extname(file).toLowerCase()];
  if (!contentType) throw new UsageError("--logo takes a .png, .jpg, .jpeg or .webp file");
  try {
    return { bytes: await readFile(file), contentType };
  } catch (error) {
    throw new UsageError(`--logo: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

export const orgProfileCommand: Command = {
  name: "org profile",
  usage:
    "donata org profile --org S [--legal-name N] [--tax-code C] [--country IT] [--privacy-policy-url U] … [--json]\n" +
    "       (every field of the legal profile is an option: --legal-form, --address-line1, --postal-code, --city,\n" +
    "        --province, --vat-number, --runts-number, --ets-status, --charity-number, --ein, --us-501c3 true|false,\n" +
    "        --website, --receipt-legal-text, --receipt-mode, --default-locale, --contact-email, --account-holder,\n" +
    "        --iban, --bic; an empty value clears one; none shows the profile;\n" +
    "        --logo FILE uploads a PNG, JPEG or WebP logo, --logo '' takes it off)",
  summary: "Show or change an organization's legal profile (what its receipts print)",
  options: {
    org: { type: "string" },
    logo: { type: "string" },
    ...Object.fromEntries(PROFILE_FIELDS.map((field) => [optionOf(field), { type: "string" as const }])),
  },
  async run(values, io) {
    const slug = requiredString(values, "org");
    const input: LegalProfileInput = {};
    for (const field of PROFILE_FIELDS) {
      const value = values[optionOf(field)];
      if (typeof value !== "string") continue;
      if (field === "us_501c3") {
        if (value !== "true" && value !== "false") throw new UsageError("--us-501c3 must be true or false");
        input.us_501c3 = value === "true";
      } else input[field] = value;
    }
    const logo = typeof values.logo === "string" ? values.logo : undefined;
    const image = logo ? await readLogoFile(logo) : undefined;
    const profile = await withDatabase(io.env, async ({ database, config }) => {
      const organization = await requireOrganization(database.db, slug);
      const origin = systemOrigin("cli");
      let profile =
        Object.keys(input).length === 0
          ? await readLegalProfile(database.db, organization.id)
          : await updateLegalProfile(database.db, organization.id, input, origin);
      if (image) profile = await uploadLogo(database.db, organization.id, image, config.baseUrl, origin);
      else if (logo === "") profile = await removeLogo(database.db, organization.id, origin);
      return profile;
    });
    const lines = [...PROFILE_FIELDS, "logo_url" as const].map(
      (field) => `${field.padEnd(20)} ${profile[field] ?? "—"}`,
    );
    lines.push(
      profile.missing.length === 0
        ? "Receipts: the profile has what they need."
        : `Receipts need: ${profile.missing.join(", ")}`,
    );
    return { json: { organization: slug, ...profile }, text: lines };
  },
};
