import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

// Ids come from one identity sequence per table, so they are unique platform-wide,
// while tenant tables key on (organization_id, id) for distribution by organization.
const id = () => bigint("id", { mode: "number" }).generatedByDefaultAsIdentity();
const orgId = () => bigint("organization_id", { mode: "number" }).notNull();
const ref = (name: string) => bigint(name, { mode: "number" });
const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });
const money = (name: string) => numeric(name, { precision: 14, scale: 2, mode: "number" });
const createDate = () => instant("create_date").notNull().defaultNow();
const updateDate = () => instant("update_date").notNull().defaultNow();
// Bytes: node-postgres answers a Buffer, PGlite a Uint8Array; both read back as a Buffer.
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});
const tags = () => text("tags").array().notNull().default(sql`'{}'::text[]`);

export const organizations = pgTable(
  "organizations",
  {
    id: id().primaryKey(),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    currency: text("currency").notNull().default("EUR"),
    timeZone: text("time_zone").notNull().default("UTC"),
    // Bank transfer instructions donors see after choosing the manual processor (IBAN stored compact).
    bankAccountName: text("bank_account_name"),
    iban: text("iban"),
    bic: text("bic"),
    // The estimated processing fee a donor may cover: percent of the gift plus a fixed amount.
    coverFeePercent: numeric("cover_fee_percent", { precision: 5, scale: 2, mode: "number" }).notNull().default(2.9),
    coverFeeFixed: money("cover_fee_fixed").notNull().default(0.3),
    // Email: the address donors' replies go to (and the organization's own notifications), a logo
    // shown at the top of every message, the language of messages, and notice of new gifts.
    email: text("email"),
    logoUrl: text("logo_url"),
    // Origins (scheme://host[:port]) whose pages may embed the donation page (docs/embed.md).
    embedOrigins: text("embed_origins").array().notNull().default(sql`'{}'::text[]`),
    locale: text("locale").notNull().default("en"),
    giftNotifications: text("gift_notifications").notNull().default("off"),
    // Test mode: the sandbox takes gifts (also in production), pages say so, its gifts are test data.
    testMode: boolean("test_mode").notNull().default(false),
    // Owners and admins must have a second factor (docs/accounts.md); one without is asked to enrol at sign-in.
    requireSecondFactor: boolean("require_second_factor").notNull().default(false),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    check("organizations_locale_check", sql`${t.locale} in ('en', 'it')`),
    check("organizations_gift_notifications_check", sql`${t.giftNotifications} in ('off', 'each', 'daily')`),
  ],
);

export const users = pgTable(
  "users",
  {
    id: id().primaryKey(),
    email: text("email").notNull(),
    /** argon2id; null until the user chooses one (an owner created by `donata setup` signs in by link first). */
    passwordHash: text("password_hash"),
    name: text("name"),
    // The language the user chose for the panel and the sign-in pages (src/i18n/locales.ts); null: negotiated.
    locale: text("locale"),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    uniqueIndex("users_email_key").on(sql`lower(${t.email})`),
    check("users_locale_check", sql`${t.locale} in ('en', 'it')`),
  ],
);

// A user's second factors (docs/accounts.md): an authenticator app (TOTP; its secret sealed, the last
// time step used kept so a code works once) or a passkey (WebAuthn; its public key and signature counter).
// Unconfirmed (confirmed_date null): an enrolment started and not finished, never accepted at sign-in.
export const userFactors = pgTable(
  "user_factors",
  {
    id: id().primaryKey(),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    totpSecretSealed: text("totp_secret_sealed"),
    totpLastStep: bigint("totp_last_step", { mode: "number" }),
    credentialId: text("credential_id"),
    publicKey: text("public_key"),
    signCount: bigint("sign_count", { mode: "number" }).notNull().default(0),
    transports: text("transports").array().notNull().default(sql`'{}'::text[]`),
    confirmedDate: instant("confirmed_date"),
    lastUsedDate: instant("last_used_date"),
    createDate: createDate(),
  },
  (t) => [
    index("user_factors_user_idx").on(t.userId),
    uniqueIndex("user_factors_credential_id_key").on(t.credentialId),
    check("user_factors_kind_check", sql`kind in ('totp', 'passkey')`),
  ],
);

// Ten single-use recovery codes per user with a second factor; only their hashes are stored.
export const recoveryCodes = pgTable(
  "recovery_codes",
  {
    id: id().primaryKey(),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedDate: instant("used_date"),
    createDate: createDate(),
  },
  (t) => [index("recovery_codes_user_idx").on(t.userId)],
);

// A WebAuthn challenge waiting for its answer (passkey sign-in, enrolment, a step-up): the browser holds a
// random token (cookie), the row its hash; used once, within minutes.
export const identityChallenges = pgTable(
  "identity_challenges",
  {
    id: id().primaryKey(),
    tokenHash: text("token_hash").notNull(),
    userId: ref("user_id").references(() => users.id, { onDelete: "cascade" }),
    purpose: text("purpose").notNull(),
    challenge: text("challenge").notNull(),
    expiresDate: instant("expires_date").notNull(),
    usedDate: instant("used_date"),
    createDate: createDate(),
  },
  (t) => [
    uniqueIndex("identity_challenges_token_hash_key").on(t.tokenHash),
    check("identity_challenges_purpose_check", sql`purpose in ('sign_in', 'enrol', 'verify')`),
  ],
);

// One-time links that sign a user in to choose a password (`donata setup`, `donata user link`); only hashes stored.
export const userSignInLinks = pgTable(
  "user_sign_in_links",
  {
    id: id().primaryKey(),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    purpose: text("purpose").notNull(),
    expiresDate: instant("expires_date").notNull(),
    usedDate: instant("used_date"),
    createDate: createDate(),
  },
  (t) => [
    uniqueIndex("user_sign_in_links_token_hash_key").on(t.tokenHash),
    index("user_sign_in_links_user_idx").on(t.userId),
    check("user_sign_in_links_purpose_check", sql`${t.purpose} in ('setup', 'reset')`),
  ],
);

export const memberships = pgTable(
  "memberships",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId] }),
    index("memberships_user_idx").on(t.userId),
    check("memberships_role_check", sql`${t.role} in ('owner', 'admin', 'member')`),
  ],
);

