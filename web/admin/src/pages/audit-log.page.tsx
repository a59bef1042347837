import { useState } from "react";
import { useSearchParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { CursorPagination, DataTable } from "../components/data-table";
import { FilterSelect } from "../components/filter-select";
import { PageHeader, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";

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

const ACTORS = [
  ["user", "Members"],
  ["application", "Applications"],
  ["donor", "Donors"],
  ["system", "The platform"],
] as const;

/** The kinds of record a change is about, and the event types of each (what the filter asks for). */
const ACTIONS: [string, string[]][] = [
  ["Supporters", ["supporter.created", "supporter.updated", "supporter.erased", "supporter.exported"]],
  ["Campaigns", ["campaign.created", "campaign.updated"]],
  ["Checkouts", ["checkout.completed"]],
  ["Donations", ["donation.created", "donation.updated"]],
  ["Refunds", ["payment.refunded"]],
  ["Payments", ["payment.created", "payment.paid", "payment.failed", "payment.refunded", "payment.disputed"]],
  ["Members", ["membership.created", "membership.updated", "membership.deleted"]],
  ["Applications", ["application.installed", "application.uninstalled", "application.created", "application.updated"]],
  [
    "Settings",
    ["organization.updated", "payment_settings.updated", "email_settings.updated", "statements.sent", "audit.legacy"],
  ],
];

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
  const format = useFormat();
  usePageTitle("Audit log", org.name);
  const [params, setParams] = useSearchParams();
  const actor = params.get("actor_type") ?? "";
  const action = params.get("action") ?? "";
  const from = params.get("from") ?? "";
  const to = params.get("to") ?? "";
  const types = ACTIONS.find(([label]) => label === action)?.[1] ?? null;
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
        <PageHeader title="Audit log" />
        <p className="muted" data-testid="audit-owners-only">
          Only owners and admins of {org.name} see the audit log.
        </p>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Audit log">
        <p className="muted">
          Every change to {org.name}'s data, newest first: who made it (a member, an application, a donor or the
          platform itself), from which address, and what each field was before and after. Secrets never appear: at most
          their last 4 characters.
        </p>
      </PageHeader>
      <section className="card filters" aria-label="Filters">
        <div className="filters-grid">
          <FilterSelect
            id="audit-actor"
            label="Who"
            any="Anyone"
            value={actor}
            options={ACTORS}
            onChange={(value) => setFilter("actor_type", value)}
          />
          <FilterSelect
            id="audit-action"
            label="What"
            any="Everything"
            value={action}
            options={ACTIONS.map(([label]) => [label, label] as const)}
            onChange={(value) => setFilter("action", value)}
          />
          <div className="filter">
            <label htmlFor="audit-from">From</label>
            <input
              id="audit-from"
              type="date"
              value={from}
              onChange={(event) => setFilter("from", event.target.value)}
            />
          </div>
          <div className="filter">
            <label htmlFor="audit-to">To</label>
            <input id="audit-to" type="date" value={to} onChange={(event) => setFilter("to", event.target.value)} />
          </div>
          <div className="filter">
            <a className="button" href={`/admin/export/audit.csv?${csv}`} download data-testid="download-audit-csv">
              Download CSV
            </a>
          </div>
        </div>
      </section>
      <Async state={list}>
        {({ auditLog: page }) =>
          page.items.length === 0 ? (
            <Empty>
              {actor || action || from || to ? "No change matches these filters." : "No change recorded yet."}
            </Empty>
          ) : (
            <>
              <DataTable
                testId="table-audit"
                caption="Changes, newest first"
                rows={page.items}
                busy={list.loading}
                columns={[
                  { key: "date", label: "When", render: (row) => format.dateTime(row.create_date) },
                  { key: "who", label: "Who", render: (row) => <Who entry={row} /> },
                  {
                    key: "what",
                    label: "What",
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
