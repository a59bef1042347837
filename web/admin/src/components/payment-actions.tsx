import type { Payment } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql } from "../app/use-query";
import { ActionButton } from "./action-button";

const REFUND = `mutation Refund($id: ID!) { refundPayment(id: $id) { id state } }`;
const MARK_PAID = `mutation MarkPaid($id: ID!) { markPaymentPaid(id: $id) { id state } }`;

/** Refund (a PAID payment) and mark paid (a PENDING manual payment), each behind a confirmation. */
export function PaymentActions({
  payment,
  onDone,
  small,
}: {
  payment: Pick<Payment, "id" | "state" | "amount" | "currency" | "payment_method">;
  onDone: (message: string) => void;
  small?: boolean;
}) {
  const { canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  if (!canWrite) return null;
  const amount = fmt.money(payment.amount, payment.currency);
  const size = small ? " button-small" : "";
  const manual = payment.payment_method?.processor === "manual" || !payment.payment_method;
  // What the refund left the payment as: REFUNDED, or still PAID while the processor confirms.
  let refundedState: string | undefined;
  return (
    <span className="inline-actions">
      {payment.state === "PAID" && (
        <ActionButton
          label="Refund"
          title={`Refund ${amount}?`}
          confirmLabel={`Refund ${amount}`}
          danger
          className={`button button-danger-outline${size}`}
          testId={`refund-${payment.id}`}
          run={async () => {
            const result = await gql<{ refundPayment: { state: string } }>(REFUND, { id: payment.id });
            refundedState = result.refundPayment.state;
          }}
          onDone={() =>
            onDone(
              refundedState === "REFUNDED"
                ? `Payment #${payment.id} refunded.`
                : `Refund of payment #${payment.id} asked; it shows as refunded once the processor confirms it.`,
            )
          }
        >
          <p>
            Payment #{payment.id} of <strong>{amount}</strong> goes back to the donor
            {payment.payment_method ? ` (${payment.payment_method.label})` : ""}. A one-off donation fully refunded
            becomes revoked. A bank debit's refund (SEPA) takes a few days to confirm. This cannot be undone.
          </p>
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
