import { useEffect, useRef, useState } from "react";
import { Link, useLocation } from "react-router";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { useSubmit } from "../app/use-submit";
import { Flash } from "../components/action-button";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { EmbedSection } from "./embed-settings";
import { PaymentsSection } from "./payment-settings";
import { SecondFactorRuleSection } from "./second-factor-rule";

interface Settings {
  bank_transfer: { account_name: string; iban: string; bic: string | null } | null;
  cover_fee: { percent: number; fixed: number };
}

const SETTINGS = `query Settings { organization { bank_transfer { account_name iban bic } cover_fee { percent fixed } } }`;
const SAVE_BANK = `mutation SaveBank($account_name: String, $iban: String, $bic: String) {
  updateOrganizationBankTransfer(account_name: $account_name, iban: $iban, bic: $bic) { slug }
}`;
const SAVE_FEE = `mutation SaveFee($percent: Float!, $fixed: Float!) { updateOrganizationCoverFee(percent: $percent, fixed: $fixed) { slug } }`;

/** `label` and `hint` are keys of the catalog. */
interface SettingsField {
  name: string;
  label: string;
  hint: string;
  numeric?: boolean;
}

const BANK_FIELDS: SettingsField[] = [
  { name: "account_name", label: "panel.settings.account_name", hint: "panel.settings.account_name_hint" },
  { name: "iban", label: "panel.settings.iban", hint: "panel.settings.iban_hint" },
  { name: "bic", label: "panel.settings.bic", hint: "panel.settings.bic_hint" },
];
const FEE_FIELDS: SettingsField[] = [
  { name: "percent", label: "panel.settings.fee_percent", hint: "panel.settings.fee_percent_hint", numeric: true },
  { name: "fixed", label: "panel.settings.fee_fixed", hint: "panel.settings.fee_fixed_hint", numeric: true },
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
  const { t } = useI18n();
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
            <label htmlFor={`${props.testId}-${field.name}`}>{t(field.label)}</label>
            <input
              id={`${props.testId}-${field.name}`}
              name={field.name}
              defaultValue={props.values[field.name] ?? ""}
              inputMode={field.numeric ? "decimal" : undefined}
              autoComplete="off"
              spellCheck={false}
              readOnly={!canWrite}
            />
            <p className="hint">{t(field.hint)}</p>
          </div>
        ))}
      </div>
      {canWrite ? (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid={`save-${props.testId}`}>
            {busy ? t("panel.common.saving") : props.saveLabel}
          </button>
        </div>
      ) : (
        <p className="muted">{t("panel.settings.read_only")}</p>
      )}
    </form>
  );
}

export function SettingsPage() {
  const { org, path } = useOrg();
  const { t, rich } = useI18n();
  usePageTitle(t("panel.nav.settings"), org.name);
  const state = useQuery<{ organization: Settings }>(SETTINGS);
  // A link to a section (`settings#bank-transfer`, from the legal profile) shows it once it is loaded.
  const { hash } = useLocation();
  const shownHash = useRef(false);
  useEffect(() => {
    if (!state.data || !hash || shownHash.current) return;
    shownHash.current = true;
    document.getElementById(decodeURIComponent(hash.slice(1)))?.scrollIntoView({ block: "start" });
  }, [state.data, hash]);
  const [flash, setFlash] = useState<string | null>(null);
  const saved = (message: string) => () => {
    setFlash(message);
    state.reload();
  };
  return (
    <>
      <PageHeader title={t("panel.nav.settings")}>
        <p className="muted">{t("panel.settings.intro", { organization: org.name })}</p>
        <p className="muted" data-testid="settings-legal-profile-link">
          {rich("panel.settings.legal_profile_link", {
            organization: org.name,
            link: (chunks) => <Link to={path("settings/legal")}>{chunks}</Link>,
          })}
        </p>
      </PageHeader>
      <Flash message={flash} />
      <PaymentsSection />
      <Async state={state}>
        {({ organization }) => (
          <>
            <Section title={t("panel.settings.bank_transfer")} id="bank-transfer">
              <SettingsForm
                key={JSON.stringify(organization.bank_transfer)}
                testId="bank-transfer"
                intro={t("panel.settings.bank_transfer_intro")}
                fields={BANK_FIELDS}
                values={organization.bank_transfer ?? {}}
                mutation={SAVE_BANK}
                saveLabel={t("panel.settings.save_bank")}
                onSaved={saved(t("panel.settings.bank_saved"))}
              />
            </Section>
            <Section title={t("panel.settings.cover_fee")} id="cover-fee">
              <SettingsForm
                key={JSON.stringify(organization.cover_fee)}
                testId="cover-fee"
                intro={t("panel.settings.cover_fee_intro", { currency: org.currency })}
                fields={FEE_FIELDS}
                values={organization.cover_fee}
                mutation={SAVE_FEE}
                saveLabel={t("panel.settings.save_fee")}
                onSaved={saved(t("panel.settings.fee_saved"))}
              />
            </Section>
          </>
        )}
      </Async>
      <EmbedSection />
      <SecondFactorRuleSection />
    </>
  );
}
