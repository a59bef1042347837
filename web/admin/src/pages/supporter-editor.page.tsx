import { type FormEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import { useNavigate, useParams } from "react-router";
import { ApiError } from "../api/graphql";
import type { Supporter } from "../api/types";
import { supporterName } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { FormField, type FormFieldProps } from "../components/form-field";
import { PageHeader, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";

/** The supporter's fields entered as a line of text (the server's SupporterInput, src/modules/supporters). */
const TEXT_FIELDS = [
  "first_name",
  "last_name",
  "business_name",
  "code",
  "image",
  "email",
  "phone",
  "mobile",
  "address",
  "address2",
  "postal_code",
  "city",
  "locality",
  "country",
  "date_of_birth",
  "place_of_birth",
  "sex",
  "job",
  "ssn",
  "vat",
  "note",
] as const;
type TextField = (typeof TEXT_FIELDS)[number];

const CONSENTS = [
  ["privacy", "panel.supporter.consent.privacy"],
  ["email_marketing", "panel.supporter.consent.email_marketing"],
  ["phone_marketing", "panel.supporter.consent.phone_marketing"],
  ["sms_marketing", "panel.supporter.consent.sms_marketing"],
  ["postal_marketing", "panel.supporter.consent.postal_marketing"],
  ["profilation_marketing", "panel.supporter.consent.profilation_marketing"],
] as const;
type Consent = (typeof CONSENTS)[number][0];

/** How a field is entered, its label's key, its longest value (the server's) and its hint's key. */
interface FieldSpec {
  name: TextField;
  label: string;
  max: number;
  type?: "email" | "tel" | "url" | "date";
  hint?: string;
  autoComplete?: string;
}

const GROUPS: { id: string; legend: string; fields: FieldSpec[] }[] = [
  {
    id: "identity",
    legend: "panel.supporter_editor.identity",
    fields: [
      { name: "first_name", label: "panel.form_field.first_name", max: 100, autoComplete: "off" },
      { name: "last_name", label: "panel.form_field.last_name", max: 100, autoComplete: "off" },
      { name: "business_name", label: "panel.form_field.business_name", max: 200, autoComplete: "off" },
      { name: "code", label: "panel.column.code", max: 100, hint: "panel.supporter_editor.code_hint" },
    ],
  },
  {
    id: "contact",
    legend: "panel.supporter_editor.contact",
    fields: [
      { name: "email", label: "panel.form_field.email", max: 320, type: "email", autoComplete: "off" },
      { name: "phone", label: "panel.form_field.phone", max: 50, type: "tel", autoComplete: "off" },
      { name: "mobile", label: "panel.form_field.mobile", max: 50, type: "tel", autoComplete: "off" },
    ],
  },
  {
    id: "address",
    legend: "panel.supporter_editor.address",
    fields: [
      { name: "address", label: "panel.form_field.address", max: 300 },
      { name: "address2", label: "panel.form_field.address2", max: 300 },
      { name: "postal_code", label: "panel.form_field.postal_code", max: 20 },
      { name: "city", label: "panel.form_field.city", max: 100 },
      { name: "locality", label: "panel.form_field.locality", max: 100 },
      { name: "country", label: "panel.form_field.country", max: 2, hint: "panel.supporter_editor.country_hint" },
    ],
  },
  {
    id: "personal",
    legend: "panel.supporter_editor.personal",
    fields: [
      { name: "date_of_birth", label: "panel.form_field.date_of_birth", max: 10, type: "date" },
      { name: "place_of_birth", label: "panel.form_field.place_of_birth", max: 200 },
      { name: "sex", label: "panel.form_field.sex", max: 6 },
      { name: "job", label: "panel.form_field.job", max: 200 },
      { name: "ssn", label: "panel.form_field.ssn", max: 50 },
      { name: "vat", label: "panel.form_field.vat", max: 50 },
      {
        name: "image",
        label: "panel.supporter_editor.image",
        max: 2000,
        type: "url",
        hint: "panel.supporter_editor.image_hint",
      },
    ],
  },
];

const FIELDS = `id first_name last_name business_name code image email phone mobile address address2 postal_code city
  locality country date_of_birth place_of_birth sex job ssn vat note tags erase_date update_date`;
const LOAD = `query SupporterForEdit($id: ID!) { supporter(id: $id) { ${FIELDS} } }`;
const CREATE = `mutation CreateSupporter($input: SupporterInput!) { createSupporter(input: $input) { id } }`;
const UPDATE = `mutation UpdateSupporter($id: ID!, $input: SupporterPatch!) { updateSupporter(id: $id, input: $input) { id } }`;

const MAX_TAGS = 50;

interface FormState {
  text: Record<TextField, string>;
  tags: string[];
  /** The tag being typed, added on Enter, a comma, "Add tag" or saving. */
  tag: string;
  consents: Set<Consent>;
}

function initialState(supporter?: Supporter): FormState {
  return {
    text: Object.fromEntries(TEXT_FIELDS.map((field) => [field, supporter?.[field] ?? ""])) as Record<
      TextField,
      string
    >,
    tags: supporter?.tags ?? [],
    tag: "",
    consents: new Set(),
  };
}

/** Adds the typed tag(s) to the list: a comma separates tags, blanks and repeats are dropped. */
function withTyped(tags: string[], typed: string): string[] {
  const next = [...tags];
  for (const part of typed.split(",")) {
    const tag = part.trim();
    if (tag && !next.includes(tag) && next.length < MAX_TAGS) next.push(tag);
  }
  return next;
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

/**
 * The form as a SupporterInput (creating: the fields filled in) or a SupporterPatch (editing: the
 * fields changed, a cleared one as null); or the light checks' problems, the server has the last word.
 */
function toInput(
  state: FormState,
  t: Translate,
  supporter?: Supporter,
): { input?: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const value = (field: TextField): string | null => {
    const text = field === "note" ? state.text.note : state.text[field].trim();
    if (!text.trim()) return null;
    return field === "country" ? text.toUpperCase() : text;
  };
  const email = value("email");
  if (email && !/^[^\s@]+@[^\s@]+$/.test(email)) errors.email = t("fields.email");
  const country = value("country");
  if (country && !/^[A-Z]{2}$/.test(country)) errors.country = t("fields.country_code");
  if (!email && !value("first_name") && !value("last_name") && !value("business_name")) {
    errors.email = t("fields.name_or_email_required");
  }
  const tags = withTyped(state.tags, state.tag);
  const input: Record<string, unknown> = {};
  const before = initialState(supporter);
  for (const field of TEXT_FIELDS) {
    if (!supporter) {
      if (value(field) !== null) input[field] = value(field);
    } else if (state.text[field] !== before.text[field]) {
      input[field] = value(field);
    }
  }
  if (supporter ? !sameList(tags, supporter.tags) : tags.length > 0) input.tags = tags;
  if (!supporter) for (const consent of state.consents) input[consent] = true;
  return Object.keys(errors).length > 0 ? { errors } : { input, errors };
}

/** The server's refusals keyed by the form's fields (`tags.2` → `tags`), in the panel's words where it has them. */
function serverErrors(error: ApiError, t: Translate): { fields: Record<string, string>; other: string[] } {
  const fields: Record<string, string> = {};
  const other: string[] = [];
  const known = new Set<string>([...TEXT_FIELDS, "tags"]);
  for (const issue of error.issues) {
    const head = (issue.field ?? issue.parameter ?? "").split(/[.[\]/]+/)[0] ?? "";
    const worded = new ApiError(issue.message, error.code, error.status, [issue]).fieldErrors()[head] ?? issue.message;
    if (!known.has(head)) {
      other.push(head ? `${head}: ${worded}` : worded);
      continue;
    }
    if (fields[head]) continue;
    // Checked by the schema (no code of their own): the catalog words them in the panel's language.
    fields[head] =
      !issue.code && head === "email"
        ? t("fields.email")
        : !issue.code && head === "country"
          ? t("fields.country_code")
          : worded;
  }
  return { fields, other };
}

const Field = (props: Omit<FormFieldProps, "idPrefix">) => <FormField idPrefix="supporter" {...props} />;

function SupporterForm({ supporter }: { supporter?: Supporter }) {
  const { path } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const navigate = useNavigate();
  const [state, setState] = useState<FormState>(() => initialState(supporter));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (Object.keys(errors).length === 0) return;
    formRef.current?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus();
  }, [errors]);

  const setText = (field: TextField, value: string) => setState((s) => ({ ...s, text: { ...s.text, [field]: value } }));
  const addTyped = () => setState((s) => ({ ...s, tags: withTyped(s.tags, s.tag), tag: "" }));
  const onTagKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Enter" || event.key === ",") {
      event.preventDefault();
      addTyped();
    } else if (event.key === "Backspace" && !state.tag && state.tags.length > 0) {
      setState((s) => ({ ...s, tags: s.tags.slice(0, -1) }));
    }
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setFormError(null);
    const { input, errors: clientErrors } = toInput(state, t, supporter);
    if (!input) {
      setErrors(clientErrors);
      return;
    }
    setErrors({});
    setState((s) => ({ ...s, tags: withTyped(s.tags, s.tag), tag: "" }));
    if (supporter && Object.keys(input).length === 0) {
      navigate(path(`supporters/${supporter.id}`), { state: { flash: t("panel.supporter_editor.unchanged") } });
      return;
    }
    setBusy(true);
    try {
      let id = supporter?.id;
      if (supporter) await gql(UPDATE, { id: supporter.id, input });
      else id = (await gql<{ createSupporter: { id: number } }>(CREATE, { input })).createSupporter.id;
      navigate(path(`supporters/${id}`), {
        state: { flash: supporter ? t("panel.supporter_editor.saved") : t("panel.supporter_editor.created") },
      });
    } catch (caught) {
      setBusy(false);
      if (caught instanceof ApiError && caught.issues.length > 0) {
        const { fields, other } = serverErrors(caught, t);
        setErrors(fields);
        const count = Object.keys(fields).length;
        setFormError(
          new Error(
            [count > 0 ? t("panel.supporter_editor.fields_need_attention", { count }) : "", ...other]
              .filter(Boolean)
              .join(" "),
          ),
        );
      } else {
        setFormError(caught as Error);
      }
    }
  };

  const input = (field: FieldSpec) => (
    <Field
      key={field.name}
      name={field.name}
      label={t(field.label)}
      hint={field.hint ? t(field.hint) : undefined}
      error={errors[field.name]}
      wide={field.name === "image"}
    >
      {(props) =>
        field.name === "sex" ? (
          <select {...props} name="sex" value={state.text.sex} onChange={(e) => setText("sex", e.target.value)}>
            <option value="">{t("panel.supporter_editor.sex_none")}</option>
            <option value="FEMALE">{t("panel.supporter_editor.sex_female")}</option>
            <option value="MALE">{t("panel.supporter_editor.sex_male")}</option>
          </select>
        ) : (
          <input
            {...props}
            name={field.name}
            type={field.type ?? "text"}
            maxLength={field.type === "date" ? undefined : field.max}
            autoComplete={field.autoComplete}
            autoCapitalize={field.name === "country" ? "characters" : undefined}
            value={state.text[field.name]}
            onChange={(e) => setText(field.name, e.target.value)}
          />
        )
      }
    </Field>
  );

  return (
    <form ref={formRef} className="editor" onSubmit={onSubmit} noValidate data-testid="supporter-form">
      <InlineError error={formError} />
      {GROUPS.map((group) => (
        <fieldset className="card" key={group.id} data-testid={`supporter-${group.id}`}>
          <legend>{t(group.legend)}</legend>
          <div className="form-grid">{group.fields.map(input)}</div>
        </fieldset>
      ))}

      <fieldset className="card" data-testid="supporter-tags-note">
        <legend>{t("panel.supporter_editor.tags_and_note")}</legend>
        <Field
          name="tags"
          label={t("panel.column.tags")}
          hint={t("panel.supporter_editor.tags_hint")}
          error={errors.tags}
        >
          {(props) => (
            <>
              {state.tags.length > 0 && (
                <div className="tags" data-testid="supporter-tag-list">
                  {state.tags.map((tag) => (
                    <span key={tag} className="tag">
                      {tag}{" "}
                      <button
                        type="button"
                        className="button button-ghost button-small"
                        aria-label={t("panel.supporter_editor.remove_tag", { tag })}
                        onClick={() => setState((s) => ({ ...s, tags: s.tags.filter((other) => other !== tag) }))}
                      >
                        ×
                      </button>
                    </span>
                  ))}
                </div>
              )}
              <div className="inline-actions">
                <input
                  {...props}
                  name="tag"
                  maxLength={100}
                  disabled={state.tags.length >= MAX_TAGS}
                  value={state.tag}
                  onChange={(e) => setState((s) => ({ ...s, tag: e.target.value }))}
                  onKeyDown={onTagKey}
                />
                <button
                  type="button"
                  className="button"
                  onClick={addTyped}
                  disabled={!state.tag.trim() || state.tags.length >= MAX_TAGS}
                >
                  {t("panel.supporter_editor.add_tag")}
                </button>
              </div>
            </>
          )}
        </Field>
        <Field name="note" label={t("panel.supporter.field.note")} error={errors.note}>
          {(props) => (
            <textarea
              {...props}
              name="note"
              rows={5}
              maxLength={5000}
              value={state.text.note}
              onChange={(e) => setText("note", e.target.value)}
            />
          )}
        </Field>
      </fieldset>

      {!supporter && (
        <fieldset className="card" data-testid="supporter-consents">
          <legend>{t("panel.supporter.consents")}</legend>
          <p className="hint">{t("panel.supporter_editor.consents_hint")}</p>
          {CONSENTS.map(([consent, label]) => (
            <label className="checkbox" key={consent}>
              <input
                type="checkbox"
                name={consent}
                checked={state.consents.has(consent)}
                onChange={(e) =>
                  setState((s) => {
                    const consents = new Set(s.consents);
                    if (e.target.checked) consents.add(consent);
                    else consents.delete(consent);
                    return { ...s, consents };
                  })
                }
              />
              {t(label)}
            </label>
          ))}
        </fieldset>
      )}

      <div className="form-actions sticky-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="save-supporter">
          {busy
            ? t("panel.common.saving")
            : supporter
              ? t("panel.common.save_changes")
              : t("panel.supporter_editor.create")}
        </button>
        <button type="button" className="button button-ghost" onClick={() => navigate(-1)} disabled={busy}>
          {t("panel.common.cancel")}
        </button>
      </div>
    </form>
  );
}

