import { type FormEvent, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ApiError } from "../api/graphql";
import type { SupporterSummary } from "../api/types";
import { supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { CampaignSelect } from "../components/campaign-select";
import { ConfirmDialog } from "../components/confirm-dialog";
import { PageHeader, usePageTitle } from "../components/page";
import { InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { SUPPORTER_SUMMARY } from "./collections";

const RECORD = `mutation Record($input: OfflineDonationInput!) {
  recordOfflineDonation(input: $input) { donation { id } payment { id } }
}`;
const SUPPORTER = `query SupporterName($id: ID!) { supporter(id: $id) { ${SUPPORTER_SUMMARY} } }`;

interface Draft {
  campaign_id: number;
  campaignTitle: string;
  supporter_id: number;
  amount: number;
  label: string | null;
  note: string | null;
  payment_date: string | null;
}

function SupporterHint({ id }: { id: string }) {
  const { t } = useI18n();
  const valid = /^\d+$/.test(id);
  const state = useQuery<{ supporter: SupporterSummary | null }>(SUPPORTER, { id }, !valid);
  if (!valid) return null;
  if (state.loading) return <p className="hint">{t("panel.offline.looking_up")}</p>;
  if (state.error) return null;
  return (
    <p className="hint" aria-live="polite">
      {state.data?.supporter
        ? t("panel.offline.supporter_found", { name: supporterName(t, state.data.supporter) })
        : t("panel.offline.no_supporter")}
    </p>
  );
}

export function OfflineDonationPage() {
  const { org, path, canWrite } = useOrg();
  const { t, rich } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  usePageTitle(t("panel.collections.record_offline"), org.name);
  const [supporterId, setSupporterId] = useState(params.get("supporter_id") ?? "");
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | null>(null);
  // en-CA formats as YYYY-MM-DD; "today" is the organization's.
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: org.time_zone }).format(new Date());
  const crumbs = [{ label: t("panel.donations.title"), to: path("donations") }];

  if (!canWrite) {
    return (
      <>
        <PageHeader title={t("panel.collections.record_offline")} crumbs={crumbs} />
        <p className="notice">{t("panel.offline.read_only", { role: t(`panel.state.${org.role}`) })}</p>
      </>
    );
  }

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const next: Record<string, string> = {};
    const amountText = String(data.get("amount") ?? "")
      .trim()
      .replace(",", ".");
    if (!/^\d+(\.\d{1,2})?$/.test(amountText) || Number(amountText) <= 0) next.amount = t("panel.offline.error_amount");
    if (!/^\d+$/.test(supporterId)) next.supporter_id = t("panel.offline.error_supporter");
    const campaign = String(data.get("campaign_id") ?? "");
    if (!/^\d+$/.test(campaign)) next.campaign_id = t("panel.offline.error_campaign");
    setErrors(next);
    if (Object.keys(next).length > 0) return;
    const select = event.currentTarget.elements.namedItem("campaign_id");
    const date = String(data.get("payment_date") ?? "");
    setDraft({
      campaign_id: Number(campaign),
      campaignTitle:
        select instanceof HTMLSelectElement ? (select.selectedOptions[0]?.text ?? campaign) : `#${campaign}`,
      supporter_id: Number(supporterId),
      amount: Number(amountText),
      label: String(data.get("label") ?? "").trim() || null,
      note: String(data.get("note") ?? "").trim() || null,
      // Today (or no date): the server's now; an earlier day: midday UTC of that day.
      payment_date: date && date !== today ? `${date}T12:00:00.000Z` : null,
    });
  };

  const record = async () => {
    if (!draft) return;
    const { campaignTitle: _title, ...fields } = draft;
    // Optional fields are left out rather than sent as null.
    const input = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
    try {
      const result = await gql<{ recordOfflineDonation: { donation: { id: number } } }>(RECORD, { input });
      setDraft(null);
      navigate(path(`donations/${result.recordOfflineDonation.donation.id}`));
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        setErrors(caught.fieldErrors());
        setDraft(null);
        setError(new Error(t("panel.offline.fields_need_attention")));
        return;
      }
      setError(null);
      throw caught;
    }
  };

  const invalid = (name: string) =>
    errors[name] ? { "aria-invalid": true as const, "aria-describedby": `${name}-error` } : {};
  const fieldError = (name: string) =>
    errors[name] ? (
      <p className="field-error" id={`${name}-error`}>
        {errors[name]}
      </p>
    ) : null;

  return (
    <>
      <PageHeader title={t("panel.collections.record_offline")} crumbs={crumbs}>
        <p className="muted">{t("panel.offline.intro")}</p>
      </PageHeader>
      <form className="card editor-narrow" onSubmit={onSubmit} noValidate data-testid="offline-donation-form">
        <InlineError error={error} />
        <div className="form-field">
          <label htmlFor="supporter_id">{t("panel.filter.supporter_id")}</label>
          <input
            id="supporter_id"
            name="supporter_id"
            inputMode="numeric"
            value={supporterId}
            onChange={(event) => setSupporterId(event.target.value.trim())}
            {...invalid("supporter_id")}
          />
          {fieldError("supporter_id")}
          <SupporterHint id={supporterId} />
          <p className="hint">
            {rich("panel.offline.find_supporter", {
              link: (chunks) => <Link to={path("supporters")}>{chunks}</Link>,
            })}
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="campaign_id">{t("panel.column.campaign")}</label>
          <CampaignSelect
            id="campaign_id"
            name="campaign_id"
            required
            defaultValue={params.get("campaign_id") ?? undefined}
          />
          {fieldError("campaign_id")}
        </div>
        <div className="form-grid">
          <div className="form-field">
            <label htmlFor="amount">{t("panel.offline.amount", { currency: org.currency })}</label>
            <input id="amount" name="amount" inputMode="decimal" {...invalid("amount")} />
            {fieldError("amount")}
          </div>
          <div className="form-field">
            <label htmlFor="payment_date">{t("panel.offline.received_on")}</label>
            <input
              id="payment_date"
              name="payment_date"
              type="date"
              defaultValue={today}
              max={today}
              {...invalid("payment_date")}
            />
            {fieldError("payment_date")}
          </div>
        </div>
        <div className="form-field">
          <label htmlFor="label">{t("panel.offline.how_paid")}</label>
          <input
            id="label"
            name="label"
            list="offline-labels"
            placeholder={t("panel.offline.how_paid_placeholder")}
            {...invalid("label")}
          />
          <datalist id="offline-labels">
            <option value={t("panel.offline.bank_transfer")} />
            <option value={t("panel.offline.cash")} />
            <option value={t("panel.offline.cheque")} />
          </datalist>
          {fieldError("label")}
        </div>
        <div className="form-field">
          <label htmlFor="note">{t("panel.donation.note")}</label>
          <textarea id="note" name="note" rows={3} {...invalid("note")} />
          {fieldError("note")}
        </div>
        <div className="form-actions">
          <button type="submit" className="button button-primary" data-testid="record-offline">
            {t("panel.offline.record_ellipsis")}
          </button>
          <Link to={path("donations")} className="button button-ghost">
            {t("panel.common.cancel")}
          </Link>
        </div>
      </form>
      <ConfirmDialog
        open={draft !== null}
        title={t("panel.offline.confirm_title")}
        confirmLabel={t("panel.offline.record")}
        onClose={() => setDraft(null)}
        onConfirm={record}
      >
        {draft && (
          <p>
            {rich(draft.label ? "panel.offline.confirm_body_label" : "panel.offline.confirm_body", {
              amount: <strong>{fmt.money(draft.amount)}</strong>,
              supporter: draft.supporter_id,
              campaign: draft.campaignTitle,
              label: draft.label,
              date: draft.payment_date
                ? t("panel.offline.on_date", { date: fmt.date(draft.payment_date) })
                : t("panel.offline.today"),
            })}
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}
