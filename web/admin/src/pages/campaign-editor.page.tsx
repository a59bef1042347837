import { type FormEvent, useEffect, useRef, useState } from "react";
import { useNavigate, useParams } from "react-router";
import { removeCover, uploadCover } from "../api/cover";
import { ApiError } from "../api/graphql";
import type { Campaign } from "../api/types";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { FormField, type FormFieldProps } from "../components/form-field";
import { PageHeader, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import {
  CAMPAIGN_FIELDS,
  type CampaignContent,
  dayOf,
  donatePageUrl,
  QUESTION_TYPES,
  type QuestionType,
  SUPPORTER_FORM_FIELDS,
  startOfDay,
} from "./campaign-fields";

type EditedCampaign = Campaign & CampaignContent;

interface QuestionState {
  /** The editor's own handle of the row (React's key), kept while questions are added and removed. */
  row: number;
  key?: string;
  type: QuestionType;
  label: string;
  required: boolean;
  options: string;
}

let nextRow = 1;
const CHOICES = new Set<QuestionType>(["single_choice", "multiple_choice"]);
const impactKey = (recurring: boolean, amount: number) => `${recurring ? "r" : "o"}:${amount.toFixed(2)}`;
const parsedAmounts = (raw: string) =>
  raw
    .split(/[,;\s]+/)
    .map((part) => part.trim())
    .filter((part) => /^\d+(\.\d{1,2})?$/.test(part) && Number(part) > 0)
    .map(Number);

const LOAD = `query CampaignForEdit($id: ID!) { campaign(id: $id) { ${CAMPAIGN_FIELDS} } }`;
const CREATE = `mutation CreateCampaign($input: CampaignInput!) { createCampaign(input: $input) { id } }`;
const UPDATE = `mutation UpdateCampaign($id: ID!, $input: CampaignPatch!) { updateCampaign(id: $id, input: $input) { id } }`;

const MONEY = [
  "goal",
  "default_amount",
  "min_amount",
  "max_amount",
  "default_subscription_amount",
  "min_subscription_amount",
  "max_subscription_amount",
  "cost_example_amount",
] as const;
const FLAGS = [
  "is_goal_enabled",
  "has_one_off",
  "has_subscription",
  "allow_custom_amount",
  "allow_custom_subscription_amount",
  "allow_cover_fee",
] as const;
type MoneyField = (typeof MONEY)[number];
type FlagField = (typeof FLAGS)[number];

interface FormState {
  title: string;
  slug: string;
  code: string;
  type: string;
  privacy_note: string;
  cost_example_label: string;
  asks: string;
  asks_subscription: string;
  tags: string;
  money: Record<MoneyField, string>;
  flags: Record<FlagField, boolean>;
  shown: Set<string>;
  required: Set<string>;
  story: string;
  status: "draft" | "published";
  start: string;
  end: string;
  allow_tribute: boolean;
  impacts: Record<string, string>;
  questions: QuestionState[];
}

const text = (value: number | string | null | undefined) =>
  value === null || value === undefined ? "" : String(value);

function initialState(timeZone: string, campaign?: EditedCampaign): FormState {
  const money = Object.fromEntries(MONEY.map((field) => [field, text(campaign?.[field])])) as Record<
    MoneyField,
    string
  >;
  const flags = {
    is_goal_enabled: campaign?.is_goal_enabled ?? false,
    has_one_off: campaign?.has_one_off ?? true,
    has_subscription: campaign?.has_subscription ?? true,
    allow_custom_amount: campaign?.allow_custom_amount ?? true,
    allow_custom_subscription_amount: campaign?.allow_custom_subscription_amount ?? true,
    allow_cover_fee: campaign?.allow_cover_fee ?? false,
  };
  return {
    title: campaign?.title ?? "",
    slug: campaign?.slug ?? "",
    code: campaign?.code ?? "",
    type: campaign?.type ?? "donation",
    privacy_note: campaign?.privacy_note ?? "",
    cost_example_label: campaign?.cost_example_label ?? "",
    asks: (campaign?.asks ?? []).join(", "),
    asks_subscription: (campaign?.asks_subscription ?? []).join(", "),
    tags: (campaign?.tags ?? []).join(", "),
    money,
    flags,
    shown: new Set(campaign ? (campaign.shown_fields ?? []) : ["first_name", "last_name", "email"]),
    required: new Set(campaign ? (campaign.required_fields ?? []) : ["email"]),
    story: campaign?.story ?? "",
    status: campaign?.status ?? "published",
    start: campaign?.start_date ? dayOf(campaign.start_date, timeZone) : "",
    // end_date is the first instant without gifts: the editor shows the last day with them.
    end: campaign?.end_date ? dayOf(campaign.end_date, timeZone, true) : "",
    allow_tribute: campaign?.allow_tribute ?? false,
    impacts: Object.fromEntries(
      (campaign?.ask_impacts ?? []).map((impact) => [impactKey(impact.recurring, impact.amount), impact.text]),
    ),
    questions: (campaign?.questions ?? []).map((question) => ({
      row: nextRow++,
      key: question.key,
      type: question.type,
      label: question.label,
      required: question.required,
      options: (question.options ?? []).join("\n"),
    })),
  };
}

/** Parses the form into a campaign input; returns the client-side errors instead when there are any. */
function toInput(
  state: FormState,
  t: Translate,
  timeZone: string,
  campaign?: EditedCampaign,
): { input?: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const amount = (field: string, raw: string): number | null => {
    const value = raw.trim().replace(",", ".");
    if (!value) return null;
    if (!/^\d+(\.\d{1,2})?$/.test(value) || Number(value) <= 0) {
      errors[field] = t("panel.campaign_editor.error_amount");
      return null;
    }
    return Number(value);
  };
  const amounts = (field: string, raw: string): number[] | null => {
    const parts = raw
      .split(/[,;\s]+/)
      .map((part) => part.trim())
      .filter(Boolean);
    if (parts.length === 0) return null;
    if (parts.some((part) => !/^\d+(\.\d{1,2})?$/.test(part) || Number(part) <= 0)) {
      errors[field] = t("panel.campaign_editor.error_amounts");
      return null;
    }
    if (parts.length > 12) errors[field] = t("panel.campaign_editor.error_too_many_amounts", { max: 12 });
    return parts.map(Number);
  };
  if (!state.title.trim()) errors.title = t("panel.campaign_editor.error_title");
  const input: Record<string, unknown> = {
    title: state.title.trim(),
    slug: state.slug.trim() || null,
    code: state.code.trim() || null,
    type: state.type.trim() || "donation",
    privacy_note: state.privacy_note.trim() || null,
    cost_example_label: state.cost_example_label.trim() || null,
    asks: amounts("asks", state.asks),
    asks_subscription: amounts("asks_subscription", state.asks_subscription),
    tags: [
      ...new Set(
        state.tags
          .split(",")
          .map((tag) => tag.trim())
          .filter(Boolean),
      ),
    ],
    ...state.flags,
    shown_fields: state.shown.size > 0 ? SUPPORTER_FORM_FIELDS.map(([f]) => f).filter((f) => state.shown.has(f)) : null,
    required_fields:
      state.required.size > 0 ? SUPPORTER_FORM_FIELDS.map(([f]) => f).filter((f) => state.required.has(f)) : null,
  };
  for (const field of MONEY) input[field] = amount(field, state.money[field]);
  input.story = state.story.trim() ? state.story : null;
  input.status = state.status;
  // A day left as it was keeps its instant (one set through the API may be another time than midnight).
  const unchanged = initialState(timeZone, campaign);
  input.start_date =
    state.start === unchanged.start && campaign
      ? campaign.start_date
      : state.start
        ? startOfDay(state.start, timeZone)
        : null;
  input.end_date =
    state.end === unchanged.end && campaign
      ? campaign.end_date
      : state.end
        ? startOfDay(state.end, timeZone, true)
        : null;
  input.allow_tribute = state.allow_tribute;
  input.ask_impacts = [false, true].flatMap((recurring) =>
    parsedAmounts(recurring ? state.asks_subscription : state.asks).flatMap((value) => {
      const text = state.impacts[impactKey(recurring, value)]?.trim();
      return text ? [{ amount: value, recurring, text }] : [];
    }),
  );
  input.questions = state.questions.map((question) => ({
    ...(question.key ? { key: question.key } : {}),
    type: question.type,
    label: question.label.trim(),
    required: question.required,
    ...(CHOICES.has(question.type)
      ? {
          options: question.options
            .split("\n")
            .map((option) => option.trim())
            .filter(Boolean),
        }
      : {}),
  }));
  state.questions.forEach((question, index) => {
    if (!question.label.trim()) errors[`questions.${index}.label`] = t("panel.campaign_content.error_question_label");
  });
  return Object.keys(errors).length > 0 ? { errors } : { input, errors };
}

/**
 * The server's refusals keyed as the editor's fields are: a question's part by its row
 * (`questions.1.options`), an impact line by its amount, dates in the editor's words.
 */
function serverErrors(error: ApiError, input: Record<string, unknown>, t: Translate): Record<string, string> {
  const impacts = (input.ask_impacts ?? []) as { amount: number; recurring: boolean }[];
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const [head = "", index, part] = (issue.field ?? issue.parameter ?? "").split(/[.[\]/]+/);
    const impact = head === "ask_impacts" && index !== undefined ? impacts[Number(index)] : undefined;
    const key =
      head === "questions" && index !== undefined && part
        ? `questions.${index}.${part}`
        : impact
          ? impactKey(impact.recurring, impact.amount)
          : head;
    if (!key || out[key]) continue;
    out[key] =
      issue.code === "end_after_start"
        ? t("panel.campaign_content.error_end_after_start")
        : (new ApiError(issue.message, error.code, error.status, [issue]).fieldErrors()[head] ?? issue.message);
  }
  return out;
}

