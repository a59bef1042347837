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
  const fmt = useFormat();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ checkout: CheckoutDetail | null }>(QUERY, { id });
  usePageTitle(`Checkout #${id}`, org.name);
  const crumbs = [{ label: "Checkouts", to: path("checkouts") }];
  return (
    <Async state={state}>
      {({ checkout }) => {
        if (!checkout) {
          return (
            <>
              <PageHeader title="Checkout not found" crumbs={crumbs} />
              <Empty>
                There is no checkout #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const { campaign, supporter, donation, payment } = checkout;
        return (
          <>
            <PageHeader title={`Checkout #${checkout.id}`} crumbs={crumbs}>
              <p className="muted">
                <StateBadge state={checkout.state} /> opened {fmt.dateTime(checkout.create_date)}
                {checkout.completed_date ? ` · completed ${fmt.dateTime(checkout.completed_date)}` : ""}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title="Checkout" id="checkout">
                <Fields
                  items={[
                    ["Amount", fmt.money(checkout.amount)],
                    ["Frequency", frequencyLabel(checkout.frequency)],
                    ["State", <StateBadge key="s" state={checkout.state} />],
                    [
                      "Payment method",
                      checkout.payment_method_label
                        ? `${checkout.payment_method_label} (${checkout.payment_method_processor})`
                        : null,
                    ],
                    [
                      "Cost example",
                      campaign?.cost_example_label
                        ? `${fmt.number(checkout.cost_example_quantity)} × ${campaign.cost_example_label}`
                        : null,
                    ],
                    ["Completed", fmt.dateTime(checkout.completed_date)],
                    ["Last change", fmt.dateTime(checkout.update_date)],
                  ]}
                />
              </Section>
              <Section title="Campaign" id="checkout-campaign">
                {campaign ? (
                  <Fields
                    items={[
                      [
                        "Title",
                        <Link key="c" to={path(`campaigns/${campaign.id}`)}>
                          {campaign.title}
                        </Link>,
                      ],
                      ["Slug", campaign.slug],
                    ]}
                  />
                ) : (
                  <Empty>No campaign.</Empty>
                )}
              </Section>
              <Section title="Supporter" id="checkout-supporter">
                {supporter ? (
                  <Fields
                    items={[
                      [
                        "Name",
                        <Link key="s" to={path(`supporters/${supporter.id}`)}>
                          {supporterName(supporter)}
                        </Link>,
                      ],
                      ["Email", supporter.email],
                      ["Phone", supporter.phone],
                      ["Location", [supporter.city, supporter.country].filter(Boolean).join(", ") || null],
                    ]}
                  />
                ) : (
                  <Empty>The donor has not given their details yet.</Empty>
                )}
              </Section>
              <Section title="Donation" id="checkout-donation">
                {donation ? (
                  <Fields
                    items={[
                      [
                        "Donation",
                        <Link key="d" to={path(`donations/${donation.id}`)}>
                          {donation.code}
                        </Link>,
                      ],
                      ["Amount", fmt.money(donation.amount, donation.currency)],
                      ["Frequency", frequencyLabel(donation.frequency)],
                      ["State", <StateBadge key="s" state={donation.state} />],
                      ["Completed", fmt.dateTime(donation.completed_date)],
                      [
                        "Receipt",
                        donation.receipt_url ? (
                          <a key="k149" href={donation.receipt_url} target="_blank" rel="noopener">
                            Receipt ↗
                          </a>
                        ) : null,
                      ],
                    ]}
                  />
                ) : (
                  <Empty>No donation yet.</Empty>
                )}
              </Section>
              <Section title="Payment" id="checkout-payment">
                {payment ? (
                  <>
                    <Fields
                      items={[
                        [
                          "Payment",
                          <Link key="p" to={path(`payments/${payment.id}`)}>
                            #{payment.id}
                          </Link>,
                        ],
                        ["Amount", fmt.money(payment.amount, payment.currency)],
                        ["State", <StateBadge key="s" state={payment.state} />],
                        ["Paid on", fmt.dateTime(payment.payment_date)],
                        [
                          "Method",
                          payment.payment_method
                            ? `${payment.payment_method.label} (${payment.payment_method.processor})`
                            : null,
                        ],
                        [
                          "Processor intent",
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
                  <Empty>No payment yet.</Empty>
                )}
              </Section>
            </div>
          </>
        );
      }}
    </Async>
  );
}
