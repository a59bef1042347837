import { type FormEvent, useState } from "react";
import { ApiError } from "../api/graphql";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { EmailFrame } from "../components/email-frame";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { LOCALES as LANGUAGES, LOCALE_NAMES, type Translate, useI18n } from "../i18n";
import { EMAIL_KINDS, kindLabel } from "./outbox.page";

interface EmailSettings {
  email: string | null;
  logo_url: string | null;
  locale: string;
  gift_notifications: string;
}

interface StatementRun {
  year: number;
  supporters: number;
  queued: number;
  already_sent: number;
  skipped_no_email: number;
}

const FIELDS = "email logo_url locale gift_notifications";
const READ = `query EmailSettings { emailSettings { ${FIELDS} } }`;
const SAVE = `mutation SaveEmailSettings($input: EmailSettingsInput!) { updateEmailSettings(input: $input) { ${FIELDS} } }`;
const PREVIEW = `query EmailPreview($kind: String!, $locale: String) { emailPreview(kind: $kind, locale: $locale) { subject html text } }`;
const SEND_STATEMENTS = `mutation SendStatements($year: Int!) {
  sendStatements(year: $year) { year supporters queued already_sent skipped_no_email }
}`;

/** Each language in its own name. */
const LOCALES: [string, string][] = LANGUAGES.map((code) => [code, LOCALE_NAMES[code]]);
/** The choices of gift notifications, with their label's key. */
const NOTIFICATIONS: [string, string][] = [
  ["off", "panel.email_settings.notifications_off"],
  ["each", "panel.email_settings.notifications_each"],
  ["daily", "panel.email_settings.notifications_daily"],
];

/** A form's submission with the server's problems by field (extensions.errors) and a summary. */
function useFieldSubmit<T>(t: Translate, action: (data: FormData) => Promise<T>, onDone: (result: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setFieldErrors({});
    try {
      onDone(await action(new FormData(event.currentTarget)));
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        setFieldErrors(caught.fieldErrors());
        setError(new Error(t("panel.email_settings.nothing_saved")));
      } else {
        setError(caught as Error);
      }
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, fieldErrors, onSubmit };
}

function FieldError({ id, problem }: { id: string; problem: string | undefined }) {
  if (!problem) return null;
  return (
    <p className="field-error" id={`${id}-error`} data-field-error={id}>
      {problem}
    </p>
  );
}

function SettingsForm({ settings, onSaved }: { settings: EmailSettings; onSaved: () => void }) {
  const { canWrite } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const { busy, error, fieldErrors, onSubmit } = useFieldSubmit(
    t,
    (data) =>
      gql(SAVE, {
        input: {
          email: String(data.get("email") ?? ""),
          logo_url: String(data.get("logo_url") ?? ""),
          locale: String(data.get("locale") ?? "en"),
          gift_notifications: String(data.get("gift_notifications") ?? "off"),
        },
      }),
    onSaved,
  );
  const described = (name: string) => (fieldErrors[name] ? `${name}-error` : `${name}-hint`);
  return (
    <form onSubmit={onSubmit} noValidate data-testid="email-settings">
      <InlineError error={error} />
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="email">{t("panel.email_settings.email")}</label>
          <input
            id="email"
            name="email"
            type="email"
            defaultValue={settings.email ?? ""}
            autoComplete="email"
            readOnly={!canWrite}
            aria-invalid={fieldErrors.email ? true : undefined}
            aria-describedby={described("email")}
          />
          <FieldError id="email" problem={fieldErrors.email} />
          <p className="hint" id="email-hint">
            {t("panel.email_settings.email_hint")}
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="logo_url">{t("panel.email_settings.logo")}</label>
          <input
            id="logo_url"
            name="logo_url"
            type="url"
            defaultValue={settings.logo_url ?? ""}
            autoComplete="off"
            spellCheck={false}
            readOnly={!canWrite}
            aria-invalid={fieldErrors.logo_url ? true : undefined}
            aria-describedby={described("logo_url")}
          />
          <FieldError id="logo_url" problem={fieldErrors.logo_url} />
          <p className="hint" id="logo_url-hint">
            {t("panel.email_settings.logo_hint")}
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="locale">{t("panel.email_settings.locale")}</label>
          <select
            id="locale"
            name="locale"
            defaultValue={settings.locale}
            disabled={!canWrite}
            aria-describedby={described("locale")}
          >
            {LOCALES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          <FieldError id="locale" problem={fieldErrors.locale} />
          <p className="hint" id="locale-hint">
            {t("panel.email_settings.locale_hint")}
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="gift_notifications">{t("panel.email_settings.notifications")}</label>
          <select
            id="gift_notifications"
            name="gift_notifications"
            defaultValue={settings.gift_notifications}
            disabled={!canWrite}
            aria-invalid={fieldErrors.gift_notifications ? true : undefined}
            aria-describedby={described("gift_notifications")}
          >
            {NOTIFICATIONS.map(([value, label]) => (
              <option key={value} value={value}>
                {t(label)}
              </option>
            ))}
          </select>
          <FieldError id="gift_notifications" problem={fieldErrors.gift_notifications} />
          <p className="hint" id="gift_notifications-hint">
            {t("panel.email_settings.notifications_hint")}
          </p>
        </div>
      </div>
      {canWrite ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid="save-email-settings">
            {busy ? t("panel.common.saving") : t("panel.email_settings.save")}
          </button>
        </div>
      ) : (
        <p className="muted">{t("panel.settings.read_only")}</p>
      )}
    </form>
  );
}