export const applications = pgTable(
  "applications",
  {
    id: id().primaryKey(),
    clientId: text("client_id").notNull().unique(),
    // RFC 6749 §2.1: a public client (single-page or mobile app) holds no secret.
    clientType: text("client_type").$type<"confidential" | "public">().notNull().default("confidential"),
    clientSecretHash: text("client_secret_hash"),
    name: text("name").notNull(),
    applicationUrl: text("application_url").notNull(),
    callbackUrls: text("callback_urls").array().notNull(),
    permissions: text("permissions").array().notNull(),
    // The organization whose admins manage the registration; null for platform-registered apps.
    ownerOrganizationId: ref("owner_organization_id").references(() => organizations.id, { onDelete: "set null" }),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    check("applications_client_type_check", sql`${t.clientType} in ('confidential', 'public')`),
    check("applications_client_secret_check", sql`(${t.clientType} = 'public') = (${t.clientSecretHash} is null)`),
  ],
);

export const installations = pgTable(
  "installations",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    applicationId: ref("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("installations_org_app_key").on(t.organizationId, t.applicationId),
  ],
);

// One row per issued access/refresh pair. Rows issued by rotating a refresh token share
// family_id, so reuse of a spent refresh token can revoke the whole family.
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    applicationId: ref("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    userId: ref("user_id").references(() => users.id, { onDelete: "set null" }),
    familyId: ref("family_id").notNull(),
    parentId: ref("parent_id"),
    authorizationCodeId: ref("authorization_code_id"),
    accessTokenHash: text("access_token_hash").notNull(),
    refreshTokenHash: text("refresh_token_hash").notNull(),
    // The permissions this grant narrowed the application's to; null: all the application's.
    scope: text("scope").array(),
    accessExpiresDate: instant("access_expires_date").notNull(),
    refreshExpiresDate: instant("refresh_expires_date").notNull(),
    refreshUsedDate: instant("refresh_used_date"),
    revokedDate: instant("revoked_date"),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("oauth_tokens_access_hash_key").on(t.accessTokenHash),
    uniqueIndex("oauth_tokens_refresh_hash_key").on(t.refreshTokenHash),
    index("oauth_tokens_family_idx").on(t.organizationId, t.familyId),
    index("oauth_tokens_app_idx").on(t.organizationId, t.applicationId),
  ],
);

export const oauthAuthorizationCodes = pgTable(
  "oauth_authorization_codes",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    applicationId: ref("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    // The scope asked for at authorization; null: all the application's permissions.
    scope: text("scope").array(),
    expiresDate: instant("expires_date").notNull(),
    usedDate: instant("used_date"),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("oauth_authorization_codes_hash_key").on(t.codeHash),
  ],
);

export const campaigns = pgTable(
  "campaigns",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    updateDate: updateDate(),
    title: text("title").notNull(),
    slug: text("slug"),
    code: text("code"),
    type: text("type").notNull().default("donation"),
    goal: money("goal"),
    isGoalEnabled: boolean("is_goal_enabled").notNull().default(false),
    hasOneOff: boolean("has_one_off").notNull().default(true),
    hasSubscription: boolean("has_subscription").notNull().default(true),
    allowCustomAmount: boolean("allow_custom_amount").notNull().default(true),
    allowCustomSubscriptionAmount: boolean("allow_custom_subscription_amount").notNull().default(true),
    defaultAmount: money("default_amount"),
    defaultSubscriptionAmount: money("default_subscription_amount"),
    minAmount: money("min_amount"),
    maxAmount: money("max_amount"),
    minSubscriptionAmount: money("min_subscription_amount"),
    maxSubscriptionAmount: money("max_subscription_amount"),
    asks: numeric("asks", { precision: 14, scale: 2 }).array(),
    asksSubscription: numeric("asks_subscription", { precision: 14, scale: 2 }).array(),
    shownFields: text("shown_fields").array(),
    requiredFields: text("required_fields").array(),
    privacyNote: text("privacy_note"),
    tags: tags(),
    costExampleAmount: money("cost_example_amount"),
    costExampleLabel: text("cost_example_label"),
    allowCoverFee: boolean("allow_cover_fee").notNull().default(false),
    archiveDate: instant("archive_date"),
    // The page's content (docs/campaigns.md): a Markdown story, a cover image (one of src/images,
    // by its absolute address), draft or published, and the dates it takes gifts between.
    story: text("story"),
    coverImageUrl: text("cover_image_url"),
    status: text("status").notNull().default("published"),
    startDate: instant("start_date"),
    endDate: instant("end_date"),
    // A line of impact for suggested amounts: [{ amount: "30.00", recurring: false, text }].
    askImpacts: jsonb("ask_impacts").notNull().default(sql`'[]'::jsonb`),
    // The campaign's own questions: [{ key, type, label, required, options? }] (campaign-questions.ts).
    questions: jsonb("questions").notNull().default(sql`'[]'::jsonb`),
    allowTribute: boolean("allow_tribute").notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("campaigns_slug_key").on(t.organizationId, t.slug),
    index("campaigns_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("campaigns_update_date_idx").on(t.organizationId, t.updateDate, t.id),
    check("campaigns_status_check", sql`${t.status} in ('draft', 'published')`),
  ],
);

