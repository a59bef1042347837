import { lazy, Suspense } from "react";
import { Link } from "react-router";
import { type Formatters, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { DataTable } from "../components/data-table";
import { FormProtection } from "../components/form-protection";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, Loading } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { CHECKOUT_ROW_SELECTION, type CheckoutRow, COLLECTIONS } from "./collections";
import type { DonationsPoint, RecurringPoint } from "./dashboard-charts";
import { formatRate, type RetentionRate } from "./retention.page";

const DonationsChart = lazy(() => import("./dashboard-charts").then((module) => ({ default: module.DonationsChart })));
const RecurringChart = lazy(() => import("./dashboard-charts").then((module) => ({ default: module.RecurringChart })));

const DASHBOARD = `query Dashboard {
  dashboard(months: 12) {
    currency time_zone raised_this_month raised_this_year raised { all_time }
    donations_over_time { period amount count }
    recurring_revenue { period monthly yearly }
    active_monthly_amount active_yearly_amount
    top_campaigns { campaign { id title goal is_goal_enabled } raised donations }
  }
}`;

const RETENTION = "query DashboardRetention { retention { year rate { rate retained last_year_donors } } }";

const CHECKOUTS = `query DashboardCheckouts {
  recent: checkouts(limit: 8, order: "-create_date") { count items { ${CHECKOUT_ROW_SELECTION} } }
  open: checkouts(limit: 8, order: "-create_date", state: "OPEN") { count items { ${CHECKOUT_ROW_SELECTION} } }
}`;

interface Dashboard {
  currency: string;
  time_zone: string;
  raised_this_month: number;
  raised_this_year: number;
  raised: { all_time: number };
  donations_over_time: DonationsPoint[];
  recurring_revenue: RecurringPoint[];
  active_monthly_amount: number;
  active_yearly_amount: number;
  top_campaigns: {
    campaign: { id: number; title: string; goal: number | null; is_goal_enabled: boolean };
    raised: number;
    donations: number;
  }[];
}

function Stat({ label, value, hint, testId }: { label: string; value: string; hint?: string; testId: string }) {
  return (
    <div className="stat card" data-testid={testId}>
      <p className="stat-label">{label}</p>
      <p className="stat-value">{value}</p>
      {hint && <p className="stat-hint muted">{hint}</p>}
    </div>
  );
}

