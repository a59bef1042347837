import { and, eq, isNull, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import {
  campaigns,
  checkoutAttempts,
  checkouts,
  donations,
  organizations,
  payments,
  supporters,
} from "../../db/schema.js";
import { AppError, notFound } from "../../http/errors.js";
import { parseId } from "../../http/ids.js";
import { generateSecret, hashSecret } from "../../oauth/secrets.js";
import type { CampaignRow } from "../campaigns/campaigns.repo.js";
import { donationToWire } from "../donations/donations.service.js";
import { paymentToWire } from "../payments/payments.service.js";
import { SUPPORTER_COLUMNS } from "../supporters/supporters.service.js";
import {
  asksOf,
  checkGift,
  checkSupporterFields,
  costExampleQuantity,
  type Frequency,
  requiredFieldsOf,
  shownFieldsOf,
} from "./campaign-rules.js";
import type { DeclineReservation } from "./card-testing.service.js";
import { deviceOf } from "./device.js";
import type { GivingContext } from "./giving.context.js";
import {
  donationCode,
  insertPaymentMethod,
  nextId,
  queueRenewal,
  setCertificationUrl,
  supporterCode,
} from "./giving.repo.js";
import type {
  CheckoutCompletedWire,
  CheckoutCompleteInput,
  CheckoutStartBody,
  PublicCampaignWire,
} from "./giving.schemas.js";
import { CONSENTS } from "./giving.schemas.js";
import { hasStoredOutcome, idempotent, type Outcome } from "./idempotency.js";
import { PROCESSOR_NAMES, requireProcessor } from "./processors/index.js";
import { cycleDueDate } from "./schedule.js";
import { assertTransition } from "./transitions.js";

type OrganizationRow = typeof organizations.$inferSelect;

const campaignClosed = () =>
  new AppError("campaign_closed", 410, "This campaign has ended and no longer accepts donations");

/** The organization and live campaign behind a public donation page or API call. */
export async function findDonationTarget(db: Executor, organizationSlug: string, campaignSlug: string) {
  const [row] = await db
    .select({ organization: organizations, campaign: campaigns })
    .from(campaigns)
    .innerJoin(organizations, eq(organizations.id, campaigns.organizationId))
    .where(and(eq(organizations.slug, organizationSlug), eq(campaigns.slug, campaignSlug)));
  if (!row) throw notFound("Campaign");
  if (row.campaign.archiveDate) throw campaignClosed();
  return row;
}

/** Money paid to a campaign and not refunded. */
export async function raisedFor(db: Executor, organizationId: number, campaignId: number): Promise<number> {
  const [row] = await db
    .select({ cents: sql<string>`coalesce(sum(${payments.amount} * 100), 0)` })
    .from(payments)
    .innerJoin(
      donations,
      and(eq(donations.organizationId, payments.organizationId), eq(donations.id, payments.donationId)),
    )
    .where(
      and(
        eq(payments.organizationId, organizationId),
        eq(donations.campaignId, campaignId),
        eq(payments.state, "PAID"),
      ),
    );
  return Number(row?.cents ?? 0) / 100;
}

export function publicCampaignToWire(
  organization: OrganizationRow,
  campaign: CampaignRow,
  raised: number,
): Omit<PublicCampaignWire, "challenge_required" | "challenge_url"> {
  return {
    id: campaign.id,
    title: campaign.title,
    slug: campaign.slug ?? String(campaign.id),
    organization: { slug: organization.slug, name: organization.name },
    currency: organization.currency,
    goal: campaign.goal,
    is_goal_enabled: campaign.isGoalEnabled,
    raised,
    has_one_off: campaign.hasOneOff,
    has_subscription: campaign.hasSubscription,
    allow_custom_amount: campaign.allowCustomAmount,
    allow_custom_subscription_amount: campaign.allowCustomSubscriptionAmount,
    default_amount: campaign.defaultAmount,
    default_subscription_amount: campaign.defaultSubscriptionAmount,
    min_amount: campaign.minAmount,
    max_amount: campaign.maxAmount,
    min_subscription_amount: campaign.minSubscriptionAmount,
    max_subscription_amount: campaign.maxSubscriptionAmount,
    asks: asksOf(campaign, false),
    asks_subscription: asksOf(campaign, true),
    shown_fields: shownFieldsOf(campaign),
    required_fields: requiredFieldsOf(campaign),
    privacy_note: campaign.privacyNote,
    cost_example_amount: campaign.costExampleAmount,
    cost_example_label: campaign.costExampleLabel,
    processors: PROCESSOR_NAMES.map((name) => {
      const processor = requireProcessor(name);
      return {
        name,
        title: processor.title,
        one_off: processor.capabilities.oneOff,
        recurring: processor.capabilities.recurring,
      };
    }),
  };
}

export async function getPublicCampaign(context: GivingContext, organizationSlug: string, campaignSlug: string) {
  const { organization, campaign } = await findDonationTarget(context.db, organizationSlug, campaignSlug);
  return {
    ...publicCampaignToWire(organization, campaign, await raisedFor(context.db, organization.id, campaign.id)),
    ...(await challengeWire(context, organization.id, organization.slug)),
  };
}

/** Whether completing needs a solved ALTCHA challenge now, and where to get one. */
async function challengeWire(context: GivingContext, organizationId: number, organizationSlug: string) {
  return {
    challenge_required: await context.guard.challengeRequired(context.db, organizationId),
    challenge_url: `/api/v1/public/organizations/${encodeURIComponent(organizationSlug)}/challenge`,
  };
}

/** A fresh proof-of-work challenge for the organization's donation form (ALTCHA widget format). */
export async function getChallenge(context: GivingContext, organizationSlug: string) {
  const [owner] = await context.db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.slug, organizationSlug));
  if (!owner) throw notFound("Organization");
  return context.guard.createChallenge(owner.id);
}

