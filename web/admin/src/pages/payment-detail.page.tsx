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
  const fmt = useFormat();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ payment: PaymentDetail | null }>(QUERY, { id });
  usePageTitle(`Payment #${id}`, org.name);
  const crumbs = [{ label: "Payments", to: path("payments") }];
  return (
    <Async state={state}>
      {({ payment }) => {
        if (!payment) {
          return (
            <>
              <PageHeader title="Payment not found" crumbs={crumbs} />
              <Empty>
                There is no payment #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const donation = payment.donation;
        return (
          <>
            <PageHeader
              title={`Payment #${payment.id}: ${fmt.money(payment.amount, payment.currency)}`}
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
                <StateBadge state={payment.state} /> created {fmt.dateTime(payment.create_date)}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title="Payment" id="payment">
                <Fields
                  items={[
                    ["Amount", fmt.money(payment.amount, payment.currency)],
                    ["State", <StateBadge key="state" state={payment.state} />],
                    ["Paid on", fmt.dateTime(payment.payment_date)],
                    [
                      "Refunded",
                      payment.amount_refunded > 0 ? fmt.money(payment.amount_refunded, payment.currency) : null,
                    ],
                    [
                      "Method",
                      payment.payment_method
                        ? `${payment.payment_method.label} (${payment.payment_method.processor})`
                        : null,
                    ],
                    [
                      "Processor intent",
                      payment.processor_intent_id ? <code key="k92">{payment.processor_intent_id}</code> : null,
                    ],
                    ["Last change", fmt.dateTime(payment.update_date)],
                  ]}
                />
              </Section>
              {payment.dispute && (
                <Section title="Dispute" id="payment-dispute">
                  <Fields
                    items={[
                      ["Status", <StateBadge key="dispute-status" state={payment.dispute.status} />],
                      ["Reason", payment.dispute.reason?.replace(/_/g, " ")],
                      [
                        "Amount",
                        payment.dispute.amount === null ? null : fmt.money(payment.dispute.amount, payment.currency),
                      ],
                      ["Opened", fmt.dateTime(payment.dispute.date)],
                      ["Processor dispute", <code key="dispute-id">{payment.dispute.id}</code>],
                    ]}
                  />
                </Section>
              )}
              {payment.refunds.length > 0 && (
                <Section title={`Refunds (${payment.refunds.length})`} id="payment-refunds">
                  <ul className="plain-list" data-testid="payment-refunds">
                    {payment.refunds.map((refund) => (
                      <li key={refund.id}>
                        <StateBadge state={refund.state} /> {fmt.money(refund.amount, refund.currency)}{" "}
                        {refund.origin === "processor" ? "(made at the processor)" : ""} asked{" "}
                        {fmt.dateTime(refund.create_date)}
                        {refund.settle_date ? `, settled ${fmt.dateTime(refund.settle_date)}` : ""}
                        {refund.failure_message ? ` — ${refund.failure_message}` : ""}
                      </li>
                    ))}
                  </ul>
                </Section>
              )}
              <Section title="Donation" id="payment-donation">
                <Fields
                  items={[
                    [
                      "Donation",
                      <Link key="d" to={path(`donations/${payment.donation_id}`)}>
                        {donation
                          ? `${donation.code} · ${fmt.money(donation.amount, donation.currency)}`
                          : `#${payment.donation_id}`}
                      </Link>,
                    ],
                    ["Frequency", donation ? frequencyLabel(donation.frequency) : null],
                    ["Donation state", donation ? <StateBadge key="s" state={donation.state} /> : null],
                    [
                      "Supporter",
                      donation?.supporter ? (
                        <Link key="k114" to={path(`supporters/${donation.supporter.id}`)}>
                          {supporterName(donation.supporter)}
                        </Link>
                      ) : null,
                    ],
                    [
                      "Campaign",
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
