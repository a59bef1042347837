import { type FormEvent, type ReactElement, useMemo, useRef, useState } from "react";
import { Link, useSearchParams } from "react-router";
import type { ListResult } from "../api/types";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { CampaignSelect } from "../components/campaign-select";
import { DataTable, Pagination, type TableColumn } from "../components/data-table";
import { PageHeader, usePageTitle } from "../components/page";
import { Empty, ErrorState, Loading } from "../components/states";
import { useI18n } from "../i18n";
import { COLLECTIONS, type CollectionDef, type CollectionName, type FilterDef } from "./collections";
import { type SegmentFilter, SegmentsControl } from "./segments-control";

export const PAGE_SIZES = [25, 50, 100, 250];
const DEFAULT_LIMIT = 50;
const DEFAULT_ORDER = "-create_date";

function readInt(value: string | null, fallback: number, min: number, max: number): number {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  const number = Number(value);
  return number >= min && number <= max ? number : fallback;
}

function listQuery(def: CollectionDef<{ id: number }>, limit: number): string {
  const declarations = def.filters.map((filter) => `$${filter.name}: ${filter.gqlType}`).join(", ");
  const args = def.filters.map((filter) => `${filter.name}: $${filter.name}`).join(", ");
  // The limit is a literal so the server's cost estimate uses the real page size.
  return `query List($offset: Int, $order: String, ${declarations}) {
  ${def.name}(limit: ${limit}, offset: $offset, order: $order, ${args}) { count items { ${def.selection} } }
}`;
}

function filterValue(filter: FilterDef, raw: string): unknown {
  if (filter.gqlType === "Int") return /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (filter.gqlType === "Boolean") return raw === "true" ? true : raw === "false" ? false : raw;
  return raw;
}

/** The filters and order of a list as query parameters (for the CSV export link). */
export function exportHref(collection: CollectionName, org: string, params: URLSearchParams): string {
  const out = new URLSearchParams({ organization: org });
  for (const [key, value] of params) {
    if (key !== "limit" && key !== "offset" && value !== "") out.append(key, value);
  }
  return `/admin/export/${collection}.csv?${out}`;
}

function FilterField({ filter, value, onChange }: { filter: FilterDef; value: string; onChange: () => void }) {
  const { t } = useI18n();
  const id = `filter-${filter.name}`;
  let control: ReactElement;
  if (filter.kind === "select") {
    control = (
      <select id={id} name={filter.name} defaultValue={value} onChange={onChange}>
        <option value="">{t("panel.filter.all")}</option>
        {filter.options?.map(([optionValue, label]) => (
          <option key={optionValue} value={optionValue}>
            {t(label)}
          </option>
        ))}
      </select>
    );
  } else if (filter.kind === "campaign") {
    control = <CampaignSelect id={id} name={filter.name} defaultValue={value || undefined} onChange={onChange} />;
  } else {
    control = (
      <input
        id={id}
        name={filter.name}
        type={filter.kind === "date" ? "date" : filter.kind === "number" ? "number" : "search"}
        min={filter.kind === "number" ? 1 : undefined}
        defaultValue={value}
        placeholder={filter.placeholder && t(filter.placeholder)}
        onChange={filter.kind === "date" ? onChange : undefined}
      />
    );
  }
  return (
    <div className={`filter filter-${filter.kind}`}>
      <label htmlFor={id}>{t(filter.label)}</label>
      {control}
    </div>
  );
}

