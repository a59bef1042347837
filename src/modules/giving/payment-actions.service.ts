import { and, eq, sql } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { campaigns, donations, organizations, payments, supporters } from "../../db/schema.js";
import { AppError, notFound } from "../../http/errors.js";
import { parseId } from "../../http/ids.js";
import { connectProcessor, findProcessor } from "../../payments/processors/index.js";
import { donationToWire } from "../donations/donations.service.js";
import { paymentToWire } from "../payments/payments.service.js";
import type { Scope } from "../scope.js";
import type { GivingContext } from "./giving.context.js";
import {
  cancelRenewals,
  donationCode,
  findMethod,
  insertPayment,
  insertPaymentMethod,
  lockDonation,
  lockPayment,
  nextId,
  type PaymentRow,
  setCertificationUrl,
} from "./giving.repo.js";
import type { OfflineDonationBody } from "./giving.schemas.js";
import { idempotent } from "./idempotency.js";
import { hasCentPrecision, toCents } from "./money.js";
import { settlePayment, settleRefund } from "./settlement.service.js";
import { assertTransition } from "./transitions.js";

type GivingDb = Pick<GivingContext, "db" | "links">;

async function paymentWire(tx: Executor, organizationId: number, row: typeof payments.$inferSelect) {
  return paymentToWire(row, await findMethod(tx, organizationId, row.paymentMethodId));
}

/**
 * PAID → REFUNDED through the payment's processor, in steps: the request is recorded and committed,
 * the processor is asked (outside any transaction, with a key derived from the payment, so asking
 * again never refunds twice), and the refund is settled. A crash in between leaves the request for
 * the reconciler. A one-off gift fully refunded is revoked.
 */
export async function refundPayment(context: GivingDb, scope: Scope, rawId: string) {
  const id = parseId(rawId, "Payment");
  const requested = await context.db.transaction(async (tx) => {
    const payment = await lockPayment(tx, scope.organizationId, id);
    if (!payment) throw notFound("Payment");
    assertTransition("payment", payment.id, payment.state, "REFUNDED");
    const method = await findMethod(tx, scope.organizationId, payment.paymentMethodId);
    const processorName = method?.processor ?? "manual";
    if (!findProcessor(processorName)?.capabilities.refunds) {
      throw new AppError(
        "refund_unsupported",
        409,
        `The processor "${method?.processor}" of payment ${payment.id} cannot refund`,
      );
    }
    const [row] = await tx
      .update(payments)
      .set({ refundRequestDate: sql`coalesce(${payments.refundRequestDate}, now())` })
      .where(and(eq(payments.organizationId, scope.organizationId), eq(payments.id, payment.id)))
      .returning();
    if (!row) throw notFound("Payment");
    return { payment: row, method, processorName };
  });
  await askRefund(context.db, requested.processorName, requested.payment);
  const refunded = await context.db.transaction((tx) => settleRefund(tx, scope.organizationId, id));
  return paymentToWire(refunded, requested.method);
}

/** The processor call of a refund; the key makes a repeated call (a retry, the reconciler) refund once. */
export async function askRefund(db: Db, processorName: string, payment: PaymentRow) {
  const processor = connectProcessor(db, processorName);
  if (!processor) throw new Error(`no processor "${processorName}" for payment ${payment.id}`);
  await processor.refund({
    intentId: payment.processorIntentId ?? "",
    amountCents: toCents(payment.amount),
    currency: payment.currency,
    idempotencyKey: `refund:${payment.id}`,
  });
}

/** A manual payment (bank transfer, cash) arrived: PENDING → PAID, settled as any payment is. */
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
    const settled = await settlePayment(
      tx,
      context.links,
      scope.organizationId,
      payment.id,
      { state: "PAID", intentId: null },
      new Date(),
    );
    return paymentToWire(settled.payment, method);
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
