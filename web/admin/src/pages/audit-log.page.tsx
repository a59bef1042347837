import { useState } from "react";
import { useSearchParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { CursorPagination, DataTable } from "../components/data-table";
import { FilterSelect } from "../components/filter-select";
import { PageHeader, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";
import { AUDIT_ACTIONS } from "./audit-actions";

export interface AuditEntry {
  id: string;
  create_date: string;
  type: string;
  summary: string;
  resource_type: string;
  resource_id: number | null;
  actor_type: string;
  actor_id: number | null;
  actor_label: string;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  changes: { field: string; before: string | null; after: string | null }[];
}

export const AUDIT_FIELDS =
  "id create_date type summary resource_type resource_id actor_type actor_id actor_label request_id ip user_agent changes { field before after }";
const LIST = `query AuditLog($actor_type: String, $type: [String!], $resource_type: String, $resource_id: Int, $from: String, $to: String, $first: Int, $after: String) {
  auditLog(actor_type: $actor_type, type: $type, resource_type: $resource_type, resource_id: $resource_id, from: $from, to: $to, first: $first, after: $after) {
    has_more next_cursor items { ${AUDIT_FIELDS} }
  }
}`;
const PAGE_SIZE = 50;

/** Who made a change, with its label's key. */
const ACTORS = [
  ["user", "panel.audit.actor.user"],
  ["application", "panel.audit.actor.application"],
  ["donor", "panel.audit.actor.donor"],
  ["system", "panel.audit.actor.system"],
] as const;

/** A change's value as a person reads it: text unquoted, nothing as a dash. */
function shown(value: string | null) {
  if (value === null) return "—";
  try {
    const parsed = JSON.parse(value) as unknown;
    return typeof parsed === "string" ? parsed : value;
  } catch {
    return value;
  }
}

function Changes({ entry }: { entry: AuditEntry }) {
  if (entry.changes.length === 0) return null;
  return (
    <ul className="audit-changes">
      {entry.changes.map((change) => (
        <li key={change.field}>
          <code>{change.field}</code>: <del>{shown(change.before)}</del> → <ins>{shown(change.after)}</ins>
        </li>
      ))}
    </ul>
  );
}

function Who({ entry }: { entry: AuditEntry }) {
  const where = [entry.ip, entry.user_agent].filter(Boolean).join(" · ");
  return (
    <>
      {entry.actor_label}
      {where && <div className="muted small">{where}</div>}
    </>
  );
}

/** Audit log: every change to the organization's data, by whom, from where; owners and admins only. */
export function AuditLogPage() {
  const { org, canWrite } = useOrg();
  const { t } = useI18n();
  const format = useFormat();
  usePageTitle(t("panel.nav.audit"), org.name);
  const [params, setParams] = useSearchParams();
  const actor = params.get("actor_type") ?? "";
  const action = params.get("action") ?? "";
  const from = params.get("from") ?? "";
  const to = params.get("to") ?? "";
  const types = AUDIT_ACTIONS.find(([value]) => value === action)?.[2] ?? null;
  // The cursors of the pages before this one: Newer pops, Older pushes.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1) ?? null;
  const variables = {
    actor_type: actor || null,
    type: types,
    // The filter's days are whole days of the viewer's calendar.
    from: from ? new Date(`${from}T00:00:00`).toISOString() : null,
    to: to ? new Date(new Date(`${to}T00:00:00`).getTime() + 86_400_000).toISOString() : null,
  };
  const list = useQuery<{ auditLog: { has_more: boolean; next_cursor: string | null; items: AuditEntry[] } }>(
    LIST,
    { ...variables, first: PAGE_SIZE, after },
    !canWrite,
  );
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setCursors([]);
    setParams(next, { replace: true });
  };
  const csv = new URLSearchParams({ organization: org.slug });
  if (variables.actor_type) csv.set("actor_type", variables.actor_type);
  if (types) csv.set("type", types.join(","));
  if (variables.from) csv.set("from", variables.from);
  if (variables.to) csv.set("to", variables.to);
  if (!canWrite) {
    return (
      <>
        <PageHeader title={t("panel.nav.audit")} />
        <p className="muted" data-testid="audit-owners-only">
          {t("panel.audit.owners_only", { organization: org.name })}
        </p>
      </>
    );
  }
  return (
    <>
      <PageHeader title={t("panel.nav.audit")}>
        <p className="muted">{t("panel.audit.intro", { organization: org.name })}</p>
      </PageHeader>
      <section className="card filters" aria-label={t("panel.collections.filters")}>
        <div className="filters-grid">
          <FilterSelect
            id="audit-actor"
            label={t("panel.audit.who")}
            any={t("panel.audit.anyone")}
            value={actor}
            options={ACTORS.map(([value, key]) => [value, t(key)] as const)}
            onChange={(value) => setFilter("actor_type", value)}
          />
          <FilterSelect
            id="audit-action"
            label={t("panel.audit.what")}
            any={t("panel.audit.everything")}
            value={action}
            options={AUDIT_ACTIONS.map(([value, key]) => [value, t(key)] as const)}
            onChange={(value) => setFilter("action", value)}
          />
          <div className="filter">
            <label htmlFor="audit-from">{t("panel.audit.from")}</label>
            <input
              id="audit-from"
              type="date"
              value={from}
              onChange={(event) => setFilter("from", event.target.value)}
            />
          </div>
          <div className="filter">
            <label htmlFor="audit-to">{t("panel.audit.to")}</label>
            <input id="audit-to" type="date" value={to} onChange={(event) => setFilter("to", event.target.value)} />
          </div>
          <div className="filter">
            <a className="button" href={`/admin/export/audit.csv?${csv}`} download data-testid="download-audit-csv">
              {t("panel.collections.download_csv")}
            </a>
          </div>
        </div>
      </section>
      <Async state={list}>
        {({ auditLog: page }) =>
          page.items.length === 0 ? (
            <Empty>{actor || action || from || to ? t("panel.audit.no_match") : t("panel.audit.none")}</Empty>
          ) : (
            <>
              <DataTable
                testId="table-audit"
                caption={t("panel.audit.caption")}
                rows={page.items}
                busy={list.loading}
                columns={[
                  { key: "date", label: t("panel.audit.when"), render: (row) => format.dateTime(row.create_date) },
                  { key: "who", label: t("panel.audit.who"), render: (row) => <Who entry={row} /> },
                  {
                    key: "what",
                    label: t("panel.audit.what"),
                    render: (row) => (
                      <>
                        {row.summary} <code className="muted small">{row.type}</code>
                        <Changes entry={row} />
                      </>
                    ),
                  },
                ]}
              />
              <CursorPagination
                cursors={cursors}
                setCursors={setCursors}
                hasMore={page.has_more}
                nextCursor={page.next_cursor}
              />
            </>
          )
        }
      </Async>
    </>
  );
}
