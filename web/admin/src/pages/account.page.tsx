import { type FormEvent, useEffect, useRef, useState } from "react";
import { type AccountSession, changePassword, endOtherSessions, endSession, listSessions } from "../api/account";
import { ApiError } from "../api/graphql";
import { type Formatters, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useLoad } from "../app/use-load";
import { ActionButton, Flash } from "../components/action-button";
import { FormField } from "../components/form-field";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { type I18n, useI18n } from "../i18n";
import { AccountTabs } from "./account-tabs";

/** The password rules' shortest (src/identity/users.service.ts MIN_PASSWORD_LENGTH); the server checks it too. */
const MIN_PASSWORD_LENGTH = 10;
const PASSWORD_FIELDS = ["current_password", "new_password", "confirm_password"] as const;

/** The signed-in user's sessions, reloaded on demand; a session that ended meanwhile goes to sign in. */
function useSessions() {
  const sessions = useLoad(listSessions);
  useEffect(() => {
    if (sessions.error instanceof ApiError && sessions.error.status === 401) window.location.assign("/admin/sign-in");
  }, [sessions.error]);
  return sessions;
}

/** "Chrome 126 on macOS", or what is known of it. */
function deviceName(t: I18n["t"], session: AccountSession): string {
  if (session.browser && session.os) return t("panel.account.device_on", { browser: session.browser, os: session.os });
  return session.browser ?? session.os ?? t("panel.account.unknown_device");
}

/** A recent time as "5 minutes ago", an older one as its date and time in the organization's time zone. */
function LastSeen({ iso, fmt }: { iso: string; fmt: Formatters }) {
  const { t, intlLocale } = useI18n();
  const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  const relative = new Intl.RelativeTimeFormat(intlLocale, { numeric: "auto" });
  const text =
    seconds < 60
      ? t("panel.account.just_now")
      : seconds < 3600
        ? relative.format(-Math.floor(seconds / 60), "minute")
        : seconds < 86_400
          ? relative.format(-Math.floor(seconds / 3600), "hour")
          : fmt.dateTime(iso);
  return (
    <time dateTime={iso} title={fmt.dateTime(iso)}>
      {text}
    </time>
  );
}

function PasswordForm({ onChanged }: { onChanged: (sessionsEnded: number) => void }) {
  const { session } = useOrg();
  const { t } = useI18n();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  const focusFirst = (found: Record<string, string>) => {
    const first = PASSWORD_FIELDS.find((name) => found[name]);
    if (first) formRef.current?.querySelector<HTMLInputElement>(`#password-${first}`)?.focus();
  };

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const current = String(data.get("current_password") ?? "");
    const next = String(data.get("new_password") ?? "");
    const repeat = String(data.get("confirm_password") ?? "");
    const found: Record<string, string> = {};
    if (!current) found.current_password = t("panel.account.enter_current");
    if (next.length < MIN_PASSWORD_LENGTH) {
      found.new_password = t("panel.account.too_short", { min: MIN_PASSWORD_LENGTH });
    } else if (next !== repeat) found.confirm_password = t("panel.account.differ");
    setErrors(found);
    setError(null);
    if (Object.keys(found).length > 0) {
      focusFirst(found);
      return;
    }
    setBusy(true);
    try {
      const sessionsEnded = await changePassword(current, next);
      form.reset();
      onChanged(sessionsEnded);
    } catch (caught) {
      const fields = caught instanceof ApiError ? caught.fieldErrors() : {};
      if (Object.keys(fields).length > 0) {
        setErrors(fields);
        focusFirst(fields);
      } else setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };

  const field = (name: (typeof PASSWORD_FIELDS)[number], label: string, autoComplete: string, hint?: string) => (
    <FormField idPrefix="password" name={name} label={label} hint={hint} error={errors[name]}>
      {(props) => <input {...props} name={name} type="password" autoComplete={autoComplete} maxLength={1000} />}
    </FormField>
  );

  return (
    <form ref={formRef} onSubmit={onSubmit} noValidate className="password-form" data-testid="password-form">
      {/* For password managers: whose password this is. */}
      <input type="email" name="username" autoComplete="username" value={session.user.email} readOnly hidden />
      <InlineError error={error} />
      <div className="form-grid">
        {field("current_password", t("panel.account.current_password"), "current-password")}
        {field(
          "new_password",
          t("panel.account.new_password"),
          "new-password",
          t("panel.account.new_password_hint", { min: MIN_PASSWORD_LENGTH }),
        )}
        {field("confirm_password", t("panel.account.confirm_password"), "new-password")}
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="change-password">
          {busy ? t("panel.account.changing") : t("panel.account.change_password")}
        </button>
      </div>
    </form>
  );
}