export function CollectionPage({ name }: { name: CollectionName }) {
  const def = COLLECTIONS[name] as CollectionDef<{ id: number }>;
  const { org, path, canWrite } = useOrg();
  const { t, locale } = useI18n();
  const fmt = useFormat();
  const title = t(def.title);
  const titleInSentence = title.toLocaleLowerCase(locale);
  const [params, setParams] = useSearchParams();
  const formRef = useRef<HTMLFormElement>(null);
  const [filtersOpen, setFiltersOpen] = useState(false);
  usePageTitle(title, org.name);

  const limit = readInt(params.get("limit"), DEFAULT_LIMIT, 1, 1000);
  const offset = readInt(params.get("offset"), 0, 0, Number.MAX_SAFE_INTEGER);
  const order = params.get("order") || DEFAULT_ORDER;
  const query = useMemo(() => listQuery(def, limit), [def, limit]);
  const variables: Record<string, unknown> = { offset, order };
  const invalid: string[] = [];
  for (const filter of def.filters) {
    const raw = params.get(filter.name);
    if (!raw) continue;
    const value = filterValue(filter, raw);
    if (typeof value === "string" && filter.gqlType !== "String")
      invalid.push(t("panel.collections.invalid_filter", { label: t(filter.label), value: raw }));
    variables[filter.name] = value;
  }
  const state = useQuery<Record<string, ListResult<{ id: number }>>>(query, variables, invalid.length > 0);
  const result = state.data?.[def.name];

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === "") next.delete(key);
      else next.set(key, value);
    }
    setParams(next);
  };

  const applyFilters = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const next = new URLSearchParams();
    for (const filter of def.filters) {
      const value = String(data.get(filter.name) ?? "").trim();
      if (value) next.set(filter.name, value);
    }
    if (params.get("order")) next.set("order", order);
    if (params.get("limit")) next.set("limit", String(limit));
    setParams(next);
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    applyFilters(event.currentTarget);
  };
  const activeFilters = def.filters.filter((filter) => params.get(filter.name)).length;
  const currentFilters = def.filters.flatMap((filter) => {
    const value = params.get(filter.name);
    return value ? [{ name: filter.name, value }] : [];
  });
  // A segment's filters replace the table's; the order and page size stay, the page starts again.
  const chooseSegment = (filters: SegmentFilter[]) => {
    const next = new URLSearchParams();
    for (const { name: filter, value } of filters) next.set(filter, value);
    if (params.get("order")) next.set("order", order);
    if (params.get("limit")) next.set("limit", String(limit));
    setParams(next);
  };

  const columns: TableColumn<{ id: number }>[] = def.columns.map((column) => ({
    ...column,
    label: t(column.label),
    render: (row) => column.render(row, { fmt, path, t }),
  }));

  const actions = (
    <>
      <a className="button" href={exportHref(def.name, org.slug, params)} download data-testid="download-csv">
        {t("panel.collections.download_csv")}
      </a>
      {canWrite && name === "campaigns" && (
        <Link className="button button-primary" to={path("campaigns/new")}>
          {t("panel.collections.new_campaign")}
        </Link>
      )}
      {canWrite && name === "supporters" && (
        <Link className="button button-primary" to={path("supporters/new")} data-testid="new-supporter">
          {t("panel.collections.new_supporter")}
        </Link>
      )}
      {canWrite && name === "donations" && (
        <Link className="button button-primary" to={path("donations/new")}>
          {t("panel.collections.record_offline")}
        </Link>
      )}
    </>
  );

  return (
    <>
      <PageHeader title={title} actions={actions} />
      {name === "supporters" && (
        <p>
          <Link to={path("supporters/duplicates")} data-testid="supporter-duplicates-link">
            {t("panel.supporter_duplicates.link")}
          </Link>
          {canWrite && (
            <>
              {" · "}
              <Link to={path("imports")} data-testid="supporter-import-link">
                {t("panel.imports.link")}
              </Link>
            </>
          )}
        </p>
      )}
      <SegmentsControl
        collection={def.name}
        title={titleInSentence}
        filters={def.filters}
        current={currentFilters}
        onChoose={chooseSegment}
      />
      <button
        type="button"
        className="button filters-toggle"
        aria-expanded={filtersOpen}
        aria-controls="list-filters"
        onClick={() => setFiltersOpen((open) => !open)}
      >
        {activeFilters > 0
          ? t("panel.collections.filters_active", { count: activeFilters })
          : t("panel.collections.filters")}
      </button>
      <form
        id="list-filters"
        ref={formRef}
        className={filtersOpen ? "filters card" : "filters card filters-collapsed"}
        onSubmit={onSubmit}
        key={params.toString()}
        aria-label={t("panel.collections.filter_label", { title: titleInSentence })}
      >
        <div className="filters-grid">
          {def.filters.map((filter) => (
            <FilterField
              key={filter.name}
              filter={filter}
              value={params.get(filter.name) ?? ""}
              onChange={() => {
                if (formRef.current) applyFilters(formRef.current);
              }}
            />
          ))}
        </div>
        <div className="filters-actions">
          <button type="submit" className="button button-primary">
            {t("panel.collections.apply")}
          </button>
          {activeFilters > 0 && (
            <button type="button" className="button button-ghost" onClick={() => setParams(new URLSearchParams())}>
              {t("panel.collections.clear", { count: activeFilters })}
            </button>
          )}
          <label className="page-size">
            {t("panel.collections.rows_per_page")}{" "}
            <select value={String(limit)} onChange={(event) => update({ limit: event.target.value, offset: null })}>
              {[...new Set([...PAGE_SIZES, limit])]
                .sort((a, b) => a - b)
                .map((size) => (
                  <option key={size} value={size}>
                    {size}
                  </option>
                ))}
            </select>
          </label>
        </div>
      </form>

      {invalid.length > 0 ? (
        <ErrorState
          title={t("panel.collections.invalid_filters")}
          error={new Error(`${invalid.join("; ")}.`)}
          onRetry={() => setParams(new URLSearchParams())}
          retryLabel={t("panel.collections.clear_filters")}
        />
      ) : state.error && !state.loading ? (
        <ErrorState error={state.error} onRetry={state.reload} />
      ) : !result ? (
        <Loading label={t("panel.collections.loading", { title: titleInSentence })} />
      ) : (
        <div className="card card-flush">
          {result.items.length === 0 ? (
            <Empty>{offset > 0 && result.count > 0 ? t("panel.collections.past_the_end") : t(def.emptyText)}</Empty>
          ) : (
            <DataTable
              testId={`table-${def.name}`}
              caption={t("panel.collections.caption", { title, order })}
              columns={columns}
              rows={result.items}
              order={order}
              onSort={(nextOrder) => update({ order: nextOrder, offset: null })}
              busy={state.loading}
            />
          )}
          <Pagination
            offset={offset}
            limit={limit}
            count={result.count}
            format={fmt.number}
            onPage={(nextOffset) => update({ offset: nextOffset === 0 ? null : String(nextOffset) })}
          />
        </div>
      )}
    </>
  );
}
