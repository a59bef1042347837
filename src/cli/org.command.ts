import { systemOrigin } from "../events/origin.js";
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