export const supporters = pgTable(
  "supporters",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    updateDate: updateDate(),
    image: text("image"),
    code: text("code"),
    businessName: text("business_name"),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    phone: text("phone"),
    mobile: text("mobile"),
    job: text("job"),
    sex: text("sex"),
    dateOfBirth: date("date_of_birth", { mode: "string" }),
    placeOfBirth: text("place_of_birth"),
    ssn: text("ssn"),
    vat: text("vat"),
    address: text("address"),
    address2: text("address2"),
    city: text("city"),
    locality: text("locality"),
    country: text("country"),
    postalCode: text("postal_code"),
    privacy: boolean("privacy"),
    emailMarketing: boolean("email_marketing"),
    phoneMarketing: boolean("phone_marketing"),
    smsMarketing: boolean("sms_marketing"),
    postalMarketing: boolean("postal_marketing"),
    profilationMarketing: boolean("profilation_marketing"),
    tags: tags(),
    note: text("note"),
    eraseDate: instant("erase_date"),
    // A signed link to the supporter's yearly statement, set with their first paid donation.
    certificationUrl: text("certification_url"),
    // The language of the donor's last checkout (src/i18n/locales.ts): their emails and documents speak it.
    locale: text("locale"),
    // The supporter's id on the platform it was imported from (docs/import.md): importing again matches it.
    externalId: text("external_id"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("supporters_external_id_key")
      .on(t.organizationId, t.externalId)
      // Bare: on a Citus cluster the predicate is run on each shard, whose table has another name.
      .where(sql`external_id is not null`),
    index("supporters_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("supporters_email_idx").on(t.organizationId, sql`lower(${t.email})`),
    // Statement links issued before the organization was in their path carry the id alone.
    index("supporters_id_idx").on(t.id),
    check("supporters_sex_check", sql`${t.sex} in ('MALE', 'FEMALE')`),
    check("supporters_locale_check", sql`${t.locale} in ('en', 'it')`),
  ],
);

export const paymentMethods = pgTable(
  "payment_methods",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    updateDate: updateDate(),
    supporterId: ref("supporter_id"),
    processor: text("processor").notNull(),
    label: text("label").notNull(),
    // The adapter's own reference for charging this method again (never a card number).
    processorReference: text("processor_reference"),
    // A card's expiry (kept current by the processor's events), to warn before a renewal fails.
    expiryMonth: smallint("expiry_month"),
    expiryYear: smallint("expiry_year"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "payment_methods_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    index("payment_methods_supporter_idx").on(t.organizationId, t.supporterId),
  ],
);

export const donations = pgTable(
  "donations",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    supporterId: ref("supporter_id").notNull(),
    campaignId: ref("campaign_id").notNull(),
    code: text("code").notNull(),
    state: text("state").notNull().default("draft"),
    amount: money("amount").notNull(),
    // The processing fee the donor added: each payment charges amount + covered_fee.
    coveredFee: money("covered_fee").notNull().default(0),
    currency: text("currency").notNull(),
    frequency: smallint("frequency"),
    note: text("note"),
    completedDate: instant("completed_date"),
    createDate: createDate(),
    updateDate: updateDate(),
    device: text("device"),
    tags: tags(),
    // Recurring billing: the method renewals charge, the next cycle's due date, failures in a row.
    paymentMethodId: ref("payment_method_id"),
    nextChargeDate: instant("next_charge_date"),
    failureCount: smallint("failure_count").notNull().default(0),
    // Billing cycles never charged: after an outage a renewal covers the overdue cycles once, and the
    // cycles it jumped over are listed here for the donation's page.
    skippedCycles: integer("skipped_cycles").array().notNull().default(sql`'{}'::integer[]`),
    // A pause the donor or an admin asked for: no renewal is charged before this date.
    pausedUntil: instant("paused_until"),
    // Why a recurring gift stopped, and who stopped it ("donor", "admin", "failed_payments").
    cancelReason: text("cancel_reason"),
    cancelledBy: text("cancelled_by"),
    // A signed link to the receipt, set when the donation is first paid.
    receiptUrl: text("receipt_url"),
    // Made with the sandbox in test mode: no real money; kept out of totals and statements.
    test: boolean("test").notNull().default(false),
    // A gift in honour or in memory of someone ("honor" | "memory"), and who is told of it by email.
    tributeType: text("tribute_type"),
    tributeName: text("tribute_name"),
    tributeMessage: text("tribute_message"),
    tributeRecipientName: text("tribute_recipient_name"),
    tributeRecipientEmail: text("tribute_recipient_email"),
    // The donor's name as typed with this gift: the only name the recipient's notice shows.
    tributeDonorName: text("tribute_donor_name"),
    // Answers to the campaign's questions, with each question as it was asked: [{ key, label, type, value }].
    answers: jsonb("answers"),
    // The gift's id on the platform it was imported from (docs/import.md): a re-import matches it.
    externalId: text("external_id"),
    // An imported recurring gift charges nobody until an admin turns it on: "awaiting" until then,
    // "card_requested" once its donor was sent a link to set up a card (no usable method came with it).
    activation: text("activation"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    check("donations_tribute_type_check", sql`${t.tributeType} in ('honor', 'memory')`),
    check("donations_activation_check", sql`${t.activation} in ('awaiting', 'card_requested')`),
    uniqueIndex("donations_external_id_key").on(t.organizationId, t.externalId).where(sql`external_id is not null`),
    foreignKey({
      name: "donations_payment_method_fk",
      columns: [t.organizationId, t.paymentMethodId],
      foreignColumns: [paymentMethods.organizationId, paymentMethods.id],
    }),
    foreignKey({
      name: "donations_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    foreignKey({
      name: "donations_campaign_fk",
      columns: [t.organizationId, t.campaignId],
      foreignColumns: [campaigns.organizationId, campaigns.id],
    }),
    uniqueIndex("donations_code_key").on(t.organizationId, t.code),
    // Receipt links issued before the organization was in their path carry the id alone.
    index("donations_id_idx").on(t.id),
    index("donations_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("donations_supporter_idx").on(t.organizationId, t.supporterId),
    index("donations_campaign_idx").on(t.organizationId, t.campaignId),
    index("donations_state_idx").on(t.organizationId, t.state, t.createDate, t.id),
    // The worker's daily look ahead at recurring gifts (cards expiring before their next charge).
    index("donations_next_charge_idx").on(t.nextChargeDate).where(sql`${t.state} in ('active', 'past_due')`),
    check("donations_state_check", sql`${t.state} in ('draft', 'pending', 'active', 'past_due', 'done', 'revoked')`),
    check("donations_frequency_check", sql`${t.frequency} in (0, 1, 12)`),
    check("donations_amount_check", sql`${t.amount} > 0`),
    check("donations_device_check", sql`${t.device} in ('desktop', 'mobile', 'tablet')`),
  ],
);

export const payments = pgTable(
  "payments",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    donationId: ref("donation_id").notNull(),
    state: text("state").notNull().default("PENDING"),
    amount: money("amount").notNull(),
    currency: text("currency").notNull(),
    paymentDate: instant("payment_date"),
    paymentMethodId: ref("payment_method_id"),
    processorIntentId: text("processor_intent_id"),
    createDate: createDate(),
    updateDate: updateDate(),
    // Why the processor refused the charge (FAILED payments only).
    failureCode: text("failure_code"),
    failureMessage: text("failure_message"),
    refundDate: instant("refund_date"),
    // The key the processor knows the charge by, while and after it is asked for the money.
    idempotencyKey: text("idempotency_key"),
    // The renewal's billing cycle (null for a first charge), so a late outcome settles the right cycle.
    billingCycle: integer("billing_cycle"),
    // A refund asked of the processor and not yet settled (the reconciler finishes it after a crash).
    refundRequestDate: instant("refund_request_date"),
    // What refunds the processor confirmed add up to (the payment is REFUNDED once it reaches the amount).
    amountRefunded: money("amount_refunded").notNull().default(0),
    // A chargeback the donor's bank opened, as the processor reports it (its id, status and reason).
    disputeId: text("dispute_id"),
    disputeStatus: text("dispute_status"),
    disputeReason: text("dispute_reason"),
    disputeAmount: money("dispute_amount"),
    disputeDate: instant("dispute_date"),
    // A charge of a test donation (the sandbox in test mode): no real money moved.
    test: boolean("test").notNull().default(false),
    // The payment's id on the platform it was imported from (docs/import.md): a re-import matches it.
    externalId: text("external_id"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "payments_donation_fk",
      columns: [t.organizationId, t.donationId],
      foreignColumns: [donations.organizationId, donations.id],
    }),
    foreignKey({
      name: "payments_payment_method_fk",
      columns: [t.organizationId, t.paymentMethodId],
      foreignColumns: [paymentMethods.organizationId, paymentMethods.id],
    }),
    index("payments_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("payments_donation_idx").on(t.organizationId, t.donationId),
    index("payments_state_idx").on(t.organizationId, t.state, t.createDate, t.id),
    // Processor events (webhooks) find a payment by its key or the processor's charge id.
    index("payments_idempotency_key_idx").on(t.idempotencyKey).where(sql`${t.idempotencyKey} is not null`),
    index("payments_processor_intent_idx").on(t.processorIntentId).where(sql`${t.processorIntentId} is not null`),
    index("payments_unsettled_idx")
      .on(t.updateDate)
      .where(sql`(${t.state} = 'PENDING' and ${t.idempotencyKey} is not null) or ${t.refundRequestDate} is not null`),
    uniqueIndex("payments_external_id_key").on(t.organizationId, t.externalId).where(sql`external_id is not null`),
    check("payments_state_check", sql`${t.state} in ('PENDING', 'PAID', 'REFUNDED', 'FAILED')`),
    check("payments_amount_check", sql`${t.amount} > 0`),
    check("payments_amount_refunded_check", sql`${t.amountRefunded} >= 0 and ${t.amountRefunded} <= ${t.amount}`),
  ],
);

// Refunds asked of a payment's processor, full or partial: recorded PENDING with their key before the
// processor is called, SUCCEEDED or FAILED when it confirms (a bank debit's refund takes days).
export const refunds = pgTable(
  "refunds",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    paymentId: ref("payment_id").notNull(),
    state: text("state").notNull().default("PENDING"),
    amount: money("amount").notNull(),
    currency: text("currency").notNull(),
    // The key the processor knows the refund by (asking again never refunds twice).
    idempotencyKey: text("idempotency_key").notNull(),
    processorRefundId: text("processor_refund_id"),
    failureMessage: text("failure_message"),
    // Who asked: a user, an application, or the processor's dashboard (learnt from its events).
    origin: text("origin").notNull().default("api"),
    createDate: createDate(),
    updateDate: updateDate(),
    settleDate: instant("settle_date"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "refunds_payment_fk",
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }).onDelete("cascade"),
    index("refunds_payment_idx").on(t.organizationId, t.paymentId),
    uniqueIndex("refunds_idempotency_key_idx").on(t.organizationId, t.idempotencyKey),
    index("refunds_processor_refund_idx").on(t.processorRefundId).where(sql`${t.processorRefundId} is not null`),
    index("refunds_pending_idx").on(t.updateDate).where(sql`${t.state} = 'PENDING'`),
    check("refunds_state_check", sql`${t.state} in ('PENDING', 'SUCCEEDED', 'FAILED')`),
    check("refunds_amount_check", sql`${t.amount} > 0`),
  ],
);

