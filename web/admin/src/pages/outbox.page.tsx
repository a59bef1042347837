import { useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge } from "../components/badges";
import { CursorPagination, DataTable } from "../components/data-table";
import { EmailFrame } from "../components/email-frame";
import { FilterSelect } from "../components/filter-select";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";

export const EMAIL_KINDS = [
  "receipt",
  "recurring_welcome",
  "renewal_failed",
  "card_expiring",
  "recurring_cancelled",
  "bank_transfer",
  "statement",
  "donor_sign_in",
  "donor_change",
  "gift_notification",
  "gift_digest",
  "webhook_disabled",
] as const;
const STATES = ["queued", "sending", "sent", "captured", "failed", "cancelled"] as const;
const PAGE_SIZE = 25;

export const kindLabel = (kind: string) => kind.replaceAll("_", " ");

interface MessageSummary {
  id: number;
  kind: string;
  to: string;
  state: string;
  subject: string | null;
  attempts: number;
  create_date: string;
  sent_date: string | null;
}

interface MessageDetail extends MessageSummary {
  next_attempt_date: string | null;
  last_error: string | null;
  html: string | null;
  text: string | null;
  headers: { name: string; value: string }[];
  message_id: string | null;
  update_date: string;
  supporter_id: number | null;
  donation_id: number | null;
}

const LIST = `query Outbox($first: Int, $after: String, $state: String, $kind: String, $supporter_id: Int) {
  outboxMessages(first: $first, after: $after, state: $state, kind: $kind, supporter_id: $supporter_id) {
    count has_more end_cursor items { id kind to state subject attempts create_date sent_date }
  }
}`;
const DETAIL = `query OutboxMessage($id: ID!) {
  outboxMessage(id: $id) {
    id kind to state subject attempts create_date sent_date next_attempt_date last_error html text
    headers { name value } message_id update_date supporter_id donation_id
  }
}`;
const DELIVERY = `query EmailDelivery { emailDelivery { delivered production } }`;
const RETRY = `mutation RetryOutboxMessage($id: ID!) { retryOutboxMessage(id: $id) { id state } }`;
const CANCEL = `mutation CancelOutboxMessage($id: ID!) { cancelOutboxMessage(id: $id) { id state } }`;

/** A production server without SMTP_URL: no donor gets any email, which nobody should miss. */
function NotDeliveredWarning() {
  const delivery = useQuery<{ emailDelivery: { delivered: boolean; production: boolean } }>(DELIVERY);
  const state = delivery.data?.emailDelivery;
  if (!state || state.delivered || !state.production) return null;
  return (
    <p className="warning" role="alert" data-testid="mail-not-delivered">
      <strong>Email is not being delivered.</strong> This server has no mail server (<code>SMTP_URL</code>): donors get
      no receipts, sign-in links or any other email. Messages are only kept here as captured until <code>SMTP_URL</code>{" "}
      is set.
    </p>
  );
}

/** Outbox: every email the organization sends (or, without SMTP, keeps as captured), newest first. */
export function OutboxPage() {
  const { org, path } = useOrg();
  const format = useFormat();
  usePageTitle("Outbox", org.name);
  const [params, setParams] = useSearchParams();
  const state = params.get("state") ?? "";
  const kind = params.get("kind") ?? "";
  const supporter = /^[1-9]\d*$/.test(params.get("supporter_id") ?? "") ? Number(params.get("supporter_id")) : null;
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1) ?? null;
  const list = useQuery<{
    outboxMessages: { count: number; has_more: boolean; end_cursor: string | null; items: MessageSummary[] };
  }>(LIST, { first: PAGE_SIZE, after, state: state || null, kind: kind || null, supporter_id: supporter });
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setCursors([]);
    setParams(next, { replace: true });
  };
  return (
    <>
      <PageHeader title="Outbox">
        <p className="muted">
          Every email {org.name} sends to donors. Without a mail server (no <code>SMTP_URL</code>) messages are kept
          here as <strong>captured</strong>: open one to see exactly what the donor would get (its sign-in link is shown
          to owners and admins only).
        </p>
      </PageHeader>
      <NotDeliveredWarning />
      <section className="card filters" aria-label="Filters">
        <div className="filters-grid">
          <FilterSelect
            id="outbox-state"
            label="State"
            any="Any"
            value={state}
            options={STATES.map((value) => [value, value] as const)}
            onChange={(value) => setFilter("state", value)}
          />
          <FilterSelect
            id="outbox-kind"
            label="Message"
            any="Any"
            value={kind}
            options={EMAIL_KINDS.map((value) => [value, kindLabel(value)] as const)}
            onChange={(value) => setFilter("kind", value)}
          />
          {supporter !== null && (
            <div className="filter">
              <span>
                Supporter <Link to={path(`supporters/${supporter}`)}>#{supporter}</Link>{" "}
                <button type="button" className="button button-ghost" onClick={() => setFilter("supporter_id", "")}>
                  Show every supporter
                </button>
              </span>
            </div>
          )}
        </div>
      </section>
      <Async state={list}>
        {({ outboxMessages: page }) =>
          page.items.length === 0 ? (
            <Empty>
              {state || kind || supporter !== null
                ? "No message matches these filters."
                : "No email yet: they appear here as donors give."}
            </Empty>
          ) : (
            <>
              <DataTable
                testId="table-outbox"
                caption="Emails, newest first"
                rows={page.items}
                busy={list.loading}
                columns={[
                  {
                    key: "subject",
                    label: "Message",
                    render: (row) => (
                      <Link to={path(`outbox/${row.id}`)}>
                        {row.subject ?? `${kindLabel(row.kind)} (not rendered yet)`}
                      </Link>
                    ),
                  },
                  { key: "kind", label: "Kind", render: (row) => kindLabel(row.kind) },
                  { key: "to", label: "To", render: (row) => row.to },
                  { key: "state", label: "State", render: (row) => <StateBadge state={row.state} /> },
                  { key: "attempts", label: "Attempts", numeric: true, render: (row) => row.attempts },
                  {
                    key: "date",
                    label: "Date",
                    render: (row) => format.dateTime(row.sent_date ?? row.create_date),
                  },
                ]}
              />
              <CursorPagination
                cursors={cursors}
                setCursors={setCursors}
                hasMore={page.has_more}
                nextCursor={page.end_cursor}
                range={`${page.count} ${page.count === 1 ? "message" : "messages"}`}
              />
            </>
          )
        }
      </Async>
    </>
  );
}