const Field = (props: Omit<FormFieldProps, "idPrefix">) => <FormField idPrefix="campaign" {...props} />;

function CampaignForm({ campaign }: { campaign?: EditedCampaign }) {
  const { org, path } = useOrg();
  const { t, intlLocale } = useI18n();
  const gql = useGraphql();
  const navigate = useNavigate();
  const [state, setState] = useState<FormState>(() => initialState(org.time_zone, campaign));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (Object.keys(errors).length === 0) return;
    formRef.current?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus();
  }, [errors]);

  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => setState((s) => ({ ...s, [key]: value }));
  const setMoney = (field: MoneyField, value: string) =>
    setState((s) => ({ ...s, money: { ...s.money, [field]: value } }));
  const setFlag = (field: FlagField, value: boolean) =>
    setState((s) => ({ ...s, flags: { ...s.flags, [field]: value } }));
  const toggle = (kind: "shown" | "required", field: string, on: boolean) =>
    setState((s) => {
      const shown = new Set(s.shown);
      const required = new Set(s.required);
      if (kind === "shown") {
        if (on) shown.add(field);
        else {
          shown.delete(field);
          required.delete(field);
        }
      } else if (on) {
        required.add(field);
        shown.add(field);
      } else required.delete(field);
      return { ...s, shown, required };
    });

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setFormError(null);
    const { input, errors: clientErrors } = toInput(state, t, org.time_zone, campaign);
    if (!input) {
      setErrors(clientErrors);
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      let id = campaign?.id;
      if (campaign) await gql(UPDATE, { id: campaign.id, input });
      else id = (await gql<{ createCampaign: { id: number } }>(CREATE, { input })).createCampaign.id;
      navigate(path(`campaigns/${id}`), {
        state: { flash: campaign ? t("panel.campaign_editor.saved") : t("panel.campaign_editor.created") },
      });
    } catch (caught) {
      setBusy(false);
      if (caught instanceof ApiError && caught.issues.length > 0) {
        const fieldErrors = serverErrors(caught, input, t);
        setErrors(fieldErrors);
        setFormError(
          new Error(t("panel.campaign_editor.fields_need_attention", { count: Object.keys(fieldErrors).length })),
        );
      } else if (caught instanceof ApiError && caught.code === "conflict") {
        setErrors({ slug: caught.message });
      } else {
        setFormError(caught as Error);
      }
    }
  };

  const money = (field: MoneyField, label: string, hint?: string) => (
    <Field name={field} label={label} hint={hint} error={errors[field]}>
      {(props) => (
        <input
          {...props}
          name={field}
          inputMode="decimal"
          value={state.money[field]}
          onChange={(event) => setMoney(field, event.target.value)}
        />
      )}
    </Field>
  );
  const flag = (field: FlagField, label: string) => (
    <label className="checkbox">
      <input
        type="checkbox"
        name={field}
        checked={state.flags[field]}
        onChange={(event) => setFlag(field, event.target.checked)}
        aria-invalid={errors[field] ? true : undefined}
      />
      {label}
    </label>
  );
  const donateUrl = campaign?.slug ? donatePageUrl(org.slug, campaign.slug) : null;
  const setQuestion = (index: number, change: Partial<QuestionState>) =>
    setState((s) => ({ ...s, questions: s.questions.map((q, i) => (i === index ? { ...q, ...change } : q)) }));
  const impactFields = (recurring: boolean) => {
    const values = parsedAmounts(recurring ? state.asks_subscription : state.asks);
    if (values.length === 0) return null;
    return (
      <div className="form-grid" data-testid={recurring ? "impacts-recurring" : "impacts-one-off"}>
        {values.map((value, index) => {
          const key = impactKey(recurring, value);
          const label = t("panel.campaign_content.impact_of", { amount: formatMoney(value, org.currency, intlLocale) });
          return (
            <Field key={key} name={`ask_impacts.${recurring ? "r" : "o"}${index}`} label={label} error={errors[key]}>
              {(props) => (
                <input
                  {...props}
                  maxLength={200}
                  placeholder={t("panel.campaign_content.impact_placeholder")}
                  value={state.impacts[key] ?? ""}
                  onChange={(e) => setState((s) => ({ ...s, impacts: { ...s.impacts, [key]: e.target.value } }))}
                />
              )}
            </Field>
          );
        })}
      </div>
    );
  };

  return (
    <form ref={formRef} className="editor" onSubmit={onSubmit} noValidate data-testid="campaign-form">
      <InlineError error={formError} />
      <fieldset className="card">
        <legend>{t("panel.campaign_editor.basics")}</legend>
        <div className="form-grid">
          <Field name="title" label={t("panel.column.title")} error={errors.title}>
            {(props) => (
              <input
                {...props}
                name="title"
                required
                value={state.title}
                onChange={(e) => set("title", e.target.value)}
              />
            )}
          </Field>
          <Field
            name="slug"
            label={t("panel.column.slug")}
            hint={t("panel.campaign_editor.slug_hint", { path: `/donate/${org.slug}/${state.slug || "…"}` })}
            error={errors.slug}
          >
            {(props) => (
              <input
                {...props}
                name="slug"
                value={state.slug}
                pattern="[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?"
                onChange={(e) => set("slug", e.target.value)}
              />
            )}
          </Field>
          <Field
            name="code"
            label={t("panel.column.code")}
            hint={t("panel.campaign_editor.code_hint")}
            error={errors.code}
          >
            {(props) => (
              <input {...props} name="code" value={state.code} onChange={(e) => set("code", e.target.value)} />
            )}
          </Field>
          <Field name="type" label={t("panel.column.type")} error={errors.type}>
            {(props) => (
              <>
                <input
                  {...props}
                  name="type"
                  list="campaign-types"
                  value={state.type}
                  onChange={(e) => set("type", e.target.value)}
                />
                <datalist id="campaign-types">
                  <option value="donation" />
                  <option value="event" />
                  <option value="membership" />
                  <option value="emergency" />
                </datalist>
              </>
            )}
          </Field>
          <Field
            name="tags"
            label={t("panel.column.tags")}
            hint={t("panel.campaign_editor.tags_hint")}
            error={errors.tags}
          >
            {(props) => (
              <input {...props} name="tags" value={state.tags} onChange={(e) => set("tags", e.target.value)} />
            )}
          </Field>
        </div>
      </fieldset>

      {campaign && <CoverCard campaign={campaign} />}

      <fieldset className="card" data-testid="campaign-content">
        <legend>{t("panel.campaign_content.title")}</legend>
        <div className="form-grid">
          <Field
            name="status"
            label={t("panel.campaign_content.status")}
            hint={t("panel.campaign_content.status_hint")}
          >
            {(props) => (
              <select
                {...props}
                name="status"
                value={state.status}
                onChange={(e) => set("status", e.target.value as FormState["status"])}
              >
                <option value="published">{t("panel.campaign_content.published")}</option>
                <option value="draft">{t("panel.campaign_content.draft")}</option>
              </select>
            )}
          </Field>
          <Field
            name="start_date"
            label={t("panel.campaign_content.start")}
            hint={t("panel.campaign_content.dates_hint", { zone: org.time_zone })}
            error={errors.start_date}
          >
            {(props) => (
              <input
                {...props}
                type="date"
                name="start_date"
                value={state.start}
                onChange={(e) => set("start", e.target.value)}
              />
            )}
          </Field>
          <Field name="end_date" label={t("panel.campaign_content.end")} error={errors.end_date}>
            {(props) => (
              <input
                {...props}
                type="date"
                name="end_date"
                value={state.end}
                onChange={(e) => set("end", e.target.value)}
              />
            )}
          </Field>
        </div>
        <Field
          name="story"
          label={t("panel.campaign_content.story")}
          hint={t("panel.campaign_content.story_hint")}
          error={errors.story}
        >
          {(props) => (
            <textarea
              {...props}
              name="story"
              rows={10}
              maxLength={20000}
              value={state.story}
              onChange={(e) => set("story", e.target.value)}
            />
          )}
        </Field>
        <label className="checkbox">
          <input
            type="checkbox"
            name="allow_tribute"
            checked={state.allow_tribute}
            onChange={(e) => set("allow_tribute", e.target.checked)}
          />
          {t("panel.campaign_content.allow_tribute")}
        </label>
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.column.goal")}</legend>
        {flag("is_goal_enabled", t("panel.campaign_editor.show_goal"))}
        <div className="form-grid">
          {money("goal", t("panel.campaign_editor.goal_label", { currency: org.currency }))}
        </div>
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.campaign.one_off_gifts")}</legend>
        {flag("has_one_off", t("panel.campaign_editor.offer_one_off"))}
        {flag("allow_custom_amount", t("panel.campaign_editor.allow_custom_amount"))}
        <div className="form-grid">
          <Field
            name="asks"
            label={t("panel.campaign.suggested_amounts")}
            hint={t("panel.campaign_editor.asks_hint")}
            error={errors.asks}
          >
            {(props) => (
              <input
                {...props}
                name="asks"
                inputMode="decimal"
                value={state.asks}
                onChange={(e) => set("asks", e.target.value)}
              />
            )}
          </Field>
          {money("default_amount", t("panel.campaign_editor.default_amount"))}
          {money("min_amount", t("panel.campaign_editor.min_amount"))}
          {money("max_amount", t("panel.campaign_editor.max_amount"))}
        </div>
        {impactFields(false)}
        {errors.ask_impacts && <p className="field-error">{errors.ask_impacts}</p>}
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.campaign.recurring_gifts")}</legend>
        {flag("has_subscription", t("panel.campaign_editor.offer_recurring"))}
        {errors.has_subscription && <p className="field-error">{errors.has_subscription}</p>}
        {flag("allow_custom_subscription_amount", t("panel.campaign_editor.allow_custom_recurring"))}
        <div className="form-grid">
          <Field
            name="asks_subscription"
            label={t("panel.campaign_editor.suggested_recurring_amounts")}
            hint={t("panel.campaign_editor.asks_recurring_hint")}
            error={errors.asks_subscription}
          >
            {(props) => (
              <input
                {...props}
                name="asks_subscription"
                inputMode="decimal"
                value={state.asks_subscription}
                onChange={(e) => set("asks_subscription", e.target.value)}
              />
            )}
          </Field>
          {money("default_subscription_amount", t("panel.campaign_editor.default_recurring"))}
          {money("min_subscription_amount", t("panel.campaign_editor.min_recurring"))}
          {money("max_subscription_amount", t("panel.campaign_editor.max_recurring"))}
        </div>
        {impactFields(true)}
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.campaign_editor.processing_fees")}</legend>
        {flag("allow_cover_fee", t("panel.campaign_editor.offer_cover_fee"))}
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.campaign_editor.form_fields")}</legend>
        <p className="hint">{t("panel.campaign_editor.form_fields_hint")}</p>
        {(errors.shown_fields || errors.required_fields) && (
          <p className="field-error" role="alert">
            {errors.shown_fields ?? errors.required_fields}
          </p>
        )}
        <div className="table-scroll">
          <table className="table table-compact field-grid" data-testid="form-fields-grid">
            <caption className="visually-hidden">{t("panel.campaign_editor.form_fields_caption")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("panel.campaign_editor.field")}</th>
                <th scope="col">{t("panel.campaign_editor.shown")}</th>
                <th scope="col">{t("panel.campaign_editor.required")}</th>
              </tr>
            </thead>
            <tbody>
              {SUPPORTER_FORM_FIELDS.map(([field, key]) => (
                <tr key={field}>
                  <th scope="row">{t(key)}</th>
                  <td>
                    <input
                      type="checkbox"
                      name={`shown_${field}`}
                      aria-label={t("panel.campaign_editor.show_field", { field: t(key) })}
                      checked={state.shown.has(field)}
                      onChange={(e) => toggle("shown", field, e.target.checked)}
                    />
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      name={`required_${field}`}
                      aria-label={t("panel.campaign_editor.require_field", { field: t(key) })}
                      checked={state.required.has(field)}
                      onChange={(e) => toggle("required", field, e.target.checked)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </fieldset>

      <fieldset className="card" data-testid="campaign-questions">
        <legend>{t("panel.campaign_content.questions")}</legend>
        <p className="hint">{t("panel.campaign_content.questions_hint")}</p>
        {errors.questions && <p className="field-error">{errors.questions}</p>}
        {state.questions.map((question, index) => (
          <div className="form-grid question" key={question.row} data-testid="question">
            <Field
              name={`questions.${index}.type`}
              label={t("panel.campaign_content.question_type")}
              error={errors[`questions.${index}.type`]}
            >
              {(props) => (
                <select
                  {...props}
                  value={question.type}
                  onChange={(e) => setQuestion(index, { type: e.target.value as QuestionType })}
                >
                  {QUESTION_TYPES.map((type) => (
                    <option key={type} value={type}>
                      {t(`panel.campaign_content.type_${type}`)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field
              name={`questions.${index}.label`}
              label={t("panel.campaign_content.question_label")}
              error={errors[`questions.${index}.label`] ?? errors[`questions.${index}.key`]}
            >
              {(props) => (
                <input
                  {...props}
                  maxLength={300}
                  value={question.label}
                  onChange={(e) => setQuestion(index, { label: e.target.value })}
                />
              )}
            </Field>
            {CHOICES.has(question.type) && (
              <Field
                name={`questions.${index}.options`}
                label={t("panel.campaign_content.question_options")}
                hint={t("panel.campaign_content.question_options_hint")}
                error={errors[`questions.${index}.options`]}
              >
                {(props) => (
                  <textarea
                    {...props}
                    rows={4}
                    value={question.options}
                    onChange={(e) => setQuestion(index, { options: e.target.value })}
                  />
                )}
              </Field>
            )}
            <label className="checkbox">
              <input
                type="checkbox"
                checked={question.required}
                onChange={(e) => setQuestion(index, { required: e.target.checked })}
              />
              {t("panel.campaign_content.question_required")}
            </label>
            <button
              type="button"
              className="button button-ghost"
              onClick={() => setState((s) => ({ ...s, questions: s.questions.filter((_, i) => i !== index) }))}
            >
              {t("panel.campaign_content.remove_question", { number: index + 1 })}
            </button>
          </div>
        ))}
        {state.questions.length < 20 && (
          <button
            type="button"
            className="button"
            data-testid="add-question"
            onClick={() =>
              setState((s) => ({
                ...s,
                questions: [
                  ...s.questions,
                  { row: nextRow++, type: "short_text", label: "", required: false, options: "" },
                ],
              }))
            }
          >
            {t("panel.campaign_content.add_question")}
          </button>
        )}
      </fieldset>

      <fieldset className="card">
        <legend>{t("panel.campaign_editor.privacy_and_cost")}</legend>
        <Field
          name="privacy_note"
          label={t("panel.campaign.privacy_note")}
          hint={t("panel.campaign_editor.privacy_hint")}
          error={errors.privacy_note}
        >
          {(props) => (
            <textarea
              {...props}
              name="privacy_note"
              rows={4}
              value={state.privacy_note}
              onChange={(e) => set("privacy_note", e.target.value)}
            />
          )}
        </Field>
        <div className="form-grid">
          {money(
            "cost_example_amount",
            t("panel.campaign_editor.cost_example_amount", { currency: org.currency }),
            t("panel.campaign_editor.cost_example_amount_hint"),
          )}
          <Field
            name="cost_example_label"
            label={t("panel.campaign_editor.cost_example_label")}
            hint={t("panel.campaign_editor.cost_example_label_hint")}
            error={errors.cost_example_label}
          >
            {(props) => (
              <input
                {...props}
                name="cost_example_label"
                value={state.cost_example_label}
                onChange={(e) => set("cost_example_label", e.target.value)}
              />
            )}
          </Field>
        </div>
      </fieldset>

      <div className="form-actions sticky-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="save-campaign">
          {busy
            ? t("panel.common.saving")
            : campaign
              ? t("panel.common.save_changes")
              : t("panel.campaign_editor.create")}
        </button>
        <button type="button" className="button button-ghost" onClick={() => navigate(-1)} disabled={busy}>
          {t("panel.common.cancel")}
        </button>
        {donateUrl && (
          <a href={donateUrl} target="_blank" rel="noopener" className="button button-ghost" data-testid="donate-link">
            {t("panel.campaign_editor.open_donation_page")}
          </a>
        )}
      </div>
    </form>
  );
}

/** The cover on the campaign's page: a PNG, JPEG or WebP file the server checks and resizes. */
function CoverCard({ campaign }: { campaign: EditedCampaign }) {
  const { org } = useOrg();
  const { t } = useI18n();
  const [cover, setCover] = useState(campaign.cover_image_url);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [message, setMessage] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const run = async (work: () => Promise<{ cover_image_url: string | null }>, done: string) => {
    setBusy(true);
    setError(null);
    setMessage("");
    try {
      setCover((await work()).cover_image_url);
      setMessage(done);
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
      if (inputRef.current) inputRef.current.value = "";
    }
  };
  const ours = cover && new URL(cover, window.location.href).origin === window.location.origin;
  return (
    <fieldset className="card" data-testid="campaign-cover">
      <legend>{t("panel.campaign_content.cover")}</legend>
      <InlineError error={error} />
      <p className="visually-hidden" role="status">
        {message}
      </p>
      {/* Laid out as the logo's card is: the preview, and beside it the file to upload. */}
      <div className="logo-row">
        {ours ? (
          <img className="cover-preview" src={cover} alt={t("panel.campaign_content.cover_current")} width={320} />
        ) : (
          <p className="muted">{t("panel.campaign_content.cover_none")}</p>
        )}
        <div className="form-field">
          <label htmlFor="campaign-cover">{t("panel.campaign_content.cover_choose")}</label>
          <input
            ref={inputRef}
            id="campaign-cover"
            type="file"
            accept="image/png,image/jpeg,image/webp"
            aria-describedby="campaign-cover-hint"
            disabled={busy}
            onChange={(event) => {
              const file = event.currentTarget.files?.[0];
              if (file) run(() => uploadCover(org.slug, campaign.id, file), t("panel.campaign_content.cover_uploaded"));
            }}
          />
          <p className="hint" id="campaign-cover-hint">
            {t("panel.campaign_content.cover_hint")}
          </p>
          {cover && (
            <button
              type="button"
              className="button"
              disabled={busy}
              data-testid="remove-cover"
              onClick={() => run(() => removeCover(org.slug, campaign.id), t("panel.campaign_content.cover_removed"))}
            >
              {t("panel.campaign_content.cover_remove")}
            </button>
          )}
        </div>
      </div>
    </fieldset>
  );
}

/** "€30" in the organization's currency, for the impact fields' labels. */
function formatMoney(value: number, currency: string, locale: string): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency, minimumFractionDigits: 0 }).format(value);
}

export function CampaignEditorPage() {
  const { id } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const pageTitle = id ? t("panel.campaign_editor.edit_title") : t("panel.collections.new_campaign");
  usePageTitle(pageTitle, org.name);
  const state = useQuery<{ campaign: EditedCampaign | null }>(LOAD, { id }, !id);
  const crumbs = [{ label: t("panel.campaigns.title"), to: path("campaigns") }];
  if (!canWrite) {
    return (
      <>
        <PageHeader title={pageTitle} crumbs={crumbs} />
        <p className="notice">{t("panel.campaign_editor.read_only", { role: t(`panel.state.${org.role}`) })}</p>
      </>
    );
  }
  if (!id) {
    return (
      <>
        <PageHeader title={t("panel.collections.new_campaign")} crumbs={crumbs} />
        <CampaignForm />
      </>
    );
  }
  return (
    <Async state={state}>
      {({ campaign }) =>
        campaign ? (
          <>
            <PageHeader
              title={t("panel.campaign_editor.edit_named", { title: campaign.title })}
              crumbs={[...crumbs, { label: campaign.title, to: path(`campaigns/${campaign.id}`) }]}
            />
            <CampaignForm key={campaign.update_date} campaign={campaign} />
          </>
        ) : (
          <PageHeader title={t("panel.campaign.not_found")} crumbs={crumbs} />
        )
      }
    </Async>
  );
}