export const checkouts = pgTable(
  "checkouts",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    updateDate: updateDate(),
    campaignId: ref("campaign_id"),
    supporterId: ref("supporter_id"),
    donationId: ref("donation_id"),
    paymentId: ref("payment_id"),
    state: text("state").notNull().default("OPEN"),
    amount: money("amount"),
    completedDate: instant("completed_date"),
    frequency: smallint("frequency"),
    costExampleQuantity: integer("cost_example_quantity").notNull().default(0),
    // Hash of the secret the donor's browser holds to complete this checkout (public flow only).
    clientSecretHash: text("client_secret_hash"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "checkouts_campaign_fk",
      columns: [t.organizationId, t.campaignId],
      foreignColumns: [campaigns.organizationId, campaigns.id],
    }),
    foreignKey({
      name: "checkouts_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    foreignKey({
      name: "checkouts_donation_fk",
      columns: [t.organizationId, t.donationId],
      foreignColumns: [donations.organizationId, donations.id],
    }),
    foreignKey({
      name: "checkouts_payment_fk",
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }),
    index("checkouts_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("checkouts_update_date_idx").on(t.organizationId, t.updateDate, t.id),
    index("checkouts_state_idx").on(t.organizationId, t.state, t.createDate, t.id),
    index("checkouts_campaign_idx").on(t.organizationId, t.campaignId),
    index("checkouts_supporter_idx").on(t.organizationId, t.supporterId),
    check("checkouts_state_check", sql`${t.state} in ('OPEN', 'CLOSED')`),
    check("checkouts_frequency_check", sql`${t.frequency} in (0, 1, 12)`),
    check("checkouts_amount_check", sql`${t.amount} > 0`),
  ],
);

// Exact row counts per organization and collection, kept by the inserting repositories in the
// inserting transaction (src/db/collection-counts.ts), so an unfiltered list never scans to count.
export const collectionCounts = pgTable(
  "collection_counts",
  {
    organizationId: orgId(),
    collection: text("collection").notNull(),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.collection] })],
);

