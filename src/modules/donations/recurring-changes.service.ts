import { randomUUID } from "node:crypto";
import type { Executor } from "../../db/client.js";
import { AppError, notFound } from "../../errors/app-error.js";
import type { EventOrigin } from "../../events/origin.js";
import { type EventChanges, recordEvent, withEvents } from "../../events/record-event.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";
import { cancelRenewals, queueRenewal } from "../../jobs/jobs.repo.js";
import { fromCents, hasCentPrecision, toCents, toMinorUnits } from "../../payments/money.js";
import { findProcessor } from "../../payments/processors/index.js";
import type { CardDetails } from "../../payments/processors/processor.js";
import { sandboxDescription } from "../../payments/processors/sandbox.js";
import { parseReference, SETUP_INTENT_ID, stripeMethodReference } from "../../payments/processors/stripe.js";
import { cycleDueDate } from "../../payments/schedule.js";
import { transitionDonation } from "../../payments/transitions.js";
import { checkGift } from "../giving/campaign-rules.js";
import { findCampaign } from "../giving/checkout-flow.repo.js";
import { findPaymentMethod, insertPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import type { GivingDb } from "../payments/payment-actions.service.js";
import { findSupporter } from "../supporters/supporters.repo.js";
import { type DonationRow, findDonation, lockDonation, updateDonation } from "./donations.repo.js";
import { donationToWire } from "./donations.service.js";
import { cycleOfJob, lockQueuedRenewal } from "./recurring-changes.repo.js";

/**
 * Changes to a recurring gift, the same for the admin (GraphQL, REST cancel) and the donor (portal):
 * each in one transaction with its audit event and its confirmation email (outbox), none when refused.
 */

/** Who asks for a change: the donor in the portal, or a member or application of the organization. */
export interface RecurringActor {
  by: "donor" | "admin";
  /** Who and where, for the change's event (absent: the platform). */
  origin?: EventOrigin;
}

export const donorActor = (origin?: EventOrigin): RecurringActor => ({ by: "donor", origin });

/** A member (GraphQL, the panel) or an application (REST) of the organization. */
export const adminActor = (origin?: EventOrigin): RecurringActor => ({ by: "admin", origin });

export const MAX_PAUSE_CYCLES = 3;
export const MAX_CANCEL_REASON = 500;

const invalid = (field: string, message: string) =>
  new AppError("invalid_request", `Invalid field "${field}": ${message}`, { errors: [{ field, message }] });

const refused = (donation: DonationRow, message: string) =>
  new AppError("invalid_state_transition", `The donation ${donation.id} ${message}`);

type RecurringRow = DonationRow & { frequency: 1 | 12; completedDate: Date };

/** A recurring donation in one of the states a change is allowed in, else 409. */
function requireRecurring(
  donation: DonationRow | undefined,
  states: readonly string[],
  what: string,
): asserts donation is RecurringRow {
  if (!donation) throw notFound("Donation");
  if ((donation.frequency !== 1 && donation.frequency !== 12) || !donation.completedDate) {
    throw refused(donation, "is not an active recurring gift");
  }
  if (!states.includes(donation.state)) {
    throw refused(donation, `is ${donation.state}: ${what}`);
  }
}

/** The first billing cycle due after `after` (and not before `notBefore`), on the gift's schedule. */
function nextCycleAfter(donation: RecurringRow, frequency: 1 | 12, after: Date, notBefore?: Date | null) {
  let cycle = 1;
  const due = () => cycleDueDate(donation.completedDate, frequency, cycle);
  while (due() <= after || (notBefore && due() < notBefore)) cycle++;
  return { cycle, date: due() };
}

/**
 * The change's `donation.updated` event, in the change's transaction: the donation as the change left
 * it, the fields that changed, and what the donation's API fields do not show (a pause, the new
 * method, next charge date). A state change has recorded its event through `transitionDonation`.
 */
function recordChange(
  tx: Executor,
  before: DonationRow,
  after: DonationRow,
  actor: RecurringActor,
  also: EventChanges = {},
) {
  return recordEvent(
    tx,
    { organizationId: after.organizationId, origin: actor.origin },
    "donation.updated",
    after.id,
    donationToWire(after),
    {
      before: donationToWire(before),
      also: {
        ...(iso(before.nextChargeDate) === iso(after.nextChargeDate)
          ? {}
          : { next_charge_date: { before: iso(before.nextChargeDate), after: iso(after.nextChargeDate) } }),
        ...also,
      },
    },
  );
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** The new amount of each renewal from the next one on, within the campaign's rules for recurring gifts. */
export async function changeRecurringAmount(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  amount: number,
  actor: RecurringActor,
) {
  if (!Number.isFinite(amount) || amount <= 0 || amount > 1_000_000_000) {
    throw new AppError("invalid_amount", "The amount must be greater than 0", {
      errors: [{ field: "amount", message: "must be greater than 0" }],
    });
  }
  if (!hasCentPrecision(amount)) {
    throw new AppError("invalid_amount", "The amount must have at most 2 decimals", {
      errors: [{ field: "amount", message: "The amount must have at most 2 decimals" }],
    });
  }
  return withEvents(context.db, async (tx) => {
    const donation = await lockDonation(tx, organizationId, donationId);
    requireRecurring(donation, ["active", "past_due"], "only an active gift's amount can change");
    const campaign = await findCampaign(tx, organizationId, donation.campaignId);
    if (!campaign) throw notFound("Campaign");
    // The amount rules of recurring gifts, even should the campaign no longer take new ones.
    checkGift({ ...campaign, hasSubscription: true }, donation.currency, amount, donation.frequency);
    // Each renewal charges amount + covered fee: an amount the method's processor would refuse (Stripe's minimum) is refused now.
    const method = await findPaymentMethod(tx, organizationId, donation.paymentMethodId);
    const charged = fromCents(toCents(amount) + toCents(donation.coveredFee));
    if (method)
      findProcessor(method.processor)?.checkAmount(toMinorUnits(charged, donation.currency), donation.currency);
    // The amount it already has: nothing changes, nothing is recorded (as a frequency it already has).
    if (toCents(amount) === toCents(donation.amount)) return donationToWire(donation);
    const row = await updateDonation(tx, organizationId, donation.id, { amount });
    if (!row) throw notFound("Donation");
    await recordChange(tx, donation, row, actor);
    return donationToWire(row);
  });
}

/**
 * Monthly ↔ yearly, if the campaign takes recurring gifts: the next charge is the first date of the
 * new schedule after now (anchored on the first payment, like every renewal), not before a pause ends.
 */
export async function changeRecurringFrequency(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  frequency: number,
  actor: RecurringActor,
  now = new Date(),
) {
  if (frequency !== 1 && frequency !== 12) throw invalid("frequency", "must be 12 (monthly) or 1 (yearly)");
  const current = await findDonation(context.db, organizationId, donationId);
  if (current && current.frequency === frequency && current.state === "active") return donationToWire(current);
  return withEvents(context.db, async (tx) => {
    // Jobs before the donation, in the worker's lock order.
    await cancelRenewals(tx, organizationId, donationId);
    const donation = await lockDonation(tx, organizationId, donationId);
    requireRecurring(donation, ["active"], "update its payment method first");
    const campaign = await findCampaign(tx, organizationId, donation.campaignId);
    if (!campaign) throw notFound("Campaign");
    checkGift(campaign, donation.currency, undefined, frequency);
    const next = nextCycleAfter(donation, frequency, now, donation.pausedUntil);
    const row = await updateDonation(tx, organizationId, donation.id, { frequency, nextChargeDate: next.date });
    if (!row) throw notFound("Donation");
    await queueRenewal(tx, { organizationId, donationId: row.id, cycle: next.cycle, runDate: next.date });
    await recordChange(tx, donation, row, actor);
    return donationToWire(row);
  });
}

/** Skips the next 1–3 renewals: the queued renewal moves that many cycles ahead; nothing is charged before. */
export async function pauseRecurring(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  cycles: number,
  actor: RecurringActor,
  now = new Date(),
) {
  if (!Number.isInteger(cycles) || cycles < 1 || cycles > MAX_PAUSE_CYCLES) {
    throw invalid("cycles", `must be 1 to ${MAX_PAUSE_CYCLES}`);
  }
  return withEvents(context.db, async (tx) => {
    const job = await lockQueuedRenewal(tx, organizationId, donationId);
    const donation = await lockDonation(tx, organizationId, donationId);
    requireRecurring(donation, ["active"], "only an active gift can be paused");
    if (donation.pausedUntil && donation.pausedUntil > now) {
      throw refused(donation, `is already paused until ${donation.pausedUntil.toISOString()}`);
    }
    const queuedCycle = job ? cycleOfJob(job.payload) : undefined;
    const from = queuedCycle ?? nextCycleAfter(donation, donation.frequency, now).cycle;
    const cycle = from + cycles;
    const resume = cycleDueDate(donation.completedDate, donation.frequency, cycle);
    await cancelRenewals(tx, organizationId, donation.id);
    const row = await updateDonation(tx, organizationId, donation.id, { pausedUntil: resume, nextChargeDate: resume });
    if (!row) throw notFound("Donation");
    await queueRenewal(tx, { organizationId, donationId: row.id, cycle, runDate: resume });
    await recordChange(tx, donation, row, actor, {
      paused_until: { before: iso(donation.pausedUntil), after: iso(row.pausedUntil) },
    });
    return donationToWire(row);
  });
}

/** Ends a pause early: the next renewal is the schedule's first date after now. */
export async function resumeRecurring(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  actor: RecurringActor,
  now = new Date(),
) {
  return withEvents(context.db, async (tx) => {
    await cancelRenewals(tx, organizationId, donationId);
    const donation = await lockDonation(tx, organizationId, donationId);
    requireRecurring(donation, ["active"], "only an active gift can be resumed");
    if (!donation.pausedUntil || donation.pausedUntil <= now) throw refused(donation, "is not paused");
    const next = nextCycleAfter(donation, donation.frequency, now);
    const row = await updateDonation(tx, organizationId, donation.id, { pausedUntil: null, nextChargeDate: next.date });
    if (!row) throw notFound("Donation");
    await queueRenewal(tx, { organizationId, donationId: row.id, cycle: next.cycle, runDate: next.date });
    await recordChange(tx, donation, row, actor, {
      paused_until: { before: iso(donation.pausedUntil), after: null },
    });
    return donationToWire(row);
  });
}

/** Stops a recurring donation: active or past_due → revoked, who stopped it and why kept; no renewal follows. */
export async function cancelRecurring(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  options: { reason?: string | null },
  actor: RecurringActor,
) {
  const reason = options.reason?.trim() || null;
  if (reason && reason.length > MAX_CANCEL_REASON) {
    throw invalid("reason", `must be at most ${MAX_CANCEL_REASON} characters`);
  }
  return withEvents(context.db, async (tx) => {
    // Jobs before the donation, in the worker's lock order, so a cancel racing a renewal never deadlocks.
    await cancelRenewals(tx, organizationId, donationId);
    const donation = await lockDonation(tx, organizationId, donationId);
    if (!donation) throw notFound("Donation");
    if (donation.frequency !== 1 && donation.frequency !== 12) {
      throw new AppError(
        "invalid_state_transition",
        `The donation ${donation.id} is not recurring; refund its payment to revoke it`,
      );
    }
    const row = await transitionDonation(
      tx,
      { organizationId, origin: actor.origin },
      donation,
      "revoked",
      () =>
        updateDonation(tx, organizationId, donation.id, {
          state: "revoked",
          nextChargeDate: null,
          pausedUntil: null,
          cancelledBy: actor.by,
          cancelReason: reason,
        }),
      { cancelled_by: { before: null, after: actor.by }, cancel_reason: { before: null, after: reason } },
    );
    return donationToWire(row);
  });
}

/** An imported recurring gift that charges nobody until an admin turns it on (docs/import.md). */
export const awaitingActivation = (donation: DonationRow): donation is RecurringRow =>
  donation.activation !== null &&
  donation.state === "pending" &&
  (donation.frequency === 1 || donation.frequency === 12) &&
  donation.completedDate !== null;

/**
 * Turns an imported recurring gift on with a method Donata can charge: active, its next charge the
 * first cycle (counted from its first payment's day) after now and not before the date the other
 * platform would have charged next, that cycle's renewal queued.
 */
async function turnOn(
  tx: Executor,
  donation: RecurringRow,
  methodId: number,
  actor: RecurringActor,
  now: Date,
  also: EventChanges = {},
) {
  const next = nextCycleAfter(donation, donation.frequency, now, donation.nextChargeDate);
  const row = await transitionDonation(
    tx,
    { organizationId: donation.organizationId, origin: actor.origin },
    donation,
    "active",
    () =>
      updateDonation(tx, donation.organizationId, donation.id, {
        state: "active",
        activation: null,
        paymentMethodId: methodId,
        nextChargeDate: next.date,
      }),
    {
      activation: { before: donation.activation, after: null },
      next_charge_date: { before: iso(donation.nextChargeDate), after: iso(next.date) },
      ...also,
    },
  );
  await queueRenewal(tx, {
    organizationId: donation.organizationId,
    donationId: donation.id,
    cycle: next.cycle,
    runDate: next.date,
  });
  return row;
}

/** What turning an imported gift on did: it runs now, or its donor was asked to set up a card. */
export type ActivationOutcome = "activated" | "card_requested";

/**
 * An admin turns an imported recurring gift on. With a Stripe customer and payment method from the
 * file that Stripe confirms are saved together (asked outside any transaction), it runs at once on
 * that method. Otherwise its donor is emailed a link to set up a card (in their language, through the
 * outbox), and it runs once they have. Refused when nobody could set up a card (no card processor,
 * or a donor without an email address).
 */
export async function activateImportedDonation(
  context: Pick<GivingDb, "db" | "processors">,
  organizationId: number,
  donationId: number,
  actor: RecurringActor,
  now = new Date(),
): Promise<{ donation: ReturnType<typeof donationToWire>; outcome: ActivationOutcome }> {
  const donation = await findDonation(context.db, organizationId, donationId);
  if (!donation) throw notFound("Donation");
  if (!awaitingActivation(donation))
    throw refused(donation, "is not an imported recurring gift waiting to be turned on");
  const method = await findPaymentMethod(context.db, organizationId, donation.paymentMethodId);
  const account = await context.processors.stripeAccount(organizationId);
  let verified: Awaited<ReturnType<NonNullable<typeof account>["processor"]["customerPaymentMethod"]>> = null;
  if (account && method?.processor === "stripe" && method.processorReference) {
    const { customer, paymentMethod } = parseReference(method.processorReference);
    if (customer) verified = await account.processor.customerPaymentMethod(customer, paymentMethod);
  }
  if (!verified) {
    if (!account && (await context.processors.mode(organizationId))?.card !== "sandbox") {
      throw new AppError(
        "processor_not_connected",
        "The organization takes no cards online: connect Stripe before turning imported recurring gifts on",
      );
    }
    const supporter = await findSupporter(context.db, organizationId, donation.supporterId);
    if (!supporter?.email?.trim() || supporter.eraseDate) {
      throw refused(donation, "has no usable card and its donor no email address: nobody can be asked to set one up");
    }
    if (donation.activation === "card_requested")
      return { donation: donationToWire(donation), outcome: "card_requested" };
  }
  return withEvents(context.db, async (tx) => {
    const locked = await lockDonation(tx, organizationId, donationId);
    if (!locked) throw notFound("Donation");
    if (!awaitingActivation(locked)) throw refused(locked, "is not an imported recurring gift waiting to be turned on");
    if (verified && method?.processorReference) {
      const row = await insertPaymentMethod(tx, {
        organizationId,
        supporterId: locked.supporterId,
        processor: "stripe",
        label: verified.label,
        reference: method.processorReference,
        expiryMonth: verified.expiryMonth,
        expiryYear: verified.expiryYear,
      });
      const updated = await turnOn(tx, locked, row.id, actor, now);
      return { donation: donationToWire(updated), outcome: "activated" as const };
    }
    const updated = await updateDonation(tx, organizationId, locked.id, { activation: "card_requested" });
    if (!updated) throw notFound("Donation");
    await recordChange(tx, locked, updated, actor, {
      activation: { before: locked.activation, after: "card_requested" },
    });
    return { donation: donationToWire(updated), outcome: "card_requested" as const };
  });
}

/** The new method a donor gave: a sandbox card, or a Stripe method saved by a SetupIntent. */
export type NewPaymentMethod =
  | { processor: "sandbox"; card: CardDetails }
  | {
      processor: "stripe";
      customerId: string;
      paymentMethodId: string;
      label: string;
      expiryMonth: number | null;
      expiryYear: number | null;
    };

/**
 * Renewals charge the new method from now on; a past_due gift is retried at once with it (its queued
 * retry moves to now). A Stripe method is checked with Stripe before (never inside the transaction).
 */
export async function replacePaymentMethod(
  context: Pick<GivingDb, "db">,
  organizationId: number,
  donationId: number,
  method: NewPaymentMethod,
  actor: RecurringActor,
  now = new Date(),
) {
  const tokenized =
    method.processor === "sandbox"
      ? {
          ...sandboxDescription.tokenize({ card: method.card }),
          expiryMonth: Number(method.card.exp_month),
          expiryYear: Number(method.card.exp_year),
        }
      : {
          label: method.label,
          reference: stripeMethodReference(method.customerId, method.paymentMethodId),
          expiryMonth: method.expiryMonth,
          expiryYear: method.expiryYear,
        };
  return withEvents(context.db, async (tx) => {
    const job = await lockQueuedRenewal(tx, organizationId, donationId);
    const donation = await lockDonation(tx, organizationId, donationId);
    const activating =
      donation !== undefined && awaitingActivation(donation) && donation.activation === "card_requested";
    if (!activating) requireRecurring(donation, ["active", "past_due"], "its payment method can no longer change");
    const previous = await findPaymentMethod(tx, organizationId, donation.paymentMethodId);
    // The same SetupIntent sent twice saves its method once.
    if (previous?.processorReference === tokenized.reference) return donationToWire(donation);
    const row = await insertPaymentMethod(tx, {
      organizationId,
      supporterId: donation.supporterId,
      processor: method.processor,
      label: tokenized.label,
      reference: tokenized.reference,
      expiryMonth: tokenized.expiryMonth,
      expiryYear: tokenized.expiryYear,
    });
    if (activating) {
      // An imported gift whose donor was asked for a card: it runs from now on.
      const started = await turnOn(tx, donation as RecurringRow, row.id, actor, now, {
        payment_method: { before: previous?.label ?? null, after: row.label },
        payment_method_id: { before: previous?.id ?? null, after: row.id },
      });
      return donationToWire(started);
    }
    const updated = await updateDonation(tx, organizationId, donation.id, {
      paymentMethodId: row.id,
      ...(donation.state === "past_due" ? { nextChargeDate: now } : {}),
    });
    if (!updated) throw notFound("Donation");
    const cycle = job ? cycleOfJob(job.payload) : undefined;
    if (donation.state === "past_due" && cycle !== undefined) {
      await cancelRenewals(tx, organizationId, donation.id);
      await queueRenewal(tx, { organizationId, donationId: donation.id, cycle, runDate: now });
    }
    await recordChange(tx, donation, updated, actor, {
      payment_method: { before: previous?.label ?? null, after: row.label },
      // Always a new method, even when its label is the old one's (the same card, a new expiry).
      payment_method_id: { before: previous?.id ?? null, after: row.id },
    });
    return donationToWire(updated);
  });
}

/** What the payment-method page needs for Stripe's Payment Element in setup mode. */
export interface StripeSetup {
  publishableKey: string;
  clientSecret: string;
}

async function stripeCustomerOf(context: Pick<GivingDb, "db">, organizationId: number, donation: DonationRow) {
  const method = await findPaymentMethod(context.db, organizationId, donation.paymentMethodId);
  if (method?.processor !== "stripe" || !method.processorReference) return undefined;
  return parseReference(method.processorReference).customer;
}

/**
 * A SetupIntent for the donor's Stripe Customer (one is made for a gift that has none yet), or
 * undefined when the organization takes cards with the sandbox. Stripe is called outside any transaction.
 */
export async function prepareStripeSetup(
  context: Pick<GivingDb, "db" | "processors">,
  organizationId: number,
  donationId: number,
): Promise<StripeSetup | undefined> {
  const account = await context.processors.stripeAccount(organizationId);
  if (!account) return undefined;
  const donation = await findDonation(context.db, organizationId, donationId);
  if (!donation) throw notFound("Donation");
  let customer = await stripeCustomerOf(context, organizationId, donation);
  if (!customer) {
    const supporter = await findSupporter(context.db, organizationId, donation.supporterId);
    customer = await account.processor.createCustomer({
      email: supporter?.email ?? "",
      name: [supporter?.firstName, supporter?.lastName].filter(Boolean).join(" "),
      idempotencyKey: `setup-customer:${organizationId}:${donation.id}`,
    });
  }
  const intent = await account.processor.createSetupIntent({
    customer,
    metadata: { donata_organization_id: String(organizationId), donata_donation_id: String(donation.id) },
    idempotencyKey: `setup:${organizationId}:${donation.id}:${randomUUID()}`,
  });
  return { publishableKey: account.row.publishableKey, clientSecret: intent.clientSecret };
}

const setupRefused = (message: string, problem: FieldProblem) =>
  new AppError("invalid_card", message, { errors: [fieldIssue("setup_intent", problem)] });

/**
 * The SetupIntent Stripe.js confirmed in the page: asked of Stripe (outside any transaction), it must
 * be this gift's, for its Customer, and succeeded; its method then becomes the gift's.
 */
export async function completeStripeSetup(
  context: Pick<GivingDb, "db" | "processors">,
  organizationId: number,
  donationId: number,
  setupIntentId: string,
  actor: RecurringActor,
) {
  if (!SETUP_INTENT_ID.test(setupIntentId)) throw invalid("setup_intent", "must be a SetupIntent id (seti_…)");
  const account = await context.processors.stripeAccount(organizationId);
  if (!account) {
    throw new AppError("processor_not_connected", "The organization no longer takes payments with Stripe");
  }
  const donation = await findDonation(context.db, organizationId, donationId);
  if (!donation) throw notFound("Donation");
  const customer = await stripeCustomerOf(context, organizationId, donation);
  const setup = await account.processor.retrieveSetupIntent(setupIntentId);
  const ours =
    setup.metadata.donata_organization_id === String(organizationId) &&
    setup.metadata.donata_donation_id === String(donation.id) &&
    setup.customer !== null &&
    (customer === undefined || setup.customer === customer);
  if (!ours)
    throw setupRefused("This payment method was not set up for this gift", fieldProblem("setup_not_this_gift"));
  if (setup.status !== "succeeded" || !setup.method) {
    throw setupRefused("The new payment method was not confirmed; try again", fieldProblem("setup_not_confirmed"));
  }
  return replacePaymentMethod(
    context,
    organizationId,
    donation.id,
    {
      processor: "stripe",
      customerId: setup.customer as string,
      paymentMethodId: setup.method.id,
      label: setup.method.label,
      expiryMonth: setup.method.expiryMonth,
      expiryYear: setup.method.expiryYear,
    },
    actor,
  );
}
