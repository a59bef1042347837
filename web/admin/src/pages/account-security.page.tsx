import { useState } from "react";
import { fetchSecondFactorStatus, regenerateRecoveryCodes, removeTotp } from "../api/second-factor";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useLoad } from "../app/use-load";
import { ActionButton, Flash } from "../components/action-button";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async } from "../components/states";
import { useI18n } from "../i18n";
import { PasskeysSection } from "./account-passkeys";
import { AccountTabs } from "./account-tabs";
import { RecoveryCodes, TotpSetup } from "./two-step-setup";

/** What removing the app takes: a code of it, a recovery code, or the password. */
type RemovalProof = "code" | "recovery_code" | "password";

function RemoveApp({ onRemoved }: { onRemoved: () => void }) {
  const { t } = useI18n();
  const [proof, setProof] = useState<RemovalProof>("code");
  const [value, setValue] = useState("");
  const labels: Record<RemovalProof, string> = {
    code: t("panel.two_step.code_label"),
    recovery_code: t("panel.two_step.recovery_label"),
    password: t("panel.two_step.password_label"),
  };
  return (
    <ActionButton
      label={t("panel.two_step.remove")}
      title={t("panel.two_step.remove_title")}
      confirmLabel={t("panel.two_step.remove_confirm")}
      danger
      testId="remove-totp"
      onOpen={() => {
        setProof("code");
        setValue("");
      }}
      run={() =>
        removeTotp(
          proof === "password" ? { password: value } : proof === "code" ? { code: value } : { recovery_code: value },
        )
      }
      onDone={onRemoved}
    >
      <p>{t("panel.two_step.remove_body")}</p>
      <fieldset className="choice-group">
        <legend>{t("panel.two_step.remove_with")}</legend>
        {(Object.keys(labels) as RemovalProof[]).map((kind) => (
          <label key={kind} className="checkbox">
            <input
              type="radio"
              name="removal-proof"
              value={kind}
              checked={proof === kind}
              onChange={() => {
                setProof(kind);
                setValue("");
              }}
            />
            {labels[kind]}
          </label>
        ))}
      </fieldset>
      <div className="form-field">
        <label htmlFor="removal-proof-value">{labels[proof]}</label>
        <input
          id="removal-proof-value"
          type={proof === "password" ? "password" : "text"}
          autoComplete={proof === "password" ? "current-password" : proof === "code" ? "one-time-code" : "off"}
          inputMode={proof === "code" ? "numeric" : undefined}
          value={value}
          onChange={(event) => setValue(event.target.value)}
          required
        />
      </div>
    </ActionButton>
  );
}

/** Settings → your account → security: two-step verification with an authenticator app, and passkeys. */
export function AccountSecurityPage() {
  const { org } = useOrg();
  const { t } = useI18n();
  const fmt = useFormat();
  usePageTitle(t("panel.two_step.page_title"), org.name);
  const status = useLoad(fetchSecondFactorStatus);
  const [settingUp, setSettingUp] = useState(false);
  // Recovery codes just made: shown once, until the user says they saved them.
  const [codes, setCodes] = useState<string[] | null>(null);
  const [flash, setFlash] = useState<string | null>(null);

  return (
    <>
      <PageHeader title={t("panel.account.title")} />
      <AccountTabs />
      <Section title={t("panel.two_step.section_title")} id="two-step">
        <Flash message={flash} />
        {codes ? (
          <RecoveryCodes
            codes={codes}
            onDone={() => {
              setCodes(null);
              status.reload();
            }}
          />
        ) : (
          <Async state={status}>
            {(current) =>
              current.totp ? (
                <div className="two-step-status" data-testid="two-step-on">
                  <p>
                    <span className="badge badge-good">{t("panel.two_step.on")}</span>{" "}
                    {t("panel.two_step.on_since", { date: fmt.dateTime(current.totp.confirmed_date) })}
                  </p>
                  <p className="muted">
                    {current.recovery_codes_left > 0
                      ? t("panel.two_step.codes_left", { count: current.recovery_codes_left })
                      : t("panel.two_step.codes_none")}
                  </p>
                  <div className="inline-actions">
                    <ActionButton
                      label={t("panel.two_step.regenerate")}
                      title={t("panel.two_step.regenerate_title")}
                      confirmLabel={t("panel.two_step.regenerate_confirm")}
                      testId="regenerate-codes"
                      run={async () => setCodes((await regenerateRecoveryCodes()).recovery_codes)}
                    >
                      <p>{t("panel.two_step.regenerate_body")}</p>
                    </ActionButton>
                    <RemoveApp
                      onRemoved={() => {
                        setFlash(t("panel.two_step.removed"));
                        status.reload();
                      }}
                    />
                  </div>
                  {current.required_by.length > 0 && (
                    <p className="muted small">
                      {t("panel.two_step.required_by", { organizations: current.required_by.join(", ") })}
                    </p>
                  )}
                </div>
              ) : settingUp ? (
                <TotpSetup
                  onCancel={() => setSettingUp(false)}
                  onConfirmed={(confirmed) => {
                    setSettingUp(false);
                    setFlash(t("panel.two_step.turned_on"));
                    if (confirmed) setCodes(confirmed);
                    else status.reload();
                  }}
                />
              ) : (
                <div data-testid="two-step-off">
                  <p>{t("panel.two_step.off_intro")}</p>
                  {current.required_by.length > 0 && (
                    <p className="warning">
                      {t("panel.two_step.required_by", { organizations: current.required_by.join(", ") })}
                    </p>
                  )}
                  <button
                    type="button"
                    className="button button-primary"
                    onClick={() => {
                      setFlash(null);
                      setSettingUp(true);
                    }}
                    data-testid="set-up-totp"
                  >
                    {t("panel.two_step.set_up")}
                  </button>
                </div>
              )
            }
          </Async>
        )}
      </Section>
      {/* Passkeys (web/admin/src/pages/account-passkeys.tsx): the other kind of second factor. */}
      <PasskeysSection
        onRecoveryCodes={(made) => {
          setCodes(made);
          document.getElementById("two-step")?.scrollIntoView();
        }}
      />
    </>
  );
}
