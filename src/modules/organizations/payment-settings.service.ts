import type { Db, Executor } from "../../db/client.js";
import { AppError, type ValidationIssue } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { changesOf, recordEvent, withEvents } from "../../events/record-event.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { type ProcessorRegistry, paymentModeOf } from "../../payments/processors/index.js";
import {
  deleteProcessorAccount,
  findProcessorAccount,
  type ProcessorAccountRow,
  upsertProcessorAccount,
} from "../../payments/processors/processor-accounts.repo.js";
import { stripeDescription, verifyStripeSecretKey } from "../../payments/processors/stripe.js";
import { findOrganizationById, updateOrganizationColumns } from "./organizations.repo.js";

/** The organization whose payment settings a call reads or changes (its slug names the webhook endpoint). */
export interface SettingsOrganization {
  id: number;
  slug: string;
}

export interface PaymentSettingsDependencies {
  db: Db;
  processors: ProcessorRegistry;
  /** The server's public origin (config.baseUrl): Stripe posts events to it. */
  baseUrl: string;
}

export interface StripeKeysInput {
  secret_key: string;
  publishable_key: string;
  webhook_secret: string;
}

/** The Stripe events the organization's webhook endpoint must receive (select them in Stripe's dashboard). */
export const STRIPE_WEBHOOK_EVENTS = [
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.processing",
  "charge.refunded",
  "refund.created",
  "refund.updated",
  "refund.failed",
  "charge.dispute.created",
  "charge.dispute.updated",
  "charge.dispute.closed",
  "payment_method.automatically_updated",
  "payment_method.updated",
] as const;

export const stripeWebhookUrl = (baseUrl: string, slug: string) =>
  `${baseUrl.replace(/\/+$/, "")}/webhooks/stripe/${encodeURIComponent(slug)}`;

const last4 = (value: string) => value.slice(-4);

/**
 * What the settings show: the card processor donors pay with now (stripe, the sandbox, or none in
 * production outside test mode), test mode, and of a Stripe account its mode, the public key and the
 * last 4 characters of each secret, never a secret.
 */
function settingsToWire(
  row:
    | Pick<ProcessorAccountRow, "mode" | "publishableKey" | "secretKeyLast4" | "webhookSecretLast4" | "updateDate">
    | undefined,
  webhookUrl: string,
  state: { testMode: boolean; iban: string | null; production: boolean },
) {
  const paymentMode = paymentModeOf(state, row !== undefined, state.production);
  return {
    processor: paymentMode.card ?? ("none" as const),
    test_mode: paymentMode.testMode,
    mode: row ? (row.mode as "test" | "live") : null,
    publishable_key: row?.publishableKey ?? null,
    secret_key_last4: row?.secretKeyLast4 ?? null,
    webhook_secret_last4: row?.webhookSecretLast4 ?? null,
    webhook_url: webhookUrl,
    webhook_events: [...STRIPE_WEBHOOK_EVENTS],
    update_date: row?.updateDate.toISOString() ?? null,
  };
}

export type PaymentSettingsWire = ReturnType<typeof settingsToWire>;

/** The organization's test mode and IBAN, which decide with Stripe what donors may pay with. */
async function stateOf(deps: PaymentSettingsDependencies, db: Executor, organizationId: number) {
  const row = await findOrganizationById(db, organizationId);
  if (!row) throw new Error("organization of the request vanished");
  return { testMode: row.testMode, iban: row.iban, production: deps.processors.production };
}

/** The settings as they read in this transaction (or outside one). */
async function settingsIn(deps: PaymentSettingsDependencies, db: Executor, organization: SettingsOrganization) {
  const row = await findProcessorAccount(db, organization.id, "stripe");
  return settingsToWire(
    row,
    stripeWebhookUrl(deps.baseUrl, organization.slug),
    await stateOf(deps, db, organization.id),
  );
}

export function getPaymentSettings(
  deps: PaymentSettingsDependencies,
  organization: SettingsOrganization,
): Promise<PaymentSettingsWire> {
  return settingsIn(deps, deps.db, organization);
}

/**
 * One change of the payment settings, in one transaction with its `payment_settings.updated` event:
 * the settings as they read before and after (the last 4 characters of a secret at most), so the
 * audit log shows what changed, who changed it and from where.
 */
async function changeSettings(
  deps: PaymentSettingsDependencies,
  organization: SettingsOrganization,
  origin: EventOrigin | undefined,
  change: (tx: Executor) => Promise<void>,
  /** Recorded even when nothing the settings show changed (new keys ending like the old ones). */
  always = false,
): Promise<PaymentSettingsWire> {
  return withEvents(deps.db, async (tx) => {
    const before = await settingsIn(deps, tx, organization);
    await change(tx);
    const after = await settingsIn(deps, tx, organization);
    if (always || changesOf(before, after)) {
      await recordEvent(
        tx,
        { organizationId: organization.id, origin },
        "payment_settings.updated",
        organization.id,
        after,
        {
          before,
        },
      );
    }
    return after;
  });
}

const SECRET_KEY = /^(?:sk|rk)_(test|live)_[A-Za-z0-9_]+$/;
const PUBLISHABLE_KEY = /^pk_(test|live)_[A-Za-z0-9_]+$/;
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9_+/=-]{8,}$/;

