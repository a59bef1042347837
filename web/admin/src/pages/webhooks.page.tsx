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

const eventsLabel = (types: string[]) => (types.includes("*") ? "every event it may read" : types.join(", "));

/** Pause or resume: the members' lever on an application's endpoint (deliveries wait, none is lost). */
function PauseResume({ endpoint, onDone }: { endpoint: Endpoint; onDone: (message: string) => void }) {
  const gql = useGraphql();
  if (endpoint.status === "enabled") {
    return (
      <ActionButton
        label="Pause"
        title={`Pause deliveries to ${endpoint.url}?`}
        confirmLabel="Pause"
        testId={`pause-${endpoint.id}`}
        run={() => gql(PAUSE, { id: endpoint.id })}
        onDone={() => onDone("Paused: its deliveries wait until it is resumed.")}
      >
        <p>
          {endpoint.application_name ?? "The application"} stops receiving events at this address. Nothing is lost: they
          are kept and sent in order once you resume it.
        </p>
      </ActionButton>
    );
  }
  if (endpoint.status === "paused") {
    return (
      <ActionButton
        label="Resume"
        title={`Resume deliveries to ${endpoint.url}?`}
        confirmLabel="Resume"
        testId={`resume-${endpoint.id}`}
        run={() => gql(RESUME, { id: endpoint.id })}
        onDone={() => onDone("Resumed: the held deliveries are being sent, in order.")}
      >
        <p>The events held while it was paused are sent now, in the order they happened.</p>
      </ActionButton>
    );
  }
  return null;
}