// Browser sessions of the authorization server and the admin panel; the cookie holds a random
// token and only its hash is stored.
export const sessions = pgTable(
  "sessions",
  {
    id: id().primaryKey(),
    tokenHash: text("token_hash").notNull(),
    userId: ref("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    expiresDate: instant("expires_date").notNull(),
    // "active"; "second_factor": the password was right, a second factor is still to come; "enrol": the
    // organization requires a second factor the user has yet to set up. Only an active session is signed in.
    stage: text("stage").notNull().default("active"),
    // The last time the user proved it was them in this session (password, second factor): step-up asks again after 10 minutes.
    verifiedDate: instant("verified_date").notNull().defaultNow(),
    // The session was confirmed with a second factor (or a passkey).
    secondFactor: boolean("second_factor").notNull().default(false),
    // Where the session is used (the sessions page): the browser's User-Agent, the address, the last request.
    userAgent: text("user_agent"),
    ipAddress: text("ip_address"),
    lastSeenDate: instant("last_seen_date").notNull().defaultNow(),
    createDate: createDate(),
  },
  (t) => [
    uniqueIndex("sessions_token_hash_key").on(t.tokenHash),
    index("sessions_user_idx").on(t.userId),
    check("sessions_stage_check", sql`stage in ('active', 'second_factor', 'enrol')`),
  ],
);

// Background work claimed with FOR UPDATE SKIP LOCKED, so several workers never run one job twice.
// kind "renewal": subject_id is a recurring donation, payload.cycle the billing cycle to charge.
export const jobs = pgTable(
  "jobs",
  {
    id: id().primaryKey(),
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    subjectId: ref("subject_id").notNull(),
    payload: jsonb("payload").notNull().default(sql`'{}'::jsonb`),
    state: text("state").notNull().default("queued"),
    runDate: instant("run_date").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    index("jobs_due_idx").on(t.runDate).where(sql`${t.state} = 'queued'`),
    uniqueIndex("jobs_queued_subject_key").on(t.organizationId, t.kind, t.subjectId).where(sql`${t.state} = 'queued'`),
    check("jobs_state_check", sql`${t.state} in ('queued', 'done', 'cancelled', 'failed')`),
  ],
);

// Responses of write requests sent with an Idempotency-Key, replayed to retries of the same request.
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    status: integer("status").notNull(),
    body: jsonb("body").notNull(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.scope, t.key] }),
    index("idempotency_keys_create_date_idx").on(t.createDate),
  ],
);

// Keys the platform generates for itself (signing document links); created on first start.
export const platformKeys = pgTable("platform_keys", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createDate: createDate(),
});

// Counters of the rate limiters (rate-limiter-flexible's Drizzle store): one row per limiter key,
// incremented by one atomic upsert, so every process sharing the database sees the same count.
export const rateLimits = pgTable("rate_limits", {
  key: text("key").primaryKey(),
  points: integer("points").notNull().default(0),
  expire: instant("expire"),
});

// Declined completions of public checkouts: what an admin needs to see a card-testing attack,
// without a supporter, donation or payment written from attack traffic. Fingerprints are keyed
// hashes (HMAC with a platform key): the card number and the client IP are never stored.
export const checkoutAttempts = pgTable(
  "checkout_attempts",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    checkoutId: ref("checkout_id").notNull(),
    campaignId: ref("campaign_id"),
    amount: money("amount").notNull(),
    coveredFee: money("covered_fee").notNull().default(0),
    processor: text("processor").notNull(),
    // PENDING (recorded, the processor may be charging) → SUCCEEDED | DECLINED | ABANDONED (never charged).
    state: text("state").notNull().default("DECLINED"),
    failureCode: text("failure_code"),
    failureMessage: text("failure_message"),
    cardLabel: text("card_label"),
    cardFingerprint: text("card_fingerprint"),
    clientFingerprint: text("client_fingerprint"),
    frequency: smallint("frequency"),
    // The key the processor knows the charge by, derived from the attempt.
    idempotencyKey: text("idempotency_key"),
    processorIntentId: text("processor_intent_id"),
    // The client's Idempotency-Key and request fingerprint, so its retry resumes this attempt.
    requestKey: text("request_key"),
    requestHash: text("request_hash"),
    // What settling needs (supporter fields, consents, method reference, device); never the card
    // number, and cleared when the attempt is settled, so a declined row keeps no personal data.
    gift: jsonb("gift"),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "checkout_attempts_checkout_fk",
      columns: [t.organizationId, t.checkoutId],
      foreignColumns: [checkouts.organizationId, checkouts.id],
    }).onDelete("cascade"),
    index("checkout_attempts_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("checkout_attempts_checkout_idx").on(t.organizationId, t.checkoutId),
    index("checkout_attempts_idempotency_key_idx").on(t.idempotencyKey).where(sql`${t.idempotencyKey} is not null`),
    index("checkout_attempts_pending_idx").on(t.updateDate).where(sql`${t.state} = 'PENDING'`),
    check("checkout_attempts_state_check", sql`${t.state} in ('PENDING', 'SUCCEEDED', 'DECLINED', 'ABANDONED')`),
  ],
);

// The sandbox processor's own ledger: what it charged and refunded, by idempotency key, so that a
// retry or the reconciler in another process learns the real outcome (a real processor keeps this).
export const sandboxCharges = pgTable("sandbox_charges", {
  idempotencyKey: text("idempotency_key").primaryKey(),
  intentId: text("intent_id").notNull().unique(),
  state: text("state").notNull(),
  // In the currency's ISO 4217 minor units, as processors are sent amounts (cents for EUR, yen for JPY).
  amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
  currency: text("currency").notNull(),
  failureCode: text("failure_code"),
  failureMessage: text("failure_message"),
  refundDate: instant("refund_date"),
  createDate: createDate(),
});

// Whether the organization's donation form asks for a proof-of-work challenge: forced by an
// admin, or on until `challengeUntil` after a spike of declines.
export const checkoutProtection = pgTable("checkout_protection", {
  organizationId: bigint("organization_id", { mode: "number" })
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  challengeForced: boolean("challenge_forced").notNull().default(false),
  challengeUntil: instant("challenge_until"),
  lastSpikeDate: instant("last_spike_date"),
  changedByUserId: ref("changed_by_user_id").references(() => users.id, { onDelete: "set null" }),
  changedDate: instant("changed_date"),
  updateDate: updateDate(),
});

// An organization's own account at a payment processor (Stripe): its keys, the secret ones
// encrypted at rest (AES-256-GCM, src/secrets/secret-box.ts), and only their last four characters in clear.
export const processorAccounts = pgTable(
  "processor_accounts",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    processor: text("processor").notNull(),
    mode: text("mode").notNull(),
    publishableKey: text("publishable_key").notNull(),
    secretKeyCiphertext: text("secret_key_ciphertext").notNull(),
    secretKeyLast4: text("secret_key_last4").notNull(),
    webhookSecretCiphertext: text("webhook_secret_ciphertext").notNull(),
    webhookSecretLast4: text("webhook_secret_last4").notNull(),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.processor] }),
    check("processor_accounts_mode_check", sql`${t.mode} in ('test', 'live')`),
  ],
);