/** Each message with sample data, in the organization's name, logo and language (or another). */
function TemplatePreview(props: {
  kind: string;
  onKind: (kind: string) => void;
  defaultLocale: string;
  hasLogo: boolean;
}) {
  const { kind, onKind: setKind, defaultLocale, hasLogo } = props;
  const { t } = useI18n();
  const [locale, setLocale] = useState(defaultLocale);
  const preview = useQuery<{ emailPreview: { subject: string; html: string; text: string } }>(PREVIEW, {
    kind,
    locale,
  });
  return (
    <div data-testid="email-preview">
      <div className="filters-grid">
        <div className="filter filter-select">
          <label htmlFor="preview-kind">{t("panel.outbox.message")}</label>
          <select id="preview-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
            {EMAIL_KINDS.map((value) => (
              <option key={value} value={value}>
                {kindLabel(t, value)}
              </option>
            ))}
          </select>
        </div>
        <div className="filter filter-select">
          <label htmlFor="preview-locale">{t("panel.email_settings.preview_language")}</label>
          <select id="preview-locale" value={locale} onChange={(event) => setLocale(event.target.value)}>
            {LOCALES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </div>
      {hasLogo && <p className="hint">{t("panel.email_settings.logo_note")}</p>}
      <Async state={preview}>
        {({ emailPreview }) => (
          <>
            <p>
              {t("panel.email_settings.subject")} <strong data-testid="preview-subject">{emailPreview.subject}</strong>
            </p>
            <EmailFrame
              html={emailPreview.html}
              title={t("panel.email_settings.preview_frame", { kind: kindLabel(t, kind) })}
              testId="preview-frame"
            />
            <details>
              <summary>{t("panel.email_settings.plain_text_part")}</summary>
              <pre className="email-text" data-testid="preview-text">
                {emailPreview.text}
              </pre>
            </details>
          </>
        )}
      </Async>
    </div>
  );
}

/** Yearly statements: queued for every supporter who gave in the year; running it again sends nothing twice. */
function StatementsForm() {
  const { t, rich } = useI18n();
  const { org } = useOrg();
  const gql = useGraphql();
  const format = useFormat();
  const lastYear = new Date().getFullYear() - 1;
  const [result, setResult] = useState<StatementRun | null>(null);
  const { busy, error, fieldErrors, onSubmit } = useFieldSubmit(
    t,
    async (data) => {
      const raw = String(data.get("year") ?? "");
      return (
        await gql<{ sendStatements: StatementRun }>(SEND_STATEMENTS, { year: /^\d+$/.test(raw) ? Number(raw) : -1 })
      ).sendStatements;
    },
    setResult,
  );
  return (
    <form onSubmit={onSubmit} noValidate data-testid="send-statements">
      <p className="muted">
        {rich("panel.email_settings.statements_intro", {
          command: <code>donata statements send --org … --year …</code>,
        })}
      </p>
      <InlineError error={error} />
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="statement-year">{t("panel.email_settings.year")}</label>
          <input
            id="statement-year"
            name="year"
            inputMode="numeric"
            defaultValue={String(lastYear)}
            aria-invalid={fieldErrors.year ? true : undefined}
            aria-describedby={fieldErrors.year ? "year-error" : undefined}
          />
          <FieldError id="year" problem={fieldErrors.year} />
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="send-statements-button">
          {busy ? t("panel.email_settings.queueing") : t("panel.email_settings.send_statements")}
        </button>
      </div>
      {result && (
        <>
          <p className="flash" role="status" data-testid="statements-result">
            {t("panel.email_settings.statements_result", {
              year: result.year,
              queued: format.number(result.queued),
              sent: format.number(result.already_sent),
              skipped: format.number(result.skipped_no_email),
            })}
          </p>
          <p>
            <a
              className="button"
              href={`/admin/export/statements.zip?${new URLSearchParams({ organization: org.slug, year: String(result.year) })}`}
              download
              data-testid="download-statements-zip"
            >
              {t("panel.email_settings.download_statements", { year: result.year })}
            </a>
          </p>
        </>
      )}
    </form>
  );
}

/** Settings → Email: sender settings, a preview of every message, and the yearly statements. */
export function EmailSettingsPage() {
  const { org, canWrite } = useOrg();
  const { t } = useI18n();
  usePageTitle(t("panel.email_settings.page_title"), org.name);
  const state = useQuery<{ emailSettings: EmailSettings }>(READ);
  const [flash, setFlash] = useState<string | null>(null);
  // Kept here: the preview is rebuilt (in the saved language) when the settings change.
  const [previewKind, setPreviewKind] = useState("receipt");
  return (
    <>
      <PageHeader title={t("panel.nav.email")}>
        <p className="muted">{t("panel.email_settings.intro", { organization: org.name })}</p>
      </PageHeader>
      <Flash message={flash} />
      <Async state={state}>
        {({ emailSettings }) => (
          <>
            <Section title={t("panel.email_settings.sender")} id="email-sender">
              <SettingsForm
                key={JSON.stringify(emailSettings)}
                settings={emailSettings}
                onSaved={() => {
                  setFlash(t("panel.email_settings.saved"));
                  state.reload();
                }}
              />
            </Section>
            <Section title={t("panel.email_settings.preview")} id="email-preview">
              <TemplatePreview
                key={JSON.stringify(emailSettings)}
                kind={previewKind}
                onKind={setPreviewKind}
                defaultLocale={emailSettings.locale}
                hasLogo={emailSettings.logo_url !== null}
              />
            </Section>
          </>
        )}
      </Async>
      {canWrite && (
        <Section title={t("panel.email_settings.statements")} id="yearly-statements">
          <StatementsForm />
        </Section>
      )}
    </>
  );
}
