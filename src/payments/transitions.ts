import type { Executor } from "../db/client.js";
import { AppError, notFound } from "../errors/app-error.js";
import { type EventChanges, type EventData, type EventScope, recordEvent } from "../events/record-event.js";
import { type DonationRow, donationWireRow } from "../modules/donations/donations.repo.js";
import { findPaymentMethod } from "../modules/payment-methods/payment-methods.repo.js";
import { type PaymentRow, paymentToWire } from "../modules/payments/payments.repo.js";

/** decisions.md §8: every allowed transition; anything else is a 409 and changes nothing. */
const TRANSITIONS = {
  checkout: { OPEN: ["CLOSED"], CLOSED: [] },
  donation: {
    draft: ["pending"],
    pending: ["done", "active"],
    active: ["past_due", "revoked"],
    past_due: ["active", "past_due", "revoked"],
    done: ["revoked"],
    revoked: [],
  },
  payment: { PENDING: ["PAID", "FAILED"], PAID: ["REFUNDED"], FAILED: [], REFUNDED: [] },
} as const;

type Machines = typeof TRANSITIONS;
export type Machine = keyof Machines;
export type StateOf<M extends Machine> = keyof Machines[M] & string;

const NAMES: Record<Machine, string> = { checkout: "checkout", donation: "donation", payment: "payment" };

export function canTransition<M extends Machine>(machine: M, from: string, to: StateOf<M>): boolean {
  const allowed = (TRANSITIONS[machine] as Record<string, readonly string[]>)[from];
  return allowed?.includes(to) ?? false;
}

/** Throws the 409 problem for a transition the state machine does not allow. */
export function assertTransition<M extends Machine>(machine: M, id: number, from: string, to: StateOf<M>): void {
  if (!canTransition(machine, from, to)) {
    throw new AppError("invalid_state_transition", `The ${NAMES[machine]} ${id} is ${from}; it cannot become ${to}`);
  }
}

/** A payment as its events carry it: exactly as the API returns it by id. */
export async function paymentEventData(tx: Executor, payment: PaymentRow): Promise<EventData> {
  const method = await findPaymentMethod(tx, payment.organizationId, payment.paymentMethodId);
  return paymentToWire(payment, method);
}

export const donationEventData = (donation: DonationRow): EventData => donationWireRow.fromRow(donation);

const PAYMENT_EVENTS = { PAID: "payment.paid", FAILED: "payment.failed", REFUNDED: "payment.refunded" } as const;

/**
 * The one way a payment changes state: the transition checked against the machine (a 409 that
 * changes nothing otherwise), the write, and its event (`payment.paid`, `.failed`, `.refunded`)
 * recorded in the same transaction with the payment as the write left it.
 */
export async function transitionPayment(
  tx: Executor,
  scope: EventScope,
  payment: PaymentRow,
  to: keyof typeof PAYMENT_EVENTS,
  write: () => Promise<PaymentRow | undefined>,
): Promise<PaymentRow> {
  assertTransition("payment", payment.id, payment.state, to);
  const row = await write();
  if (!row) throw notFound("Payment");
  const method = await findPaymentMethod(tx, payment.organizationId, payment.paymentMethodId);
  await recordEvent(tx, scope, PAYMENT_EVENTS[to], row.id, paymentToWire(row, method), {
    before: paymentToWire(payment, method),
  });
  return row;
}

/** The one way a donation changes state: checked, written, recorded as `donation.updated`. */
export async function transitionDonation(
  tx: Executor,
  scope: EventScope,
  donation: DonationRow,
  to: StateOf<"donation">,
  write: () => Promise<DonationRow | undefined>,
  /** What changed beyond the donation's API fields (who cancelled, and why). */
  also?: EventChanges,
): Promise<DonationRow> {
  assertTransition("donation", donation.id, donation.state, to);
  const row = await write();
  if (!row) throw notFound("Donation");
  await recordEvent(tx, scope, "donation.updated", row.id, donationEventData(row), {
    before: donationEventData(donation),
    also,
  });
  return row;
}
