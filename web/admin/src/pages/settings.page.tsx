import { useState } from "react";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { useSubmit } from "../app/use-submit";
import { Flash } from "../components/action-button";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";

interface BankTransfer {
  account_name: string;
  iban: string;
  bic: string | null;
}

const SETTINGS = `query Settings { organization { bank_transfer { account_name iban bic } } }`;
const SAVE_BANK = `mutation SaveBank($account_name: String, $iban: String, $bic: String) {
  updateOrganizationBankTransfer(account_name: $account_name, iban: $iban, bic: $bic) { bank_transfer { account_name iban bic } }
}`;

const BANK_FIELDS = [
  { name: "account_name", label: "Account holder", hint: "Leave empty to use the organization's name." },
  { name: "iban", label: "IBAN", hint: "Spaces are fine; the check digits are verified." },
  { name: "bic", label: "BIC (optional)", hint: "8 or 11 characters; not needed for SEPA transfers." },
] as const;

function BankTransferForm({ current, onSaved }: { current: BankTransfer | null; onSaved: () => void }) {
  const { canWrite } = useOrg();
  const gql = useGraphql();
  const { busy, error, onSubmit } = useSubmit(async (data) => {
    await gql(SAVE_BANK, Object.fromEntries(BANK_FIELDS.map(({ name }) => [name, String(data.get(name) ?? "")])));
    onSaved();
  });
  return (
    <form onSubmit={onSubmit} noValidate data-testid="bank-transfer-form">
      <p className="muted">
        Shown to donors who choose bank transfer, after they confirm, and printed on their receipts. Without an IBAN
        they are asked to contact you.
      </p>
      <InlineError error={error} />
      <div className="form-grid">
        {BANK_FIELDS.map((field) => (
          <div className="form-field" key={field.name}>
            <label htmlFor={`bank-${field.name}`}>{field.label}</label>
            <input
              id={`bank-${field.name}`}
              name={field.name}
              defaultValue={current?.[field.name] ?? ""}
              autoComplete="off"
              spellCheck={false}
              readOnly={!canWrite}
            />
            <p className="hint">{field.hint}</p>
          </div>
        ))}
      </div>
      {canWrite ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid="save-bank-transfer">
            {busy ? "Saving…" : "Save bank details"}
          </button>
        </div>
      ) : (
        <p className="muted">Only owners and admins can change these details.</p>
      )}
    </form>
  );
}

export function SettingsPage() {
  const { org } = useOrg();
  usePageTitle("Settings", org.name);
  const state = useQuery<{ organization: { bank_transfer: BankTransfer | null } }>(SETTINGS);
  const [flash, setFlash] = useState<string | null>(null);
  return (
    <>
      <PageHeader title="Settings">
        <p className="muted">How {org.name} takes donations.</p>
      </PageHeader>
      <Flash message={flash} />
      <Section title="Bank transfer" id="bank-transfer">
        <Async state={state}>
          {({ organization }) => (
            <BankTransferForm
              key={JSON.stringify(organization.bank_transfer)}
              current={organization.bank_transfer}
              onSaved={() => {
                setFlash("Bank details saved.");
                state.reload();
              }}
            />
          )}
        </Async>
      </Section>
    </>
  );
}