/** One email: envelope, delivery, and the message as sent (HTML sandboxed, text part, headers). */
export function OutboxMessagePage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const format = useFormat();
  const gql = useGraphql();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ outboxMessage: MessageDetail | null }>(DETAIL, { id });
  usePageTitle(`Email #${id}`, org.name);
  const crumbs = [{ label: "Outbox", to: path("outbox") }];
  const done = (message: string) => () => {
    setFlash(message);
    state.reload();
  };
  return (
    <Async state={state}>
      {({ outboxMessage: message }) => {
        if (!message) {
          return (
            <>
              <PageHeader title="Email not found" crumbs={crumbs} />
              <Empty>
                There is no email #{id} in {org.name}.
              </Empty>
            </>
          );
        }
        const actions = canWrite && (message.state === "failed" || message.state === "queued") && (
          <>
            {message.state === "failed" && (
              <ActionButton
                label="Retry"
                title="Send this email again?"
                confirmLabel="Retry now"
                testId="retry-message"
                run={() => gql(RETRY, { id: message.id })}
                onDone={done("Back in the queue: it is sent within a few seconds.")}
              >
                <p>
                  The email goes back to the queue and is sent again to {message.to}. If the mail server refused the
                  address, correct the supporter's email first.
                </p>
              </ActionButton>
            )}
            {message.state === "queued" && (
              <ActionButton
                label="Cancel"
                title="Cancel this email?"
                confirmLabel="Cancel email"
                danger
                testId="cancel-message"
                run={() => gql(CANCEL, { id: message.id })}
                onDone={done("Cancelled: this email will not be sent.")}
              >
                <p>It will never be sent to {message.to}.</p>
              </ActionButton>
            )}
          </>
        );
        return (
          <>
            <PageHeader
              title={message.subject ?? `${kindLabel(message.kind)} #${message.id}`}
              crumbs={crumbs}
              actions={actions || undefined}
            />
            <Flash message={flash} />
            <NotDeliveredWarning />
            {message.state === "failed" && message.last_error && (
              <div className="state state-error" role="alert" data-testid="last-error">
                <strong>The mail server refused this email</strong>
                <p>
                  <code>{message.last_error}</code>
                </p>
              </div>
            )}
            <Section title="Delivery">
              <Fields
                items={[
                  ["State", <StateBadge key="state" state={message.state} />],
                  ["To", message.to],
                  ["Kind", kindLabel(message.kind)],
                  ["Attempts", String(message.attempts)],
                  ["Next attempt", message.next_attempt_date ? format.dateTime(message.next_attempt_date) : null],
                  ["Sent", message.sent_date ? format.dateTime(message.sent_date) : null],
                  ["Created", format.dateTime(message.create_date)],
                  ["Message-ID", message.message_id ? <code key="mid">{message.message_id}</code> : null],
                  [
                    "Supporter",
                    message.supporter_id ? (
                      <Link key="s" to={path(`supporters/${message.supporter_id}`)}>
                        #{message.supporter_id}
                      </Link>
                    ) : null,
                  ],
                  [
                    "Donation",
                    message.donation_id ? (
                      <Link key="d" to={path(`donations/${message.donation_id}`)}>
                        #{message.donation_id}
                      </Link>
                    ) : null,
                  ],
                  ["Last error", message.state !== "failed" ? message.last_error : null],
                ]}
              />
            </Section>
            {message.html === null && message.text === null ? (
              <Section title="Message">
                <p className="muted">Not rendered yet: the message is rendered when it is delivered.</p>
              </Section>
            ) : (
              <>
                <Section title="HTML">
                  <EmailFrame html={message.html ?? ""} title={`The email “${message.subject ?? ""}” as HTML`} />
                </Section>
                <Section title="Plain text">
                  <pre className="email-text" data-testid="email-text">
                    {message.text}
                  </pre>
                </Section>
                <Section title="Headers">
                  <DataTable
                    testId="table-headers"
                    caption="Email headers"
                    rows={message.headers.map((header, index) => ({ ...header, id: index }))}
                    columns={[
                      { key: "name", label: "Header", render: (row) => <code>{row.name}</code> },
                      { key: "value", label: "Value", render: (row) => row.value },
                    ]}
                  />
                </Section>
              </>
            )}
          </>
        );
      }}
    </Async>
  );
}
