import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import { ApiError } from "../api/graphql";
import { removeLogo, uploadLogo } from "../api/logo";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { Fields, PageHeader, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { isLocaleOf, LOCALE_NAMES, LOCALES, type Translate, useI18n } from "../i18n";

/** The organization's legal profile as `legalProfile` answers it (src/modules/legal-profile). */
interface LegalProfile {
  legal_name: string | null;
  legal_form: string | null;
  address_line1: string | null;
  address_line2: string | null;
  postal_code: string | null;
  city: string | null;
  province: string | null;
  country: string | null;
  tax_code: string | null;
  vat_number: string | null;
  runts_number: string | null;
  ets_status: string | null;
  charity_number: string | null;
  ein: string | null;
  us_501c3: boolean;
  website: string | null;
  privacy_policy_url: string | null;
  receipt_legal_text: string | null;
  receipt_mode: string;
  default_locale: string;
  contact_email: string | null;
  account_holder: string | null;
  iban: string | null;
  bic: string | null;
  logo_url: string | null;
  /** What receipts need and the profile lacks (field names). */
  missing: string[];
}

const PROFILE_FIELDS =
  "legal_name legal_form address_line1 address_line2 postal_code city province country tax_code vat_number " +
  "runts_number ets_status charity_number ein us_501c3 website privacy_policy_url receipt_legal_text receipt_mode " +
  "default_locale contact_email account_holder iban bic logo_url missing";
const READ = `query LegalProfile { legalProfile { ${PROFILE_FIELDS} } }`;
const SAVE = `mutation SaveLegalProfile($input: LegalProfileInput!) { updateLegalProfile(input: $input) { ${PROFILE_FIELDS} } }`;

/** The fields this form edits. The bank account (account_holder, iban, bic) is Settings → Bank transfer's. */
type EditableField = Exclude<keyof LegalProfile, "missing" | "account_holder" | "iban" | "bic" | "logo_url">;

/** How a field is entered: a line of text (of a type), a long text, or one of a few choices. */
type Kind = "text" | "email" | "url" | "textarea" | "locale" | "ets" | "receipt_mode" | "checkbox";

/** `label` and `hint` are keys of the catalog. */
interface ProfileField {
  name: EditableField;
  label: string;
  hint?: string;
  kind?: Kind;
  /** Takes the whole row of the grid. */
  wide?: boolean;
}

const GROUPS: { id: string; legend: string; fields: ProfileField[] }[] = [
  {
    id: "identity",
    legend: "panel.legal_profile.identity",
    fields: [
      {
        name: "legal_name",
        label: "panel.legal_profile.fields.legal_name",
        hint: "panel.legal_profile.hints.legal_name",
      },
      {
        name: "legal_form",
        label: "panel.legal_profile.fields.legal_form",
        hint: "panel.legal_profile.hints.legal_form",
      },
      {
        name: "website",
        label: "panel.legal_profile.fields.website",
        hint: "panel.legal_profile.hints.website",
        kind: "url",
      },
      {
        name: "contact_email",
        label: "panel.legal_profile.fields.contact_email",
        hint: "panel.legal_profile.hints.contact_email",
        kind: "email",
      },
      {
        name: "default_locale",
        label: "panel.legal_profile.fields.default_locale",
        hint: "panel.legal_profile.hints.default_locale",
        kind: "locale",
      },
    ],
  },
  {
    id: "seat",
    legend: "panel.legal_profile.seat",
    fields: [
      {
        name: "address_line1",
        label: "panel.legal_profile.fields.address_line1",
        hint: "panel.legal_profile.hints.address_line1",
      },
      {
        name: "address_line2",
        label: "panel.legal_profile.fields.address_line2",
        hint: "panel.legal_profile.hints.address_line2",
      },
      { name: "postal_code", label: "panel.legal_profile.fields.postal_code" },
      { name: "city", label: "panel.legal_profile.fields.city" },
      { name: "province", label: "panel.legal_profile.fields.province", hint: "panel.legal_profile.hints.province" },
      { name: "country", label: "panel.legal_profile.fields.country", hint: "panel.legal_profile.hints.country" },
    ],
  },
  {
    id: "tax",
    legend: "panel.legal_profile.tax",
    fields: [
      { name: "tax_code", label: "panel.legal_profile.fields.tax_code", hint: "panel.legal_profile.hints.tax_code" },
      {
        name: "vat_number",
        label: "panel.legal_profile.fields.vat_number",
        hint: "panel.legal_profile.hints.vat_number",
      },
      {
        name: "runts_number",
        label: "panel.legal_profile.fields.runts_number",
        hint: "panel.legal_profile.hints.runts_number",
      },
      {
        name: "ets_status",
        label: "panel.legal_profile.fields.ets_status",
        hint: "panel.legal_profile.hints.ets_status",
        kind: "ets",
      },
      {
        name: "charity_number",
        label: "panel.legal_profile.fields.charity_number",
        hint: "panel.legal_profile.hints.charity_number",
      },
      { name: "ein", label: "panel.legal_profile.fields.ein", hint: "panel.legal_profile.hints.ein" },
      { name: "us_501c3", label: "panel.legal_profile.fields.us_501c3", kind: "checkbox", wide: true },
    ],
  },
  {
    id: "receipts",
    legend: "panel.legal_profile.receipts",
    fields: [
      { name: "receipt_mode", label: "panel.legal_profile.fields.receipt_mode", kind: "receipt_mode", wide: true },
      {
        name: "receipt_legal_text",
        label: "panel.legal_profile.fields.receipt_legal_text",
        hint: "panel.legal_profile.hints.receipt_legal_text",
        kind: "textarea",
        wide: true,
      },
      {
        name: "privacy_policy_url",
        label: "panel.legal_profile.fields.privacy_policy_url",
        hint: "panel.legal_profile.hints.privacy_policy_url",
        kind: "url",
        wide: true,
      },
    ],
  },
];

const ALL_FIELDS = GROUPS.flatMap((group) => group.fields);

/** The choices of a qualifica ETS (Italy), blank for none, with their label's key. */
const ETS_STATUSES: [string, string][] = [
  ["", "panel.legal_profile.ets.none"],
  ["ets", "panel.legal_profile.ets.ets"],
  ["odv", "panel.legal_profile.ets.odv"],
  ["aps", "panel.legal_profile.ets.aps"],
  ["onlus", "panel.legal_profile.ets.onlus"],
];
const RECEIPT_MODES: [string, string][] = [
  ["each_payment", "panel.legal_profile.receipt_modes.each_payment"],
  ["yearly_statement", "panel.legal_profile.receipt_modes.yearly_statement"],
];

/** A missing field's label: the form's, else the bank account's, else its own name. */
function fieldLabel(t: Translate, name: string): string {
  const field = ALL_FIELDS.find((candidate) => candidate.name === name);
  if (field) return t(field.label);
  if (name === "account_holder") return t("panel.legal_profile.fields.account_holder");
  if (name === "iban") return t("panel.legal_profile.fields.iban");
  if (name === "bic") return t("panel.legal_profile.fields.bic");
  return name;
}

/**
 * What changed in the form: only those fields are sent (fields left out stay as they are; blank
 * clears). A new country sends the tax identifiers again, so they are checked by its rules.
 */
function changedInput(data: FormData, profile: LegalProfile): Record<string, string | boolean> {
  const input: Record<string, string | boolean> = {};
  const text = (name: string) => String(data.get(name) ?? "").trim();
  for (const field of ALL_FIELDS) {
    if (field.kind === "checkbox") {
      const checked = data.get(field.name) === "on";
      if (checked !== profile[field.name]) input[field.name] = checked;
    } else if (text(field.name) !== (profile[field.name] ?? "")) {
      input[field.name] = text(field.name);
    }
  }
  if ("country" in input) {
    for (const name of ["tax_code", "vat_number"]) if (!(name in input)) input[name] = text(name);
  }
  return input;
}

function MissingNotice({ profile }: { profile: LegalProfile }) {
  const { t } = useI18n();
  if (profile.missing.length === 0) {
    return (
      <p className="notice" data-testid="legal-profile-complete">
        {t("panel.legal_profile.complete")}
      </p>
    );
  }
  return (
    <div className="warning" data-testid="legal-profile-missing">
      <p>{t("panel.legal_profile.missing")}</p>
      <ul className="missing-list">
        {profile.missing.map((name) => (
          <li key={name}>
            <a
              href={`#legal-${name}`}
              onClick={(event) => {
                const input = document.getElementById(`legal-${name}`);
                if (!input) return;
                event.preventDefault();
                input.focus();
              }}
            >
              {fieldLabel(t, name)}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** One field with its label, the server's problem with it (under it) and its hint. */
function ProfileInput(props: { field: ProfileField; profile: LegalProfile; problem?: string; readOnly: boolean }) {
  const { field, profile, problem, readOnly } = props;
  const { t } = useI18n();
  const id = `legal-${field.name}`;
  const describedBy = [problem ? `${id}-error` : "", field.hint ? `${id}-hint` : ""].filter(Boolean).join(" ");
  const common = {
    id,
    name: field.name,
    "aria-invalid": problem ? true : undefined,
    "aria-describedby": describedBy || undefined,
  } as const;
  const value = profile[field.name];
  const text = typeof value === "string" ? value : "";
  let control: ReactNode;
  let label: ReactNode = <label htmlFor={id}>{t(field.label)}</label>;
  switch (field.kind) {
    case "checkbox":
      label = null;
      control = (
        <label className="checkbox">
          <input {...common} type="checkbox" defaultChecked={value === true} disabled={readOnly} />
          <span>{t(field.label)}</span>
        </label>
      );
      break;
    case "receipt_mode":
      label = null;
      control = (
        <fieldset className="choice-group" aria-describedby={common["aria-describedby"]}>
          <legend>{t(field.label)}</legend>
          {RECEIPT_MODES.map(([mode, key], index) => (
            <label className="checkbox" key={mode}>
              <input
                id={index === 0 ? id : `${id}-${mode}`}
                type="radio"
                name={field.name}
                value={mode}
                defaultChecked={text === mode}
                disabled={readOnly}
                aria-invalid={common["aria-invalid"]}
              />
              <span>{t(key)}</span>
            </label>
          ))}
        </fieldset>
      );
      break;
    case "locale":
      control = (
        <select {...common} defaultValue={text} disabled={readOnly}>
          {LOCALES.map((locale) => (
            <option key={locale} value={locale}>
              {LOCALE_NAMES[locale]}
            </option>
          ))}
        </select>
      );
      break;
    case "ets":
      control = (
        <select {...common} defaultValue={text} disabled={readOnly}>
          {ETS_STATUSES.map(([status, key]) => (
            <option key={status} value={status}>
              {t(key)}
            </option>
          ))}
        </select>
      );
      break;
    case "textarea":
      control = <textarea {...common} rows={4} defaultValue={text} readOnly={readOnly} />;
      break;
    default:
      control = (
        <input
          {...common}
          type={field.kind === "email" || field.kind === "url" ? field.kind : "text"}
          defaultValue={text}
          autoComplete="off"
          spellCheck={false}
          readOnly={readOnly}
        />
      );
  }
  return (
    <div className={field.wide ? "form-field form-field-wide" : "form-field"}>
      {label}
      {control}
      {problem && (
        <p className="field-error" id={`${id}-error`} data-field-error={field.name}>
          {problem}
        </p>
      )}
      {field.hint && (
        <p className="hint" id={`${id}-hint`}>
          {t(field.hint)}
        </p>
      )}
    </div>
  );
}

/**
 * The logo on the donation page, emails and receipts: a PNG, JPEG or WebP file, checked and resized
 * by the server (receipts already issued keep the logo they printed).
 */
function LogoCard(props: { profile: LegalProfile; onChanged: (message: string) => void }) {
  const { profile, onChanged } = props;
  const { org, canWrite } = useOrg();
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const run = async (work: () => Promise<unknown>, message: string) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      onChanged(message);
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
      if (inputRef.current) inputRef.current.value = "";
    }
  };
  return (
    <fieldset className="card" data-testid="legal-profile-logo">
      <legend>{t("panel.legal_profile.logo.title")}</legend>
      <InlineError error={error} />
      <div className="logo-row">
        {profile.logo_url && new URL(profile.logo_url, window.location.href).origin === window.location.origin ? (
          <img className="logo-preview" src={profile.logo_url} alt={t("panel.legal_profile.logo.current")} />
        ) : profile.logo_url ? (
          // An address elsewhere (Settings → Email): the panel loads images from its own origin only.
          <p className="muted" data-testid="logo-external">
            {t("panel.legal_profile.logo.external")} <code>{profile.logo_url}</code>
          </p>
        ) : (
          <p className="muted" data-testid="logo-none">
            {t("panel.legal_profile.logo.none")}
          </p>
        )}
        {canWrite && (
          <div className="form-field">
            <label htmlFor="legal-logo">{t("panel.legal_profile.logo.choose")}</label>
            <input
              ref={inputRef}
              id="legal-logo"
              type="file"
              accept="image/png,image/jpeg,image/webp"
              aria-describedby="legal-logo-hint"
              disabled={busy}
              onChange={(event) => {
                const file = event.currentTarget.files?.[0];
                if (file) run(() => uploadLogo(org.slug, file), t("panel.legal_profile.logo.uploaded"));
              }}
            />
            <p className="hint" id="legal-logo-hint">
              {t("panel.legal_profile.logo.hint")}
            </p>
            {profile.logo_url && (
              <button
                type="button"
                className="button"
                disabled={busy}
                data-testid="remove-logo"
                onClick={() => run(() => removeLogo(org.slug), t("panel.legal_profile.logo.removed"))}
              >
                {t("panel.legal_profile.logo.remove")}
              </button>
            )}
          </div>
        )}
      </div>
    </fieldset>
  );
}

/** The bank account receipts print: set in Settings → Bank transfer, shown here. */
function BankAccount({ profile }: { profile: LegalProfile }) {
  const { t, rich } = useI18n();
  const { path } = useOrg();
  return (
    <fieldset className="card" data-testid="legal-profile-bank">
      <legend>{t("panel.legal_profile.bank")}</legend>
      <p className="hint">
        {rich("panel.legal_profile.bank_hint", {
          link: (chunks) => <Link to={{ pathname: path("settings"), hash: "#bank-transfer" }}>{chunks}</Link>,
        })}
      </p>
      {profile.iban ? (
        <Fields
          items={[
            [t("panel.legal_profile.fields.account_holder"), profile.account_holder],
            [t("panel.legal_profile.fields.iban"), <code key="iban">{profile.iban}</code>],
            [t("panel.legal_profile.fields.bic"), profile.bic],
          ]}
        />
      ) : (
        <p className="muted">{t("panel.legal_profile.bank_none")}</p>
      )}
    </fieldset>
  );
}

function LegalProfileForm(props: {
  profile: LegalProfile;
  onSubmitting: () => void;
  onSaved: (saved: LegalProfile) => void;
}) {
  const { profile, onSubmitting, onSaved } = props;
  const { canWrite } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const formRef = useRef<HTMLFormElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});

  // After a refusal, the first field in trouble takes the focus.
  useEffect(() => {
    const first = ALL_FIELDS.find((field) => fieldErrors[field.name]);
    if (first) document.getElementById(`legal-${first.name}`)?.focus();
  }, [fieldErrors]);

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setFieldErrors({});
    onSubmitting();
    try {
      const input = changedInput(new FormData(event.currentTarget), profile);
      const saved = await gql<{ updateLegalProfile: LegalProfile }>(SAVE, { input });
      onSaved(saved.updateLegalProfile);
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        const problems = caught.fieldErrors();
        setFieldErrors(problems);
        // A problem with a field the form does not show is told in the summary.
        const elsewhere = Object.entries(problems)
          .filter(([name]) => !ALL_FIELDS.some((field) => field.name === name))
          .map(([name, message]) => `${fieldLabel(t, name)}: ${message}`);
        const summary = t("panel.legal_profile.not_saved", { count: Object.keys(problems).length });
        setError(new Error([summary, ...elsewhere].join(" ")));
        if (elsewhere.length > 0) formRef.current?.scrollIntoView({ block: "start" });
      } else {
        setError(caught as Error);
        formRef.current?.scrollIntoView({ block: "start" });
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={formRef} className="editor" onSubmit={onSubmit} noValidate data-testid="legal-profile-form">
      <InlineError error={error} />
      {GROUPS.map((group) => (
        <fieldset className="card" key={group.id} data-testid={`legal-profile-${group.id}`}>
          <legend>{t(group.legend)}</legend>
          <div className="form-grid">
            {group.fields.map((field) => (
              <ProfileInput
                key={field.name}
                field={field}
                profile={profile}
                problem={fieldErrors[field.name]}
                readOnly={!canWrite}
              />
            ))}
          </div>
        </fieldset>
      ))}
      <BankAccount profile={profile} />
      {canWrite ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid="save-legal-profile">
            {busy ? t("panel.common.saving") : t("panel.legal_profile.save")}
          </button>
        </div>
      ) : (
        <p className="muted" data-testid="legal-profile-read-only">
          {t("panel.settings.read_only")}
        </p>
      )}
    </form>
  );
}

/**
 * Settings → Legal profile: who the organization is in law, as its receipts print it (legal name,
 * registered seat, tax identifiers, the receipts' wording and mode). Owners and admins change it;
 * members read it.
 */
export function LegalProfilePage() {
  const { org } = useOrg();
  const { t, setSources } = useI18n();
  usePageTitle(t("panel.legal_profile.title"), org.name);
  const state = useQuery<{ legalProfile: LegalProfile }>(READ);
  const [flash, setFlash] = useState<string | null>(null);
  return (
    <>
      <PageHeader title={t("panel.legal_profile.title")}>
        <p className="muted">{t("panel.legal_profile.intro", { organization: org.name })}</p>
        <p className="muted" data-testid="legal-profile-issued-hint">
          {t("panel.legal_profile.issued_hint")}
        </p>
      </PageHeader>
      <Async state={state}>
        {({ legalProfile }) => (
          <div className="editor">
            <Flash message={flash} />
            <MissingNotice profile={legalProfile} />
            <LogoCard
              profile={legalProfile}
              onChanged={(message) => {
                setFlash(message);
                state.reload();
              }}
            />
            <LegalProfileForm
              // A logo upload reloads the profile: it must not reset what is being typed in the form.
              key={JSON.stringify({ ...legalProfile, logo_url: null })}
              profile={legalProfile}
              onSubmitting={() => setFlash(null)}
              onSaved={(saved) => {
                setFlash(t("panel.legal_profile.saved"));
                // The organization's language is the panel's last resort: it may have changed.
                setSources({ organization: isLocaleOf(saved.default_locale) });
                state.reload();
                window.scrollTo(0, 0);
              }}
            />
          </div>
        )}
      </Async>
    </>
  );
}
