import { randomBytes, randomInt } from "node:crypto";
import type { Db } from "../../src/db/client.js";
import { countInserted } from "../../src/db/collection-counts.js";
import {
  campaigns,
  checkouts,
  donations,
  installations,
  organizationProfiles,
  paymentMethods,
  payments,
  supporters,
} from "../../src/db/schema.js";
import { createApplication, PERMISSIONS } from "../../src/modules/applications/applications.service.js";
import { createOrganization } from "../../src/modules/organizations/organizations.service.js";
import { issueTokenPair } from "../../src/oauth/tokens.service.js";
import { upsertProcessorAccount } from "../../src/payments/processors/processor-accounts.repo.js";
import type { SecretBox } from "../../src/secrets/secret-box.js";

/** Lowercase hex, so ordering is the same under C and ICU/libc collations. */
export const unique = (length = 10) => randomBytes(length).toString("hex").slice(0, length);
const pickOne = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;
const amount = () => randomInt(500, 100_000) / 100;

export interface Tenant {
  organizationId: number;
  slug: string;
  applicationId: number;
  clientId: string;
  token: string;
  refreshToken: string;
}

export async function fakeTenant(
  db: Db,
  options: { permissions?: string[]; timeZone?: string; accessTokenTtlSeconds?: number; currency?: string } = {},
): Promise<Tenant> {
  const organization = await createOrganization(db, {
    slug: `org-${unique()}`,
    name: `Org ${unique(6)}`,
    timeZone: options.timeZone,
    currency: options.currency,
  });
  const application = await createApplication(db, {
    name: `App ${unique(6)}`,
    applicationUrl: "https://app.example.test/",
    callbackUrls: ["https://app.example.test/callback"],
    permissions: options.permissions ?? [...PERMISSIONS],
  });
  await db.insert(installations).values({ organizationId: organization.id, applicationId: application.id });
  await givePrivacyNotice(db, organization.id);
  const tokens = await issueTokenPair(
    db,
    { accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600, refreshTokenTtlSeconds: 86400 },
    { organizationId: organization.id, organizationSlug: organization.slug, applicationId: application.id },
  );
  return {
    organizationId: organization.id,
    slug: organization.slug,
    applicationId: application.id,
    clientId: application.client_id,
    token: tokens.access_token,
    refreshToken: tokens.refresh_token,
  };
}

/** A privacy notice in the organization's legal profile, which publishing a campaign needs (its form's consent box links to it). */
export async function givePrivacyNotice(db: Db, organizationId: number) {
  await db
    .insert(organizationProfiles)
    .values({ organizationId, privacyPolicyUrl: "https://charity.example.org/privacy" });
}

type CampaignInsert = typeof campaigns.$inferInsert;
type SupporterInsert = typeof supporters.$inferInsert;
type DonationInsert = typeof donations.$inferInsert;
type PaymentInsert = typeof payments.$inferInsert;
type CheckoutInsert = typeof checkouts.$inferInsert;
type MethodInsert = typeof paymentMethods.$inferInsert;

