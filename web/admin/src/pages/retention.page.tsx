import { useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { DataTable, DateTimeCell, Pagination } from "../components/data-table";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";

const PAGE_SIZE = 25;
const SEGMENTS = ["lybunt", "sybunt", "first_time"] as const;
type Segment = (typeof SEGMENTS)[number];

const LIST = "count items { id name email last_gift_date last_year_total lifetime_total }";
const RETENTION = `query Retention($year: Int, $limit: Int, $lybunt: Int, $sybunt: Int, $first_time: Int) {
  retention(year: $year) {
    year minor_unit_exponent time_zone
    rate { rate retained last_year_donors }
    lybunt(limit: $limit, offset: $lybunt) { ${LIST} }
    sybunt(limit: $limit, offset: $sybunt) { ${LIST} }
    first_time(limit: $limit, offset: $first_time) { ${LIST} }
  }
}`;

interface RetentionSupporter {
  id: number;
  name: string | null;
  email: string | null;
  last_gift_date: string;
  last_year_total: number;
  lifetime_total: number;
}
type RetentionList = { count: number; items: RetentionSupporter[] };
export interface RetentionRate {
  rate: number | null;
  retained: number;
  last_year_donors: number;
}
type Retention = {
  year: number;
  minor_unit_exponent: number;
  time_zone: string;
  rate: RetentionRate;
} & Record<Segment, RetentionList>;

/** The retention rate as a percentage in the panel's language (one decimal at most). */
export function formatRate(rate: number, intlLocale: string): string {
  return new Intl.NumberFormat(intlLocale, { style: "percent", maximumFractionDigits: 1 }).format(rate);
}

/** The calendar year it is now in the organization's time zone. */
function yearNow(timeZone: string): number {
  return Number(new Intl.DateTimeFormat("en", { timeZone, year: "numeric" }).format(new Date()));
}

const TITLES: Record<Segment, [string, string]> = {
  lybunt: ["panel.retention.lybunt", "panel.retention.lybunt_hint"],
  sybunt: ["panel.retention.sybunt", "panel.retention.sybunt_hint"],
  first_time: ["panel.retention.first_time", "panel.retention.first_time_hint"],
};

/** Retention: the rate, and who lapsed last year, who lapsed earlier and who gave for the first time. */
export function RetentionPage() {
  const { org, path } = useOrg();
  const fmt = useFormat();
  const { t, intlLocale } = useI18n();
  usePageTitle(t("panel.retention.title"), org.name);
  const [params, setParams] = useSearchParams();
  const thisYear = useMemo(() => yearNow(org.time_zone), [org.time_zone]);
  const asked = Number(params.get("year"));
  const year = Number.isInteger(asked) && asked >= 1900 && asked <= 9999 ? asked : thisYear;
  const offsets = Object.fromEntries(
    SEGMENTS.map((segment) => [segment, Math.max(0, Number(params.get(segment)) || 0)]),
  ) as Record<Segment, number>;
  const state = useQuery<{ retention: Retention }>(RETENTION, { year, limit: PAGE_SIZE, ...offsets });
  const years = Array.from({ length: 10 }, (_, index) => thisYear - index);
  if (!years.includes(year)) years.push(year);
  const setParam = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    setParams(next, { replace: true });
  };
  const words = { year, lastYear: year - 1 };
  const csvHref = (segment: Segment) =>
    `/admin/export/retention-${segment}.csv?${new URLSearchParams({ organization: org.slug, year: String(year) })}`;

  return (
    <>
      <PageHeader title={t("panel.retention.title")}>
        <p className="muted">{t("panel.retention.intro", { timeZone: org.time_zone })}</p>
      </PageHeader>
      <section className="card filters" aria-label={t("panel.collections.filters")}>
        <div className="filters-grid">
          <div className="filter filter-select">
            <label htmlFor="retention-year">{t("panel.retention.year")}</label>
            <select
              id="retention-year"
              value={String(year)}
              onChange={(event) => setParam({ year: event.target.value, lybunt: null, sybunt: null, first_time: null })}
            >
              {years.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          </div>
        </div>
      </section>
      <Async state={state} loadingLabel={t("panel.retention.loading")}>
        {({ retention }) => {
          const money = (minor: number) => fmt.money(minor / 10 ** retention.minor_unit_exponent);
          const { rate } = retention;
          return (
            <>
              <div className="stats">
                <div className="stat card" data-testid="retention-rate">
                  <p className="stat-label">{t("panel.retention.rate")}</p>
                  <p className="stat-value">{rate.rate === null ? "—" : formatRate(rate.rate, intlLocale)}</p>
                  <p className="stat-hint muted">
                    {rate.rate === null
                      ? t("panel.retention.rate_none", words)
                      : t("panel.retention.rate_hint", {
                          ...words,
                          count: rate.retained,
                          retained: fmt.number(rate.retained),
                          donors: fmt.number(rate.last_year_donors),
                        })}
                  </p>
                </div>
                {SEGMENTS.map((segment) => (
                  <div className="stat card" key={segment} data-testid={`retention-count-${segment}`}>
                    <p className="stat-label">{t(TITLES[segment][0])}</p>
                    <p className="stat-value">{fmt.number(retention[segment].count)}</p>
                    <p className="stat-hint muted">{t(TITLES[segment][1], words)}</p>
                  </div>
                ))}
              </div>
              {SEGMENTS.map((segment) => {
                const list = retention[segment];
                const title = t(TITLES[segment][0]);
                return (
                  <Section
                    key={segment}
                    id={`retention-${segment.replace("_", "-")}`}
                    title={title}
                    actions={
                      <a
                        className="button"
                        href={csvHref(segment)}
                        download
                        aria-label={t("panel.retention.download_label", { title })}
                        data-testid={`download-retention-${segment}`}
                      >
                        {t("panel.retention.download")}
                      </a>
                    }
                  >
                    <p className="muted">
                      {t(TITLES[segment][1], words)}{" "}
                      {t("panel.retention.count", { count: list.count, formatted: fmt.number(list.count) })}
                    </p>
                    {list.count === 0 ? (
                      <Empty>{t("panel.retention.none")}</Empty>
                    ) : (
                      <>
                        <DataTable
                          testId={`table-retention-${segment}`}
                          caption={t("panel.retention.caption", { title })}
                          rows={list.items}
                          busy={state.loading}
                          columns={[
                            {
                              key: "name",
                              label: t("panel.retention.supporter"),
                              wrap: true,
                              render: (row) => (
                                <Link to={path(`supporters/${row.id}`)}>
                                  {row.name ?? t("panel.retention.unnamed", { id: row.id })}
                                </Link>
                              ),
                            },
                            {
                              key: "email",
                              label: t("panel.retention.email"),
                              wrap: true,
                              render: (row) => row.email ?? "—",
                            },
                            {
                              key: "last_gift",
                              label: t("panel.retention.last_gift"),
                              render: (row) => <DateTimeCell iso={row.last_gift_date} fmt={fmt} />,
                            },
                            {
                              key: "last_year_total",
                              label: t("panel.retention.last_year_total", words),
                              numeric: true,
                              render: (row) => money(row.last_year_total),
                            },
                            {
                              key: "lifetime_total",
                              label: t("panel.retention.lifetime_total", words),
                              numeric: true,
                              render: (row) => money(row.lifetime_total),
                            },
                          ]}
                        />
                        {list.count > PAGE_SIZE && (
                          <Pagination
                            offset={offsets[segment]}
                            limit={PAGE_SIZE}
                            count={list.count}
                            format={fmt.number}
                            onPage={(offset) => setParam({ [segment]: offset ? String(offset) : null })}
                          />
                        )}
                      </>
                    )}
                  </Section>
                );
              })}
            </>
          );
        }}
      </Async>
    </>
  );
}
