import type { Config } from "../../config.js";
import type { Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
import { findOrganizationById } from "../../modules/organizations/organizations.repo.js";
import { loadSecretBox, type SecretBox } from "../../secrets/secret-box.js";
import { manualProcessor } from "./manual.js";
import type { Processor, ProcessorDescription } from "./processor.js";
import { findProcessorAccount, type ProcessorAccountRow } from "./processor-accounts.repo.js";
import { createSandboxProcessor, sandboxDescription } from "./sandbox.js";
import { createStripeProcessor, type StripeApiBase, type StripeProcessor, stripeDescription } from "./stripe.js";

export type { Processor, ProcessorDescription } from "./processor.js";
export { ProcessorTimeoutError } from "./processor.js";

const DESCRIPTIONS: ReadonlyMap<string, ProcessorDescription> = new Map(
  [sandboxDescription, stripeDescription, manualProcessor].map((processor) => [processor.name, processor]),
);

export const PROCESSOR_NAMES = [...DESCRIPTIONS.keys()];

export function findProcessor(name: string): ProcessorDescription | undefined {
  return DESCRIPTIONS.get(name);
}

export function requireProcessor(name: string): ProcessorDescription {
  const processor = DESCRIPTIONS.get(name);
  if (!processor) {
    throw new AppError("invalid_request", `Unknown payment processor "${name}"`, {
      errors: [{ field: "processor", message: `must be one of ${PROCESSOR_NAMES.join(", ")}` }],
    });
  }
  return processor;
}

/** An organization's Stripe account, connected: its settings (never the secrets in clear) and its client. */
export interface StripeAccount {
  row: Omit<ProcessorAccountRow, "secretKeyCiphertext" | "webhookSecretCiphertext">;
  processor: StripeProcessor;
  /** The secret Stripe signs this account's webhook events with (decrypted when asked). */
  webhookSecret(): string;
}

/**
 * How an organization takes gifts now. `card` is the processor of its card form: Stripe once it saved
 * keys; else the sandbox when it is in test mode, or outside production (the demo's sandbox); else
 * none (production never serves the sandbox unasked). Bank transfer is offered outside production
 * always, in production once the organization entered its IBAN.
 */
export interface PaymentMode {
  card: "stripe" | "sandbox" | null;
  /** The organization's test mode: the sandbox takes its gifts, marked as test data. */
  testMode: boolean;
  bankTransfer: boolean;
}

export function paymentModeOf(
  organization: { testMode: boolean; iban: string | null },
  hasStripeAccount: boolean,
  production: boolean,
): PaymentMode {
  const card = hasStripeAccount ? "stripe" : organization.testMode || !production ? "sandbox" : null;
  return {
    card,
    testMode: card === "sandbox" && organization.testMode,
    bankTransfer: !production || organization.iban !== null,
  };
}

/** What donors may pay with, card processor first. */
export function offeredProcessors(mode: PaymentMode): ProcessorDescription[] {
  const card = mode.card === "stripe" ? stripeDescription : mode.card === "sandbox" ? sandboxDescription : undefined;
  return [...(card ? [card] : []), ...(mode.bankTransfer ? [manualProcessor] : [])];
}

/**
 * The adapters that move money, per organization: the card processor of its payment mode (Stripe,
 * the sandbox, or none), bank transfer always (a payment made by transfer is settled by hand). A
 * Stripe client is kept per organization and made anew when its keys change.
 */
export interface ProcessorRegistry {
  readonly secrets: SecretBox;
  /** Where Stripe clients send requests (undefined: api.stripe.com). */
  readonly stripeApi: StripeApiBase | undefined;
  /** NODE_ENV=production: the sandbox serves only organizations in test mode. */
  readonly production: boolean;
  /**
   * The adapter to charge, refund or ask about an organization's payment made with `name`; undefined
   * when the organization is not connected to it (in production, the sandbox outside test mode).
   */
  connect(organizationId: number, name: string): Promise<Processor | undefined>;
  /** What the organization's donors may pay with, card processor first. */
  offered(organizationId: number): Promise<ProcessorDescription[]>;
  /** How the organization takes gifts now (undefined: no such organization). */
  mode(organizationId: number): Promise<PaymentMode | undefined>;
  /** The organization's Stripe account, or undefined when it has none. */
  stripeAccount(organizationId: number): Promise<StripeAccount | undefined>;
}

export function stripeApiOf(url: string | undefined): StripeApiBase | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  const protocol = parsed.protocol === "http:" ? "http" : "https";
  return { host: parsed.hostname, port: Number(parsed.port) || (protocol === "http" ? 80 : 443), protocol };
}

export function createProcessorRegistry(
  db: Executor,
  options: { secrets: SecretBox; stripeApi?: StripeApiBase; stripeTimeoutMs?: number; production?: boolean },
): ProcessorRegistry {
  const production = options.production ?? false;
  const sandbox = createSandboxProcessor(db);
  const clients = new Map<number, { secretKeyCiphertext: string; processor: StripeProcessor }>();

  async function stripeAccount(organizationId: number): Promise<StripeAccount | undefined> {
    const found = await findProcessorAccount(db, organizationId, "stripe");
    if (!found) return undefined;
    const { secretKeyCiphertext, webhookSecretCiphertext, ...row } = found;
    let client = clients.get(organizationId);
    if (client?.secretKeyCiphertext !== secretKeyCiphertext) {
      const processor = createStripeProcessor({
        secretKey: options.secrets.open(secretKeyCiphertext),
        api: options.stripeApi,
        timeoutMs: options.stripeTimeoutMs,
      });
      client = { secretKeyCiphertext, processor };
      clients.set(organizationId, client);
    }
    return { row, processor: client.processor, webhookSecret: () => options.secrets.open(webhookSecretCiphertext) };
  }

  async function mode(organizationId: number): Promise<PaymentMode | undefined> {
    const organization = await findOrganizationById(db, organizationId);
    if (!organization) return undefined;
    const account = await findProcessorAccount(db, organizationId, "stripe");
    return paymentModeOf(organization, account !== undefined, production);
  }

  return {
    secrets: options.secrets,
    stripeApi: options.stripeApi,
    production,
    stripeAccount,
    mode,
    async connect(organizationId, name) {
      // Production moves no fake money: the sandbox answers only an organization in test mode.
      if (name === "sandbox") {
        if (!production) return sandbox;
        return (await findOrganizationById(db, organizationId))?.testMode ? sandbox : undefined;
      }
      if (name === "manual") return manualProcessor;
      if (name === "stripe") return (await stripeAccount(organizationId))?.processor;
      return undefined;
    },
    async offered(organizationId) {
      const found = await mode(organizationId);
      return found ? offeredProcessors(found) : [];
    },
  };
}

/** The registry of a server, worker or CLI process, from its configuration. */
export function loadProcessorRegistry(db: Executor, config: Config): ProcessorRegistry {
  return createProcessorRegistry(db, {
    secrets: loadSecretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir }),
    stripeApi: stripeApiOf(config.stripeApiUrl),
    production: config.production,
  });
}