/** Webhooks: every installed application's endpoints, for the organization's members. */
export function WebhooksPage() {
  const { org, path, canWrite } = useOrg();
  const format = useFormat();
  usePageTitle("Webhooks", org.name);
  const [flash, setFlash] = useState<string | null>(null);
  const list = useQuery<{ webhookEndpoints: Endpoint[] }>(LIST);
  const done = (message: string) => {
    setFlash(message);
    list.reload();
  };
  return (
    <>
      <PageHeader title="Webhooks">
        <p className="muted">
          Where installed applications receive {org.name}'s events as they happen. Each application adds its own
          endpoints with its API token; here you see every delivery, pause an endpoint and send deliveries again.
        </p>
      </PageHeader>
      <Flash message={flash} />
      <Async state={list}>
        {({ webhookEndpoints: endpoints }) =>
          endpoints.length === 0 ? (
            <Empty>No application has added a webhook endpoint yet.</Empty>
          ) : (
            <DataTable
              testId="table-webhooks"
              caption="Webhook endpoints"
              rows={endpoints}
              columns={[
                {
                  key: "url",
                  label: "Endpoint",
                  render: (row) => (
                    <Link to={path(`webhooks/${row.id}`)} className="break-anywhere">
                      {row.url}
                    </Link>
                  ),
                },
                { key: "application", label: "Application", render: (row) => row.application_name ?? "—" },
                { key: "events", label: "Events", render: (row) => eventsLabel(row.event_types) },
                { key: "status", label: "Status", render: (row) => <StateBadge state={row.status} /> },
                { key: "created", label: "Added", render: (row) => format.date(row.create_date) },
                ...(canWrite
                  ? [
                      {
                        key: "actions",
                        label: "Actions",
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
  const format = useFormat();
  if (delivery.attempt_log.length === 0) return <span className="muted">Not tried yet</span>;
  return (
    <details data-testid={`attempts-${delivery.id}`}>
      <summary>
        {delivery.attempt_log.length} {delivery.attempt_log.length === 1 ? "attempt" : "attempts"}
      </summary>
      <ol className="attempt-log">
        {delivery.attempt_log.map((attempt) => (
          <li key={attempt.attempt}>
            <strong>#{attempt.attempt}</strong> {format.dateTime(attempt.create_date)} ·{" "}
            {attempt.status === null ? "no answer" : `HTTP ${attempt.status}`} · {attempt.duration_ms} ms
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
  const format = useFormat();
  const gql = useGraphql();
  usePageTitle(`Webhook endpoint #${id}`, org.name);
  const [flash, setFlash] = useState<string | null>(null);
  const [cursors, setCursors] = useState<string[]>([]);
  const before = cursors.at(-1);
  const [since, setSince] = useState("");
  const state = useQuery<{
    webhookEndpoints: (Endpoint & {
      deliveries: { has_more: boolean; next_before: number | null; items: Delivery[] };
    })[];
  }>(DELIVERIES, { first: PAGE_SIZE, before: before ? Number(before) : null });
  const crumbs = [{ label: "Webhooks", to: path("webhooks") }];
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
              <PageHeader title="Endpoint not found" crumbs={crumbs} />
              <Empty>
                There is no webhook endpoint #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const page = endpoint.deliveries;
        return (
          <>
            <PageHeader
              title={`Endpoint #${endpoint.id}`}
              crumbs={crumbs}
              actions={canWrite ? <PauseResume endpoint={endpoint} onDone={done} /> : undefined}
            />
            <Flash message={flash} />
            {endpoint.status === "disabled" && (
              <div className="state state-error" role="alert" data-testid="endpoint-disabled">
                <strong>Disabled: nothing is sent to this endpoint.</strong>
                <p>{endpoint.disabled_reason}</p>
                <p>The application enables it again (with its API token) once its receiver works.</p>
              </div>
            )}
            <Section title="Endpoint">
              <Fields
                items={[
                  [
                    "URL",
                    <code key="url" className="break-anywhere">
                      {endpoint.url}
                    </code>,
                  ],
                  ["Application", endpoint.application_name],
                  ["Status", <StateBadge key="status" state={endpoint.status} />],
                  ["Events", eventsLabel(endpoint.event_types)],
                  ["Description", endpoint.description],
                  ["Added", format.dateTime(endpoint.create_date)],
                ]}
              />
            </Section>
            <Section title="Deliveries">
              {page.items.length === 0 ? (
                <Empty>No delivery yet: one appears here for each event sent to this endpoint.</Empty>
              ) : (
                <>
                  <DataTable
                    testId="table-deliveries"
                    caption="Deliveries, newest first"
                    rows={page.items}
                    busy={state.loading}
                    columns={[
                      {
                        key: "event",
                        label: "Event",
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
                        label: "State",
                        render: (row) => (
                          <>
                            <StateBadge state={row.state} />
                            <div className="muted">
                              {row.last_status !== null ? `HTTP ${row.last_status}` : row.last_error ? "no answer" : ""}
                            </div>
                          </>
                        ),
                      },
                      { key: "attempts", label: "Attempts", render: (row) => <AttemptLog delivery={row} /> },
                      {
                        key: "date",
                        label: "Date",
                        render: (row) =>
                          row.next_attempt_date && row.state === "pending" && row.attempts > 0 ? (
                            <>
                              {format.dateTime(row.create_date)}
                              <div className="muted">next try {format.dateTime(row.next_attempt_date)}</div>
                            </>
                          ) : (
                            format.dateTime(row.delivered_date ?? row.create_date)
                          ),
                      },
                      ...(canWrite
                        ? [
                            {
                              key: "actions",
                              label: "Actions",
                              render: (row: Delivery) =>
                                row.state === "sending" ? null : (
                                  <ActionButton
                                    label="Retry"
                                    title={`Send ${row.event_type} again?`}
                                    confirmLabel="Send now"
                                    testId={`retry-${row.id}`}
                                    run={() => gql(RETRY, { endpoint_id: endpoint.id, id: row.id })}
                                    onDone={() => done("Sent again within a few seconds, under the same webhook-id.")}
                                  >
                                    <p>
                                      The same event goes to {endpoint.url} again now; the receiver tells a repeat by
                                      its webhook-id.
                                    </p>
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
              <Section title="Send events again">
                <form
                  className="inline-form"
                  onSubmit={(event) => {
                    event.preventDefault();
                  }}
                >
                  <label htmlFor="resend-since">Every event since</label>
                  <input
                    id="resend-since"
                    type="datetime-local"
                    value={since}
                    onChange={(event) => setSince(event.target.value)}
                    required
                  />
                  <ActionButton
                    label="Send again"
                    title="Send these events again?"
                    confirmLabel="Send again"
                    testId="resend"
                    run={() =>
                      since
                        ? gql(RESEND, { endpoint_id: endpoint.id, since: new Date(since).toISOString() })
                        : Promise.reject(new Error("Choose a date and time first."))
                    }
                    onDone={() => done("Queued again: they are sent in order within a few seconds.")}
                  >
                    <p>
                      Every event of this endpoint's types since{" "}
                      {since ? format.dateTime(new Date(since).toISOString()) : "then"} is sent again, in order. Use it
                      after the application lost events (its receiver was down longer than the retries last).
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