export async function fakeCampaign(db: Db, organizationId: number, overrides: Partial<CampaignInsert> = {}) {
  const [row] = await db
    .insert(campaigns)
    .values({
      organizationId,
      title: `campaign ${unique()}`,
      slug: `campaign-${unique()}`,
      code: unique(8),
      type: pickOne(["donation", "membership", "event"]),
      ...(randomInt(2) ? { goal: randomInt(1000, 100_000), isGoalEnabled: randomInt(2) === 1 } : {}),
      minAmount: 5,
      maxAmount: 5000,
      asks: ["10", "25", "50"],
      asksSubscription: ["5", "10"],
      tags: [pickOne(["spring", "autumn"])],
      ...(randomInt(2) ? { costExampleAmount: 10, costExampleLabel: "one school kit" } : {}),
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("campaign not inserted");
  await countInserted(db, organizationId, "campaigns");
  return row;
}

export async function fakeSupporter(db: Db, organizationId: number, overrides: Partial<SupporterInsert> = {}) {
  const first = unique(8);
  const [row] = await db
    .insert(supporters)
    .values({
      organizationId,
      firstName: first,
      lastName: unique(8),
      email: `${first}@${unique(6)}.example`,
      sex: pickOne(["MALE", "FEMALE", null]),
      dateOfBirth: randomInt(2) ? `19${randomInt(40, 99)}-0${randomInt(1, 9)}-1${randomInt(0, 9)}` : null,
      country: pickOne(["IT", "FR", "DE", null]),
      privacy: true,
      emailMarketing: randomInt(2) === 1,
      certificationUrl: `https://donata.example.test/documents/statements/${unique(12)}`,
      tags: randomInt(2) ? ["volunteer"] : [],
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("supporter not inserted");
  await countInserted(db, organizationId, "supporters");
  return row;
}

export async function fakePaymentMethod(db: Db, organizationId: number, overrides: Partial<MethodInsert> = {}) {
  const [row] = await db
    .insert(paymentMethods)
    .values({
      organizationId,
      processor: pickOne(["sandbox", "manual"]),
      label: `card ${unique(4)}`,
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("payment method not inserted");
  await countInserted(db, organizationId, "payment_methods");
  return row;
}

export async function fakeDonation(
  db: Db,
  organizationId: number,
  overrides: Partial<DonationInsert> & { supporterId: number; campaignId: number },
) {
  const [row] = await db
    .insert(donations)
    .values({
      organizationId,
      code: `don-${unique(12)}`,
      state: pickOne(["pending", "active", "done", "revoked", "past_due"]),
      amount: amount(),
      currency: "EUR",
      frequency: pickOne([0, 1, 12]),
      device: pickOne(["desktop", "mobile", "tablet", null]),
      completedDate: randomInt(2) ? new Date(Date.now() - randomInt(1, 1e9)) : null,
      receiptUrl: `https://donata.example.test/documents/receipts/${unique(12)}`,
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("donation not inserted");
  await countInserted(db, organizationId, "donations");
  return row;
}

export async function fakePayment(
  db: Db,
  organizationId: number,
  overrides: Partial<PaymentInsert> & { donationId: number },
) {
  const [row] = await db
    .insert(payments)
    .values({
      organizationId,
      state: pickOne(["PENDING", "PAID", "FAILED", "REFUNDED"]),
      amount: amount(),
      currency: "EUR",
      paymentDate: randomInt(2) ? new Date(Date.now() - randomInt(1, 1e9)) : null,
      processorIntentId: `pi_${unique(16)}`,
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("payment not inserted");
  await countInserted(db, organizationId, "payments");
  return row;
}

export async function fakeCheckout(db: Db, organizationId: number, overrides: Partial<CheckoutInsert> = {}) {
  const [row] = await db
    .insert(checkouts)
    .values({
      organizationId,
      state: pickOne(["OPEN", "CLOSED"]),
      amount: randomInt(4) ? amount() : null,
      frequency: pickOne([0, 1, 12, null]),
      costExampleQuantity: randomInt(0, 10),
      ...overrides,
    })
    .returning();
  if (!row) throw new Error("checkout not inserted");
  await countInserted(db, organizationId, "checkouts");
  return row;
}

/** A checkout with every relation: campaign, supporter, donation, payment and its method. */
export async function fakeCompletedCheckout(
  db: Db,
  organizationId: number,
  overrides: {
    checkout?: Partial<CheckoutInsert>;
    supporter?: Partial<SupporterInsert>;
    campaign?: Partial<CampaignInsert>;
    donation?: Partial<DonationInsert>;
  } = {},
) {
  const campaign = await fakeCampaign(db, organizationId, overrides.campaign);
  const supporter = await fakeSupporter(db, organizationId, overrides.supporter);
  const method = await fakePaymentMethod(db, organizationId, { supporterId: supporter.id });
  const donation = await fakeDonation(db, organizationId, {
    supporterId: supporter.id,
    campaignId: campaign.id,
    state: "done",
    ...overrides.donation,
  });
  const payment = await fakePayment(db, organizationId, {
    donationId: donation.id,
    paymentMethodId: method.id,
    state: "PAID",
    amount: donation.amount,
  });
  const checkout = await fakeCheckout(db, organizationId, {
    campaignId: campaign.id,
    supporterId: supporter.id,
    donationId: donation.id,
    paymentId: payment.id,
    state: "CLOSED",
    amount: donation.amount,
    completedDate: new Date(),
    ...overrides.checkout,
  });
  return { campaign, supporter, method, donation, payment, checkout };
}

/** Another installed application of the tenant's organization, with only the given permissions, and its token. */
export async function fakeAppToken(db: Db, tenant: Pick<Tenant, "organizationId" | "slug">, permissions: string[]) {
  const application = await createApplication(db, {
    name: `App ${unique(6)}`,
    applicationUrl: "https://app.example.test/",
    callbackUrls: ["https://app.example.test/callback"],
    permissions,
  });
  await db.insert(installations).values({ organizationId: tenant.organizationId, applicationId: application.id });
  const tokens = await issueTokenPair(
    db,
    { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86400 },
    { organizationId: tenant.organizationId, organizationSlug: tenant.slug, applicationId: application.id },
  );
  return tokens.access_token;
}

/**
 * Gives the organization a Stripe account (the stand-in accepts any sk_test_ key) with its webhook
 * secret, sealed as the settings form saves them, without asking Stripe about the key.
 */
export async function connectFakeStripeAccount(
  db: Db,
  organizationId: number,
  secrets: Pick<SecretBox, "seal">,
  options: { webhookSecret?: string; mode?: "test" | "live"; secretKey?: string } = {},
) {
  const mode = options.mode ?? "test";
  const secretKey = options.secretKey ?? `sk_${mode}_${unique(24)}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${unique(32)}`;
  const publishableKey = `pk_${mode}_${unique(24)}`;
  await upsertProcessorAccount(db, {
    organizationId,
    processor: "stripe",
    mode,
    publishableKey,
    secretKeyCiphertext: secrets.seal(secretKey),
    secretKeyLast4: secretKey.slice(-4),
    webhookSecretCiphertext: secrets.seal(webhookSecret),
    webhookSecretLast4: webhookSecret.slice(-4),
  });
  return { secretKey, publishableKey, webhookSecret, mode };
}

export type FakeStripeAccount = Awaited<ReturnType<typeof connectFakeStripeAccount>>;
