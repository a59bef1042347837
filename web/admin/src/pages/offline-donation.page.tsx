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
  const valid = /^\d+$/.test(id);
  const state = useQuery<{ supporter: SupporterSummary | null }>(SUPPORTER, { id }, !valid);
  if (!valid) return null;
  if (state.loading) return <p className="hint">Looking up…</p>;
  if (state.error) return null;
  return (
    <p className="hint" aria-live="polite">
      {state.data?.supporter ? `Supporter: ${supporterName(state.data.supporter)}` : "No supporter with this ID."}
    </p>
  );
}

export function OfflineDonationPage() {
  const { org, path, canWrite } = useOrg();
  const fmt = useFormat();
  const gql = useGraphql();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  usePageTitle("Record offline donation", org.name);
  const [supporterId, setSupporterId] = useState(params.get("supporter_id") ?? "");
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | null>(null);
  // en-CA formats as YYYY-MM-DD; "today" is the organization's.
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: org.time_zone }).format(new Date());
  const crumbs = [{ label: "Donations", to: path("donations") }];

  if (!canWrite) {
    return (
      <>
        <PageHeader title="Record offline donation" crumbs={crumbs} />
        <p className="notice">Your role ({org.role}) cannot record donations.</p>
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
    if (!/^\d+(\.\d{1,2})?$/.test(amountText) || Number(amountText) <= 0)
      next.amount = "Enter an amount such as 50 or 12.50";
    if (!/^\d+$/.test(supporterId)) next.supporter_id = "Enter the supporter's ID";
    const campaign = String(data.get("campaign_id") ?? "");
    if (!/^\d+$/.test(campaign)) next.campaign_id = "Choose a campaign";
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
        setError(new Error("Some fields need attention."));
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
      <PageHeader title="Record offline donation" crumbs={crumbs}>
        <p className="muted">
          A gift received by bank transfer, cash or cheque: recorded as a done donation with a paid payment.
        </p>
      </PageHeader>
      <form className="card editor-narrow" onSubmit={onSubmit} noValidate data-testid="offline-donation-form">
        <InlineError error={error} />
        <div className="form-field">
          <label htmlFor="supporter_id">Supporter ID</label>
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
            Find it on the <Link to={path("supporters")}>supporters</Link> page.
          </p>
        </div>
        <div className="form-field">
          <label htmlFor="campaign_id">Campaign</label>
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
            <label htmlFor="amount">Amount ({org.currency})</label>
            <input id="amount" name="amount" inputMode="decimal" {...invalid("amount")} />
            {fieldError("amount")}
          </div>
          <div className="form-field">
            <label htmlFor="payment_date">Received on</label>
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
          <label htmlFor="label">How it was paid</label>
          <input id="label" name="label" list="offline-labels" placeholder="e.g. Bank transfer" {...invalid("label")} />
          <datalist id="offline-labels">
            <option value="Bank transfer" />
            <option value="Cash" />
            <option value="Cheque" />
          </datalist>
          {fieldError("label")}
        </div>
        <div className="form-field">
          <label htmlFor="note">Note</label>
          <textarea id="note" name="note" rows={3} {...invalid("note")} />
          {fieldError("note")}
        </div>
        <div className="form-actions">
          <button type="submit" className="button button-primary" data-testid="record-offline">
            Record donation…
          </button>
          <Link to={path("donations")} className="button button-ghost">
            Cancel
          </Link>
        </div>
      </form>
      <ConfirmDialog
        open={draft !== null}
        title="Record this donation?"
        confirmLabel="Record donation"
        onClose={() => setDraft(null)}
        onConfirm={record}
      >
        {draft && (
          <p>
            <strong>{fmt.money(draft.amount)}</strong> from supporter #{draft.supporter_id} to “{draft.campaignTitle}”
            {draft.label ? ` (${draft.label})` : ""}, received{" "}
            {draft.payment_date ? fmt.date(draft.payment_date) : "today"}.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}
