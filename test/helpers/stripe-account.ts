import { randomBytes } from "node:crypto";
import type { Executor } from "../../src/db/client.js";
import type { ProcessorRegistry } from "../../src/payments/processors/index.js";
import { upsertProcessorAccount } from "../../src/payments/processors/processor-accounts.repo.js";

export interface FakeStripeAccount {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
}

/**
 * Gives an organization a Stripe account directly in the database (keys sealed with the registry's
 * secret box, as saving them in Settings does after Stripe accepted them): from then on it takes
 * payments with Stripe, at the stand-in its server's STRIPE_API_URL points to (test keys only).
 */
export async function connectFakeStripeAccount(
  db: Executor,
  processors: Pick<ProcessorRegistry, "secrets">,
  organizationId: number,
): Promise<FakeStripeAccount> {
  const suffix = randomBytes(8).toString("hex");
  const account = {
    secretKey: `sk_test_${suffix}`,
    publishableKey: `pk_test_${suffix}`,
    webhookSecret: `whsec_${suffix}`,
  };
  await upsertProcessorAccount(db, {
    organizationId,
    processor: "stripe",
    mode: "test",
    publishableKey: account.publishableKey,
    secretKeyCiphertext: processors.secrets.seal(account.secretKey),
    secretKeyLast4: account.secretKey.slice(-4),
    webhookSecretCiphertext: processors.secrets.seal(account.webhookSecret),
    webhookSecretLast4: account.webhookSecret.slice(-4),
  });
  return account;
}
