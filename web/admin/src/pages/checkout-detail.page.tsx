import { useState } from "react";
import { Link, useParams } from "react-router";
import type { Checkout, Donation, Payment, SupporterSummary } from "../api/types";
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

const QUERY = `query CheckoutDetail($id: ID!) {
  checkout(id: $id) {
    id state amount frequency cost_example_quantity payment_method_processor payment_method_label payment_method_id
    completed_date create_date update_date
    campaign { id title slug cost_example_amount cost_example_label }
    supporter { ${SUPPORTER_SUMMARY} phone city country }
    donation { id code state amount currency frequency completed_date receipt_url }
    payment { id donation_id state amount currency payment_date processor_intent_id create_date update_date payment_method { id label processor } }
  }
}`;

type CheckoutDetail = Checkout & {
  campaign: {
    id: number;
    title: string;
    slug: string | null;
    cost_example_amount: number | null;
    cost_example_label: string | null;
  } | null;
  supporter: (SupporterSummary & { phone: string | null; city: string | null; country: string | null }) | null;
  donation: Pick<
    Donation,
    "id" | "code" | "state" | "amount" | "currency" | "frequency" | "completed_date" | "receipt_url"
  > | null;
  payment: Payment | null;
};

export function CheckoutDetailPage() {
  const { id = "" } = useParams();
  const { org, path } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ checkout: CheckoutDetail | null }>(QUERY, { id });
  usePageTitle(t("panel.checkout.title", { id }), org.name);
  const crumbs = [{ label: t("panel.checkouts.title"), to: path("checkouts") }];
  return (
    <Async state={state}>
      {({ checkout }) => {
        if (!checkout) {
          return (
            <>
              <PageHeader title={t("panel.checkout.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.checkout.not_found_body", { id, organization: org.name })}</Empty>
            </>
          );
        }
        const { campaign, supporter, donation, payment } = checkout;
        return (
          <>
            <PageHeader title={t("panel.checkout.title", { id: checkout.id })} crumbs={crumbs}>
              <p className="muted">
                <StateBadge state={checkout.state} />{" "}
                {t("panel.checkout.opened", { date: fmt.dateTime(checkout.create_date) })}
                {checkout.completed_date
                  ? ` · ${t("panel.checkout.completed", { date: fmt.dateTime(checkout.completed_date) })}`
                  : ""}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title={t("panel.checkout.section")} id="checkout">
                <Fields
                  items={[
                    [t("panel.column.amount"), fmt.money(checkout.amount)],
                    [t("panel.column.frequency"), frequencyLabel(t, checkout.frequency)],
                    [t("panel.column.state"), <StateBadge key="s" state={checkout.state} />],
                    [
                      t("panel.checkout.payment_method"),
                      checkout.payment_method_label
                        ? `${checkout.payment_method_label} (${checkout.payment_method_processor})`
                        : null,
                    ],
                    [
                      t("panel.campaign.cost_example"),
                      campaign?.cost_example_label
                        ? `${fmt.number(checkout.cost_example_quantity)} × ${campaign.cost_example_label}`
                        : null,
                    ],
                    [t("panel.column.completed"), fmt.dateTime(checkout.completed_date)],
                    [t("panel.donation.last_change"), fmt.dateTime(checkout.update_date)],
                  ]}
                />
              </Section>
              <Section title={t("panel.column.campaign")} id="checkout-campaign">
                {campaign ? (
                  <Fields
                    items={[
                      [
                        t("panel.column.title"),
                        <Link key="c" to={path(`campaigns/${campaign.id}`)}>
                          {campaign.title}
                        </Link>,
                      ],
                      [t("panel.column.slug"), campaign.slug],
                    ]}
                  />
                ) : (
                  <Empty>{t("panel.checkout.no_campaign")}</Empty>
                )}
              </Section>
              <Section title={t("panel.column.supporter")} id="checkout-supporter">
                {supporter ? (
                  <Fields
                    items={[
                      [
                        t("panel.column.name"),
                        <Link key="s" to={path(`supporters/${supporter.id}`)}>
                          {supporterName(t, supporter)}
                        </Link>,
                      ],
                      [t("panel.column.email"), supporter.email],
                      [t("panel.supporter.field.phone"), supporter.phone],
                      [
                        t("panel.donation.location"),
                        [supporter.city, supporter.country].filter(Boolean).join(", ") || null,
                      ],
                    ]}
                  />
                ) : (
                  <Empty>{t("panel.checkout.no_supporter")}</Empty>
                )}
              </Section>
              <Section title={t("panel.donation.section")} id="checkout-donation">
                {donation ? (
                  <Fields
                    items={[
                      [
                        t("panel.column.donation"),
                        <Link key="d" to={path(`donations/${donation.id}`)}>
                          {donation.code}
                        </Link>,
                      ],
                      [t("panel.column.amount"), fmt.money(donation.amount, donation.currency)],
                      [t("panel.column.frequency"), frequencyLabel(t, donation.frequency)],
                      [t("panel.column.state"), <StateBadge key="s" state={donation.state} />],
                      [t("panel.column.completed"), fmt.dateTime(donation.completed_date)],
                      [
                        t("panel.checkout.receipt"),
                        donation.receipt_url ? (
                          <a key="k149" href={donation.receipt_url} target="_blank" rel="noopener">
                            {t("panel.donation.receipt")}
                          </a>
                        ) : null,
                      ],
                    ]}
                  />
                ) : (
                  <Empty>{t("panel.checkout.no_donation")}</Empty>
                )}
              </Section>
              <Section title={t("panel.payment.section")} id="checkout-payment">
                {payment ? (
                  <>
                    <Fields
                      items={[
                        [
                          t("panel.payment.section"),
                          <Link key="p" to={path(`payments/${payment.id}`)}>
                            #{payment.id}
                          </Link>,
                        ],
                        [t("panel.column.amount"), fmt.money(payment.amount, payment.currency)],
                        [t("panel.column.state"), <StateBadge key="s" state={payment.state} />],
                        [t("panel.payment.paid_on"), fmt.dateTime(payment.payment_date)],
                        [
                          t("panel.column.method"),
                          payment.payment_method
                            ? `${payment.payment_method.label} (${payment.payment_method.processor})`
                            : null,
                        ],
                        [
                          t("panel.filter.processor_intent"),
                          payment.processor_intent_id ? <code key="k182">{payment.processor_intent_id}</code> : null,
                        ],
                      ]}
                    />
                    <PaymentActions
                      payment={payment}
                      onDone={(message) => {
                        setFlash(message);
                        state.reload();
                      }}
                    />
                  </>
                ) : (
                  <Empty>{t("panel.checkout.no_payment")}</Empty>
                )}
              </Section>
            </div>
          </>
        );
      }}
    </Async>
  );
}
