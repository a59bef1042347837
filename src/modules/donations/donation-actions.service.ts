import type { Scope } from "../../auth/scope.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { recordEvent, withEvents } from "../../events/record-event.js";
import { idempotent } from "../../http/idempotency.js";
import { parseId } from "../../http/ids.js";
import { fitsCurrency, hasCentPrecision, precisionRule } from "../../payments/money.js";
import { findCampaign, findOrganizationCurrency } from "../giving/checkout-flow.repo.js";
import { insertPaymentMethod } from "../payment-methods/payment-methods.repo.js";
import type { GivingDb } from "../payments/payment-actions.service.js";
import { insertPayment } from "../payments/payments.repo.js";
import { paymentToWire, storedPaymentToWire } from "../payments/payments.service.js";
import { findSupporter, setCertificationUrl } from "../supporters/supporters.repo.js";
import { supporterToWire } from "../supporters/supporters.service.js";
import type { OfflineDonationBody } from "./donation-actions.schemas.js";
import { insertDonation, nextDonationId } from "./donations.repo.js";
import { donationToWire, storedDonationToWire } from "./donations.service.js";
import { cancelRecurring, type RecurringActor } from "./recurring-changes.service.js";

/** Stops a recurring donation: active or past_due → revoked; no renewal is charged afterwards. */
export function cancelDonation(
  context: GivingDb,
  scope: Scope,
  rawId: string,
  actor: RecurringActor,
  reason?: string | null,
) {
  return cancelRecurring(context, scope.organizationId, parseId(rawId, "Donation"), { reason }, actor);
}

/** A gift received outside the platform (cash, cheque, bank transfer): a done donation with a PAID payment. */
export async function recordOfflineDonation(
  context: GivingDb,
  scope: Scope,
  input: OfflineDonationBody,
  idempotencyKey?: string,
) {
  if (!hasCentPrecision(input.amount)) {
    throw new AppError("invalid_request", 'Invalid field "amount": must have at most 2 decimals', {
      errors: [{ field: "amount", message: "must have at most 2 decimals" }],
    });
  }
  const paymentDate = input.payment_date ? new Date(input.payment_date) : new Date();
  if (paymentDate.getTime() > Date.now() + 60_000) {
    throw new AppError("invalid_request", 'Invalid field "payment_date": must not be in the future', {
      errors: [{ field: "payment_date", message: "must not be in the future" }],
    });
  }
  const outcome = await withEvents(context.db, (tx) =>
    idempotent(tx, scope.organizationId, "donations:offline", idempotencyKey, input, async () => {
      const supporter = await findSupporter(tx, scope.organizationId, input.supporter_id);
      if (!supporter) {
        throw new AppError("unknown_reference", `Supporter ${input.supporter_id} not found`, {
          errors: [{ field: "supporter_id", message: "no such supporter in this organization" }],
        });
      }
      const campaign = await findCampaign(tx, scope.organizationId, input.campaign_id);
      if (!campaign) {
        throw new AppError("unknown_reference", `Campaign ${input.campaign_id} not found`, {
          errors: [{ field: "campaign_id", message: "no such campaign in this organization" }],
        });
      }
      const organization = await findOrganizationCurrency(tx, scope.organizationId);
      if (!organization) throw notFound("Organization");
      const { currency } = organization;
      if (!fitsCurrency(input.amount, currency)) {
        const rule = precisionRule(currency);
        throw new AppError("invalid_request", `Invalid field "amount": must ${rule}`, {
          errors: [{ field: "amount", message: `must ${rule}` }],
        });
      }
      const method = await insertPaymentMethod(tx, {
        organizationId: scope.organizationId,
        supporterId: supporter.id,
        processor: "manual",
        label: input.label ?? "Cash",
        reference: "manual",
      });
      const id = await nextDonationId(tx);
      const donation = await insertDonation(tx, id, {
        organizationId: scope.organizationId,
        supporterId: supporter.id,
        campaignId: campaign.id,
        state: "done",
        amount: input.amount,
        currency,
        frequency: 0,
        note: input.note ?? null,
        completedDate: paymentDate,
        paymentMethodId: method.id,
        receiptUrl: context.links.receiptUrl(scope.organizationId, id),
      });
      const payment = await insertPayment(tx, {
        organizationId: scope.organizationId,
        donationId: donation.id,
        state: "PAID",
        amount: input.amount,
        currency,
        paymentDate,
        paymentMethodId: method.id,
        processorIntentId: null,
      });
      const paymentBody = paymentToWire(payment, method);
      await recordEvent(tx, scope, "donation.created", donation.id, donationToWire(donation));
      // Received already: created paid, and told as paid to whoever waits for payments.
      await recordEvent(tx, scope, "payment.created", payment.id, paymentBody);
      await recordEvent(tx, scope, "payment.paid", payment.id, paymentBody);
      if (!supporter.eraseDate) {
        const updated = await setCertificationUrl(
          tx,
          scope.organizationId,
          supporter.id,
          context.links.statementUrl(scope.organizationId, supporter.id),
        );
        if (updated) await recordEvent(tx, scope, "supporter.updated", updated.id, supporterToWire(updated));
      }
      return { status: 201, body: { donation: donationToWire(donation), payment: paymentBody } };
    }),
  );
  if (!outcome.replayed) return outcome;
  const { donation, payment } = outcome.body;
  return { ...outcome, body: { donation: storedDonationToWire(donation), payment: storedPaymentToWire(payment) } };
}