function SessionsTable({ sessions, onEnded }: { sessions: AccountSession[]; onEnded: (message: string) => void }) {
  const { t } = useI18n();
  const fmt = useFormat();
  return (
    <table className="table sessions-table" data-testid="table-sessions">
      <caption className="visually-hidden">{t("panel.account.sessions_caption")}</caption>
      <thead>
        <tr>
          <th scope="col">{t("panel.account.device")}</th>
          <th scope="col" className="wide-only">
            {t("panel.account.address")}
          </th>
          <th scope="col" className="wide-only">
            {t("panel.account.last_seen")}
          </th>
          <th scope="col" className="wide-only">
            {t("panel.account.signed_in")}
          </th>
          <th scope="col">
            <span className="visually-hidden">{t("panel.account.actions")}</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((session) => {
          const device = deviceName(t, session);
          return (
            <tr key={session.id} data-id={session.id} data-current={session.current || undefined}>
              <td className="cell-wrap">
                <span className="session-device">
                  <strong>{device}</strong>
                  {session.current && <span className="badge badge-good">{t("panel.account.this_device")}</span>}
                  {session.stage !== "active" && (
                    <span className="badge badge-warn">{t("panel.account.second_step_pending")}</span>
                  )}
                </span>
                <span className="phone-only muted small">
                  {session.ip_address ?? "—"} · <LastSeen iso={session.last_seen_date} fmt={fmt} />
                </span>
              </td>
              <td className="wide-only cell-wrap" data-testid="session-address">
                {session.ip_address ?? "—"}
              </td>
              <td className="wide-only" data-testid="session-last-seen">
                <LastSeen iso={session.last_seen_date} fmt={fmt} />
              </td>
              <td className="wide-only">{fmt.dateTime(session.create_date)}</td>
              <td className="session-action">
                {session.current ? (
                  <ActionButton
                    label={t("panel.account.sign_out_here")}
                    title={t("panel.account.sign_out_here_title")}
                    confirmLabel={t("panel.account.sign_out_here")}
                    danger
                    className="button button-small"
                    testId={`end-session-${session.id}`}
                    run={() => endSession(session.id)}
                    onDone={() => window.location.assign("/admin/sign-in")}
                  >
                    <p>{t("panel.account.sign_out_here_body")}</p>
                  </ActionButton>
                ) : (
                  <ActionButton
                    label={t("panel.account.end")}
                    title={t("panel.account.end_title", { device })}
                    confirmLabel={t("panel.account.end")}
                    danger
                    className="button button-danger-outline button-small"
                    testId={`end-session-${session.id}`}
                    run={() => endSession(session.id)}
                    onDone={() => onEnded(t("panel.account.session_ended", { device }))}
                  >
                    <p>{t("panel.account.end_body")}</p>
                  </ActionButton>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The signed-in user's own account: their password and where they are signed in. */
export function AccountPage() {
  const { org, session } = useOrg();
  const { t } = useI18n();
  usePageTitle(t("panel.account.title"), org.name);
  const sessions = useSessions();
  const [passwordFlash, setPasswordFlash] = useState<string | null>(null);
  const [sessionsFlash, setSessionsFlash] = useState<string | null>(null);
  const others = sessions.data?.filter((item) => !item.current).length ?? 0;

  return (
    <>
      <PageHeader title={t("panel.account.title")}>
        <p className="muted">{t("panel.account.intro", { email: session.user.email })}</p>
      </PageHeader>
      <AccountTabs />
      <Section
        title={t("panel.account.sessions_title")}
        id="sessions"
        actions={
          others > 0 ? (
            <ActionButton
              label={t("panel.account.end_others")}
              title={t("panel.account.end_others_title")}
              confirmLabel={t("panel.account.end_others")}
              danger
              testId="end-other-sessions"
              run={async () => {
                const ended = await endOtherSessions();
                setSessionsFlash(t("panel.account.others_ended", { count: ended }));
              }}
              onDone={sessions.reload}
            >
              <p>{t("panel.account.end_others_body", { count: others })}</p>
            </ActionButton>
          ) : undefined
        }
      >
        <p className="muted section-intro">{t("panel.account.sessions_intro")}</p>
        <Flash message={sessionsFlash} />
        <Async state={sessions}>
          {(items) => (
            <>
              <SessionsTable
                sessions={items}
                onEnded={(message) => {
                  setSessionsFlash(message);
                  sessions.reload();
                }}
              />
              {items.length === 1 && <p className="muted small">{t("panel.account.only_here")}</p>}
            </>
          )}
        </Async>
      </Section>
      <Section title={t("panel.account.password_title")} id="password">
        <p className="muted section-intro">{t("panel.account.password_intro")}</p>
        <Flash message={passwordFlash} />
        <PasswordForm
          onChanged={(count) => {
            setPasswordFlash(t("panel.account.password_changed", { count }));
            setSessionsFlash(null);
            sessions.reload();
          }}
        />
      </Section>
    </>
  );
}