/** A supporter's profile, new (`supporters/new`) or edited (`supporters/:id/edit`): owners and admins. */
export function SupporterEditorPage() {
  const { id } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const pageTitle = id ? t("panel.supporter_editor.edit_title") : t("panel.collections.new_supporter");
  usePageTitle(pageTitle, org.name);
  const state = useQuery<{ supporter: Supporter | null }>(LOAD, { id }, !id || !canWrite);
  const crumbs = [{ label: t("panel.supporters.title"), to: path("supporters") }];
  if (!canWrite) {
    return (
      <>
        <PageHeader title={pageTitle} crumbs={crumbs} />
        <p className="notice">{t("panel.supporter_editor.read_only", { role: t(`panel.state.${org.role}`) })}</p>
      </>
    );
  }
  if (!id) {
    return (
      <>
        <PageHeader title={pageTitle} crumbs={crumbs} />
        <SupporterForm />
      </>
    );
  }
  return (
    <Async state={state}>
      {({ supporter }) => {
        if (!supporter) return <PageHeader title={t("panel.supporter.not_found")} crumbs={crumbs} />;
        const name = supporterName(t, supporter);
        const header = (
          <PageHeader
            title={t("panel.supporter_editor.edit_named", { name })}
            crumbs={[...crumbs, { label: name, to: path(`supporters/${supporter.id}`) }]}
          />
        );
        return supporter.erase_date ? (
          <>
            {header}
            <p className="notice">{t("panel.supporter_editor.erased")}</p>
          </>
        ) : (
          <>
            {header}
            <SupporterForm key={supporter.update_date} supporter={supporter} />
          </>
        );
      }}
    </Async>
  );
}