/** Opening the form and choosing an amount: an OPEN checkout the donor's browser can complete. */
export async function startCheckout(
  context: GivingContext,
  organizationSlug: string,
  campaignSlug: string,
  body: CheckoutStartBody,
  clientIp: string,
) {
  const { organization, campaign } = await findDonationTarget(context.db, organizationSlug, campaignSlug);
  const amount = body.amount ?? null;
  checkGift(campaign, amount, body.frequency as Frequency | undefined);
  await context.guard.countCheckoutStart(clientIp);
  const secret = generateSecret("dnt_cks");
  const [row] = await context.db
    .insert(checkouts)
    .values({
      organizationId: organization.id,
      campaignId: campaign.id,
      state: "OPEN",
      amount,
      frequency: body.frequency ?? null,
      costExampleQuantity: costExampleQuantity(campaign, amount),
      clientSecretHash: hashSecret(secret),
    })
    .returning();
  if (!row) throw new Error("checkout insert returned nothing");
  return {
    id: row.id,
    client_secret: secret,
    state: row.state as "OPEN",
    amount: row.amount,
    frequency: row.frequency as Frequency | null,
    cost_example_quantity: row.costExampleQuantity,
    expires_date: new Date(row.createDate.getTime() + context.checkoutTtlSeconds * 1000).toISOString(),
    ...(await challengeWire(context, organization.id, organization.slug)),
  };
}

const checkoutClosed = (id: number) =>
  new AppError("checkout_closed", 409, `The checkout ${id} is closed; start a new one to give again`);

function cleanSupporterInput(input: CheckoutCompleteInput["supporter"]) {
  const cleaned: Record<string, string> = {};
  for (const [field, value] of Object.entries(input)) {
    if (typeof value === "string" && value.trim() !== "") cleaned[field] = value.trim();
  }
  return cleaned;
}

/**
 * The supporter with this email in the organization, completed with what the donor typed (known
 * values are kept) and with the consents as the donor gave them now; or a new supporter.
 */