// Events a processor sent to the organization's webhook endpoint, each kept once: a replay or a
// duplicate delivery finds its id here and changes nothing.
export const processorEvents = pgTable(
  "processor_events",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    processor: text("processor").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    // What the event did: settled, ignored (an object Donata does not know), …
    outcome: text("outcome").notNull(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.processor, t.eventId] }),
    index("processor_events_create_date_idx").on(t.organizationId, t.createDate),
  ],
);

// An organization's event counter: the event insert takes this row's lock until its transaction
// commits, so an organization's events are numbered gap-free in commit order (the feed's cursor).
// `pruned_through`: events up to this number are past retention (a cursor before it is gone).
export const eventSequences = pgTable(
  "event_sequences",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    lastSeq: bigint("last_seq", { mode: "number" }).notNull().default(0),
    prunedThrough: bigint("pruned_through", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId] })],
);

// The one record of every change (src/events/): written in the transaction that makes the change.
// `data` is the resource as the REST API returns it by id (settings: the fields before and after).
export const events = pgTable(
  "events",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    seq: bigint("seq", { mode: "number" }).notNull(),
    // evt_…: the public id (and a webhook's webhook-id)
    id: text("id").notNull(),
    type: text("type").notNull(),
    resourceType: text("resource_type").notNull(),
    resourceId: ref("resource_id"),
    actor: jsonb("actor").notNull(),
    requestId: text("request_id"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    data: jsonb("data").notNull(),
    // What an update changed, field by field: { field: { before, after } } (secrets never, only what the API shows).
    changes: jsonb("changes"),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.seq] }),
    uniqueIndex("events_id_key").on(t.organizationId, t.id),
    index("events_type_idx").on(t.organizationId, t.type, t.seq),
    index("events_resource_idx").on(t.organizationId, t.resourceType, t.resourceId),
    index("events_create_date_idx").on(t.organizationId, t.createDate),
  ],
);

// Every email the platform sends, written in the transaction of the event that causes it and
// delivered by the worker (SMTP, or kept as "captured" without SMTP_URL). The message is rendered
// when it is delivered; `data` is what its template needs, taken when the event happened.
export const outboxMessages = pgTable(
  "outbox_messages",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    updateDate: updateDate(),
    // The template: receipt, recurring_welcome, renewal_failed, card_expiring, …
    kind: text("kind").notNull(),
    toAddress: text("to_address").notNull(),
    supporterId: ref("supporter_id"),
    donationId: ref("donation_id"),
    data: jsonb("data").notNull().default({}),
    // One message per event: a second enqueue with the same key is a no-op (statement runs resume).
    dedupeKey: text("dedupe_key"),
    state: text("state").notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptDate: instant("next_attempt_date").notNull().defaultNow(),
    lastError: text("last_error"),
    // What was delivered (or captured): filled in by the delivery.
    subject: text("subject"),
    html: text("html"),
    text: text("text"),
    headers: jsonb("headers"),
    messageId: text("message_id"),
    sentDate: instant("sent_date"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("outbox_messages_dedupe_key").on(t.organizationId, t.dedupeKey),
    index("outbox_messages_due_idx").on(t.nextAttemptDate).where(sql`${t.state} in ('queued', 'sending')`),
    index("outbox_messages_create_date_idx").on(t.organizationId, t.createDate, t.id),
    index("outbox_messages_supporter_idx").on(t.organizationId, t.supporterId),
    check(
      "outbox_messages_state_check",
      sql`${t.state} in ('queued', 'sending', 'sent', 'captured', 'failed', 'cancelled')`,
    ),
  ],
);

// Donor portal sign-in links (from the sign-in form: single use, 15 minutes; from a receipt email:
// longer-lived) and donor sessions. The link or cookie holds a random token; only its hash is stored.
// A donor is an email address within one organization.
export const donorLinks = pgTable(
  "donor_links",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    tokenHash: text("token_hash").notNull(),
    email: text("email").notNull(),
    purpose: text("purpose").notNull(),
    expiresDate: instant("expires_date").notNull(),
    usedDate: instant("used_date"),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("donor_links_token_hash_key").on(t.organizationId, t.tokenHash),
    check("donor_links_purpose_check", sql`${t.purpose} in ('sign_in', 'receipt')`),
  ],
);

export const donorSessions = pgTable(
  "donor_sessions",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    tokenHash: text("token_hash").notNull(),
    email: text("email").notNull(),
    csrfToken: text("csrf_token").notNull(),
    expiresDate: instant("expires_date").notNull(),
    userAgent: text("user_agent"),
    ipAddress: text("ip_address"),
    lastSeenDate: instant("last_seen_date").notNull().defaultNow(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("donor_sessions_token_hash_key").on(t.organizationId, t.tokenHash),
  ],
);

// What a supporter declared about their consents, when and through what. A gift's declaration
// (source "checkout") is kept with the gift; it becomes the supporter's consents only when the gift
// created the supporter (`applied`): an existing supporter's consents change only in the donor
// portal or by an admin, never because someone gave with their email.
export const consentRecords = pgTable(
  "consent_records",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    createDate: createDate(),
    supporterId: ref("supporter_id").notNull(),
    donationId: ref("donation_id"),
    source: text("source").notNull(),
    // { privacy: true, email_marketing: false, … }: only the consents declared.
    consents: jsonb("consents").notNull(),
    applied: boolean("applied").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "consent_records_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    foreignKey({
      name: "consent_records_donation_fk",
      columns: [t.organizationId, t.donationId],
      foreignColumns: [donations.organizationId, donations.id],
    }),
    index("consent_records_supporter_idx").on(t.organizationId, t.supporterId, t.id),
    check("consent_records_source_check", sql`${t.source} in ('checkout', 'import')`),
  ],
);

// Dated notes about a supporter, each with its author: the member who wrote it (null when an
// application wrote it), and their name as it was, which stays when the member leaves.
export const supporterNotes = pgTable(
  "supporter_notes",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    supporterId: ref("supporter_id").notNull(),
    authorUserId: ref("author_user_id").references(() => users.id, { onDelete: "set null" }),
    authorName: text("author_name").notNull(),
    body: text("body").notNull(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      name: "supporter_notes_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }).onDelete("cascade"),
    index("supporter_notes_supporter_idx").on(t.organizationId, t.supporterId, t.id),
    // Bare: on a Citus cluster the predicate is run on each shard, whose table has another name.
    check("supporter_notes_body_check", sql`char_length(body) between 1 and 5000`),
  ],
);