/** The keys' form, checked before anything asks Stripe: every problem at once, by field. */
export function checkStripeKeyForms(input: StripeKeysInput): { mode: "test" | "live"; keys: StripeKeysInput } {
  const keys = {
    secret_key: input.secret_key.trim(),
    publishable_key: input.publishable_key.trim(),
    webhook_secret: input.webhook_secret.trim(),
  };
  const errors: ValidationIssue[] = [];
  const secretMode = SECRET_KEY.exec(keys.secret_key)?.[1] as "test" | "live" | undefined;
  if (!secretMode) {
    errors.push(
      fieldIssue(
        "secret_key",
        keys.secret_key.startsWith("pk_") ? fieldProblem("secret_key_is_publishable") : fieldProblem("secret_key_form"),
      ),
    );
  }
  const publishableMode = PUBLISHABLE_KEY.exec(keys.publishable_key)?.[1];
  if (!publishableMode) {
    errors.push(
      fieldIssue(
        "publishable_key",
        keys.publishable_key.startsWith("sk_")
          ? fieldProblem("publishable_key_is_secret")
          : fieldProblem("publishable_key_form"),
      ),
    );
  } else if (secretMode && publishableMode !== secretMode) {
    errors.push(
      fieldIssue(
        "publishable_key",
        fieldProblem("key_modes_differ", { secret: secretMode, publishable: publishableMode }),
      ),
    );
  }
  if (!WEBHOOK_SECRET.test(keys.webhook_secret)) {
    errors.push(fieldIssue("webhook_secret", fieldProblem("webhook_secret_form")));
  }
  if (errors.length > 0 || !secretMode) {
    throw new AppError(
      "invalid_processor_keys",
      `The Stripe keys were not saved: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`,
      {
        errors,
      },
    );
  }
  return { mode: secretMode, keys };
}

/**
 * Connects (or replaces) the organization's Stripe account: the keys' form, then the secret key
 * against Stripe (outside any transaction), then in one transaction the sealed secrets and the
 * audit record. From then on the organization's donors pay with Stripe instead of the sandbox.
 */
export async function connectStripe(
  deps: PaymentSettingsDependencies,
  organization: SettingsOrganization,
  input: StripeKeysInput,
  origin: EventOrigin | undefined,
): Promise<PaymentSettingsWire> {
  const { mode, keys } = checkStripeKeyForms(input);
  // An organization gives in one currency: Stripe must take it (IQD, LYD… it does not).
  const currency = (await findOrganizationById(deps.db, organization.id))?.currency ?? "EUR";
  if (!stripeDescription.supportsCurrency(currency)) {
    throw new AppError(
      "currency_not_supported",
      `Stripe does not take payments in ${currency}, this organization's currency`,
      {
        errors: [fieldIssue("currency", fieldProblem("not_stripe_currency", { currency }))],
      },
    );
  }
  await verifyStripeSecretKey({ secretKey: keys.secret_key, api: deps.processors.stripeApi });
  const secrets = deps.processors.secrets;
  return changeSettings(
    deps,
    organization,
    origin,
    async (tx) => {
      // Real keys end test mode: the sandbox no longer takes this organization's gifts.
      await switchTestMode(tx, organization.id, false);
      await upsertProcessorAccount(tx, {
        organizationId: organization.id,
        processor: "stripe",
        mode,
        publishableKey: keys.publishable_key,
        secretKeyCiphertext: secrets.seal(keys.secret_key),
        secretKeyLast4: last4(keys.secret_key),
        webhookSecretCiphertext: secrets.seal(keys.webhook_secret),
        webhookSecretLast4: last4(keys.webhook_secret),
      });
    },
    true,
  );
}

/** Deletes the Stripe keys in the caller's transaction, when there are any. */
async function deleteStripeKeys(tx: Executor, organization: SettingsOrganization) {
  await deleteProcessorAccount(tx, organization.id, "stripe");
}

/**
 * The Stripe keys are deleted and test mode ends; payments already made with Stripe keep their
 * records. Donors then pay with the sandbox outside production, and in production by bank transfer
 * only (when the IBAN is set) until a processor is connected or test mode is switched on.
 */
export function disconnectStripe(
  deps: PaymentSettingsDependencies,
  organization: SettingsOrganization,
  origin: EventOrigin | undefined,
): Promise<PaymentSettingsWire> {
  return changeSettings(deps, organization, origin, async (tx) => {
    await deleteStripeKeys(tx, organization);
    await switchTestMode(tx, organization.id, false);
  });
}

async function switchTestMode(tx: Executor, organizationId: number, enabled: boolean) {
  const current = await findOrganizationById(tx, organizationId);
  if (!current || current.testMode === enabled) return;
  await updateOrganizationColumns(tx, organizationId, { testMode: enabled });
}

/**
 * Test mode, the explicit way to try giving (also in production): on, the sandbox takes the
 * organization's gifts (Stripe keys, if any, are deleted first), every page shows a test banner and
 * its gifts are test data, out of totals, raised figures and statements. Off, the sandbox stops
 * (in production donors then have bank transfer or nothing); test gifts stay marked as test.
 */
export function setPaymentTestMode(
  deps: PaymentSettingsDependencies,
  organization: SettingsOrganization,
  enabled: boolean,
  origin: EventOrigin | undefined,
): Promise<PaymentSettingsWire> {
  return changeSettings(deps, organization, origin, async (tx) => {
    if (enabled) await deleteStripeKeys(tx, organization);
    await switchTestMode(tx, organization.id, enabled);
  });
}
