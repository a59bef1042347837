import { type FormEvent, useState } from "react";
import { ApiError } from "../api/graphql";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { EmailFrame } from "../components/email-frame";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
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

const LOCALES: [string, string][] = [
  ["en", "English"],
  ["it", "Italiano"],
];
const NOTIFICATIONS: [string, string][] = [
  ["off", "Off"],
  ["each", "An email for each new gift"],
  ["daily", "A daily digest"],
];

/** A form's submission with the server's problems by field (extensions.errors) and a summary. */
function useFieldSubmit<T>(action: (data: FormData) => Promise<T>, onDone: (result: T) => void) {
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
        setError(new Error("Nothing was saved; see the fields below."));
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
  const gql = useGraphql();
  const { busy, error, fieldErrors, onSubmit } = useFieldSubmit(
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
          <label htmlFor="email">Organization email</label>
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
            Donors' replies go here (Reply-To), and so do gift notifications.
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="logo_url">Logo address</label>
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
            https://… of an image shown at the top of every email (about 200 pixels wide).
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="locale">Language of emails</label>
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
            Receipts, statements and account emails are written in this language.
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="gift_notifications">Tell us about new gifts</label>
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
                {label}
              </option>
            ))}
          </select>
          <FieldError id="gift_notifications" problem={fieldErrors.gift_notifications} />
          <p className="hint" id="gift_notifications-hint">
            Sent to the organization email above.
          </p>
        </div>
      </div>
      {canWrite ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid="save-email-settings">
            {busy ? "Saving…" : "Save email settings"}
          </button>
        </div>
      ) : (
        <p className="muted">Only owners and admins can change these settings.</p>
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
  const [locale, setLocale] = useState(defaultLocale);
  const preview = useQuery<{ emailPreview: { subject: string; html: string; text: string } }>(PREVIEW, {
    kind,
    locale,
  });
  return (
    <div data-testid="email-preview">
      <div className="filters-grid">
        <div className="filter filter-select">
          <label htmlFor="preview-kind">Message</label>
          <select id="preview-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
            {EMAIL_KINDS.map((value) => (
              <option key={value} value={value}>
                {kindLabel(value)}
              </option>
            ))}
          </select>
        </div>
        <div className="filter filter-select">
          <label htmlFor="preview-locale">Language</label>
          <select id="preview-locale" value={locale} onChange={(event) => setLocale(event.target.value)}>
            {LOCALES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </div>
      {hasLogo && (
        <p className="hint">
          The panel does not load images from other sites, so your logo shows as its name here; donors see the image.
        </p>
      )}
      <Async state={preview}>
        {({ emailPreview }) => (
          <>
            <p>
              Subject: <strong data-testid="preview-subject">{emailPreview.subject}</strong>
            </p>
            <EmailFrame
              html={emailPreview.html}
              title={`Preview of the ${kindLabel(kind)} email`}
              testId="preview-frame"
            />
            <details>
              <summary>Plain text part</summary>
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
  const gql = useGraphql();
  const format = useFormat();
  const lastYear = new Date().getFullYear() - 1;
  const [result, setResult] = useState<StatementRun | null>(null);
  const { busy, error, fieldErrors, onSubmit } = useFieldSubmit(async (data) => {
    const raw = String(data.get("year") ?? "");
    return (
      await gql<{ sendStatements: StatementRun }>(SEND_STATEMENTS, { year: /^\d+$/.test(raw) ? Number(raw) : -1 })
    ).sendStatements;
  }, setResult);
  return (
    <form onSubmit={onSubmit} noValidate data-testid="send-statements">
      <p className="muted">
        Emails each supporter who gave in the year their statement of donations (for their tax return). Supporters
        without an email address are skipped; sending a year again only reaches those who did not get it yet. For very
        large lists, run <code>donata statements send --org … --year …</code> on the server instead.
      </p>
      <InlineError error={error} />
      <div className="form-grid">
        <div className="form-field">
          <label htmlFor="statement-year">Year</label>
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
          {busy ? "Queueing statements…" : "Send yearly statements"}
        </button>
      </div>
      {result && (
        <p className="flash" role="status" data-testid="statements-result">
          {result.year}: {format.number(result.queued)} statements queued, {format.number(result.already_sent)} already
          sent, {format.number(result.skipped_no_email)} supporters without an email.
        </p>
      )}
    </form>
  );
}

/** Settings → Email: sender settings, a preview of every message, and the yearly statements. */
export function EmailSettingsPage() {
  const { org, canWrite } = useOrg();
  usePageTitle("Email settings", org.name);
  const state = useQuery<{ emailSettings: EmailSettings }>(READ);
  const [flash, setFlash] = useState<string | null>(null);
  // Kept here: the preview is rebuilt (in the saved language) when the settings change.
  const [previewKind, setPreviewKind] = useState("receipt");
  return (
    <>
      <PageHeader title="Email">
        <p className="muted">How {org.name}'s emails to donors look, and where replies go.</p>
      </PageHeader>
      <Flash message={flash} />
      <Async state={state}>
        {({ emailSettings }) => (
          <>
            <Section title="Sender" id="email-sender">
              <SettingsForm
                key={JSON.stringify(emailSettings)}
                settings={emailSettings}
                onSaved={() => {
                  setFlash("Email settings saved.");
                  state.reload();
                }}
              />
            </Section>
            <Section title="Message preview" id="email-preview">
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
        <Section title="Yearly statements" id="yearly-statements">
          <StatementsForm />
        </Section>
      )}
    </>
  );
}