async function matchSupporter(
  tx: Executor,
  organizationId: number,
  fields: Record<string, string>,
  consents: CheckoutCompleteInput["consents"],
) {
  const email = fields.email as string;
  const consentValues: Record<string, boolean> = {};
  for (const name of CONSENTS) {
    const value = consents?.[name];
    if (value !== undefined) consentValues[SUPPORTER_COLUMNS[name]] = value;
  }
  const [existing] = await tx
    .select()
    .from(supporters)
    .where(
      and(
        eq(supporters.organizationId, organizationId),
        sql`lower(${supporters.email}) = lower(${email})`,
        isNull(supporters.eraseDate),
      ),
    )
    .orderBy(supporters.id)
    .limit(1)
    .for("update");
  if (existing) {
    const fill: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(fields)) {
      const column = SUPPORTER_COLUMNS[field as keyof typeof SUPPORTER_COLUMNS];
      if (column && (existing as Record<string, unknown>)[column] === null) fill[column] = value;
    }
    const [row] = await tx
      .update(supporters)
      .set({ ...fill, ...consentValues, updateDate: sql`now()` })
      .where(and(eq(supporters.organizationId, organizationId), eq(supporters.id, existing.id)))
      .returning();
    if (!row) throw new Error("supporter update returned nothing");
    return row;
  }
  const id = await nextId(tx, "supporters");
  const values: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    const column = SUPPORTER_COLUMNS[field as keyof typeof SUPPORTER_COLUMNS];
    if (column) values[column] = value;
  }
  const [row] = await tx
    .insert(supporters)
    .values({ ...values, ...consentValues, organizationId, id, code: supporterCode(id) })
    .returning();
  if (!row) throw new Error("supporter insert returned nothing");
  return row;
}

type CompletionBody = CheckoutCompletedWire | ReturnType<typeof paymentFailedProblem>;

export interface CompletionRequest {
  userAgent: string | undefined;
  idempotencyKey: string | undefined;
  clientIp: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The donor submits the form: supporter, payment method, donation and payment, and the checkout
 * closed on success, all in one transaction. A declined card writes none of these (attack traffic
 * must not create supporters): it records a checkout attempt, keeps the checkout OPEN for another
 * try (HTTP 402), and answers no faster than the decline floor.
 */
export async function completeCheckout(
  context: GivingContext,
  organizationSlug: string,
  rawId: string,
  input: CheckoutCompleteInput,
  request: CompletionRequest,
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const startedAt = Date.now();
  const outcome = await completeOnce(context, organizationSlug, rawId, input, request);
  if (outcome.status === 402) {
    const wait = context.guard.config.declineFloorMs - (Date.now() - startedAt);
    if (wait > 0) await sleep(wait);
  }
  return outcome;
}

async function completeOnce(
  context: GivingContext,
  organizationSlug: string,
  rawId: string,
  input: CheckoutCompleteInput,
  request: CompletionRequest,
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const checkoutId = parseId(rawId, "Checkout");
  const processor = requireProcessor(input.processor);
  const recurring = input.frequency !== 0;
  if (recurring && !processor.capabilities.recurring) {
    throw new AppError("processor_unsupported", 422, `${processor.title} cannot be used for recurring gifts`, [
      { field: "processor", message: "does not support recurring gifts" },
    ]);
  }
  if (input.consents?.privacy !== true) {
    throw new AppError("privacy_consent_required", 422, "The donor must accept the privacy notice", [
      { field: "consents.privacy", message: "must be true" },
    ]);
  }
  const fields = cleanSupporterInput(input.supporter);
  // Card checks happen before anything is written; nothing is stored of the card but its label.
  const method = processor.tokenize({ card: input.card });
  const { guard } = context;

  const [owner] = await context.db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.slug, organizationSlug));
  if (!owner) throw notFound("Checkout");

  // Defences run before the processor is called, for the holder of the checkout's secret only:
  // guessing ids must not burn a donor's attempts.
  const [known] = await context.db
    .select({ clientSecretHash: checkouts.clientSecretHash })
    .from(checkouts)
    .where(and(eq(checkouts.organizationId, owner.id), eq(checkouts.id, checkoutId)));
  if (!known?.clientSecretHash || known.clientSecretHash !== hashSecret(input.client_secret)) {
    throw notFound("Checkout");
  }
  const cardNumber = input.card ? String(input.card.number) : undefined;
  const scope = `checkout:${checkoutId}:complete`;
  // A retry of a finished request (same key) replays its answer: no new attempt, no second challenge.
  let reservation: DeclineReservation | undefined;
  if (!(await hasStoredOutcome(context.db, owner.id, scope, request.idempotencyKey))) {
    if (await guard.challengeRequired(context.db, owner.id)) await guard.redeemChallenge(owner.id, input.altcha);
    reservation = await guard.reserveAttempt(owner.id, checkoutId, request.clientIp, cardNumber);
  }
  let declined = false;
  try {
    const outcome = await chargeAndRecord(context, owner.id, checkoutId, input, request, {
      scope,
      method,
      fields,
      cardNumber,
    });
    declined = outcome.status === 402 && !outcome.replayed;
    return outcome;
  } finally {
    if (reservation) await guard.settle(context.db, reservation, declined);
  }
}

