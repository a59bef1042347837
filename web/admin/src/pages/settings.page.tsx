import { useState } from "react";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { useSubmit } from "../app/use-submit";
import { Flash } from "../components/action-button";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { PaymentsSection } from "./payment-settings";

interface Settings {
  bank_transfer: { account_name: string; iban: string; bic: string | null } | null;
  cover_fee: { percent: number; fixed: number };
}

const SETTINGS = `query Settings { organization { bank_transfer { account_name iban bic } cover_fee { percent fixed } } }`;
const SAVE_BANK = `mutation SaveBank($account_name: String, $iban: String, $bic: String) {
  updateOrganizationBankTransfer(account_name: $account_name, iban: $iban, bic: $bic) { slug }
}`;
const SAVE_FEE = `mutation SaveFee($percent: Float!, $fixed: Float!) { updateOrganizationCoverFee(percent: $percent, fixed: $fixed) { slug } }`;

interface SettingsField {
  name: string;
  label: string;
  hint: string;
  numeric?: boolean;
}

const BANK_FIELDS: SettingsField[] = [
  { name: "account_name", label: "Account holder", hint: "Leave empty to use the organization's name." },
  { name: "iban", label: "IBAN", hint: "Spaces are fine; the check digits are verified." },
  { name: "bic", label: "BIC (optional)", hint: "8 or 11 characters; not needed for SEPA transfers." },
];
const FEE_FIELDS: SettingsField[] = [
  { name: "percent", label: "Percent of the gift", hint: "Default 2.9", numeric: true },
  { name: "fixed", label: "Fixed amount", hint: "In the organization's currency; default 0.30", numeric: true },
];

/** One settings form: its fields go to one mutation as they are typed (numbers as numbers). */
function SettingsForm(props: {
  testId: string;
  intro: string;
  fields: SettingsField[];
  values: Record<string, string | number | null>;
  mutation: string;
  saveLabel: string;
  onSaved: () => void;
}) {
  const { canWrite } = useOrg();
  const gql = useGraphql();
  const { busy, error, onSubmit } = useSubmit(async (data) => {
    const value = (field: SettingsField) => String(data.get(field.name) ?? "");
    await gql(
      props.mutation,
      Object.fromEntries(
        props.fields.map((field) => [field.name, field.numeric ? Number(value(field)) : value(field)]),
      ),
    );
    props.onSaved();
  });
  return (
    <form onSubmit={onSubmit} noValidate data-testid={props.testId}>
      <p className="muted">{props.intro}</p>
      <InlineError error={error} />
      <div className="form-grid">
        {props.fields.map((field) => (
          <div className="form-field" key={field.name}>
            <label htmlFor={`${props.testId}-${field.name}`}>{field.label}</label>
            <input
              id={`${props.testId}-${field.name}`}
              name={field.name}
              defaultValue={props.values[field.name] ?? ""}
              inputMode={field.numeric ? "decimal" : undefined}
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
          <button type="submit" className="button button-primary" disabled={busy} data-testid={`save-${props.testId}`}>
            {busy ? "Saving…" : props.saveLabel}
          </button>
        </div>
      ) : (
        <p className="muted">Only owners and admins can change these settings.</p>
      )}
    </form>
  );
}

export function SettingsPage() {
  const { org } = useOrg();
  usePageTitle("Settings", org.name);
  const state = useQuery<{ organization: Settings }>(SETTINGS);
  const [flash, setFlash] = useState<string | null>(null);
  const saved = (message: string) => () => {
    setFlash(message);
    state.reload();
  };
  return (
    <>
      <PageHeader title="Settings">
        <p className="muted">How {org.name} takes donations.</p>
      </PageHeader>
      <Flash message={flash} />
      <PaymentsSection />
      <Async state={state}>
        {({ organization }) => (
          <>
            <Section title="Bank transfer" id="bank-transfer">
              <SettingsForm
                key={JSON.stringify(organization.bank_transfer)}
                testId="bank-transfer"
                intro="Shown to donors who choose bank transfer, after they confirm, and printed on their receipts. Without an IBAN they are asked to contact you."
                fields={BANK_FIELDS}
                values={organization.bank_transfer ?? {}}
                mutation={SAVE_BANK}
                saveLabel="Save bank details"
                onSaved={saved("Bank details saved.")}
              />
            </Section>
            <Section title="Processing fee donors may cover" id="cover-fee">
              <SettingsForm
                key={JSON.stringify(organization.cover_fee)}
                testId="cover-fee"
                intro={`On campaigns that offer it, donors may add this estimate of the processing fee: percent of the gift plus a fixed amount (${org.currency}).`}
                fields={FEE_FIELDS}
                values={organization.cover_fee}
                mutation={SAVE_FEE}
                saveLabel="Save fee formula"
                onSaved={saved("Fee formula saved.")}
              />
            </Section>
          </>
        )}
      </Async>
    </>
  );
}
