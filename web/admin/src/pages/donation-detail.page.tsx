import { useState } from "react";
import { Link, useParams } from "react-router";
import type { Donation, Payment, SupporterSummary } from "../api/types";
import { frequencyLabel, supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { StateBadge, Tags } from "../components/badges";
import { DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { PaymentActions } from "../components/payment-actions";
import { isPaused, RecurringActions } from "../components/recurring-actions";
import { Async, Empty } from "../components/states";
import { COLLECTIONS, SUPPORTER_SUMMARY } from "./collections";

const QUERY = `query DonationDetail($id: ID!, $donation_id: Int!) {
  donation(id: $id) {
    id code state amount covered_fee skipped_cycles currency frequency device note receipt_url tags supporter_id campaign_id completed_date create_date update_date
    next_charge_date paused_until cancelled_by cancel_reason
    supporter { ${SUPPORTER_SUMMARY} city country }
    campaign { id title slug }
  }
  payments(donation_id: $donation_id, limit: 100) { count items { ${COLLECTIONS.payments.selection} } }
}`;

/** Who stopped a recurring gift, in words. */
const CANCELLED_BY: Record<string, string> = {
  donor: "The donor (donor portal)",
  admin: "The organization",
  failed_payments: "Failed payments (retries exhausted)",
};

type DonationDetail = Donation & {
  next_charge_date: string | null;
  paused_until: string | null;
  cancelled_by: string | null;
  cancel_reason: string | null;
  supporter: (SupporterSummary & { city: string | null; country: string | null }) | null;
  campaign: { id: number; title: string; slug: string | null } | null;
};

export function DonationDetailPage() {
  const { id = "" } = useParams();
  const { org, path } = useOrg();
  const fmt = useFormat();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ donation: DonationDetail | null; payments: { count: number; items: Payment[] } }>(QUERY, {
    id,
    donation_id: /^\d+$/.test(id) ? Number(id) : 0,
  });
  usePageTitle(state.data?.donation ? `Donation ${state.data.donation.code}` : "Donation", org.name);
  const crumbs = [{ label: "Donations", to: path("donations") }];
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };

  return (
    <Async state={state}>
      {({ donation, payments }) => {
        if (!donation) {
          return (
            <>
              <PageHeader title="Donation not found" crumbs={crumbs} />
              <Empty>
                There is no donation #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const recurring = (donation.frequency ?? 0) > 0;
        const cancellable = recurring && (donation.state === "active" || donation.state === "past_due");
        const paymentColumns = [
          ...COLLECTIONS.payments.columns
            .filter((column) => column.key !== "donation_id")
            .map((column) => ({
              ...column,
              sort: undefined,
              render: (row: Payment) => column.render(row, { fmt, path }),
            })),
          {
            key: "actions",
            label: "Actions",
            render: (row: Payment) => <PaymentActions payment={row} onDone={done} small />,
          },
        ];
        return (
          <>
            <PageHeader
              title={`${fmt.money(donation.amount, donation.currency)} ${recurring ? frequencyLabel(donation.frequency).toLowerCase() : "one-off"} donation`}
              crumbs={crumbs}
              actions={
                <>
                  {donation.receipt_url && (
                    <a className="button" href={donation.receipt_url} target="_blank" rel="noopener">
                      Receipt ↗
                    </a>
                  )}
                  {cancellable && (
                    <RecurringActions donation={donation} supporter={supporterName(donation.supporter)} onDone={done} />
                  )}
                </>
              }
            >
              <p className="muted">
                <StateBadge state={donation.state} /> Code {donation.code} · created{" "}
                {fmt.dateTime(donation.create_date)}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title="Donation" id="donation">
                <Fields
                  items={[
                    ["Amount", fmt.money(donation.amount, donation.currency)],
                    [
                      "Processing fee covered",
                      donation.covered_fee > 0 ? fmt.money(donation.covered_fee, donation.currency) : "—",
                    ],
                    ["Frequency", frequencyLabel(donation.frequency)],
                    ...(donation.skipped_cycles.length > 0
                      ? [
                          [
                            "Skipped cycles",
                            <span key="skipped" data-testid="skipped-cycles">
                              {donation.skipped_cycles.join(", ")}: not charged (the renewal after an outage charged
                              once and the schedule moved on)
                            </span>,
                          ] as [string, React.ReactNode],
                        ]
                      : []),
                    ["State", <StateBadge key="state" state={donation.state} />],
                    ...(recurring
                      ? (
                          [
                            ["Next charge", cancellable ? fmt.dateTime(donation.next_charge_date) : null],
                            [
                              "Paused until",
                              cancellable && isPaused(donation) ? fmt.dateTime(donation.paused_until) : null,
                            ],
                            ["Cancelled by", donation.cancelled_by ? CANCELLED_BY[donation.cancelled_by] : null],
                            ["Cancel reason", donation.cancel_reason],
                          ] as [string, React.ReactNode][]
                        ).filter(([, value]) => value !== null && value !== undefined)
                      : []),
                    ["Completed", fmt.dateTime(donation.completed_date)],
                    ["Device", donation.device],
                    ["Note", donation.note],
                    ["Tags", <Tags key="tags" tags={donation.tags} />],
                    ["Last change", fmt.dateTime(donation.update_date)],
                  ]}
                />
              </Section>
              <Section title="Supporter and campaign" id="related">
                <Fields
                  items={[
                    [
                      "Supporter",
                      donation.supporter ? (
                        <Link key="k135" to={path(`supporters/${donation.supporter.id}`)}>
                          {supporterName(donation.supporter)}
                        </Link>
                      ) : null,
                    ],
                    ["Email", donation.supporter?.email],
                    [
                      "Location",
                      [donation.supporter?.city, donation.supporter?.country].filter(Boolean).join(", ") || null,
                    ],
                    [
                      "Campaign",
                      donation.campaign ? (
                        <Link key="k148" to={path(`campaigns/${donation.campaign.id}`)}>
                          {donation.campaign.title}
                        </Link>
                      ) : null,
                    ],
                  ]}
                />
              </Section>
            </div>
            <Section title={`Payments (${fmt.number(payments.count)})`} id="donation-payments">
              {payments.items.length === 0 ? (
                <Empty>No payments yet.</Empty>
              ) : (
                <DataTable
                  testId="donation-payments"
                  caption="Payments"
                  columns={paymentColumns}
                  rows={payments.items}
                />
              )}
            </Section>
          </>
        );
      }}
    </Async>
  );
}