// Supporters merged into another (docs/admin.md): the merged row is gone, its id answers 404, and
// this says where its gifts, consents and notes went (a later merge of the kept one moves the pointer on).
export const supporterMerges = pgTable(
  "supporter_merges",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    mergedId: ref("merged_id").notNull(),
    keptId: ref("kept_id").notNull(),
    mergeDate: instant("merge_date").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.mergedId] }),
    foreignKey({
      name: "supporter_merges_kept_fk",
      columns: [t.organizationId, t.keptId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    index("supporter_merges_kept_idx").on(t.organizationId, t.keptId),
  ],
);

// Saved segments (docs/admin.md): a named set of one collection table's filters, kept as the
// table's URL carries them ({ "country": "IT", "tag": "volunteer" }); names are unique in any case.
export const segments = pgTable(
  "segments",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    collection: text("collection").notNull(),
    name: text("name").notNull(),
    filters: jsonb("filters").$type<Record<string, string>>().notNull(),
    createdBy: ref("created_by").references(() => users.id, { onDelete: "set null" }),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("segments_name_key").on(t.organizationId, t.collection, sql`lower(${t.name})`),
    // Bare: on a Citus cluster the predicate is run on each shard, whose table has another name.
    check(
      "segments_collection_check",
      sql`collection in ('campaigns', 'supporters', 'donations', 'payments', 'checkouts')`,
    ),
    check("segments_name_check", sql`char_length(name) between 1 and 80`),
  ],
);

// An application's webhook endpoints: where an installation wants the organization's events sent.
// The signing secret is sealed (it must be read back to sign); after a rotation the previous one
// signs too until `previous_secret_expire_date`. `dispatched_seq` is how far in the organization's
// events the endpoint has been given its deliveries (the worker moves it, in commit order).
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    installationId: ref("installation_id").notNull(),
    applicationId: ref("application_id").notNull(),
    url: text("url").notNull(),
    description: text("description"),
    eventTypes: text("event_types").array().notNull(),
    // What the token that saved it was granted: the endpoint is sent no type beyond it (nor beyond the application's).
    permissions: text("permissions").array().notNull(),
    // enabled: delivered; paused (by a member): deliveries wait; disabled: failing 5 days, nothing new.
    status: text("status").notNull().default("enabled"),
    disabledReason: text("disabled_reason"),
    secretSealed: text("secret_sealed").notNull(),
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpireDate: instant("previous_secret_expire_date"),
    dispatchedSeq: bigint("dispatched_seq", { mode: "number" }).notNull().default(0),
    // Since when every attempt has failed (null: the last one succeeded, or none yet).
    failingSince: instant("failing_since"),
    lastFailureDate: instant("last_failure_date"),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      columns: [t.organizationId, t.installationId],
      foreignColumns: [installations.organizationId, installations.id],
    }).onDelete("cascade"),
    index("webhook_endpoints_installation_idx").on(t.organizationId, t.installationId),
    check("webhook_endpoints_status_check", sql`${t.status} in ('enabled', 'paused', 'disabled')`),
  ],
);

// One event to one endpoint. `pending` waits for `next_attempt_date`; `sending` is leased to a
// worker until `next_attempt_date` (a worker that dies leaves it due again); the webhook-id is the
// event's id, the same on every attempt.
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    endpointId: ref("endpoint_id").notNull(),
    eventSeq: bigint("event_seq", { mode: "number" }).notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    resourceType: text("resource_type").notNull(),
    resourceId: ref("resource_id"),
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptDate: instant("next_attempt_date").notNull().defaultNow(),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    deliveredDate: instant("delivered_date"),
    createDate: createDate(),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      columns: [t.organizationId, t.endpointId],
      foreignColumns: [webhookEndpoints.organizationId, webhookEndpoints.id],
    }).onDelete("cascade"),
    index("webhook_deliveries_endpoint_idx").on(t.organizationId, t.endpointId, t.id),
    index("webhook_deliveries_due_idx").on(t.nextAttemptDate).where(sql`${t.state} in ('pending', 'sending')`),
    index("webhook_deliveries_resource_idx")
      .on(t.organizationId, t.endpointId, t.resourceType, t.resourceId, t.eventSeq)
      .where(sql`${t.state} in ('pending', 'sending')`),
    check("webhook_deliveries_state_check", sql`${t.state} in ('pending', 'sending', 'succeeded', 'failed')`),
  ],
);

// Every attempt of a delivery: the answer's status, how long it took, its first kilobyte.
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    deliveryId: ref("delivery_id").notNull(),
    attempt: integer("attempt").notNull(),
    status: integer("status"),
    durationMs: integer("duration_ms").notNull(),
    response: text("response"),
    error: text("error"),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    foreignKey({
      columns: [t.organizationId, t.deliveryId],
      foreignColumns: [webhookDeliveries.organizationId, webhookDeliveries.id],
    }).onDelete("cascade"),
    index("webhook_attempts_delivery_idx").on(t.organizationId, t.deliveryId, t.attempt),
  ],
);

/**
 * Images an organization uploaded (its logo; a campaign's cover): checked, resized and kept here,
 * never changed once stored, so a receipt that printed one keeps showing it (docs/images.md).
 */
export const images = pgTable(
  "images",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    // Random and unguessable (img_…): the public address of an image names it.
    id: text("id").notNull(),
    purpose: text("purpose").notNull(),
    // What was uploaded: its type, size in bytes, pixel size and SHA-256.
    sourceType: text("source_type").notNull(),
    sourceBytes: integer("source_bytes").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    sha256: text("sha256").notNull(),
    createDate: createDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    check("images_purpose_check", sql`${t.purpose} in ('logo', 'cover')`),
  ],
);

/** An image's resized copies, one per width, each as it is served. */
export const imageRenditions = pgTable(
  "image_renditions",
  {
    organizationId: orgId(),
    imageId: text("image_id").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    contentType: text("content_type").notNull(),
    data: bytea("data").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.imageId, t.width] }),
    foreignKey({
      name: "image_renditions_image_fk",
      columns: [t.organizationId, t.imageId],
      foreignColumns: [images.organizationId, images.id],
    }).onDelete("cascade"),
  ],
);

/**
 * The organization's legal identity (docs/receipts.md): what its receipts and statements must print
 * to count for a donor's taxes. One row per organization, its own record (the organization's
 * settings stay on `organizations`); a receipt keeps a copy of it as it was when issued.
 */
