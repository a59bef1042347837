import type { Config } from "../../config.js";
import type { Executor } from "../../db/client.js";
import { AppError } from "../../errors/app-error.js";
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
 * The adapters that move money, per organization: the sandbox (its ledger in the database) unless
 * the organization saved Stripe keys, bank transfer always. A Stripe client is kept per organization
 * and made anew when its keys change.
 */
export interface ProcessorRegistry {
  readonly secrets: SecretBox;
  /** Where Stripe clients send requests (undefined: api.stripe.com). */
  readonly stripeApi: StripeApiBase | undefined;
  /** The adapter to charge, refund or ask about an organization's payment made with `name`. */
  connect(organizationId: number, name: string): Promise<Processor | undefined>;
  /** What the organization's donors may pay with, card processor first. */
  offered(organizationId: number): Promise<ProcessorDescription[]>;
  /** The organization's Stripe account, or undefined when it has none. */
  stripeAccount(organizationId: number): Promise<StripeAccount | undefined>;
}

/** What donors may pay with: Stripe once the organization has an account there, else the sandbox; bank transfer always. */
export function offeredProcessors(hasStripeAccount: boolean): ProcessorDescription[] {
  return [hasStripeAccount ? stripeDescription : sandboxDescription, manualProcessor];
}

export function stripeApiOf(url: string | undefined): StripeApiBase | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  const protocol = parsed.protocol === "http:" ? "http" : "https";
  return { host: parsed.hostname, port: Number(parsed.port) || (protocol === "http" ? 80 : 443), protocol };
}

export function createProcessorRegistry(
  db: Executor,
  options: { secrets: SecretBox; stripeApi?: StripeApiBase; stripeTimeoutMs?: number },
): ProcessorRegistry {
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

  return {
    secrets: options.secrets,
    stripeApi: options.stripeApi,
    stripeAccount,
    async connect(organizationId, name) {
      if (name === "sandbox") return sandbox;
      if (name === "manual") return manualProcessor;
      if (name === "stripe") return (await stripeAccount(organizationId))?.processor;
      return undefined;
    },
    async offered(organizationId) {
      return offeredProcessors(Boolean(await findProcessorAccount(db, organizationId, "stripe")));
    },
  };
}

/** The registry of a server, worker or CLI process, from its configuration. */
export function loadProcessorRegistry(db: Executor, config: Config): ProcessorRegistry {
  return createProcessorRegistry(db, {
    secrets: loadSecretBox({ encryptionKey: config.encryptionKey, dataDir: config.dataDir }),
    stripeApi: stripeApiOf(config.stripeApiUrl),
  });
}
