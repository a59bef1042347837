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
import { CAMPAIGN_FIELDS, donatePageUrl, SUPPORTER_FORM_FIELDS } from "./campaign-fields";
import { COLLECTIONS, type DonationRow } from "./collections";

const QUERY = `query CampaignDetail($id: ID!, $campaign_id: Int!) {
  campaign(id: $id) { ${CAMPAIGN_FIELDS} }
  donations(campaign_id: $campaign_id, limit: 10) { count items { ${COLLECTIONS.donations.selection} } }
  open: checkouts(campaign_id: $campaign_id, state: "OPEN", limit: 1) { count }
  all: checkouts(campaign_id: $campaign_id, limit: 1) { count }
}`;
const ARCHIVE = `mutation Archive($id: ID!) { archiveCampaign(id: $id) { id archive_date } }`;

const fieldLabel = new Map<string, string>(SUPPORTER_FORM_FIELDS);

export function CampaignDetailPage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  const location = useLocation();
  const [flash, setFlash] = useState<string | null>((location.state as { flash?: string } | null)?.flash ?? null);
  const state = useQuery<{
    campaign: Campaign | null;
    donations: { count: number; items: DonationRow[] };
    open: { count: number };
    all: { count: number };
  }>(QUERY, { id, campaign_id: /^\d+$/.test(id) ? Number(id) : 0 });
  usePageTitle(state.data?.campaign?.title ?? "Campaign", org.name);
  const crumbs = [{ label: "Campaigns", to: path("campaigns") }];
  const money = (value: number | null) => fmt.money(value);
  const list = (values: number[] | null) => (values && values.length > 0 ? values.map(money).join(" · ") : null);

  return (
    <Async state={state}>
      {({ campaign, donations, open, all }) => {
        if (!campaign) {
          return (
            <>
              <PageHeader title="Campaign not found" crumbs={crumbs} />
              <Empty>
                There is no campaign #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const donateUrl = campaign.slug ? donatePageUrl(org.slug, campaign.slug) : null;
        const columns = COLLECTIONS.donations.columns
          .filter((column) => column.key !== "campaign")
          .map((column) => ({
            ...column,
            sort: undefined,
            render: (row: DonationRow) => column.render(row, { fmt, path }),
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
                      Donation page ↗
                    </a>
                  )}
                  {canWrite && (
                    <Link
                      className="button button-primary"
                      to={path(`campaigns/${campaign.id}/edit`)}
                      data-testid="edit-campaign"
                    >
                      Edit
                    </Link>
                  )}
                  {canWrite && !campaign.archive_date && (
                    <ActionButton
                      label="Archive"
                      title="Archive this campaign?"
                      confirmLabel="Archive"
                      danger
                      testId="archive-campaign"
                      run={() => gql(ARCHIVE, { id: campaign.id })}
                      onDone={() => {
                        setFlash("Campaign archived: it no longer takes gifts.");
                        state.reload();
                      }}
                    >
                      <p>
                        “{campaign.title}” will stop taking gifts. Its donations and history stay. This cannot be undone
                        from the admin panel.
                      </p>
                    </ActionButton>
                  )}
                </>
              }
            >
              <p className="muted">
                <StateBadge state={campaign.archive_date ? "archived" : "active"} /> {campaign.type}
                {campaign.code ? ` · code ${campaign.code}` : ""} · created {fmt.dateTime(campaign.create_date)}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <div className="grid-2">
              <Section title="Giving" id="giving">
                <Fields
                  items={[
                    ["Goal", campaign.is_goal_enabled ? money(campaign.goal) : "Not shown"],
                    ["One-off gifts", campaign.has_one_off ? "Offered" : "Not offered"],
                    ["Suggested amounts", list(campaign.asks)],
                    [
                      "Default / min / max",
                      [campaign.default_amount, campaign.min_amount, campaign.max_amount].map(money).join(" / "),
                    ],
                    ["Custom amount", campaign.allow_custom_amount ? "Allowed" : "Not allowed"],
                    ["Recurring gifts", campaign.has_subscription ? "Offered" : "Not offered"],
                    ["Suggested recurring", list(campaign.asks_subscription)],
                    [
                      "Recurring default / min / max",
                      [
                        campaign.default_subscription_amount,
                        campaign.min_subscription_amount,
                        campaign.max_subscription_amount,
                      ]
                        .map(money)
                        .join(" / "),
                    ],
                    ["Custom recurring amount", campaign.allow_custom_subscription_amount ? "Allowed" : "Not allowed"],
                    ["Cover the fee", campaign.allow_cover_fee ? "Offered" : "Not offered"],
                    [
                      "Cost example",
                      campaign.cost_example_amount !== null
                        ? `${money(campaign.cost_example_amount)} = ${campaign.cost_example_label}`
                        : null,
                    ],
                  ]}
                />
              </Section>
              <Section title="Form and page" id="form">
                <Fields
                  items={[
                    ["Slug", campaign.slug],
                    [
                      "Donation page",
                      donateUrl ? (
                        <a key="k154" href={donateUrl} target="_blank" rel="noopener">
                          {donateUrl}
                        </a>
                      ) : (
                        "Set a slug to publish a donation page"
                      ),
                    ],
                    [
                      "Shown fields",
                      (campaign.shown_fields ?? []).map((f) => fieldLabel.get(f) ?? f).join(", ") || null,
                    ],
                    [
                      "Required fields",
                      (campaign.required_fields ?? []).map((f) => fieldLabel.get(f) ?? f).join(", ") || null,
                    ],
                    ["Privacy note", campaign.privacy_note],
                    ["Tags", <Tags key="tags" tags={campaign.tags} />],
                    ["Checkouts", `${fmt.number(all.count)} (${fmt.number(open.count)} open)`],
                    ["Last change", fmt.dateTime(campaign.update_date)],
                  ]}
                />
              </Section>
            </div>
            <Section
              title={`Donations (${fmt.number(donations.count)})`}
              id="campaign-donations"
              actions={<Link to={`${path("donations")}?campaign_id=${campaign.id}`}>View all</Link>}
            >
              {donations.items.length === 0 ? (
                <Empty>No donations to this campaign yet.</Empty>
              ) : (
                <DataTable
                  testId="campaign-donations"
                  caption="Latest donations"
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