function ChartFallbackTable({ caption, head, rows }: { caption: string; head: string[]; rows: string[][] }) {
  const { t } = useI18n();
  return (
    <details className="chart-table">
      <summary>{t("panel.dashboard.show_as_table")}</summary>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard. */}
      <section className="table-scroll" tabIndex={0} aria-label={caption}>
        <table className="table table-compact">
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {head.map((cell, index) => (
                <th key={cell} scope="col" className={index > 0 ? "numeric" : undefined}>
                  {cell}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row[0]}>
                {row.map((cell, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed.
                  <td key={index} className={index > 0 ? "numeric" : undefined}>
                    {cell}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </details>
  );
}

function CheckoutTable({
  rows,
  testId,
  caption,
  fmt,
  path,
  t,
}: {
  rows: CheckoutRow[];
  testId: string;
  caption: string;
  fmt: Formatters;
  path: (sub?: string) => string;
  t: Translate;
}) {
  const pick = new Set(["id", "supporter", "campaign", "amount", "frequency", "state", "create_date"]);
  const columns = COLLECTIONS.checkouts.columns
    .filter((column) => pick.has(column.key))
    .map((column) => ({
      ...column,
      label: t(column.label),
      sort: undefined,
      render: (row: CheckoutRow) => column.render(row, { fmt, path, t }),
    }));
  return <DataTable testId={testId} caption={caption} columns={columns} rows={rows} />;
}

export function DashboardPage() {
  const { org, path } = useOrg();
  const fmt = useFormat();
  const { t, intlLocale } = useI18n();
  usePageTitle(t("panel.dashboard.title"), org.name);
  const dashboard = useQuery<{ dashboard: Dashboard }>(DASHBOARD);
  const retention = useQuery<{ retention: { year: number; rate: RetentionRate } }>(RETENTION).data?.retention;
  const checkouts = useQuery<{
    recent: { count: number; items: CheckoutRow[] };
    open: { count: number; items: CheckoutRow[] };
  }>(CHECKOUTS);

  return (
    <>
      <PageHeader title={t("panel.dashboard.title")}>
        <p className="muted">
          {t("panel.dashboard.subtitle", { name: org.name, currency: org.currency, timeZone: org.time_zone })}
        </p>
      </PageHeader>

      <FormProtection />

      <Async state={dashboard} loadingLabel={t("panel.dashboard.loading_figures")}>
        {({ dashboard: data }) => {
          const points = data.donations_over_time;
          const thisMonth = points[points.length - 1];
          const recurring = data.recurring_revenue;
          return (
            <>
              <div className="stats">
                <Stat
                  testId="raised-this-month"
                  label={t("panel.dashboard.raised_this_month")}
                  value={fmt.money(data.raised_this_month)}
                  hint={
                    thisMonth
                      ? t("panel.dashboard.donations_count", {
                          count: thisMonth.count,
                          formatted: fmt.number(thisMonth.count),
                        })
                      : undefined
                  }
                />
                <Stat
                  testId="raised-this-year"
                  label={t("panel.dashboard.raised_this_year")}
                  value={fmt.money(data.raised_this_year)}
                  hint={t("panel.dashboard.raised_all_time", { amount: fmt.money(data.raised.all_time) })}
                />
                <Stat
                  testId="active-monthly"
                  label={t("panel.dashboard.active_monthly")}
                  value={fmt.money(data.active_monthly_amount)}
                  hint={t("panel.dashboard.active_monthly_hint")}
                />
                <Stat
                  testId="active-yearly"
                  label={t("panel.dashboard.active_yearly")}
                  value={fmt.money(data.active_yearly_amount)}
                  hint={t("panel.dashboard.active_yearly_hint")}
                />
                {retention && (
                  <Stat
                    testId="retention-rate"
                    label={t("panel.dashboard.retention_rate", { year: retention.year })}
                    value={retention.rate.rate === null ? "—" : formatRate(retention.rate.rate, intlLocale)}
                    hint={
                      retention.rate.rate === null
                        ? t("panel.dashboard.retention_rate_none", { lastYear: retention.year - 1 })
                        : t("panel.dashboard.retention_rate_hint", {
                            count: retention.rate.retained,
                            retained: fmt.number(retention.rate.retained),
                            donors: fmt.number(retention.rate.last_year_donors),
                            lastYear: retention.year - 1,
                          })
                    }
                  />
                )}
              </div>

              <div className="grid-2">
                <Section title={t("panel.dashboard.donations_over_time")} id="donations-over-time">
                  <div className="chart" data-testid="dashboard-chart">
                    <Suspense fallback={<Loading label={t("panel.dashboard.loading_chart")} />}>
                      <DonationsChart points={points} fmt={fmt} t={t} locale={intlLocale} />
                    </Suspense>
                  </div>
                  <ChartFallbackTable
                    caption={t("panel.dashboard.donations_per_month")}
                    head={[t("panel.dashboard.month"), t("panel.dashboard.raised"), t("panel.dashboard.donations")]}
                    rows={points.map((point) => [
                      fmt.month(point.period),
                      fmt.money(point.amount),
                      fmt.number(point.count),
                    ])}
                  />
                </Section>
                <Section title={t("panel.dashboard.recurring_revenue")} id="recurring-revenue">
                  <div className="chart" data-testid="recurring-chart">
                    <Suspense fallback={<Loading label={t("panel.dashboard.loading_chart")} />}>
                      <RecurringChart points={recurring} fmt={fmt} t={t} locale={intlLocale} />
                    </Suspense>
                  </div>
                  <ChartFallbackTable
                    caption={t("panel.dashboard.recurring_per_month")}
                    head={[
                      t("panel.dashboard.month"),
                      t("panel.dashboard.monthly_donors"),
                      t("panel.dashboard.yearly_donors"),
                    ]}
                    rows={recurring.map((point) => [
                      fmt.month(point.period),
                      fmt.money(point.monthly),
                      fmt.money(point.yearly),
                    ])}
                  />
                </Section>
              </div>

              <Section
                title={t("panel.dashboard.top_campaigns")}
                id="top-campaigns"
                actions={<Link to={path("campaigns")}>{t("panel.dashboard.all_campaigns")}</Link>}
              >
                {data.top_campaigns.length === 0 ? (
                  <Empty>{t("panel.dashboard.no_donations_this_year")}</Empty>
                ) : (
                  <ol className="top-campaigns" data-testid="top-campaigns">
                    {data.top_campaigns.map(({ campaign, raised, donations }) => {
                      const share =
                        campaign.is_goal_enabled && campaign.goal
                          ? Math.min(100, (raised / campaign.goal) * 100)
                          : null;
                      return (
                        <li key={campaign.id}>
                          <div className="top-campaign-row">
                            <Link to={path(`campaigns/${campaign.id}`)}>{campaign.title}</Link>
                            <span className="numeric">
                              <strong>{fmt.money(raised)}</strong>{" "}
                              <span className="muted">
                                ·{" "}
                                {t("panel.dashboard.donations_count", {
                                  count: donations,
                                  formatted: fmt.number(donations),
                                })}
                              </span>
                            </span>
                          </div>
                          {share !== null && (
                            <div className="progress-row">
                              <progress
                                max={100}
                                value={share}
                                aria-label={t("panel.dashboard.goal_progress", { title: campaign.title })}
                              />
                              <span className="muted small">
                                {t("panel.dashboard.share_of_goal", {
                                  share: Math.round(share),
                                  goal: fmt.moneyShort(campaign.goal),
                                })}
                              </span>
                            </div>
                          )}
                        </li>
                      );
                    })}
                  </ol>
                )}
              </Section>
            </>
          );
        }}
      </Async>

      <Async state={checkouts} loadingLabel={t("panel.dashboard.loading_checkouts")}>
        {(data) => (
          <div className="grid-tables">
            <Section
              title={t("panel.dashboard.recent_checkouts")}
              id="recent-checkouts"
              actions={
                <Link to={path("checkouts")}>
                  {t("panel.dashboard.all_count", { count: fmt.number(data.recent.count) })}
                </Link>
              }
            >
              {data.recent.items.length === 0 ? (
                <Empty>{t("panel.dashboard.no_checkouts")}</Empty>
              ) : (
                <CheckoutTable
                  rows={data.recent.items}
                  testId="recent-checkouts"
                  caption={t("panel.dashboard.recent_checkouts")}
                  fmt={fmt}
                  path={path}
                  t={t}
                />
              )}
            </Section>
            <Section
              title={t("panel.dashboard.abandoned_checkouts", { count: fmt.number(data.open.count) })}
              id="open-checkouts"
              actions={<Link to={`${path("checkouts")}?state=OPEN`}>{t("panel.dashboard.view_all")}</Link>}
            >
              {data.open.items.length === 0 ? (
                <Empty>{t("panel.dashboard.no_open_checkouts")}</Empty>
              ) : (
                <CheckoutTable
                  rows={data.open.items}
                  testId="open-checkouts"
                  caption={t("panel.dashboard.open_checkouts")}
                  fmt={fmt}
                  path={path}
                  t={t}
                />
              )}
            </Section>
          </div>
        )}
      </Async>
    </>
  );
}
