import { useEffect, useId, useState } from "react";
import type { Payment } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql } from "../app/use-query";
import { useI18n } from "../i18n";
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
  const { t, rich } = useI18n();
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
          label={t("panel.payment_actions.refund")}
          title={t("panel.payment_actions.refund_title", { id: payment.id })}
          confirmLabel={
            typedCents > 0 && typedCents <= leftCents
              ? t("panel.payment_actions.refund_amount", { amount: fmt.money(typedCents / 100, payment.currency) })
              : t("panel.payment_actions.refund")
          }
          danger
          className={`button button-danger-outline${size}`}
          testId={`refund-${payment.id}`}
          run={async () => {
            if (typedCents <= 0) throw new Error(t("panel.payment_actions.enter_amount"));
            const cents = typedCents;
            if (cents > leftCents) throw new Error(t("panel.payment_actions.at_most", { amount }));
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
                ? t("panel.payment_actions.refund_asked", { id: payment.id })
                : refundedCents === leftCents
                  ? t("panel.payment_actions.refunded", { id: payment.id })
                  : t("panel.payment_actions.refunded_part", {
                      amount: fmt.money(refundedCents / 100, payment.currency),
                      id: payment.id,
                    }),
            )
          }
        >
          <p>
            {payment.payment_method
              ? rich("panel.payment_actions.refund_body_method", {
                  amount: <strong>{amount}</strong>,
                  id: payment.id,
                  method: payment.payment_method.label,
                })
              : rich("panel.payment_actions.refund_body", { amount: <strong>{amount}</strong>, id: payment.id })}
          </p>
          <label htmlFor={refundInputId}>
            {t("panel.payment_actions.amount_label", { currency: payment.currency })}
          </label>
          <input
            id={refundInputId}
            className="input"
            inputMode="decimal"
            autoComplete="off"
            value={refundText}
            onChange={(event) => setRefundText(event.target.value)}
            data-testid={`refund-amount-${payment.id}`}
          />
          <p className="muted">{t("panel.payment_actions.partial_hint")}</p>
        </ActionButton>
      )}
      {payment.state === "PENDING" && manual && (
        <ActionButton
          label={t("panel.payment_actions.mark_paid")}
          title={t("panel.payment_actions.mark_paid_title", { amount })}
          confirmLabel={t("panel.payment_actions.mark_paid")}
          className={`button${size}`}
          testId={`mark-paid-${payment.id}`}
          run={() => gql(MARK_PAID, { id: payment.id })}
          onDone={() => onDone(t("panel.payment_actions.marked_paid", { id: payment.id }))}
        >
          <p>{rich("panel.payment_actions.mark_paid_body", { amount: <strong>{amount}</strong>, id: payment.id })}</p>
        </ActionButton>
      )}
    </span>
  );
}
