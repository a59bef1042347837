import { requireRecentCheck } from "../../auth/step-up.js";
import { builder } from "../../graphql/builder.js";
import { authorize, type GraphQLContext } from "../../graphql/context.js";
import {
  connectStripe,
  disconnectStripe,
  getPaymentSettings,
  type PaymentSettingsDependencies,
  type PaymentSettingsWire,
  setPaymentTestMode,
} from "./payment-settings.service.js";

const PaymentSettingsType = builder.objectRef<PaymentSettingsWire>("PaymentSettings").implement({
  description:
    "Who processes the organization's card payments. Secrets are never returned: only their last 4 characters and the mode.",
  fields: (t) => ({
    processor: t.exposeString("processor", {
      description:
        "What donors pay by card with: stripe once keys are saved; else sandbox (no real money) in test mode or " +
        "outside production; else none (production: bank transfer only, when the IBAN is set)",
    }),
    test_mode: t.exposeBoolean("test_mode", {
      description:
        "Test mode: the sandbox takes gifts (also in production), pages show a test banner, gifts are test data",
    }),
    mode: t.exposeString("mode", { nullable: true, description: "test or live: the mode of the Stripe keys" }),
    publishable_key: t.exposeString("publishable_key", {
      nullable: true,
      description: "Stripe's publishable key (public by design: the donation page uses it)",
    }),
    secret_key_last4: t.exposeString("secret_key_last4", { nullable: true }),
    webhook_secret_last4: t.exposeString("webhook_secret_last4", { nullable: true }),
    webhook_url: t.exposeString("webhook_url", {
      description: "The endpoint to add in Stripe's dashboard (Developers → Webhooks) for this organization",
    }),
    webhook_events: t.exposeStringList("webhook_events", {
      description: "The events to select for that endpoint",
    }),
    update_date: t.exposeString("update_date", { nullable: true, description: "When the keys were last saved" }),
  }),
});

const ConnectStripeInput = builder.inputType("ConnectStripeInput", {
  description: "The keys of a Stripe account (Developers → API keys, and the webhook endpoint's signing secret)",
  fields: (t) => ({
    secret_key: t.string({ required: true, description: "sk_test_…, sk_live_… (or a restricted rk_… key)" }),
    publishable_key: t.string({ required: true, description: "pk_test_… or pk_live_…, same mode as the secret key" }),
    webhook_secret: t.string({ required: true, description: "whsec_…" }),
  }),
});

const dependencies = (context: GraphQLContext): PaymentSettingsDependencies => ({
  db: context.db,
  processors: context.processors,
  baseUrl: context.config.baseUrl,
});

const organizationOf = (context: GraphQLContext) => ({
  id: context.scope.organizationId,
  slug: context.scope.organizationSlug,
});

builder.queryFields((t) => ({
  paymentSettings: t.field({
    type: PaymentSettingsType,
    description: "The organization's payment processor settings (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:read");
      return getPaymentSettings(dependencies(context), organizationOf(context));
    },
  }),
}));

builder.mutationFields((t) => ({
  connectStripe: t.field({
    type: PaymentSettingsType,
    description:
      "Saves the organization's Stripe keys, checked first (form, test/live mode, the secret key against Stripe) and " +
      "stored encrypted; donors then pay with Stripe. Replaces keys saved before. Owners and admins only.",
    args: { input: t.arg({ type: ConnectStripeInput, required: true }) },
    resolve: (_root, { input }, context) => {
      authorize(context, "organization:manage");
      // Connecting a processor decides where donors' money goes: a recent check of who asks (step-up).
      requireRecentCheck(context.actor);
      return connectStripe(dependencies(context), organizationOf(context), input, context.scope.origin);
    },
  }),
  disconnectStripe: t.field({
    type: PaymentSettingsType,
    description:
      "Deletes the Stripe keys and ends test mode: donors pay with the sandbox outside production, by bank " +
      "transfer only in production. Owners and admins only.",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:manage");
      return disconnectStripe(dependencies(context), organizationOf(context), context.scope.origin);
    },
  }),
  setPaymentTestMode: t.field({
    type: PaymentSettingsType,
    description:
      "Test mode on: the sandbox takes gifts (Stripe keys, if any, are deleted), every page shows a test banner, " +
      "gifts are test data kept out of totals, receipts and statements. Off: the sandbox stops in production. " +
      "Owners and admins only.",
    args: { enabled: t.arg.boolean({ required: true }) },
    resolve: (_root, { enabled }, context) => {
      authorize(context, "organization:manage");
      return setPaymentTestMode(dependencies(context), organizationOf(context), enabled, context.scope.origin);
    },
  }),
}));