export const organizationProfiles = pgTable(
  "organization_profiles",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    legalName: text("legal_name"),
    legalForm: text("legal_form"),
    addressLine1: text("address_line1"),
    addressLine2: text("address_line2"),
    postalCode: text("postal_code"),
    city: text("city"),
    province: text("province"),
    // ISO 3166-1 alpha-2: decides the receipt's wording (IT, US, anywhere else).
    country: text("country"),
    // Italy: codice fiscale (11 digits, or 16 characters), partita IVA, RUNTS number and ETS status.
    taxCode: text("tax_code"),
    vatNumber: text("vat_number"),
    runtsNumber: text("runts_number"),
    etsStatus: text("ets_status"),
    // Elsewhere: a charity registration number; the US: EIN and 501(c)(3) status.
    charityNumber: text("charity_number"),
    ein: text("ein"),
    us501c3: boolean("us_501c3").notNull().default(false),
    website: text("website"),
    privacyPolicyUrl: text("privacy_policy_url"),
    // The organization's own words printed on every receipt, after the law's.
    receiptLegalText: text("receipt_legal_text"),
    // A receipt for every paid payment, or one statement per donor and year.
    receiptMode: text("receipt_mode").notNull().default("each_payment"),
    updateDate: updateDate(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId] }),
    check("organization_profiles_ets_status_check", sql`${t.etsStatus} in ('ets', 'odv', 'aps', 'onlus')`),
    check("organization_profiles_receipt_mode_check", sql`${t.receiptMode} in ('each_payment', 'yearly_statement')`),
  ],
);

/**
 * The last number of each organization, kind (receipts, yearly statements) and year: numbers follow
 * one another with no gap.
 */
export const receiptCounters = pgTable(
  "receipt_counters",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    year: integer("year").notNull(),
    lastNumber: integer("last_number").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.kind, t.year] })],
);

/**
 * Receipts as issued records (docs/receipts.md): numbered per organization and year, with copies of
 * the organization's legal profile and of the donor's identity as they were when issued; every
 * rendering (HTML, PDF, email) is drawn from the row. A refund voids it, never deletes it.
 */
export const receipts = pgTable(
  "receipts",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    // 'payment': one paid payment; 'statement': a donor's year.
    kind: text("kind").notNull(),
    year: integer("year").notNull(),
    number: integer("number").notNull(),
    supporterId: ref("supporter_id").notNull(),
    donationId: ref("donation_id"),
    paymentId: ref("payment_id"),
    amount: money("amount").notNull(),
    currency: text("currency").notNull(),
    // When the gift was received (a statement: the end of its year).
    giftDate: instant("gift_date").notNull(),
    paymentMethod: text("payment_method"),
    // The donation's code (DON-…): how the donor and the organization match the gift.
    reference: text("reference"),
    // Paid through a bank, a card or another traceable means (what Italian deductions require).
    traceable: boolean("traceable").notNull(),
    organization: jsonb("organization").notNull(),
    donor: jsonb("donor").notNull(),
    // A statement's payments: date, amount, method, donation code.
    lines: jsonb("lines"),
    legalText: text("legal_text").notNull(),
    locale: text("locale").notNull(),
    createDate: createDate(),
    voidDate: instant("void_date"),
    voidReason: text("void_reason"),
    // The receipt this one replaces (issued again for what is left after a partial refund).
    replacesId: ref("replaces_id"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    uniqueIndex("receipts_number_key").on(t.organizationId, t.kind, t.year, t.number),
    uniqueIndex("receipts_live_payment_key")
      .on(t.organizationId, t.paymentId)
      .where(sql`${t.kind} = 'payment' and ${t.voidDate} is null`),
    uniqueIndex("receipts_live_statement_key")
      .on(t.organizationId, t.supporterId, t.year)
      .where(sql`${t.kind} = 'statement' and ${t.voidDate} is null`),
    index("receipts_supporter_idx").on(t.organizationId, t.supporterId, t.year),
    index("receipts_create_date_idx").on(t.organizationId, t.createDate, t.id),
    foreignKey({
      name: "receipts_supporter_fk",
      columns: [t.organizationId, t.supporterId],
      foreignColumns: [supporters.organizationId, supporters.id],
    }),
    foreignKey({
      name: "receipts_payment_fk",
      columns: [t.organizationId, t.paymentId],
      foreignColumns: [payments.organizationId, payments.id],
    }),
    check("receipts_kind_check", sql`${t.kind} in ('payment', 'statement')`),
    check("receipts_locale_check", sql`${t.locale} in ('en', 'it')`),
  ],
);

// A file imported from the panel (docs/import.md): queued by the upload, run by the worker in batches,
// its progress and outcome kept. The file stays until the run ends; the results stay as CSV, with the
// first refused rows as the panel lists them.
export const imports = pgTable(
  "imports",
  {
    organizationId: orgId().references(() => organizations.id, { onDelete: "cascade" }),
    id: id(),
    kind: text("kind").notNull(),
    fileName: text("file_name").notNull(),
    preset: text("preset"),
    // What the member chose, column by column ({ "E-mail": "email", "Notes": "ignore" }), over the preset's.
    mapping: jsonb("mapping").$type<Record<string, string>>(),
    dryRun: boolean("dry_run").notNull(),
    state: text("state").notNull().default("queued"),
    rowsTotal: integer("rows_total").notNull().default(0),
    rowsDone: integer("rows_done").notNull().default(0),
    created: integer("created").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    unchanged: integer("unchanged").notNull().default(0),
    refused: integer("refused").notNull().default(0),
    refusedRows: jsonb("refused_rows"),
    resultsCsv: text("results_csv"),
    error: text("error"),
    content: bytea("content"),
    // Who asked, as the events of the run name them (the member, the request's address).
    origin: jsonb("origin"),
    createdBy: ref("created_by").references(() => users.id, { onDelete: "set null" }),
    createDate: createDate(),
    // Moves with each batch: a running import whose date stands still was left by a stopped worker.
    updateDate: updateDate(),
    startDate: instant("start_date"),
    finishDate: instant("finish_date"),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index("imports_pending_idx").on(t.createDate).where(sql`state in ('queued', 'running')`),
    // Bare: on a Citus cluster the predicate is run on each shard, whose table has another name.
    check("imports_kind_check", sql`kind in ('supporters', 'donations')`),
    check("imports_state_check", sql`state in ('queued', 'running', 'done', 'failed')`),
  ],
);