/** The completion's transaction: charge first, then (only for a gift that went through) every record. */
async function chargeAndRecord(
  context: GivingContext,
  ownerId: number,
  checkoutId: number,
  input: CheckoutCompleteInput,
  request: CompletionRequest,
  prepared: {
    scope: string;
    method: ReturnType<ReturnType<typeof requireProcessor>["tokenize"]>;
    fields: Record<string, string>;
    cardNumber: string | undefined;
  },
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const { scope, method, fields, cardNumber } = prepared;
  const processor = requireProcessor(input.processor);
  const recurring = input.frequency !== 0;
  const { afterStep, guard } = context;
  const step = async (name: Parameters<NonNullable<typeof afterStep>>[0]) => {
    if (afterStep) await afterStep(name);
  };
  return context.db.transaction(async (tx) => {
    const [checkout] = await tx
      .select()
      .from(checkouts)
      .where(and(eq(checkouts.organizationId, ownerId), eq(checkouts.id, checkoutId)))
      .for("update");
    if (!checkout?.clientSecretHash || checkout.clientSecretHash !== hashSecret(input.client_secret)) {
      throw notFound("Checkout");
    }
    const organizationId = checkout.organizationId;
    const { client_secret: _secret, altcha: _altcha, card, ...rest } = input;
    const fingerprintOf = { ...rest, card: card ? { ...card, number: hashSecret(card.number) } : null };
    return idempotent<CompletionBody>(tx, organizationId, scope, request.idempotencyKey, fingerprintOf, async () => {
      if (checkout.state !== "OPEN") throw checkoutClosed(checkoutId);
      if (checkout.createDate.getTime() + context.checkoutTtlSeconds * 1000 <= Date.now()) {
        throw new AppError("checkout_expired", 409, `The checkout ${checkoutId} has expired; start a new one`);
      }
      const [found] = await tx
        .select({ campaign: campaigns, organization: organizations })
        .from(campaigns)
        .innerJoin(organizations, eq(organizations.id, campaigns.organizationId))
        .where(and(eq(campaigns.organizationId, organizationId), eq(campaigns.id, checkout.campaignId ?? 0)));
      if (!found) throw notFound("Campaign");
      const { campaign, organization } = found;
      if (campaign.archiveDate) throw campaignClosed();
      checkGift(campaign, input.amount, input.frequency);
      checkSupporterFields(campaign, input.supporter);

      // The charge comes first: a declined card writes no supporter, method, donation or payment.
      const [tried] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(checkoutAttempts)
        .where(and(eq(checkoutAttempts.organizationId, organizationId), eq(checkoutAttempts.checkoutId, checkoutId)));
      const charge = await processor.charge({
        amountCents: Math.round(input.amount * 100),
        currency: organization.currency,
        reference: method.reference,
        kind: "initial",
        idempotencyKey: `checkout:${checkoutId}:attempt:${tried?.n ?? 0}`,
      });
      if (charge.state === "FAILED") {
        const [attempt] = await tx
          .insert(checkoutAttempts)
          .values({
            organizationId,
            checkoutId,
            campaignId: campaign.id,
            amount: input.amount,
            processor: processor.name,
            failureCode: charge.code,
            cardLabel: method.label,
            cardFingerprint: cardNumber === undefined ? null : guard.cardFingerprint(cardNumber),
            clientFingerprint: guard.fingerprint("client", request.clientIp),
          })
          .returning({ id: checkoutAttempts.id });
        if (!attempt) throw new Error("attempt insert returned nothing");
        return { status: 402, body: paymentFailedProblem(charge.code, charge.message, attempt.id) };
      }

      const supporter = await matchSupporter(tx, organizationId, fields, input.consents);
      await step("supporter");
      const methodRow = await insertPaymentMethod(tx, {
        organizationId,
        supporterId: supporter.id,
        processor: processor.name,
        label: method.label,
        reference: method.reference,
      });
      await step("payment_method");

      // A checkout declined before declines stopped writing donations may hold a pending one: reuse it.
      const device = deviceOf(request.userAgent);
      let donation = checkout.donationId
        ? (
            await tx
              .select()
              .from(donations)
              .where(and(eq(donations.organizationId, organizationId), eq(donations.id, checkout.donationId)))
              .for("update")
          )[0]
        : undefined;
      if (donation && donation.state === "pending") {
        [donation] = await tx
          .update(donations)
          .set({
            supporterId: supporter.id,
            amount: input.amount,
            frequency: input.frequency,
            device,
            paymentMethodId: methodRow.id,
            updateDate: sql`now()`,
          })
          .where(and(eq(donations.organizationId, organizationId), eq(donations.id, donation.id)))
          .returning();
      } else {
        const id = await nextId(tx, "donations");
        [donation] = await tx
          .insert(donations)
          .values({
            organizationId,
            id,
            code: donationCode(id),
            supporterId: supporter.id,
            campaignId: campaign.id,
            state: "pending",
            amount: input.amount,
            currency: organization.currency,
            frequency: input.frequency,
            device,
            paymentMethodId: methodRow.id,
          })
          .returning();
      }
      if (!donation) throw new Error("donation write returned nothing");
      await step("donation");

      const now = new Date();
      const [payment] = await tx
        .insert(payments)
        .values({
          organizationId,
          donationId: donation.id,
          state: charge.state,
          amount: input.amount,
          currency: organization.currency,
          paymentDate: charge.state === "PAID" ? now : null,
          paymentMethodId: methodRow.id,
          processorIntentId: charge.intentId,
        })
        .returning();
      if (!payment) throw new Error("payment insert returned nothing");
      await step("payment");

      if (charge.state === "PAID") {
        const next = recurring ? "active" : "done";
        assertTransition("donation", donation.id, donation.state, next);
        [donation] = await tx
          .update(donations)
          .set({
            state: next,
            completedDate: now,
            receiptUrl: context.links.receiptUrl(organizationId, donation.id),
            nextChargeDate: recurring ? cycleDueDate(now, input.frequency, 1) : null,
            updateDate: sql`now()`,
          })
          .where(and(eq(donations.organizationId, organizationId), eq(donations.id, donation.id)))
          .returning();
        if (!donation) throw new Error("donation update returned nothing");
        if (recurring && donation.nextChargeDate) {
          await queueRenewal(tx, {
            organizationId,
            donationId: donation.id,
            cycle: 1,
            runDate: donation.nextChargeDate,
          });
        }
        await setCertificationUrl(
          tx,
          organizationId,
          supporter.id,
          context.links.statementUrl(organizationId, supporter.id),
        );
      }

      assertTransition("checkout", checkout.id, checkout.state, "CLOSED");
      await tx
        .update(checkouts)
        .set({
          supporterId: supporter.id,
          donationId: donation.id,
          paymentId: payment.id,
          amount: input.amount,
          frequency: input.frequency,
          costExampleQuantity: costExampleQuantity(campaign, input.amount),
          state: "CLOSED",
          completedDate: now,
          updateDate: sql`now()`,
        })
        .where(and(eq(checkouts.organizationId, organizationId), eq(checkouts.id, checkout.id)));
      await step("checkout");

      return {
        status: 200,
        body: {
          result: charge.state === "PAID" ? ("succeeded" as const) : ("pending" as const),
          checkout_id: checkout.id,
          donation: donationToWire(donation),
          payment: paymentToWire(payment, methodRow),
          receipt_url: donation.receiptUrl,
        },
      };
    });
  });
}

export function paymentFailedProblem(code: string, message: string, attemptId: number) {
  return {
    type: "urn:donata:problem:payment_failed",
    title: "Payment Required",
    status: 402,
    detail: `${message}. Nothing was charged; try another card or payment method.`,
    code: "payment_failed",
    errors: [{ field: "card", message: `${code}: attempt ${attemptId} was declined` }],
  };
}
