import { useState } from "react";
import { Link, useLocation, useParams } from "react-router";
import type { Campaign } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge, Tags } from "../components/badges";
import { DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";
import { CAMPAIGN_FIELDS, donatePageUrl, SUPPORTER_FORM_FIELDS } from "./campaign-fields";
import { CampaignSharingSection } from "./campaign-sharing";
import { COLLECTIONS, type DonationRow } from "./collections";

const QUERY = `query CampaignDetail($id: ID!, $campaign_id: Int!) {
  campaign(id: $id) { ${CAMPAIGN_FIELDS} raised { all_time this_year donors } }
  donations(campaign_id: $campaign_id, limit: 10) { count items { ${COLLECTIONS.donations.selection} } }
  open: checkouts(campaign_id: $campaign_id, state: "OPEN", limit: 1) { count }
  all: checkouts(campaign_id: $campaign_id, limit: 1) { count }
}`;
const ARCHIVE = `mutation Archive($id: ID!) { archiveCampaign(id: $id) { id archive_date } }`;

const fieldLabel = new Map<string, string>(SUPPORTER_FORM_FIELDS);

export function CampaignDetailPage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  const location = useLocation();
  const [flash, setFlash] = useState<string | null>((location.state as { flash?: string } | null)?.flash ?? null);
  const state = useQuery<{
    campaign: (Campaign & { raised: { all_time: number; this_year: number; donors: number } }) | null;
    donations: { count: number; items: DonationRow[] };
    open: { count: number };
    all: { count: number };
  }>(QUERY, { id, campaign_id: /^\d+$/.test(id) ? Number(id) : 0 });
  usePageTitle(state.data?.campaign?.title ?? t("panel.campaign.page_title"), org.name);
  const crumbs = [{ label: t("panel.campaigns.title"), to: path("campaigns") }];
  const fieldName = (field: string) => (fieldLabel.has(field) ? t(fieldLabel.get(field) as string) : field);
  const offered = (value: boolean) => (value ? t("panel.campaign.offered") : t("panel.campaign.not_offered"));
  const allowed = (value: boolean) => (value ? t("panel.campaign.allowed") : t("panel.campaign.not_allowed"));
  const money = (value: number | null) => fmt.money(value);
  const list = (values: number[] | null) => (values && values.length > 0 ? values.map(money).join(" · ") : null);

  return (
    <Async state={state}>
      {({ campaign, donations, open, all }) => {
        if (!campaign) {
          return (
            <>
              <PageHeader title={t("panel.campaign.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.campaign.not_found_body", { id, organization: org.name })}</Empty>
            </>
          );
        }
        const donateUrl = campaign.slug ? donatePageUrl(org.slug, campaign.slug) : null;
        const columns = COLLECTIONS.donations.columns
          .filter((column) => column.key !== "campaign")
          .map((column) => ({
            ...column,
            label: t(column.label),
            sort: undefined,
            render: (row: DonationRow) => column.render(row, { fmt, path, t }),
          }));
        return (
          <>
            <PageHeader
              title={campaign.title}
              crumbs={crumbs}
              actions={
                <>
                  {donateUrl && (
                    <a className="button" href={donateUrl} target="_blank" rel="noopener" data-testid="donate-link">
                      {t("panel.campaign.donation_page_link")}
                    </a>
                  )}
                  {canWrite && (
                    <Link
                      className="button button-primary"
                      to={path(`campaigns/${campaign.id}/edit`)}
                      data-testid="edit-campaign"
                    >
                      {t("panel.campaign.edit")}
                    </Link>
                  )}
                  {canWrite && !campaign.archive_date && (
                    <ActionButton
                      label={t("panel.campaign.archive")}
                      title={t("panel.campaign.archive_title")}
                      confirmLabel={t("panel.campaign.archive")}
                      danger
                      testId="archive-campaign"
                      run={() => gql(ARCHIVE, { id: campaign.id })}
                      onDone={() => {
                        setFlash(t("panel.campaign.archived"));
                        state.reload();
                      }}
                    >
                      <p>{t("panel.campaign.archive_body", { title: campaign.title })}</p>
                    </ActionButton>
                  )}
                </>
              }
            >
              <p className="muted">
                <StateBadge state={campaign.archive_date ? "archived" : "active"} /> {campaign.type}
                {campaign.code ? ` · ${t("panel.supporter.code", { code: campaign.code })}` : ""} ·{" "}
                {t("panel.campaign.created", { date: fmt.dateTime(campaign.create_date) })}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title={t("panel.campaign.giving")} id="giving">
                <p className="campaign-raised" data-testid="campaign-raised">
                  <strong>{money(campaign.raised.all_time)}</strong>{" "}
                  {t("panel.campaign.raised_summary", {
                    this_year: money(campaign.raised.this_year),
                    donors: campaign.raised.donors,
                    formatted: fmt.number(campaign.raised.donors),
                  })}
                  {campaign.is_goal_enabled && campaign.goal
                    ? ` · ${t("panel.campaign.raised_of_goal", {
                        percent: fmt.number(Math.floor((campaign.raised.all_time / campaign.goal) * 100)),
                        goal: money(campaign.goal),
                      })}`
                    : ""}
                </p>
                <Fields
                  items={[
                    [
                      t("panel.column.goal"),
                      campaign.is_goal_enabled ? money(campaign.goal) : t("panel.campaign.not_shown"),
                    ],
                    [t("panel.campaign.one_off_gifts"), offered(campaign.has_one_off)],
                    [t("panel.campaign.suggested_amounts"), list(campaign.asks)],
                    [
                      t("panel.campaign.default_min_max"),
                      [campaign.default_amount, campaign.min_amount, campaign.max_amount].map(money).join(" / "),
                    ],
                    [t("panel.campaign.custom_amount"), allowed(campaign.allow_custom_amount)],
                    [t("panel.campaign.recurring_gifts"), offered(campaign.has_subscription)],
                    [t("panel.campaign.suggested_recurring"), list(campaign.asks_subscription)],
                    [
                      t("panel.campaign.recurring_default_min_max"),
                      [
                        campaign.default_subscription_amount,
                        campaign.min_subscription_amount,
                        campaign.max_subscription_amount,
                      ]
                        .map(money)
                        .join(" / "),
                    ],
                    [t("panel.campaign.custom_recurring_amount"), allowed(campaign.allow_custom_subscription_amount)],
                    [t("panel.campaign.cover_fee"), offered(campaign.allow_cover_fee)],
                    [
                      t("panel.campaign.cost_example"),
                      campaign.cost_example_amount !== null
                        ? `${money(campaign.cost_example_amount)} = ${campaign.cost_example_label}`
                        : null,
                    ],
                  ]}
                />
              </Section>
              <Section title={t("panel.campaign.form_and_page")} id="form">
                <Fields
                  items={[
                    [t("panel.column.slug"), campaign.slug],
                    [
                      t("panel.campaign.donation_page"),
                      donateUrl ? (
                        <a key="k154" href={donateUrl} target="_blank" rel="noopener">
                          {donateUrl}
                        </a>
                      ) : (
                        t("panel.campaign.set_a_slug")
                      ),
                    ],
                    [t("panel.campaign.shown_fields"), (campaign.shown_fields ?? []).map(fieldName).join(", ") || null],
                    [
                      t("panel.campaign.required_fields"),
                      (campaign.required_fields ?? []).map(fieldName).join(", ") || null,
                    ],
                    [t("panel.campaign.privacy_note"), campaign.privacy_note],
                    [t("panel.column.tags"), <Tags key="tags" tags={campaign.tags} />],
                    [
                      t("panel.checkouts.title"),
                      t("panel.campaign.checkouts_count", {
                        all: fmt.number(all.count),
                        open: fmt.number(open.count),
                      }),
                    ],
                    [t("panel.donation.last_change"), fmt.dateTime(campaign.update_date)],
                  ]}
                />
              </Section>
            </div>
            <CampaignSharingSection campaignId={Number(campaign.id)} slug={campaign.slug} />
            <Section
              title={t("panel.supporter.donations", { count: fmt.number(donations.count) })}
              id="campaign-donations"
              actions={
                <Link to={`${path("donations")}?campaign_id=${campaign.id}`}>{t("panel.dashboard.view_all")}</Link>
              }
            >
              {donations.items.length === 0 ? (
                <Empty>{t("panel.campaign.no_donations")}</Empty>
              ) : (
                <DataTable
                  testId="campaign-donations"
                  caption={t("panel.campaign.latest_donations")}
                  columns={columns}
                  rows={donations.items}
                />
              )}
            </Section>
          </>
        );
      }}
    </Async>
  );
}
