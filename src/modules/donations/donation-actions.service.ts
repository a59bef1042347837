import { and, eq, sql } from "drizzle-orm";
import type { Scope } from "../../auth/scope.js";
import type { Executor } from "../../db/client.js";
import { campaigns, donations, organizations, type payments, supporters } from "../../db/schema.js";
import { AppError, notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { hasCentPrecision } from "../../payments/money.js";
import { assertTransition } from "../../payments/transitions.js";
import {
  cancelRenewals,
  donationCode,
  findMethod,
  insertPayment,
  insertPaymentMethod,
  lockDonation,
  nextId,
  setCertificationUrl,
} from "../giving/giving.repo.js";
import { idempotent } from "../giving/idempotency.js";
import type { GivingDb } from "../payments/payment-actions.service.js";
import { paymentToWire } from "../payments/payments.service.js";
import type { OfflineDonationBody } from "./donation-actions.schemas.js";
import { donationToWire } from "./donations.service.js";

async function paymentWire(tx: Executor, organizationId: number, row: typeof payments.$inferSelect) {
  return paymentToWire(row, await findMethod(tx, organizationId, row.paymentMethodId));
}

/** Stops a recurring donation: active or past_due → revoked; no renewal is charged afterwards. */
export async function cancelDonation(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Donation");
  return context.db.transaction(async (tx) => {
    // Jobs before the donation, in the worker's lock order, so a cancel racing a renewal never deadlocks.
    await cancelRenewals(tx, scope.organizationId, id);
    const donation = await lockDonation(tx, scope.organizationId, id);
    if (!donation) throw notFound("Donation");
    if (donation.frequency !== 1 && donation.frequency !== 12) {
      throw new AppError(
        "invalid_state_transition",
        `The donation ${donation.id} is not recurring; refund its payment to revoke it`,
      );
    }
    if (donation.state !== "active" && donation.state !== "past_due") {
      assertTransition("donation", donation.id, donation.state, "revoked");
    }
    const [row] = await tx
      .update(donations)
      .set({ state: "revoked", nextChargeDate: null, updateDate: sql`now()` })
      .where(and(eq(donations.organizationId, scope.organizationId), eq(donations.id, donation.id)))
      .returning();
    if (!row) throw notFound("Donation");
    return donationToWire(row);
  });
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
  const outcome = await context.db.transaction((tx) =>
    idempotent(tx, scope.organizationId, "donations:offline", idempotencyKey, input, async () => {
      const [supporter] = await tx
        .select()
        .from(supporters)
        .where(and(eq(supporters.organizationId, scope.organizationId), eq(supporters.id, input.supporter_id)));
      if (!supporter) {
        throw new AppError("unknown_reference", `Supporter ${input.supporter_id} not found`, {
          errors: [{ field: "supporter_id", message: "no such supporter in this organization" }],
        });
      }
      const [campaign] = await tx
        .select()
        .from(campaigns)
        .where(and(eq(campaigns.organizationId, scope.organizationId), eq(campaigns.id, input.campaign_id)));
      if (!campaign) {
        throw new AppError("unknown_reference", `Campaign ${input.campaign_id} not found`, {
          errors: [{ field: "campaign_id", message: "no such campaign in this organization" }],
        });
      }
      const [organization] = await tx
        .select({ currency: organizations.currency })
        .from(organizations)
        .where(eq(organizations.id, scope.organizationId));
      if (!organization) throw notFound("Organization");
      const { currency } = organization;
      const method = await insertPaymentMethod(tx, {
        organizationId: scope.organizationId,
        supporterId: supporter.id,
        processor: "manual",
        label: input.label ?? "Cash",
        reference: "manual",
      });
      const id = await nextId(tx, "donations");
      const [donation] = await tx
        .insert(donations)
        .values({
          organizationId: scope.organizationId,
          id,
          code: donationCode(id),
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
        })
        .returning();
      if (!donation) throw new Error("donation insert returned nothing");
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
      if (!supporter.eraseDate) {
        await setCertificationUrl(
          tx,
          scope.organizationId,
          supporter.id,
          context.links.statementUrl(scope.organizationId, supporter.id),
        );
      }
      return {
        status: 201,
        body: { donation: donationToWire(donation), payment: await paymentWire(tx, scope.organizationId, payment) },
      };
    }),
  );
  return outcome;
}
