import { useEffect, useId, useState } from "react";
import type { Payment } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql } from "../app/use-query";
import { ActionButton } from "./action-button";

const REFUND = `mutation Refund($id: ID!, $amount: Float) { refundPayment(id: $id, amount: $amount) { id state refunds { id state amount } } }`;
const MARK_PAID = `mutation MarkPaid($id: ID!) { markPaymentPaid(id: $id) { id state } }`;

/** Refund (a PAID payment) and mark paid (a PENDING manual payment), each behind a confirmation. */
export function PaymentActions({
  payment,
  onDone,
  small,
}: {
  payment: Pick<Payment, "id" | "state" | "amount" | "currency" | "payment_method"> & { amount_refunded?: number };
  onDone: (message: string) => void;
  small?: boolean;
}) {
  const { canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  // What is left to refund (in cents, to stay exact), and what the admin chose to give back of it.
  const leftCents = Math.round(payment.amount * 100) - Math.round((payment.amount_refunded ?? 0) * 100);
  const [refundText, setRefundText] = useState((leftCents / 100).toFixed(2));
  const refundInputId = useId();
  // After a partial refund the page reloads the payment: the dialog then offers what is left.
  useEffect(() => setRefundText((leftCents / 100).toFixed(2)), [leftCents]);
  if (!canWrite) return null;
  const amount = fmt.money(leftCents / 100, payment.currency);
  // The amount typed, in cents, when it reads as one (the confirm button names it).
  const typed = refundText.trim().replace(",", ".");
  const typedCents = /^\d+(\.\d{1,2})?$/.test(typed) ? Math.round(Number(typed) * 100) : 0;
  const size = small ? " button-small" : "";
  const manual = payment.payment_method?.processor === "manual" || !payment.payment_method;
  // What the processor said of the refund just asked: SUCCEEDED, or PENDING until it confirms (SEPA).
  let refundState: string | undefined;
  let refundedCents = 0;
  return (
    <span className="inline-actions">
      {payment.state === "PAID" && (
        <ActionButton
          label="Refund"
          title={`Refund payment #${payment.id}?`}
          confirmLabel={
            typedCents > 0 && typedCents <= leftCents
              ? `Refund ${fmt.money(typedCents / 100, payment.currency)}`
              : "Refund"
          }
          danger
          className={`button button-danger-outline${size}`}
          testId={`refund-${payment.id}`}
          run={async () => {
            if (typedCents <= 0) throw new Error("Enter the amount to refund, such as 10 or 10.50.");
            const cents = typedCents;
            if (cents > leftCents) throw new Error(`At most ${amount} can be refunded.`);
            // The whole remainder is asked without an amount: the server refunds what is left.
            const variables = cents === leftCents ? { id: payment.id } : { id: payment.id, amount: cents / 100 };
            const result = await gql<{ refundPayment: { refunds: { id: string; state: string }[] } }>(
              REFUND,
              variables,
            );
            const newest = [...result.refundPayment.refunds].sort((a, b) => Number(b.id) - Number(a.id))[0];
            refundState = newest?.state;
            refundedCents = cents;
          }}
          onDone={() =>
            onDone(
              refundState !== "SUCCEEDED"
                ? `Refund of payment #${payment.id} asked; it shows as refunded once the processor confirms it.`
                : refundedCents === leftCents
                  ? `Payment #${payment.id} refunded.`
                  : `${fmt.money(refundedCents / 100, payment.currency)} of payment #${payment.id} refunded.`,
            )
          }
        >
          <p>
            Up to <strong>{amount}</strong> of payment #{payment.id} can go back to the donor
            {payment.payment_method ? ` (${payment.payment_method.label})` : ""}. A one-off donation fully refunded
            becomes revoked. A bank debit's refund (SEPA) takes a few days to confirm. This cannot be undone.
          </p>
          <label htmlFor={refundInputId}>Amount to refund ({payment.currency})</label>
          <input
            id={refundInputId}
            className="input"
            inputMode="decimal"
            autoComplete="off"
            value={refundText}
            onChange={(event) => setRefundText(event.target.value)}
            data-testid={`refund-amount-${payment.id}`}
          />
          <p className="muted">A smaller amount is a partial refund: the payment stays paid for what is kept.</p>
        </ActionButton>
      )}
      {payment.state === "PENDING" && manual && (
        <ActionButton
          label="Mark paid"
          title={`Mark ${amount} as paid?`}
          confirmLabel="Mark paid"
          className={`button${size}`}
          testId={`mark-paid-${payment.id}`}
          run={() => gql(MARK_PAID, { id: payment.id })}
          onDone={() => onDone(`Payment #${payment.id} marked paid.`)}
        >
          <p>
            Confirm that <strong>{amount}</strong> for payment #{payment.id} arrived (bank transfer, cash or cheque).
          </p>
        </ActionButton>
      )}
    </span>
  );
}
