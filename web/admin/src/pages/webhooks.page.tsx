import { useState } from "react";
import { Link, useParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge } from "../components/badges";
import { CursorPagination, DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { type Translate, useI18n } from "../i18n";

interface Endpoint {
  id: number;
  url: string;
  description: string | null;
  event_types: string[];
  status: string;
  disabled_reason: string | null;
  application_name: string | null;
  create_date: string;
}

interface Attempt {
  attempt: number;
  create_date: string;
  status: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

interface Delivery {
  id: number;
  create_date: string;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  next_attempt_date: string | null;
  last_status: number | null;
  last_error: string | null;
  delivered_date: string | null;
  attempt_log: Attempt[];
}

const ENDPOINT_FIELDS = "id url description event_types status disabled_reason application_name create_date";
const LIST = `query WebhookEndpoints { webhookEndpoints { ${ENDPOINT_FIELDS} } }`;
const DELIVERIES = `query WebhookDeliveries($first: Int, $before: Int) {
  webhookEndpoints {
    ${ENDPOINT_FIELDS}
    deliveries(first: $first, before: $before) {
      has_more next_before
      items {
        id create_date event_id event_type state attempts next_attempt_date last_status last_error delivered_date
        attempt_log { attempt create_date status duration_ms response error }
      }
    }
  }
}`;
const PAUSE = `mutation PauseWebhookEndpoint($id: ID!) { pauseWebhookEndpoint(id: $id) { id status } }`;
const RESUME = `mutation ResumeWebhookEndpoint($id: ID!) { resumeWebhookEndpoint(id: $id) { id status } }`;
const RETRY = `mutation RetryWebhookDelivery($endpoint_id: ID!, $id: ID!) {
  retryWebhookDelivery(endpoint_id: $endpoint_id, id: $id) { id state }
}`;
const RESEND = `mutation ResendWebhookEvents($endpoint_id: ID!, $since: String!) {
  resendWebhookEvents(endpoint_id: $endpoint_id, since: $since)
}`;
const PAGE_SIZE = 20;

const eventsLabel = (t: Translate, types: string[]) =>
  types.includes("*") ? t("panel.webhooks.every_event") : types.join(", ");

/** Pause or resume: the members' lever on an application's endpoint (deliveries wait, none is lost). */
function PauseResume({ endpoint, onDone }: { endpoint: Endpoint; onDone: (message: string) => void }) {
  const { t } = useI18n();
  const gql = useGraphql();
  if (endpoint.status === "enabled") {
    return (
      <ActionButton
        label={t("panel.webhooks.pause")}
        title={t("panel.webhooks.pause_title", { url: endpoint.url })}
        confirmLabel={t("panel.webhooks.pause")}
        testId={`pause-${endpoint.id}`}
        run={() => gql(PAUSE, { id: endpoint.id })}
        onDone={() => onDone(t("panel.webhooks.paused"))}
      >
        <p>
          {t("panel.webhooks.pause_body", {
            application: endpoint.application_name ?? t("panel.webhooks.the_application"),
          })}
        </p>
      </ActionButton>
    );
  }
  if (endpoint.status === "paused") {
    return (
      <ActionButton
        label={t("panel.webhooks.resume")}
        title={t("panel.webhooks.resume_title", { url: endpoint.url })}
        confirmLabel={t("panel.webhooks.resume")}
        testId={`resume-${endpoint.id}`}
        run={() => gql(RESUME, { id: endpoint.id })}
        onDone={() => onDone(t("panel.webhooks.resumed"))}
      >
        <p>{t("panel.webhooks.resume_body")}</p>
      </ActionButton>
    );
  }
  return null;
}

/** Webhooks: every installed application's endpoints, for the organization's members. */
export function WebhooksPage() {
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const format = useFormat();
  usePageTitle(t("panel.nav.webhooks"), org.name);
  const [flash, setFlash] = useState<string | null>(null);
  const list = useQuery<{ webhookEndpoints: Endpoint[] }>(LIST);
  const done = (message: string) => {
    setFlash(message);
    list.reload();
  };
  return (
    <>
      <PageHeader title={t("panel.nav.webhooks")}>
        <p className="muted">{t("panel.webhooks.intro", { organization: org.name })}</p>
      </PageHeader>
      <Flash message={flash} />
      <Async state={list}>
        {({ webhookEndpoints: endpoints }) =>
          endpoints.length === 0 ? (
            <Empty>{t("panel.webhooks.none")}</Empty>
          ) : (
            <DataTable
              testId="table-webhooks"
              caption={t("panel.webhooks.caption")}
              rows={endpoints}
              columns={[
                {
                  key: "url",
                  label: t("panel.webhooks.endpoint"),
                  render: (row) => (
                    <Link to={path(`webhooks/${row.id}`)} className="break-anywhere">
                      {row.url}
                    </Link>
                  ),
                },
                {
                  key: "application",
                  label: t("panel.webhooks.application"),
                  render: (row) => row.application_name ?? "—",
                },
                { key: "events", label: t("panel.webhooks.events"), render: (row) => eventsLabel(t, row.event_types) },
                { key: "status", label: t("panel.column.status"), render: (row) => <StateBadge state={row.status} /> },
                { key: "created", label: t("panel.webhooks.added"), render: (row) => format.date(row.create_date) },
                ...(canWrite
                  ? [
                      {
                        key: "actions",
                        label: t("panel.column.actions"),
                        render: (row: Endpoint) => <PauseResume endpoint={row} onDone={done} />,
                      },
                    ]
                  : []),
              ]}
            />
          )
        }
      </Async>
    </>
  );
}

function AttemptLog({ delivery }: { delivery: Delivery }) {
  const { t } = useI18n();
  const format = useFormat();
  if (delivery.attempt_log.length === 0) return <span className="muted">{t("panel.webhooks.not_tried")}</span>;
  return (
    <details data-testid={`attempts-${delivery.id}`}>
      <summary>
        {t("panel.webhooks.attempts_count", {
          count: delivery.attempt_log.length,
          formatted: format.number(delivery.attempt_log.length),
        })}
      </summary>
      <ol className="attempt-log">
        {delivery.attempt_log.map((attempt) => (
          <li key={attempt.attempt}>
            <strong>#{attempt.attempt}</strong> {format.dateTime(attempt.create_date)} ·{" "}
            {attempt.status === null ? t("panel.webhooks.no_answer") : `HTTP ${attempt.status}`} ·{" "}
            {t("panel.webhooks.duration", { ms: format.number(attempt.duration_ms) })}
            {attempt.error && (
              <div>
                <code className="break-anywhere">{attempt.error}</code>
              </div>
            )}
            {attempt.response && <pre className="email-text break-anywhere">{attempt.response}</pre>}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** One endpoint: its settings and its delivery log, newest first, with retry and resend. */
export function WebhookEndpointPage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const format = useFormat();
  const gql = useGraphql();
  usePageTitle(t("panel.webhooks.endpoint_page_title", { id }), org.name);
  const [flash, setFlash] = useState<string | null>(null);
  const [cursors, setCursors] = useState<string[]>([]);
  const before = cursors.at(-1);
  const [since, setSince] = useState("");
  const state = useQuery<{
    webhookEndpoints: (Endpoint & {
      deliveries: { has_more: boolean; next_before: number | null; items: Delivery[] };
    })[];
  }>(DELIVERIES, { first: PAGE_SIZE, before: before ? Number(before) : null });
  const crumbs = [{ label: t("panel.nav.webhooks"), to: path("webhooks") }];
  const done = (message: string) => {
    setFlash(message);
    state.reload();
  };
  return (
    <Async state={state}>
      {({ webhookEndpoints }) => {
        const endpoint = webhookEndpoints.find((row) => String(row.id) === id);
        if (!endpoint) {
          return (
            <>
              <PageHeader title={t("panel.webhooks.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.webhooks.not_found_body", { id, organization: org.name })}</Empty>
            </>
          );
        }
        const page = endpoint.deliveries;
        return (
          <>
            <PageHeader
              title={t("panel.webhooks.endpoint_title", { id: endpoint.id })}
              crumbs={crumbs}
              actions={canWrite ? <PauseResume endpoint={endpoint} onDone={done} /> : undefined}
            />
            <Flash message={flash} />
            {endpoint.status === "disabled" && (
              <div className="state state-error" role="alert" data-testid="endpoint-disabled">
                <strong>{t("panel.webhooks.disabled")}</strong>
                <p>{endpoint.disabled_reason}</p>
                <p>{t("panel.webhooks.disabled_body")}</p>
              </div>
            )}
            <Section title={t("panel.webhooks.endpoint")}>
              <Fields
                items={[
                  [
                    t("panel.webhooks.url"),
                    <code key="url" className="break-anywhere">
                      {endpoint.url}
                    </code>,
                  ],
                  [t("panel.webhooks.application"), endpoint.application_name],
                  [t("panel.column.status"), <StateBadge key="status" state={endpoint.status} />],
                  [t("panel.webhooks.events"), eventsLabel(t, endpoint.event_types)],
                  [t("panel.webhooks.description"), endpoint.description],
                  [t("panel.webhooks.added"), format.dateTime(endpoint.create_date)],
                ]}
              />
            </Section>
            <Section title={t("panel.webhooks.deliveries")}>
              {page.items.length === 0 ? (
                <Empty>{t("panel.webhooks.no_deliveries")}</Empty>
              ) : (
                <>
                  <DataTable
                    testId="table-deliveries"
                    caption={t("panel.webhooks.deliveries_caption")}
                    rows={page.items}
                    busy={state.loading}
                    columns={[
                      {
                        key: "event",
                        label: t("panel.webhooks.event"),
                        render: (row) => (
                          <>
                            <strong>{row.event_type}</strong>
                            <div className="muted">
                              <code>{row.event_id}</code>
                            </div>
                          </>
                        ),
                      },
                      {
                        key: "state",
                        label: t("panel.column.state"),
                        render: (row) => (
                          <>
                            <StateBadge state={row.state} />
                            <div className="muted">
                              {row.last_status !== null
                                ? `HTTP ${row.last_status}`
                                : row.last_error
                                  ? t("panel.webhooks.no_answer")
                                  : ""}
                            </div>
                          </>
                        ),
                      },
                      {
                        key: "attempts",
                        label: t("panel.outbox.attempts"),
                        render: (row) => <AttemptLog delivery={row} />,
                      },
                      {
                        key: "date",
                        label: t("panel.outbox.date"),
                        render: (row) =>
                          row.next_attempt_date && row.state === "pending" && row.attempts > 0 ? (
                            <>
                              {format.dateTime(row.create_date)}
                              <div className="muted">
                                {t("panel.webhooks.next_try", { date: format.dateTime(row.next_attempt_date) })}
                              </div>
                            </>
                          ) : (
                            format.dateTime(row.delivered_date ?? row.create_date)
                          ),
                      },
                      ...(canWrite
                        ? [
                            {
                              key: "actions",
                              label: t("panel.column.actions"),
                              render: (row: Delivery) =>
                                row.state === "sending" ? null : (
                                  <ActionButton
                                    label={t("panel.outbox.retry")}
                                    title={t("panel.webhooks.retry_title", { type: row.event_type })}
                                    confirmLabel={t("panel.webhooks.send_now")}
                                    testId={`retry-${row.id}`}
                                    run={() => gql(RETRY, { endpoint_id: endpoint.id, id: row.id })}
                                    onDone={() => done(t("panel.webhooks.retried"))}
                                  >
                                    <p>{t("panel.webhooks.retry_body", { url: endpoint.url })}</p>
                                  </ActionButton>
                                ),
                            },
                          ]
                        : []),
                    ]}
                  />
                  <CursorPagination
                    cursors={cursors}
                    setCursors={setCursors}
                    hasMore={page.has_more}
                    nextCursor={page.next_before === null ? null : String(page.next_before)}
                  />
                </>
              )}
            </Section>
            {canWrite && endpoint.status !== "disabled" && (
              <Section title={t("panel.webhooks.resend_title")}>
                <form
                  className="inline-form"
                  onSubmit={(event) => {
                    event.preventDefault();
                  }}
                >
                  <label htmlFor="resend-since">{t("panel.webhooks.since")}</label>
                  <input
                    id="resend-since"
                    type="datetime-local"
                    value={since}
                    onChange={(event) => setSince(event.target.value)}
                    required
                  />
                  <ActionButton
                    label={t("panel.webhooks.send_again")}
                    title={t("panel.webhooks.send_again_title")}
                    confirmLabel={t("panel.webhooks.send_again")}
                    testId="resend"
                    run={() =>
                      since
                        ? gql(RESEND, { endpoint_id: endpoint.id, since: new Date(since).toISOString() })
                        : Promise.reject(new Error(t("panel.webhooks.choose_date")))
                    }
                    onDone={() => done(t("panel.webhooks.queued_again"))}
                  >
                    <p>
                      {since
                        ? t("panel.webhooks.resend_body", { since: format.dateTime(new Date(since).toISOString()) })
                        : t("panel.webhooks.resend_body_then")}
                    </p>
                  </ActionButton>
                </form>
              </Section>
            )}
          </>
        );
      }}
    </Async>
  );
}
