import { useEffect, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { StateBadge } from "../components/badges";
import { CursorPagination, DataTable, DateTimeCell } from "../components/data-table";
import { EmailFrame } from "../components/email-frame";
import { FilterSelect } from "../components/filter-select";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { type Translate, useI18n } from "../i18n";

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
  "tribute_notice",
  "password_reset",
] as const;
const STATES = ["queued", "sending", "sent", "captured", "failed", "cancelled"] as const;
const PAGE_SIZE = 25;

/** An email's kind in words (panel.email_kind.<kind>), its name when the panel does not know it. */
export const kindLabel = (t: Translate, kind: string) =>
  (EMAIL_KINDS as readonly string[]).includes(kind) ? t(`panel.email_kind.${kind}`) : kind.replaceAll("_", " ");

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

const LIST = `query Outbox($first: Int, $after: String, $state: String, $kind: String, $supporter_id: Int, $recipient: String) {
  outboxMessages(
    first: $first, after: $after, state: $state, kind: $kind, supporter_id: $supporter_id, recipient: $recipient
  ) {
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
  const { rich } = useI18n();
  const delivery = useQuery<{ emailDelivery: { delivered: boolean; production: boolean } }>(DELIVERY);
  const state = delivery.data?.emailDelivery;
  if (!state || state.delivered || !state.production) return null;
  return (
    <p className="warning" role="alert" data-testid="mail-not-delivered">
      {rich("panel.outbox.not_delivered", {
        strong: (chunks) => <strong>{chunks}</strong>,
        smtp: <code>SMTP_URL</code>,
      })}
    </p>
  );
}

/** An address that, in a narrow column, breaks before its domain rather than mid-name. */
function breakableAddress(address: string) {
  const at = address.lastIndexOf("@");
  if (at <= 0) return address;
  return (
    <>
      {address.slice(0, at)}
      <wbr />
      {address.slice(at)}
    </>
  );
}

/** The server's longest recipient search (an email address's length). */
const MAX_RECIPIENT = 320;

/**
 * The search by recipient: applied a moment after typing stops, or at once on Enter; the URL keeps
 * what was applied, so a link or Back restores it.
 */
function RecipientSearch({ applied, onSearch }: { applied: string; onSearch: (value: string) => void }) {
  const { t } = useI18n();
  const [draft, setDraft] = useState(applied);
  // The URL changed from elsewhere (Back, a link): show what it searches.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a change of the URL resets what is typed.
  useEffect(() => {
    if (draft.trim() !== applied) setDraft(applied);
  }, [applied]);
  useEffect(() => {
    if (draft.trim() === applied) return;
    const timer = setTimeout(() => onSearch(draft.trim()), 350);
    return () => clearTimeout(timer);
  }, [draft, applied, onSearch]);
  return (
    <div className="filter filter-search">
      <label htmlFor="outbox-recipient">{t("panel.outbox.recipient")}</label>
      <input
        id="outbox-recipient"
        type="search"
        value={draft}
        maxLength={MAX_RECIPIENT}
        autoComplete="off"
        spellCheck={false}
        placeholder={t("panel.outbox.recipient_placeholder")}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && draft.trim() !== applied) onSearch(draft.trim());
        }}
      />
    </div>
  );
}

/** Outbox: every email the organization sends (or, without SMTP, keeps as captured), newest first. */
export function OutboxPage() {
  const { org, path } = useOrg();
  const { t, rich } = useI18n();
  const format = useFormat();
  usePageTitle(t("panel.nav.outbox"), org.name);
  const [params, setParams] = useSearchParams();
  const state = params.get("state") ?? "";
  const kind = params.get("kind") ?? "";
  const supporter = /^[1-9]\d*$/.test(params.get("supporter_id") ?? "") ? Number(params.get("supporter_id")) : null;
  const recipient = (params.get("recipient") ?? "").trim();
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1) ?? null;
  const list = useQuery<{
    outboxMessages: { count: number; has_more: boolean; end_cursor: string | null; items: MessageSummary[] };
  }>(LIST, {
    first: PAGE_SIZE,
    after,
    state: state || null,
    kind: kind || null,
    supporter_id: supporter,
    recipient: recipient || null,
  });
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setCursors([]);
    setParams(next, { replace: true });
  };
  return (
    <>
      <PageHeader title={t("panel.nav.outbox")}>
        <p className="muted">
          {rich("panel.outbox.intro", {
            organization: org.name,
            smtp: <code>SMTP_URL</code>,
            strong: (chunks) => <strong>{chunks}</strong>,
          })}
        </p>
      </PageHeader>
      <NotDeliveredWarning />
      <section className="card filters" aria-label={t("panel.collections.filters")}>
        <div className="filters-grid">
          <RecipientSearch applied={recipient} onSearch={(value) => setFilter("recipient", value)} />
          <FilterSelect
            id="outbox-state"
            label={t("panel.column.state")}
            any={t("panel.outbox.any")}
            value={state}
            options={STATES.map((value) => [value, t(`panel.state.${value}`)] as const)}
            onChange={(value) => setFilter("state", value)}
          />
          <FilterSelect
            id="outbox-kind"
            label={t("panel.outbox.message")}
            any={t("panel.outbox.any")}
            value={kind}
            options={EMAIL_KINDS.map((value) => [value, kindLabel(t, value)] as const)}
            onChange={(value) => setFilter("kind", value)}
          />
          {supporter !== null && (
            <div className="filter">
              <span>
                {t("panel.column.supporter")} <Link to={path(`supporters/${supporter}`)}>#{supporter}</Link>{" "}
                <button type="button" className="button button-ghost" onClick={() => setFilter("supporter_id", "")}>
                  {t("panel.outbox.every_supporter")}
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
              {state || kind || recipient || supporter !== null ? t("panel.outbox.no_match") : t("panel.outbox.none")}
            </Empty>
          ) : (
            <>
              <DataTable
                testId="table-outbox"
                caption={t("panel.outbox.caption")}
                rows={page.items}
                busy={list.loading}
                columns={[
                  {
                    key: "subject",
                    label: t("panel.outbox.message"),
                    wrap: true,
                    render: (row) => (
                      <Link to={path(`outbox/${row.id}`)}>
                        {row.subject ?? t("panel.outbox.not_rendered_kind", { kind: kindLabel(t, row.kind) })}
                      </Link>
                    ),
                  },
                  { key: "kind", label: t("panel.outbox.kind"), render: (row) => kindLabel(t, row.kind) },
                  { key: "to", label: t("panel.outbox.to"), wrap: true, render: (row) => breakableAddress(row.to) },
                  { key: "state", label: t("panel.column.state"), render: (row) => <StateBadge state={row.state} /> },
                  {
                    key: "attempts",
                    label: t("panel.outbox.attempts"),
                    numeric: true,
                    render: (row) => format.number(row.attempts),
                  },
                  {
                    key: "date",
                    label: t("panel.outbox.date"),
                    render: (row) => <DateTimeCell iso={row.sent_date ?? row.create_date} fmt={format} />,
                  },
                ]}
              />
              <CursorPagination
                cursors={cursors}
                setCursors={setCursors}
                hasMore={page.has_more}
                nextCursor={page.end_cursor}
                range={t("panel.outbox.count", { count: page.count, formatted: format.number(page.count) })}
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
  const { t } = useI18n();
  const format = useFormat();
  const gql = useGraphql();
  const [flash, setFlash] = useState<string | null>(null);
  const state = useQuery<{ outboxMessage: MessageDetail | null }>(DETAIL, { id });
  usePageTitle(t("panel.outbox.email_title", { id }), org.name);
  const crumbs = [{ label: t("panel.nav.outbox"), to: path("outbox") }];
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
              <PageHeader title={t("panel.outbox.not_found")} crumbs={crumbs} />
              <Empty>{t("panel.outbox.not_found_body", { id, organization: org.name })}</Empty>
            </>
          );
        }
        const actions = canWrite && (message.state === "failed" || message.state === "queued") && (
          <>
            {message.state === "failed" && (
              <ActionButton
                label={t("panel.outbox.retry")}
                title={t("panel.outbox.retry_title")}
                confirmLabel={t("panel.outbox.retry_now")}
                testId="retry-message"
                run={() => gql(RETRY, { id: message.id })}
                onDone={done(t("panel.outbox.retried"))}
              >
                <p>{t("panel.outbox.retry_body", { to: message.to })}</p>
              </ActionButton>
            )}
            {message.state === "queued" && (
              <ActionButton
                label={t("panel.common.cancel")}
                title={t("panel.outbox.cancel_title")}
                confirmLabel={t("panel.outbox.cancel_email")}
                danger
                testId="cancel-message"
                run={() => gql(CANCEL, { id: message.id })}
                onDone={done(t("panel.outbox.cancelled"))}
              >
                <p>{t("panel.outbox.cancel_body", { to: message.to })}</p>
              </ActionButton>
            )}
          </>
        );
        return (
          <>
            <PageHeader
              title={
                message.subject ?? t("panel.outbox.kind_numbered", { kind: kindLabel(t, message.kind), id: message.id })
              }
              crumbs={crumbs}
              actions={actions || undefined}
            />
            <Flash message={flash} />
            <NotDeliveredWarning />
            {message.state === "failed" && message.last_error && (
              <div className="state state-error" role="alert" data-testid="last-error">
                <strong>{t("panel.outbox.refused")}</strong>
                <p>
                  <code>{message.last_error}</code>
                </p>
              </div>
            )}
            <Section title={t("panel.outbox.delivery")}>
              <Fields
                items={[
                  [t("panel.column.state"), <StateBadge key="state" state={message.state} />],
                  [t("panel.outbox.to"), message.to],
                  [t("panel.outbox.kind"), kindLabel(t, message.kind)],
                  [t("panel.outbox.attempts"), format.number(message.attempts)],
                  [
                    t("panel.outbox.next_attempt"),
                    message.next_attempt_date ? format.dateTime(message.next_attempt_date) : null,
                  ],
                  [t("panel.outbox.sent"), message.sent_date ? format.dateTime(message.sent_date) : null],
                  [t("panel.column.created"), format.dateTime(message.create_date)],
                  ["Message-ID", message.message_id ? <code key="mid">{message.message_id}</code> : null],
                  [
                    t("panel.column.supporter"),
                    message.supporter_id ? (
                      <Link key="s" to={path(`supporters/${message.supporter_id}`)}>
                        #{message.supporter_id}
                      </Link>
                    ) : null,
                  ],
                  [
                    t("panel.column.donation"),
                    message.donation_id ? (
                      <Link key="d" to={path(`donations/${message.donation_id}`)}>
                        #{message.donation_id}
                      </Link>
                    ) : null,
                  ],
                  [t("panel.outbox.last_error"), message.state !== "failed" ? message.last_error : null],
                ]}
              />
            </Section>
            {message.html === null && message.text === null ? (
              <Section title={t("panel.outbox.message")}>
                <p className="muted">{t("panel.outbox.not_rendered")}</p>
              </Section>
            ) : (
              <>
                <Section title="HTML">
                  <EmailFrame
                    html={message.html ?? ""}
                    title={t("panel.outbox.html_frame", { subject: message.subject ?? "" })}
                  />
                </Section>
                <Section title={t("panel.outbox.plain_text")}>
                  <pre className="email-text" data-testid="email-text">
                    {message.text}
                  </pre>
                </Section>
                <Section title={t("panel.outbox.headers")}>
                  <DataTable
                    testId="table-headers"
                    caption={t("panel.outbox.headers_caption")}
                    rows={message.headers.map((header, index) => ({ ...header, id: index }))}
                    columns={[
                      { key: "name", label: t("panel.outbox.header"), render: (row) => <code>{row.name}</code> },
                      { key: "value", label: t("panel.outbox.value"), render: (row) => row.value },
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
