import { useState } from "react";
import { Link, useParams } from "react-router";
import type { Payment, SupporterSummary } from "../api/types";
import { frequencyLabel, supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { StateBadge } from "../components/badges";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { PaymentActions } from "../components/payment-actions";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";
import { SUPPORTER_SUMMARY } from "./collections";

const QUERY = `query PaymentDetail($id: ID!) {
  payment(id: $id) {
    id donation_id state amount currency payment_date processor_intent_id create_date update_date
    payment_method { id label processor create_date }
    amount_refunded
    refunds { id state amount currency origin failure_message create_date settle_date }
    dispute { id status reason amount date }
    donation { id code state amount currency frequency supporter { ${SUPPORTER_SUMMARY} } campaign { id title } }
  }
}`;

interface RefundLine {
  id: string;
  state: string;
  amount: number;
  currency: string;
  origin: string;
  failure_message: string | null;
  create_date: string;
  settle_date: string | null;
}

type PaymentDetail = Payment & {
  amount_refunded: number;
  refunds: RefundLine[];
  dispute: { id: string; status: string; reason: string | null; amount: number | null; date: string | null } | null;
  donation: {
    id: number;
    code: string;
    state: string;
    amount: number;
    currency: string;
    frequency: number | null;
    supporter: SupporterSummary | null;
    campaign: { id: number; title: string } | null;
  } | null;
};

export function PaymentDetailPage() {
  const { id = "" } = useParams();
  const { org, path } = useOrg();
  const { t, has } = useI18n();
  const fmt = useFormat();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ payment: PaymentDetail | null }>(QUERY, { id });
  usePageTitle(t("panel.payment.page_title", { id }), org.name);
  const crumbs = [{ label: t("panel.payments.title"), to: path("payments") }];
  /** A dispute's reason as the processor names it (product_not_received), in words. */
  const disputeReason = (reason: string | null | undefined) =>
    reason
      ? has(`panel.payment.dispute_reason.${reason}`)
        ? t(`panel.payment.dispute_reason.${reason}`)
        : reason.replace(/_/g, " ")
      : null;
  return (
    <Async state={state}>
      {({ payment }) => {
        if (!payment) {
          return (
            <>
              <PageHeader title={t("panel.payment.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.payment.not_found_body", { id, organization: org.name })}</Empty>
            </>
          );
        }
        const donation = payment.donation;
        return (
          <>
            <PageHeader
              title={t("panel.payment.title", { id: payment.id, amount: fmt.money(payment.amount, payment.currency) })}
              crumbs={crumbs}
              actions={
                <PaymentActions
                  payment={payment}
                  onDone={(message) => {
                    setFlash(message);
                    state.reload();
                  }}
                />
              }
            >
              <p className="muted">
                <StateBadge state={payment.state} />{" "}
                {t("panel.payment.created", { date: fmt.dateTime(payment.create_date) })}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title={t("panel.payment.section")} id="payment">
                <Fields
                  items={[
                    [t("panel.column.amount"), fmt.money(payment.amount, payment.currency)],
                    [t("panel.column.state"), <StateBadge key="state" state={payment.state} />],
                    [t("panel.payment.paid_on"), fmt.dateTime(payment.payment_date)],
                    [
                      t("panel.payment.refunded"),
                      payment.amount_refunded > 0 ? fmt.money(payment.amount_refunded, payment.currency) : null,
                    ],
                    [
                      t("panel.column.method"),
                      payment.payment_method
                        ? `${payment.payment_method.label} (${payment.payment_method.processor})`
                        : null,
                    ],
                    [
                      t("panel.filter.processor_intent"),
                      payment.processor_intent_id ? <code key="k92">{payment.processor_intent_id}</code> : null,
                    ],
                    [t("panel.donation.last_change"), fmt.dateTime(payment.update_date)],
                  ]}
                />
              </Section>
              {payment.dispute && (
                <Section title={t("panel.payment.dispute")} id="payment-dispute">
                  <Fields
                    items={[
                      [t("panel.column.status"), <StateBadge key="dispute-status" state={payment.dispute.status} />],
                      [t("panel.payment.reason"), disputeReason(payment.dispute.reason)],
                      [
                        t("panel.column.amount"),
                        payment.dispute.amount === null ? null : fmt.money(payment.dispute.amount, payment.currency),
                      ],
                      [t("panel.payment.opened"), fmt.dateTime(payment.dispute.date)],
                      [t("panel.payment.processor_dispute"), <code key="dispute-id">{payment.dispute.id}</code>],
                    ]}
                  />
                </Section>
              )}
              {payment.refunds.length > 0 && (
                <Section
                  title={t("panel.payment.refunds", { count: fmt.number(payment.refunds.length) })}
                  id="payment-refunds"
                >
                  <ul className="plain-list" data-testid="payment-refunds">
                    {payment.refunds.map((refund) => (
                      <li key={refund.id}>
                        <StateBadge state={refund.state} />{" "}
                        {t(
                          refund.origin === "processor"
                            ? "panel.payment.refund_line_processor"
                            : "panel.payment.refund_line",
                          { amount: fmt.money(refund.amount, refund.currency), date: fmt.dateTime(refund.create_date) },
                        )}
                        {refund.settle_date
                          ? t("panel.payment.refund_settled", { date: fmt.dateTime(refund.settle_date) })
                          : ""}
                        {refund.failure_message ? ` — ${refund.failure_message}` : ""}
                      </li>
                    ))}
                  </ul>
                </Section>
              )}
              <Section title={t("panel.donation.section")} id="payment-donation">
                <Fields
                  items={[
                    [
                      t("panel.column.donation"),
                      <Link key="d" to={path(`donations/${payment.donation_id}`)}>
                        {donation
                          ? `${donation.code} · ${fmt.money(donation.amount, donation.currency)}`
                          : `#${payment.donation_id}`}
                      </Link>,
                    ],
                    [t("panel.column.frequency"), donation ? frequencyLabel(t, donation.frequency) : null],
                    [
                      t("panel.payment.donation_state"),
                      donation ? <StateBadge key="s" state={donation.state} /> : null,
                    ],
                    [
                      t("panel.column.supporter"),
                      donation?.supporter ? (
                        <Link key="k114" to={path(`supporters/${donation.supporter.id}`)}>
                          {supporterName(t, donation.supporter)}
                        </Link>
                      ) : null,
                    ],
                    [
                      t("panel.column.campaign"),
                      donation?.campaign ? (
                        <Link key="k122" to={path(`campaigns/${donation.campaign.id}`)}>
                          {donation.campaign.title}
                        </Link>
                      ) : null,
                    ],
                  ]}
                />
              </Section>
            </div>
          </>
        );
      }}
    </Async>
  );
}
