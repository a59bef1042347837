import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { campaigns, donations, organizations, payments, supporters } from "../../db/schema.js";
import { AppError, notFound } from "../../http/errors.js";
import { parseId } from "../../http/ids.js";
import { donationToWire } from "../donations/donations.service.js";
import { paymentToWire } from "../payments/payments.service.js";
import type { Scope } from "../scope.js";
import type { GivingContext } from "./giving.context.js";
import {
  cancelRenewals,
  donationCode,
  findMethod,
  insertPaymentMethod,
  lockDonation,
  lockPayment,
  nextId,
  queueRenewal,
  setCertificationUrl,
} from "./giving.repo.js";
import type { OfflineDonationBody } from "./giving.schemas.js";
import { idempotent } from "./idempotency.js";
import { hasCentPrecision } from "./money.js";
import { findProcessor } from "./processors/index.js";
import { cycleDueDate } from "./schedule.js";
import { assertTransition } from "./transitions.js";

type GivingDb = Pick<GivingContext, "db" | "links">;

async function paymentWire(tx: Executor, organizationId: number, row: typeof payments.$inferSelect) {
  return paymentToWire(row, await findMethod(tx, organizationId, row.paymentMethodId));
}

/** PAID → REFUNDED through the payment's processor; a one-off gift fully refunded is revoked. */
export async function refundPayment(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  return context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "REFUNDED");
    const method = await findMethod(tx, scope.organizationId, payment.paymentMethodId);
    const processor = findProcessor(method?.processor ?? "manual");
    if (!processor?.capabilities.refunds) {
      throw new AppError(
        "refund_unsupported",
        409,
        `The processor "${method?.processor}" of payment ${payment.id} cannot refund`,
      );
    }
    const donation = await lockDonation(tx, scope.organizationId, payment.donationId);
    if (!donation) throw notFound("Donation");
    await processor.refund({
      intentId: payment.processorIntentId ?? "",
      amountCents: Math.round(payment.amount * 100),
      currency: payment.currency,
    });
    const [refunded] = await tx
      .update(payments)
      .set({ state: "REFUNDED", refundDate: sql`now()`, updateDate: sql`now()` })
      .where(and(eq(payments.organizationId, scope.organizationId), eq(payments.id, payment.id)))
      .returning();
    if (!refunded) throw notFound("Payment");
    if (donation.state === "done") {
      const [stillPaid] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(payments)
        .where(
          and(
            eq(payments.organizationId, scope.organizationId),
            eq(payments.donationId, donation.id),
            eq(payments.state, "PAID"),
          ),
        );
      if ((stillPaid?.n ?? 0) === 0) {
        assertTransition("donation", donation.id, donation.state, "revoked");
        await tx
          .update(donations)
          .set({ state: "revoked", updateDate: sql`now()` })
          .where(and(eq(donations.organizationId, scope.organizationId), eq(donations.id, donation.id)));
      }
    }
    return paymentToWire(refunded, method);
  });
}

/** A manual payment (bank transfer, cash) arrived: PENDING → PAID, and its donation is done. */
export async function markPaymentPaid(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  return context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "PAID");
    const method = await findMethod(tx, scope.organizationId, payment.paymentMethodId);
    if (method && method.processor !== "manual") {
      throw new AppError(
        "not_manual_payment",
        409,
        `Payment ${payment.id} is processed by "${method.processor}"; only manual payments are marked paid by hand`,
      );
    }
    const donation = await lockDonation(tx, scope.organizationId, payment.donationId);
    if (!donation) throw notFound("Donation");
    const now = new Date();
    const [paid] = await tx
      .update(payments)
      .set({ state: "PAID", paymentDate: now, updateDate: sql`now()` })
      .where(and(eq(payments.organizationId, scope.organizationId), eq(payments.id, payment.id)))
      .returning();
    if (!paid) throw notFound("Payment");
    if (donation.state === "pending") {
      const recurring = donation.frequency === 1 || donation.frequency === 12;
      const next = recurring ? "active" : "done";
      assertTransition("donation", donation.id, donation.state, next);
      const nextChargeDate = recurring ? cycleDueDate(now, donation.frequency as number, 1) : null;
      await tx
        .update(donations)
        .set({
          state: next,
          completedDate: now,
          nextChargeDate,
          receiptUrl: context.links.receiptUrl(scope.organizationId, donation.id),
          updateDate: sql`now()`,
        })
        .where(and(eq(donations.organizationId, scope.organizationId), eq(donations.id, donation.id)));
      if (nextChargeDate) {
        await queueRenewal(tx, {
          organizationId: scope.organizationId,
          donationId: donation.id,
          cycle: 1,
          runDate: nextChargeDate,
        });
      }
      await setCertificationUrl(
        tx,
        scope.organizationId,
        donation.supporterId,
        context.links.statementUrl(scope.organizationId, donation.supporterId),
      );
    }
    return paymentToWire(paid, method);
  });
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
        409,
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
    throw new AppError("invalid_request", 400, 'Invalid field "amount": must have at most 2 decimals', [
      { field: "amount", message: "must have at most 2 decimals" },
    ]);
  }
  const paymentDate = input.payment_date ? new Date(input.payment_date) : new Date();
  if (paymentDate.getTime() > Date.now() + 60_000) {
    throw new AppError("invalid_request", 400, 'Invalid field "payment_date": must not be in the future', [
      { field: "payment_date", message: "must not be in the future" },
    ]);
  }
  const outcome = await context.db.transaction((tx) =>
    idempotent(tx, scope.organizationId, "donations:offline", idempotencyKey, input, async () => {
      const [supporter] = await tx
        .select()
        .from(supporters)
        .where(and(eq(supporters.organizationId, scope.organizationId), eq(supporters.id, input.supporter_id)));
      if (!supporter) {
        throw new AppError("invalid_request", 422, `Supporter ${input.supporter_id} not found`, [
          { field: "supporter_id", message: "no such supporter in this organization" },
        ]);
      }
      const [campaign] = await tx
        .select()
        .from(campaigns)
        .where(and(eq(campaigns.organizationId, scope.organizationId), eq(campaigns.id, input.campaign_id)));
      if (!campaign) {
        throw new AppError("invalid_request", 422, `Campaign ${input.campaign_id} not found`, [
          { field: "campaign_id", message: "no such campaign in this organization" },
        ]);
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
      const [payment] = await tx
        .insert(payments)
        .values({
          organizationId: scope.organizationId,
          donationId: donation.id,
          state: "PAID",
          amount: input.amount,
          currency,
          paymentDate,
          paymentMethodId: method.id,
          processorIntentId: null,
        })
        .returning();
      if (!payment) throw new Error("payment insert returned nothing");
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
