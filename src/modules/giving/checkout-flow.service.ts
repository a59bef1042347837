import type { Executor } from "../../db/client.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { problemBodyOf } from "../../errors/problem-body.js";
import { donorOrigin } from "../../events/origin.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import {
  findStoredOutcome,
  fingerprint,
  hasStoredOutcome,
  idempotencyKeyReused,
  type Outcome,
  storeOutcome,
} from "../../http/idempotency.js";
import { parseId } from "../../http/ids.js";
import { fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { isLocale, type Locale } from "../../i18n/locales.js";
import { generateSecret, hashSecret } from "../../identity/secrets.js";
import { chargeContextOf } from "../../payments/charge-context.js";
import { fromCents, toCents, toMinorUnits } from "../../payments/money.js";
import {
  offeredProcessors,
  type ProcessorDescription,
  ProcessorTimeoutError,
  paymentModeOf,
  requireProcessor,
} from "../../payments/processors/index.js";
import type { ChargeResult } from "../../payments/processors/processor.js";
import { type StripeProcessor, stripeMethodReference } from "../../payments/processors/stripe.js";
import { type ReconcileResult, reconcileOne } from "../../payments/reconciliation.service.js";
import { settlePayment } from "../../payments/settlement.service.js";
import { assertTransition, donationEventData } from "../../payments/transitions.js";
import {
  askImpactsOf,
  checkAnswers,
  checkTribute,
  type DonationAnswerWire,
  questionsOf,
} from "../campaigns/campaign-questions.js";
import type { CampaignRow } from "../campaigns/campaigns.repo.js";
import {
  type CheckoutRow,
  checkoutToWire,
  findCheckoutSecretHash,
  insertCheckout,
  lockCheckout,
  updateCheckout,
} from "../checkouts/checkouts.repo.js";
import {
  type DonationRow,
  findDonation,
  insertDonation,
  lockDonation,
  nextDonationId,
  updateDonation,
} from "../donations/donations.repo.js";
import { donationToWire, storedDonationToWire } from "../donations/donations.service.js";
import { findLegalProfile } from "../legal-profile/legal-profile.repo.js";
import { findOrganizationById } from "../organizations/organizations.repo.js";
import { bankTransferToWire, feeFormulaOf } from "../organizations/organizations.service.js";
import {
  findPaymentMethod,
  insertPaymentMethod,
  type PaymentMethodRow,
  replacePlaceholderMethod,
} from "../payment-methods/payment-methods.repo.js";
import { insertPayment, lockPayment, type PaymentRow, sumPaidForCampaign } from "../payments/payments.repo.js";
import { paymentToWire, storedPaymentToWire } from "../payments/payments.service.js";
import { type DeclaredConsents, insertConsentRecord } from "../supporters/consent-records.repo.js";
import { insertSupporter, lockSupporterByEmail, setSupporterLocale } from "../supporters/supporters.repo.js";
import { SUPPORTER_COLUMNS, supporterToWire } from "../supporters/supporters.service.js";
import {
  asksOf,
  checkGift,
  checkSupporterFields,
  costExampleQuantity,
  coveredFeeOf,
  type Frequency,
  requiredFieldsOf,
  shownFieldsOf,
} from "./campaign-rules.js";
import type { DeclineReservation } from "./card-testing.service.js";
import {
  type AttemptRow,
  abandonPendingAttempt,
  findAttemptCheckoutId,
  findCampaignBySlugs,
  findCampaignWithOrganization,
  findOrganizationCurrency,
  findOrganizationIdBySlug,
  hasPendingAttemptForRequest,
  insertCheckoutAttempt,
  listStalePendingAttempts,
  lockAttempt,
  lockPendingAttempt,
  nextAttemptId,
  type OrganizationRow,
  updateAttempt,
} from "./checkout-flow.repo.js";
import { deviceOf } from "./device.js";
import type { CompletionStep, GivingContext } from "./giving.context.js";
import type {
  CheckoutCompletedWire,
  CheckoutCompleteInput,
  CheckoutRequiresActionWire,
  CheckoutStartBody,
  PublicCampaignWire,
} from "./giving.schemas.js";
import { CONSENTS } from "./giving.schemas.js";

const campaignClosed = () => new AppError("campaign_closed", "This campaign has ended and no longer accepts donations");

/** Whether the campaign's dates let it take a gift now (before start_date or from end_date on: not). */
export function isCampaignOpen(campaign: CampaignRow, now = new Date()): boolean {
  return !(campaign.startDate && now < campaign.startDate) && !(campaign.endDate && now >= campaign.endDate);
}

function assertCampaignOpen(campaign: CampaignRow) {
  if (!isCampaignOpen(campaign)) {
    if (campaign.startDate && Date.now() < campaign.startDate.getTime()) {
      throw new AppError(
        "campaign_not_open",
        `This campaign opens on ${campaign.startDate.toISOString()} and does not accept donations yet`,
      );
    }
    throw campaignClosed();
  }
}

/**
 * The organization and published campaign behind a public donation page or API call (a draft is
 * not found; an archived campaign is closed). With `taking`, also one whose dates take gifts now.
 */
export async function findDonationTarget(
  db: Executor,
  organizationSlug: string,
  campaignSlug: string,
  taking: "gift" | "page" = "gift",
) {
  const row = await findCampaignBySlugs(db, organizationSlug, campaignSlug);
  if (!row || row.campaign.status === "draft") throw notFound("Campaign");
  if (row.campaign.archiveDate) throw campaignClosed();
  if (taking === "gift") assertCampaignOpen(row.campaign);
  return row;
}

export function publicCampaignToWire(
  organization: OrganizationRow,
  campaign: CampaignRow,
  raised: number,
  offered: ProcessorDescription[],
  stripe: PublicCampaignWire["stripe"] = null,
  testMode = false,
  privacyPolicyUrl: string | null = null,
): Omit<PublicCampaignWire, "challenge_required" | "challenge_url"> {
  return {
    id: campaign.id,
    title: campaign.title,
    slug: campaign.slug ?? String(campaign.id),
    organization: {
      slug: organization.slug,
      name: organization.name,
      locale: organization.locale,
      privacy_policy_url: privacyPolicyUrl,
      logo_url: organization.logoUrl,
      time_zone: organization.timeZone,
    },
    story: campaign.story,
    cover_image_url: campaign.coverImageUrl,
    start_date: campaign.startDate?.toISOString() ?? null,
    end_date: campaign.endDate?.toISOString() ?? null,
    is_open: isCampaignOpen(campaign),
    ask_impacts: askImpactsOf(campaign),
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
    cover_fee: campaign.allowCoverFee ? feeFormulaOf(organization) : null,
    processors: offered.map((processor) => ({
      name: processor.name,
      title: processor.title,
      one_off: processor.capabilities.oneOff,
      recurring: processor.capabilities.recurring,
    })),
    stripe,
    test_mode: testMode,
    allow_tribute: campaign.allowTribute,
    questions: questionsOf(campaign),
  };
}

export async function getPublicCampaign(context: GivingContext, organizationSlug: string, campaignSlug: string) {
  // A campaign not open yet, or ended, is still shown (with its dates); only gifts are refused.
  const { organization, campaign } = await findDonationTarget(context.db, organizationSlug, campaignSlug, "page");
  const stripe = await context.processors.stripeAccount(organization.id);
  const mode = paymentModeOf(organization, stripe !== undefined, context.processors.production);
  return {
    ...publicCampaignToWire(
      organization,
      campaign,
      await sumPaidForCampaign(context.db, organization.id, campaign.id),
      offeredProcessors(mode),
      stripe ? { publishable_key: stripe.row.publishableKey, test_mode: stripe.row.mode !== "live" } : null,
      mode.testMode,
      (await findLegalProfile(context.db, organization.id))?.privacyPolicyUrl ?? null,
    ),
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
  const owner = await findOrganizationIdBySlug(context.db, organizationSlug);
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
  checkGift(campaign, organization.currency, amount, body.frequency as Frequency | undefined);
  await context.guard.countCheckoutStart(clientIp);
  const secret = generateSecret("dnt_cks");
  const row = await insertCheckout(context.db, {
    organizationId: organization.id,
    campaignId: campaign.id,
    state: "OPEN",
    amount,
    frequency: body.frequency ?? null,
    costExampleQuantity: costExampleQuantity(campaign, amount),
    clientSecretHash: hashSecret(secret),
  });
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

/**
 * The organization's currency must be one the processor takes, and the charge (gift and covered
 * fee) an amount it can charge in it (Stripe's minimum, its whole units): a 422 before anything is
 * recorded, rather than the processor's refusal after.
 */
function checkChargeable(processor: ProcessorDescription, currency: string, charged: number) {
  if (!processor.supportsCurrency(currency)) {
    throw new AppError("currency_not_supported", `${processor.title} does not take payments in ${currency}`, {
      errors: [fieldIssue("processor", fieldProblem("currency_not_taken", { currency }))],
    });
  }
  processor.checkAmount(toMinorUnits(charged, currency), currency);
}

const checkoutClosed = (id: number) =>
  new AppError("checkout_closed", `The checkout ${id} is closed; start a new one to give again`);

function cleanSupporterInput(input: CheckoutCompleteInput["supporter"]) {
  const cleaned: Record<string, string> = {};
  for (const [field, value] of Object.entries(input)) {
    if (typeof value === "string" && value.trim() !== "") cleaned[field] = value.trim();
  }
  return cleaned;
}

/**
 * The supporter with this email in the organization, as it is: a gift changes none of an existing
 * supporter's details or consents (anyone may give with any address); or a new supporter made of
 * what the donor typed. `consents` is what the donor declared, for the gift's consent record.
 */
async function matchSupporter(
  tx: Executor,
  organizationId: number,
  fields: Record<string, string>,
  declared: CheckoutCompleteInput["consents"],
  locale: Locale | undefined,
) {
  const consents: DeclaredConsents = {};
  for (const name of CONSENTS) {
    const value = declared?.[name];
    if (value !== undefined) consents[name] = value;
  }
  const existing = await lockSupporterByEmail(tx, organizationId, fields.email as string);
  if (existing) {
    // Only the language follows the latest checkout: the donor reads their next emails in it.
    if (locale) await setSupporterLocale(tx, organizationId, existing.id, locale);
    return { supporter: existing, consents, applied: false };
  }
  const values: Record<string, unknown> = {};
  for (const [field, value] of Object.entries({ ...fields, ...consents })) {
    const column = SUPPORTER_COLUMNS[field as keyof typeof SUPPORTER_COLUMNS];
    if (column) values[column] = value;
  }
  if (locale) values.locale = locale;
  return { supporter: await insertSupporter(tx, organizationId, values), consents, applied: true };
}

/** Settled, declined, or waiting for the donor's 3-D Secure challenge (HTTP 202, never stored as the key's outcome). */
type CompletionBody = CheckoutCompletedWire | CheckoutRequiresActionWire | ReturnType<typeof paymentFailedProblem>;

export interface CompletionRequest {
  userAgent: string | undefined;
  idempotencyKey: string | undefined;
  clientIp: string;
  /** The donor's language (the request's Accept-Language, when it names one of ours): kept on the supporter. */
  locale?: Locale;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The donor submits the form: supporter, payment method, donation and payment, and the checkout
 * closed on success, settled once the processor has answered (see completeInSteps). A declined
 * card writes none of these (attack traffic must not create supporters): its checkout attempt is
 * DECLINED, the checkout stays OPEN for another try (HTTP 402), answered no faster than the floor.
 */
export async function completeCheckout(
  ...call: Parameters<typeof completeOnce>
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const [context] = call;
  const startedAt = Date.now();
  const outcome = await completeOnce(...call);
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
    throw new AppError("processor_unsupported", `${processor.title} cannot be used for recurring gifts`, {
      errors: [fieldIssue("processor", fieldProblem("no_recurring"))],
    });
  }
  if (input.consents?.privacy !== true) {
    throw new AppError("privacy_consent_required", "The donor must accept the privacy notice", {
      errors: [fieldIssue("consents.privacy", fieldProblem("must_be_true"))],
    });
  }
  const fields = cleanSupporterInput(input.supporter);
  // Card checks happen before anything is written; nothing is stored of the card but its label.
  const method = processor.tokenize({ card: input.card, confirmationToken: input.confirmation_token });
  const { guard } = context;

  const owner = await findOrganizationIdBySlug(context.db, organizationSlug);
  if (!owner) throw notFound("Checkout");
  const offered = await context.processors.offered(owner.id);
  if (!offered.some((candidate) => candidate.name === processor.name)) {
    throw new AppError("processor_unsupported", `This organization does not take payments with ${processor.title}`, {
      errors: [
        {
          field: "processor",
          message:
            offered.length === 0
              ? "this organization takes no online payments yet"
              : `must be one of ${offered.map((each) => each.name).join(", ")}`,
        },
      ],
    });
  }

  // Defences run before the processor is called, for the holder of the checkout's secret only:
  // guessing ids must not burn a donor's attempts.
  const known = await findCheckoutSecretHash(context.db, owner.id, checkoutId);
  if (!known?.clientSecretHash || known.clientSecretHash !== hashSecret(input.client_secret)) {
    throw notFound("Checkout");
  }
  const cardNumber = input.card ? String(input.card.number) : undefined;
  const scope = completionScope(checkoutId);
  // A retry of a finished request (same key) replays its answer: no new attempt, no second challenge.
  let reservation: DeclineReservation | undefined;
  if (!(await hasStoredOutcome(context.db, owner.id, scope, request.idempotencyKey))) {
    // The same request sent again after the donor's 3-D Secure challenge passed the challenge the first time.
    const resumed =
      request.idempotencyKey !== undefined &&
      (await hasPendingAttemptForRequest(context.db, owner.id, checkoutId, request.idempotencyKey));
    if (!resumed && (await guard.challengeRequired(context.db, owner.id))) {
      await guard.redeemChallenge(owner.id, input.altcha);
    }
    reservation = await guard.reserveAttempt(owner.id, checkoutId, request.clientIp, cardNumber);
  }
  let declined = false;
  try {
    const outcome = await completeInSteps(context, owner.id, checkoutId, input, request, {
      processor,
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

/** What settling a checkout attempt needs, kept on the attempt until it is settled (never the card number). */
interface AttemptGift {
  supporter: Record<string, string>;
  consents: CheckoutCompleteInput["consents"];
  methodLabel: string;
  methodReference: string;
  device: ReturnType<typeof deviceOf>;
  /** The language the donor gave in (absent in attempts recorded before languages were kept). */
  locale?: Locale;
  /** The gift's dedication and the answers to the campaign's questions, checked (absent: none). */
  tribute?: ReturnType<typeof checkTribute>;
  answers?: DonationAnswerWire[];
}

type Recorded =
  | { kind: "replay"; outcome: Outcome<CompletionBody> & { replayed: boolean } }
  | { kind: "busy"; attempt: AttemptRow }
  /** resumed: recorded by an earlier request with this key (a retry after a timeout, or after 3-D Secure). */
  | { kind: "attempt"; attempt: AttemptRow; resumed: boolean };

/** What the settle step needs besides the transaction: the links it writes and the test hook. */
export type SettleContext = Pick<GivingContext, "db" | "links" | "afterStep">;

const completionScope = (checkoutId: number) => `checkout:${checkoutId}:complete`;
const WAIT_FOR_ATTEMPT_MS = 50;
const MAX_WAITS = 200;

const processorUnavailable = () =>
  new AppError(
    "processor_unavailable",
    "The payment processor did not answer in time. The payment may still go through: retry with the same " +
      "Idempotency-Key to learn its outcome (it is never charged twice)",
    { headers: { "retry-after": "5" } },
  );

/** What the donor submitted, checked and tokenized before any step runs (never the card number itself). */
interface PreparedGift {
  processor: ProcessorDescription;
  method: ReturnType<ReturnType<typeof requireProcessor>["tokenize"]>;
  fields: Record<string, string>;
  cardNumber: string | undefined;
}

/**
 * Completing in named steps, each safe to retry: record the attempt (committed), charge it at the
 * processor with a key derived from it (outside any transaction), settle the outcome (a second
 * transaction). A crash or timeout between steps leaves a PENDING attempt: a retry with the same
 * Idempotency-Key resumes it, and the reconciler settles it from the processor's own record.
 */
async function completeInSteps(
  ...step: Parameters<typeof recordAttempt>
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const [context, , checkoutId] = step;
  let recorded = await recordAttempt(...step);
  // Another request is charging this checkout: wait for its outcome, so one checkout never has two
  // charges in flight; an attempt abandoned by a crash is reconciled first.
  for (let waits = 0; recorded.kind === "busy"; waits++) {
    const stale = recorded.attempt.updateDate.getTime() <= Date.now() - context.pendingTimeoutSeconds * 1000;
    // A charge waiting for the donor's 3-D Secure: the donor submitted anew instead, so it is given up.
    const superseded = recorded.attempt.processorIntentId !== null;
    if (stale || superseded) await reconcileCheckoutAttempt(context, recorded.attempt, new Date()).catch(unavailable);
    else if (waits >= MAX_WAITS) {
      throw new AppError(
        "payment_in_progress",
        `A payment on checkout ${checkoutId} is being confirmed; try again in a moment`,
        { headers: { "retry-after": "5" } },
      );
    } else await sleep(WAIT_FOR_ATTEMPT_MS);
    recorded = await recordAttempt(...step);
  }
  if (recorded.kind === "replay") return recorded.outcome;
  const { attempt, resumed } = recorded;
  await context.afterStep?.("record");
  const charge = await chargeAttempt(context, attempt, resumed);
  await context.afterStep?.("charge");
  const settled = await settleCheckoutAttempt(context, attempt.organizationId, attempt.id, charge, new Date());
  if (settled.status !== 202) return settled;
  // Waiting for the donor's 3-D Secure challenge: the page runs it with the intent's client secret.
  const stripe = await stripeOf(context, attempt.organizationId);
  const secret = await stripe.authenticationSecret(charge.intentId).catch(unavailable);
  if (secret) return { ...settled, body: { ...(settled.body as CheckoutRequiresActionWire), client_secret: secret } };
  // The challenge ended meanwhile: its outcome is the answer.
  const now = await stripe.retrieveIntent(charge.intentId).catch(unavailable);
  return settleCheckoutAttempt(context, attempt.organizationId, attempt.id, now, new Date());
}

const unavailable = (error: unknown): never => {
  if (error instanceof ProcessorTimeoutError) throw processorUnavailable();
  throw error;
};

/** The organization's Stripe client, for the steps only Stripe has (customers, 3-D Secure). */
async function stripeOf(context: Pick<GivingContext, "processors">, organizationId: number): Promise<StripeProcessor> {
  const account = await context.processors.stripeAccount(organizationId);
  if (!account) {
    throw new AppError("processor_unavailable", "The organization no longer takes payments with Stripe", {
      headers: { "retry-after": "60" },
    });
  }
  return account.processor;
}

/** Step 1: the attempt, PENDING with its processor key, committed before any money moves. */
async function recordAttempt(
  context: GivingContext,
  ownerId: number,
  checkoutId: number,
  input: CheckoutCompleteInput,
  request: CompletionRequest,
  prepared: PreparedGift,
): Promise<Recorded> {
  const { processor, method, fields, cardNumber } = prepared;
  const { guard } = context;
  return context.db.transaction(async (tx) => {
    const checkout = await lockCheckout(tx, ownerId, checkoutId);
    if (!checkout?.clientSecretHash || checkout.clientSecretHash !== hashSecret(input.client_secret)) {
      throw notFound("Checkout");
    }
    const organizationId = checkout.organizationId;
    const { client_secret: _secret, altcha: _altcha, card, ...rest } = input;
    const requestHash = fingerprint({ ...rest, card: card ? { ...card, number: hashSecret(card.number) } : null });
    const key = request.idempotencyKey;
    if (key !== undefined) {
      const stored = await findStoredOutcome(tx, organizationId, completionScope(checkoutId), key);
      if (stored && stored.requestHash !== requestHash) throw idempotencyKeyReused();
      if (stored) {
        return {
          kind: "replay",
          outcome: { status: stored.status, body: replayedBody(stored.body), replayed: true },
        };
      }
    }
    const pending = await lockPendingAttempt(tx, organizationId, checkoutId);
    if (pending) {
      if (key === undefined || pending.requestKey !== key) return { kind: "busy", attempt: pending };
      if (pending.requestHash !== requestHash) throw idempotencyKeyReused();
      return { kind: "attempt", attempt: pending, resumed: true };
    }

    if (checkout.state !== "OPEN") throw checkoutClosed(checkoutId);
    if (checkout.createDate.getTime() + context.checkoutTtlSeconds * 1000 <= Date.now()) {
      throw new AppError("checkout_expired", `The checkout ${checkoutId} has expired; start a new one`);
    }
    const found = await findCampaignWithOrganization(tx, organizationId, checkout.campaignId ?? 0);
    if (!found) throw notFound("Campaign");
    const { campaign, organization } = found;
    if (campaign.status === "draft") throw notFound("Campaign");
    if (campaign.archiveDate) throw campaignClosed();
    assertCampaignOpen(campaign);
    checkGift(campaign, organization.currency, input.amount, input.frequency);
    const coveredFee = coveredFeeOf(campaign, organization, input.amount, input.cover_fee);
    checkSupporterFields(campaign, input.supporter);
    const tribute = checkTribute(campaign.allowTribute, input.tribute);
    const answers = checkAnswers(questionsOf(campaign), input.answers);
    checkChargeable(processor, organization.currency, fromCents(toCents(input.amount) + toCents(coveredFee)));

    const id = await nextAttemptId(tx);
    const gift: AttemptGift = {
      supporter: fields,
      consents: input.consents,
      methodLabel: method.label,
      methodReference: method.reference,
      device: deviceOf(request.userAgent),
      ...(request.locale ? { locale: request.locale } : {}),
      ...(tribute.tributeType ? { tribute } : {}),
      ...(answers.length > 0 ? { answers } : {}),
    };
    const attempt = await insertCheckoutAttempt(tx, {
      organizationId,
      id,
      checkoutId,
      campaignId: campaign.id,
      amount: input.amount,
      coveredFee,
      frequency: input.frequency,
      processor: input.processor,
      state: "PENDING",
      idempotencyKey: `checkout:${checkoutId}:attempt:${id}`,
      requestKey: key ?? null,
      requestHash,
      cardLabel: method.label,
      cardFingerprint: cardNumber === undefined ? null : guard.cardFingerprint(cardNumber),
      clientFingerprint: guard.fingerprint("client", request.clientIp),
      gift,
    });
    return { kind: "attempt", attempt, resumed: false };
  });
}

/** What an attempt charges: the gift and the fee the donor covered. */
const chargedAmountOf = (attempt: AttemptRow) => fromCents(toCents(attempt.amount) + toCents(attempt.coveredFee));

/** Step 2: the processor call, outside any transaction; the same key never charges twice. */
async function chargeAttempt(context: Pick<GivingContext, "db" | "processors">, attempt: AttemptRow, resumed: boolean) {
  try {
    const organization = await findOrganizationCurrency(context.db, attempt.organizationId);
    if (!organization) throw notFound("Organization");
    const request = {
      amountMinor: toMinorUnits(chargedAmountOf(attempt), organization.currency),
      currency: organization.currency,
      reference: (attempt.gift as AttemptGift).methodReference,
      kind: "initial" as const,
      idempotencyKey: attempt.idempotencyKey as string,
      context: await chargeContextOf(context.db, "initial", {
        organizationId: attempt.organizationId,
        campaignId: attempt.campaignId,
        donationId: null,
        checkoutId: attempt.checkoutId,
      }),
    };
    if (attempt.processor === "stripe") return await chargeWithStripe(context, attempt, request, resumed);
    const processor = await context.processors.connect(attempt.organizationId, attempt.processor);
    if (!processor) throw new Error(`no processor "${attempt.processor}" for attempt ${attempt.id}`);
    return await processor.charge(request);
  } catch (error) {
    // The processor refused the method itself (an unknown or spent Stripe token) or the amount: nothing was charged.
    if (error instanceof AppError && (error.code === "invalid_card" || error.code === "amount_below_minimum")) {
      await abandonPendingAttempt(context.db, attempt.organizationId, attempt.id);
    }
    return unavailable(error);
  }
}

/**
 * Stripe's charge step. After the donor's 3-D Secure challenge the intent is asked for its state
 * (creating it again would replay Stripe's first answer, requires_action); a retry after a lost
 * answer looks for the intent by key first. A recurring gift's method is saved on a Customer (made
 * with a key derived from the attempt's) for off-session renewals.
 */
async function chargeWithStripe(
  context: Pick<GivingContext, "processors">,
  attempt: AttemptRow,
  request: Parameters<StripeProcessor["charge"]>[0],
  resumed: boolean,
): Promise<ChargeResult> {
  const stripe = await stripeOf(context, attempt.organizationId);
  if (attempt.processorIntentId) return stripe.retrieveIntent(attempt.processorIntentId);
  if (resumed) {
    const found = await stripe.retrieve(request.idempotencyKey);
    if (found) return found;
  }
  if (attempt.frequency === 1 || attempt.frequency === 12) {
    const { supporter } = attempt.gift as AttemptGift;
    const email = supporter.email as string;
    const name = [supporter.first_name, supporter.last_name].filter(Boolean).join(" ") || email;
    const customer = await stripe.createCustomer({
      email,
      name,
      idempotencyKey: `${request.idempotencyKey}:customer`,
    });
    return stripe.charge({ ...request, reference: stripeMethodReference(customer, request.reference) });
  }
  return stripe.charge(request);
}

/**
 * Step 3, also the entry for outcomes learnt later (the reconciler; processor webhooks next): in one
 * transaction, a decline marks the attempt DECLINED (and forgets the donor's details); a charge
 * taken or pending writes the supporter, payment method, donation and payment, settles the payment
 * and closes the checkout. An attempt settled already answers its recorded outcome.
 */
export async function settleCheckoutAttempt(
  context: SettleContext,
  organizationId: number,
  attemptId: number,
  charge: ChargeResult,
  now: Date,
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  const step = async (name: CompletionStep) => {
    await context.afterStep?.(name);
  };
  return withEvents(context.db, async (tx) => {
    const ref = await findAttemptCheckoutId(tx, organizationId, attemptId);
    if (!ref) throw notFound("Checkout attempt");
    // The checkout before the attempt, in the order the record step locks them.
    const checkout = await lockCheckout(tx, organizationId, ref.checkoutId);
    const attempt = await lockAttempt(tx, organizationId, attemptId);
    if (!checkout || !attempt) throw notFound("Checkout");
    if (attempt.state !== "PENDING") {
      await completeMethodLearntLate(tx, attempt, checkout, charge);
      return settledOutcome(tx, attempt, checkout);
    }
    const finish = async (outcome: Outcome<CompletionBody>) => {
      if (attempt.requestKey !== null && attempt.requestHash !== null) {
        await storeOutcome(
          tx,
          organizationId,
          completionScope(checkout.id),
          attempt.requestKey,
          attempt.requestHash,
          outcome,
        );
      }
      return { ...outcome, replayed: false };
    };

    if (charge.state === "PENDING" && charge.reason === "requires_action") {
      // Nothing is settled while the donor authenticates: the same request sent again asks Stripe.
      if (attempt.processorIntentId !== charge.intentId) {
        await updateAttempt(tx, organizationId, attempt.id, { processorIntentId: charge.intentId });
      }
      const body: CheckoutRequiresActionWire = {
        result: "requires_action",
        checkout_id: checkout.id,
        client_secret: "",
      };
      return { status: 202, body, replayed: false };
    }

    if (charge.state === "FAILED") {
      await updateAttempt(tx, organizationId, attempt.id, {
        state: "DECLINED",
        failureCode: charge.code,
        failureMessage: charge.message,
        processorIntentId: charge.intentId,
        gift: null,
      });
      return finish({ status: 402, body: paymentFailedProblem(charge.code, charge.message, attempt.id) });
    }

    const gift = attempt.gift as AttemptGift | null;
    if (!gift) throw new Error(`checkout attempt ${attempt.id} has no gift to settle`);
    // Kept as the donor gave them: the questions' wording of that moment, whatever edits follow.
    // The recipient of a tribute's notice reads the name typed with this gift, never a stored record's.
    const typedName =
      [gift.supporter.first_name, gift.supporter.last_name]
        .filter((part) => part?.trim())
        .join(" ")
        .trim() ||
      gift.supporter.business_name?.trim() ||
      null;
    const extras = {
      ...gift.tribute,
      tributeDonorName: gift.tribute?.tributeRecipientEmail ? typedName : null,
      answers: gift.answers ?? [],
    };
    const found = await findCampaignWithOrganization(tx, organizationId, attempt.campaignId ?? 0);
    if (!found) throw notFound("Campaign");
    const { campaign, organization } = found;
    const amount = attempt.amount;
    const frequency = (attempt.frequency ?? 0) as Frequency;
    // A gift the sandbox took in test mode is test data: no real money moved.
    const test = attempt.processor === "sandbox" && organization.testMode;

    const { supporter, ...declaration } = await matchSupporter(
      tx,
      organizationId,
      gift.supporter,
      gift.consents,
      isLocale(gift.locale) ? gift.locale : undefined,
    );
    // The donor's doing, whoever reports the charge's outcome (their request, a webhook, the reconciler).
    const donor = { organizationId, origin: donorOrigin(supporter.id) };
    if (declaration.applied) {
      await recordEvent(tx, donor, "supporter.created", supporter.id, supporterToWire(supporter));
    }
    await step("supporter");
    // The processor's word on the method when it has one (Stripe: brand and last digits, the saved cus_…/pm_…).
    const charged = charge.state === "PAID" || charge.state === "PENDING" ? charge.method : undefined;
    const methodRow = await insertPaymentMethod(tx, {
      organizationId,
      supporterId: supporter.id,
      processor: attempt.processor,
      label: charged?.label ?? gift.methodLabel,
      reference: charged?.reference ?? gift.methodReference,
      expiryMonth: charged?.expiryMonth,
      expiryYear: charged?.expiryYear,
    });
    await step("payment_method");

    // A checkout declined before declines stopped writing donations may hold a pending one: reuse it.
    let donation = checkout.donationId ? await lockDonation(tx, organizationId, checkout.donationId) : undefined;
    if (donation && donation.state === "pending") {
      donation = await updateDonation(tx, organizationId, donation.id, {
        supporterId: supporter.id,
        amount,
        coveredFee: attempt.coveredFee,
        frequency,
        device: gift.device,
        paymentMethodId: methodRow.id,
        test,
        ...extras,
      });
      if (donation) await recordEvent(tx, donor, "donation.updated", donation.id, donationEventData(donation));
    } else {
      donation = await insertDonation(tx, await nextDonationId(tx), {
        organizationId,
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "pending",
        amount,
        coveredFee: attempt.coveredFee,
        currency: organization.currency,
        frequency,
        device: gift.device,
        paymentMethodId: methodRow.id,
        test,
        ...extras,
      });
      await recordEvent(tx, donor, "donation.created", donation.id, donationEventData(donation));
    }
    if (!donation) throw new Error("donation write returned nothing");
    await insertConsentRecord(tx, {
      organizationId,
      supporterId: supporter.id,
      donationId: donation.id,
      source: "checkout",
      ...declaration,
    });
    await step("donation");

    const pending = await insertPayment(tx, {
      organizationId,
      donationId: donation.id,
      state: "PENDING",
      amount: chargedAmountOf(attempt),
      currency: organization.currency,
      paymentMethodId: methodRow.id,
      processorIntentId: charge.intentId,
      test,
      // A transfer awaited by hand is not asked of a processor again; a debit processing is (by the reconciler).
      idempotencyKey: charge.state === "PENDING" && attempt.processor === "manual" ? null : attempt.idempotencyKey,
    });
    await recordEvent(tx, donor, "payment.created", pending.id, paymentToWire(pending, methodRow));
    const settled = await settlePayment(tx, context.links, donor, pending.id, charge, now);
    const { payment } = settled;
    donation = settled.donation;
    await step("payment");

    // The worker may have expired the checkout while the charge was in flight: the money is recorded all the same.
    if (checkout.state === "OPEN") assertTransition("checkout", checkout.id, checkout.state, "CLOSED");
    const closed = await updateCheckout(tx, organizationId, checkout.id, {
      supporterId: supporter.id,
      donationId: donation.id,
      paymentId: payment.id,
      amount,
      frequency,
      costExampleQuantity: costExampleQuantity(campaign, amount),
      state: "CLOSED",
      completedDate: now,
    });
    if (!closed) throw notFound("Checkout");
    await step("checkout");
    await updateAttempt(tx, organizationId, attempt.id, {
      state: "SUCCEEDED",
      processorIntentId: charge.intentId,
      gift: null,
    });
    // The checkout as the API returns it by id, from the rows the completion wrote (nothing is read again).
    await recordEvent(
      tx,
      donor,
      "checkout.completed",
      checkout.id,
      checkoutToWire({
        checkout: closed,
        campaign,
        supporter: settled.supporter ?? supporter,
        donation,
        payment,
        method: methodRow,
      }),
    );

    return finish({ status: 200, body: completedBody(organization, checkout.id, donation, payment, methodRow) });
  });
}

/**
 * A Stripe event settled the attempt before Stripe's answer to our charge arrived: the event names
 * the method only by id, so the row kept the donor's token. The answer's method (label, the
 * `cus_…/pm_…` renewals charge) replaces it.
 */
async function completeMethodLearntLate(
  tx: Executor,
  attempt: AttemptRow,
  checkout: CheckoutRow,
  charge: ChargeResult,
) {
  const charged = charge.state === "FAILED" ? undefined : charge.method;
  if (attempt.state !== "SUCCEEDED" || !charged || checkout.paymentId === null) return;
  const payment = await lockPayment(tx, attempt.organizationId, checkout.paymentId);
  const method = await findPaymentMethod(tx, attempt.organizationId, payment?.paymentMethodId ?? null);
  if (!method?.processorReference?.startsWith("ctoken_")) return;
  await replacePlaceholderMethod(tx, attempt.organizationId, method.id, method.processorReference, charged);
}

/** The answer of an attempt settled already (by a concurrent retry or the reconciler). */
async function settledOutcome(
  tx: Executor,
  attempt: AttemptRow,
  checkout: CheckoutRow,
): Promise<Outcome<CompletionBody> & { replayed: boolean }> {
  if (attempt.requestKey !== null) {
    const stored = await findStoredOutcome(
      tx,
      attempt.organizationId,
      completionScope(checkout.id),
      attempt.requestKey,
    );
    if (stored) return { status: stored.status, body: replayedBody(stored.body), replayed: true };
  }
  if (attempt.state === "DECLINED") {
    const body = paymentFailedProblem(
      attempt.failureCode ?? "card_declined",
      attempt.failureMessage ?? "The card was declined",
      attempt.id,
    );
    return { status: 402, body, replayed: true };
  }
  if (attempt.state === "ABANDONED" || checkout.donationId === null || checkout.paymentId === null) {
    throw new AppError("checkout_attempt_abandoned", `The payment attempt ${attempt.id} was never charged; try again`);
  }
  const donation = await findDonation(tx, attempt.organizationId, checkout.donationId);
  const payment = await lockPayment(tx, attempt.organizationId, checkout.paymentId);
  if (!donation || !payment) throw notFound("Checkout");
  const organization = await findOrganizationById(tx, attempt.organizationId);
  const method = await findPaymentMethod(tx, attempt.organizationId, payment.paymentMethodId);
  if (!organization) throw notFound("Checkout");
  return { status: 200, body: completedBody(organization, checkout.id, donation, payment, method), replayed: true };
}

/** A stored answer replayed: its donation and payment in today's shape (answers stored before a field existed lack it). */
function replayedBody(body: unknown): CompletionBody {
  const stored = body as CompletionBody;
  if (!("donation" in stored) || !stored.donation) return stored;
  return { ...stored, donation: storedDonationToWire(stored.donation), payment: storedPaymentToWire(stored.payment) };
}

/** A completed checkout as the donor's page gets it; bank transfers come with where to send the money. */
function completedBody(
  organization: OrganizationRow,
  checkoutId: number,
  donation: DonationRow,
  payment: PaymentRow,
  method: PaymentMethodRow | undefined,
): CheckoutCompletedWire {
  const bank = method?.processor === "manual" ? bankTransferToWire(organization) : null;
  return {
    result: payment.state === "PAID" ? "succeeded" : "pending",
    // A debit Stripe is still collecting (SEPA: days), as opposed to a transfer awaited by hand.
    processing: payment.state === "PENDING" && method?.processor === "stripe",
    checkout_id: checkoutId,
    donation: donationToWire(donation),
    payment: paymentToWire(payment, method),
    receipt_url: donation.receiptUrl,
    bank_transfer: bank && { ...bank, reference: donation.code },
  };
}

/**
 * The reconciler's step for one attempt left PENDING (a crash, a timeout): asks the processor what
 * became of its key and settles that; an attempt the processor never received is ABANDONED.
 */
export async function reconcileCheckoutAttempt(
  context: SettleContext & Pick<GivingContext, "processors">,
  attempt: AttemptRow,
  now: Date,
) {
  const processor = await context.processors.connect(attempt.organizationId, attempt.processor);
  if (!processor || attempt.idempotencyKey === null) throw new Error(`attempt ${attempt.id} cannot be reconciled`);
  let charge = attempt.processorIntentId
    ? await (await stripeOf(context, attempt.organizationId)).retrieveIntent(attempt.processorIntentId)
    : await processor.retrieve(attempt.idempotencyKey);
  // A donor who never finished 3-D Secure (or submitted anew): the intent is canceled, the attempt declined.
  if (charge?.state === "PENDING" && charge.reason === "requires_action" && attempt.processor === "stripe") {
    charge = await (await stripeOf(context, attempt.organizationId)).cancelIntent(charge.intentId);
  }
  if (charge) {
    await settleCheckoutAttempt(context, attempt.organizationId, attempt.id, charge, now);
    return;
  }
  await abandonPendingAttempt(context.db, attempt.organizationId, attempt.id);
}

/** Every checkout attempt PENDING since before the cutoff, reconciled. */
export async function reconcileCheckoutAttempts(
  context: Pick<GivingContext, "db" | "links" | "processors">,
  options: { now: Date; cutoff: Date; limit: number },
): Promise<ReconcileResult> {
  const { cutoff } = options;
  const stale = await listStalePendingAttempts(context.db, cutoff, options.limit);
  const result: ReconcileResult = { reconciled: 0, errors: 0 };
  for (const attempt of stale) {
    await reconcileOne(result, async () => {
      await reconcileCheckoutAttempt(context, attempt, options.now);
      return true;
    });
  }
  return result;
}

/** A declined charge, kept as the completion's stored (replayed) answer. */
export function paymentFailedProblem(code: string, message: string, attemptId: number) {
  return problemBodyOf(
    new AppError("payment_failed", `${message}. Nothing was charged; try another card or payment method.`, {
      errors: [{ field: "card", message: `${code}: attempt ${attemptId} was declined` }],
    }),
  );
}
