import { useRef, useState } from "react";
import { Link, useParams } from "react-router";
import type { Donation, Payment, SupporterSummary } from "../api/types";
import { frequencyLabel, supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge, Tags } from "../components/badges";
import { DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { PaymentActions } from "../components/payment-actions";
import { isPaused, RecurringActions } from "../components/recurring-actions";
import { Async, Empty } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { COLLECTIONS, SUPPORTER_SUMMARY } from "./collections";

const QUERY = `query DonationDetail($id: ID!, $donation_id: Int!) {
  donation(id: $id) {
    id code state amount covered_fee skipped_cycles currency frequency device note receipt_url tags supporter_id campaign_id completed_date create_date update_date
    next_charge_date paused_until cancelled_by cancel_reason activation external_id
    tribute { type name message recipient_name recipient_email }
    answers { key label type text choices checked }
    supporter { ${SUPPORTER_SUMMARY} city country }
    campaign { id title slug }
  }
  payments(donation_id: $donation_id, limit: 100) { count items { ${COLLECTIONS.payments.selection} } }
}`;

const ACTIVATE = `mutation ActivateImportedDonation($id: ID!) { activateImportedDonation(id: $id) { outcome } }`;

/** Who stopped a recurring gift, in words (keys of the catalog). */
const CANCELLED_BY: Record<string, string> = {
  donor: "panel.donation.cancelled_by_donor",
  admin: "panel.donation.cancelled_by_admin",
  failed_payments: "panel.donation.cancelled_by_failed_payments",
};

/** "€25.00 monthly donation". */
function donationTitle(t: Translate, amount: string, frequency: number | null): string {
  if (frequency === 12) return t("panel.donation.title_monthly", { amount });
  if (frequency === 1) return t("panel.donation.title_yearly", { amount });
  if (!frequency) return t("panel.donation.title_one_off", { amount });
  return t("panel.donation.title_other", { amount, count: frequency });
}

interface Tribute {
  type: string;
  name: string;
  message: string | null;
  recipient_name: string | null;
  recipient_email: string | null;
}

interface Answer {
  key: string;
  label: string;
  type: string;
  text: string | null;
  choices: string[] | null;
  checked: boolean | null;
}

/** An answer in words: the text, the options chosen, or yes/no for a checkbox. */
function answerValue(t: Translate, answer: Answer): string {
  if (answer.checked !== null) return t(answer.checked ? "panel.donation.answer_yes" : "panel.donation.answer_no");
  if (answer.choices) return answer.choices.join(", ");
  return answer.text ?? "";
}

type DonationDetail = Donation & {
  tribute: Tribute | null;
  answers: Answer[];
  next_charge_date: string | null;
  paused_until: string | null;
  cancelled_by: string | null;
  cancel_reason: string | null;
  /** An imported recurring gift waiting to be turned on: "awaiting", or "card_requested" from its donor. */
  activation: "awaiting" | "card_requested" | null;
  external_id: string | null;
  supporter: (SupporterSummary & { city: string | null; country: string | null }) | null;
  campaign: { id: number; title: string; slug: string | null } | null;
};

export function DonationDetailPage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  const [flash, setFlash] = useState<string | null>(null);
  // What turning an imported gift on did, for the flash once its dialog closes.
  const activated = useRef<string | null>(null);
  const state = useQuery<{ donation: DonationDetail | null; payments: { count: number; items: Payment[] } }>(QUERY, {
    id,
    donation_id: /^\d+$/.test(id) ? Number(id) : 0,
  });
  usePageTitle(
    state.data?.donation
      ? t("panel.donation.page_title", { code: state.data.donation.code })
      : t("panel.donation.page_title_generic"),
    org.name,
  );
  const crumbs = [{ label: t("panel.donations.title"), to: path("donations") }];
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
              <PageHeader title={t("panel.donation.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.donation.not_found_body", { id, organization: org.name })}</Empty>
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
              label: t(column.label),
              sort: undefined,
              render: (row: Payment) => column.render(row, { fmt, path, t }),
            })),
          {
            key: "actions",
            label: t("panel.column.actions"),
            render: (row: Payment) => <PaymentActions payment={row} onDone={done} small />,
          },
        ];
        return (
          <>
            <PageHeader
              title={donationTitle(
                t,
                fmt.money(donation.amount, donation.currency),
                recurring ? donation.frequency : 0,
              )}
              crumbs={crumbs}
              actions={
                <>
                  {donation.receipt_url && (
                    <a className="button" href={donation.receipt_url} target="_blank" rel="noopener">
                      {t("panel.donation.receipt")}
                    </a>
                  )}
                  {canWrite && donation.activation && (
                    <ActionButton
                      label={t("panel.donation.activate")}
                      title={t("panel.donation.activate_title")}
                      confirmLabel={t("panel.donation.activate")}
                      testId="activate-donation"
                      run={async () => {
                        const answer = await gql<{ activateImportedDonation: { outcome: string } }>(ACTIVATE, {
                          id: donation.id,
                        });
                        activated.current = answer.activateImportedDonation.outcome;
                      }}
                      onDone={() =>
                        done(
                          t(
                            activated.current === "card_requested"
                              ? "panel.donation.card_requested"
                              : "panel.donation.activated",
                          ),
                        )
                      }
                    >
                      <p>{t("panel.donation.activate_body")}</p>
                    </ActionButton>
                  )}
                  {cancellable && (
                    <RecurringActions
                      donation={donation}
                      supporter={supporterName(t, donation.supporter)}
                      onDone={done}
                    />
                  )}
                </>
              }
            >
              <p className="muted">
                <StateBadge state={donation.state} />{" "}
                {t("panel.donation.subtitle", { code: donation.code, date: fmt.dateTime(donation.create_date) })}
              </p>
            </PageHeader>
            <Flash message={flash} />
            {donation.activation && (
              <p className="notice" data-testid="activation-notice">
                {t(
                  donation.activation === "awaiting"
                    ? "panel.donation.activation_awaiting"
                    : "panel.donation.activation_card_requested",
                )}
              </p>
            )}
            <div className="grid-2">
              <Section title={t("panel.donation.section")} id="donation">
                <Fields
                  items={[
                    [t("panel.column.amount"), fmt.money(donation.amount, donation.currency)],
                    [
                      t("panel.donation.fee_covered"),
                      donation.covered_fee > 0 ? fmt.money(donation.covered_fee, donation.currency) : "—",
                    ],
                    [t("panel.column.frequency"), frequencyLabel(t, donation.frequency)],
                    ...(donation.skipped_cycles.length > 0
                      ? [
                          [
                            t("panel.donation.skipped_cycles"),
                            <span key="skipped" data-testid="skipped-cycles">
                              {t("panel.donation.skipped_cycles_value", { cycles: donation.skipped_cycles.join(", ") })}
                            </span>,
                          ] as [string, React.ReactNode],
                        ]
                      : []),
                    [t("panel.column.state"), <StateBadge key="state" state={donation.state} />],
                    ...(recurring
                      ? (
                          [
                            [
                              t("panel.donation.next_charge"),
                              cancellable ? fmt.dateTime(donation.next_charge_date) : null,
                            ],
                            [
                              t("panel.donation.paused_until"),
                              cancellable && isPaused(donation) ? fmt.dateTime(donation.paused_until) : null,
                            ],
                            [
                              t("panel.donation.cancelled_by"),
                              donation.cancelled_by
                                ? CANCELLED_BY[donation.cancelled_by]
                                  ? t(CANCELLED_BY[donation.cancelled_by] as string)
                                  : donation.cancelled_by
                                : null,
                            ],
                            [t("panel.donation.cancel_reason"), donation.cancel_reason],
                          ] as [string, React.ReactNode][]
                        ).filter(([, value]) => value !== null && value !== undefined)
                      : []),
                    [t("panel.column.completed"), fmt.dateTime(donation.completed_date)],
                    [t("panel.donation.device"), donation.device],
                    [t("panel.donation.note"), donation.note],
                    [t("panel.column.tags"), <Tags key="tags" tags={donation.tags} />],
                    [t("panel.donation.last_change"), fmt.dateTime(donation.update_date)],
                  ]}
                />
              </Section>
              <Section title={t("panel.donation.related")} id="related">
                <Fields
                  items={[
                    [
                      t("panel.column.supporter"),
                      donation.supporter ? (
                        <Link key="k135" to={path(`supporters/${donation.supporter.id}`)}>
                          {supporterName(t, donation.supporter)}
                        </Link>
                      ) : null,
                    ],
                    [t("panel.column.email"), donation.supporter?.email],
                    [
                      t("panel.donation.location"),
                      [donation.supporter?.city, donation.supporter?.country].filter(Boolean).join(", ") || null,
                    ],
                    [
                      t("panel.column.campaign"),
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
            {(donation.tribute || donation.answers.length > 0) && (
              <div className="grid-2">
                {donation.tribute && (
                  <Section title={t("panel.donation.tribute")} id="donation-tribute">
                    <Fields
                      items={[
                        [
                          t("panel.donation.tribute_dedication"),
                          <strong key="dedication" data-testid="tribute-dedication">
                            {t(
                              donation.tribute.type === "memory"
                                ? "panel.donation.tribute_memory"
                                : "panel.donation.tribute_honor",
                              { name: donation.tribute.name },
                            )}
                          </strong>,
                        ],
                        [t("panel.donation.tribute_message"), donation.tribute.message],
                        [
                          t("panel.donation.tribute_notified"),
                          donation.tribute.recipient_email
                            ? [donation.tribute.recipient_name, `<${donation.tribute.recipient_email}>`]
                                .filter(Boolean)
                                .join(" ")
                            : donation.tribute.recipient_name
                              ? t("panel.donation.tribute_not_notified_name", { name: donation.tribute.recipient_name })
                              : t("panel.donation.tribute_not_notified"),
                        ],
                      ]}
                    />
                  </Section>
                )}
                {donation.answers.length > 0 && (
                  <Section title={t("panel.donation.answers")} id="donation-answers">
                    <Fields
                      items={donation.answers.map(
                        (answer) => [answer.label, answerValue(t, answer)] as [string, React.ReactNode],
                      )}
                    />
                  </Section>
                )}
              </div>
            )}
            <Section title={t("panel.donation.payments", { count: fmt.number(payments.count) })} id="donation-payments">
              {payments.items.length === 0 ? (
                <Empty>{t("panel.donation.no_payments")}</Empty>
              ) : (
                <DataTable
                  testId="donation-payments"
                  caption={t("panel.payments.title")}
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
