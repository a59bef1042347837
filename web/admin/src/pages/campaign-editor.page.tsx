import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { useNavigate, useParams } from "react-router";
import { ApiError } from "../api/graphql";
import type { Campaign } from "../api/types";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { PageHeader, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { type Translate, useI18n } from "../i18n";
import { CAMPAIGN_FIELDS, donatePageUrl, SUPPORTER_FORM_FIELDS } from "./campaign-fields";

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
}

const text = (value: number | string | null | undefined) =>
  value === null || value === undefined ? "" : String(value);

function initialState(campaign?: Campaign): FormState {
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
  };
}

/** Parses the form into a campaign input; returns the client-side errors instead when there are any. */
function toInput(state: FormState, t: Translate): { input?: Record<string, unknown>; errors: Record<string, string> } {
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
  return Object.keys(errors).length > 0 ? { errors } : { input, errors };
}

function Field({
  name,
  label,
  hint,
  error,
  children,
}: {
  name: string;
  label: string;
  hint?: string;
  error?: string;
  children: (props: { id: string; "aria-invalid"?: true; "aria-describedby"?: string }) => ReactNode;
}) {
  const id = `campaign-${name}`;
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className={error ? "form-field has-error" : "form-field"}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": error ? true : undefined, "aria-describedby": describedBy })}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`} data-field-error={name}>
          {error}
        </p>
      )}
    </div>
  );
}

function CampaignForm({ campaign }: { campaign?: Campaign }) {
  const { org, path } = useOrg();
  const { t } = useI18n();
  const gql = useGraphql();
  const navigate = useNavigate();
  const [state, setState] = useState<FormState>(() => initialState(campaign));
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
    const { input, errors: clientErrors } = toInput(state, t);
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
        const fieldErrors = caught.fieldErrors();
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

export function CampaignEditorPage() {
  const { id } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t } = useI18n();
  const pageTitle = id ? t("panel.campaign_editor.edit_title") : t("panel.collections.new_campaign");
  usePageTitle(pageTitle, org.name);
  const state = useQuery<{ campaign: Campaign | null }>(LOAD, { id }, !id);
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
