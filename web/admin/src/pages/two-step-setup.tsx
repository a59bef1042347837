import { type FormEvent, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import { confirmTotpEnrolment, startTotpEnrolment, type TotpEnrolment } from "../api/second-factor";
import { CopyButton } from "../components/copy-button";
import { InlineError, Loading } from "../components/states";
import { useI18n } from "../i18n";

const svgDataUrl = (svg: string) => `data:image/svg+xml;base64,${btoa(svg)}`;

/** The secret in groups of four, as it is easiest to type. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, "$1 ");

/**
 * Setting up an authenticator app: a new secret as a QR code and as text to type, then a code of the
 * app to confirm it. `onConfirmed` gets the recovery codes to show once (null: the user's codes still work).
 */
export function TotpSetup({
  onConfirmed,
  onCancel,
}: {
  onConfirmed: (recoveryCodes: string[] | null) => void;
  onCancel?: () => void;
}) {
  const { t, errorMessage } = useI18n();
  const [enrolment, setEnrolment] = useState<TotpEnrolment | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const started = useRef(false);
  const codeRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    // Once: StrictMode mounts twice, and each start replaces the secret.
    if (started.current) return;
    started.current = true;
    startTotpEnrolment().then(setEnrolment, (caught: Error) => setError(errorMessage(caught)));
  }, [errorMessage]);

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get("code") ?? "");
    setBusy(true);
    setError(null);
    try {
      onConfirmed((await confirmTotpEnrolment(code)).recovery_codes);
    } catch (caught) {
      setBusy(false);
      setError(
        caught instanceof ApiError && caught.code === "invalid_code"
          ? t("panel.two_step.wrong_code")
          : errorMessage(caught as Error),
      );
      codeRef.current?.select();
    }
  };

  if (!enrolment) return error ? <InlineError error={error} /> : <Loading />;
  return (
    <div className="two-step-setup" data-testid="totp-setup">
      <ol className="two-step-steps">
        <li>
          <p>{t("panel.two_step.scan")}</p>
          <img
            src={svgDataUrl(enrolment.qr_svg)}
            alt={t("panel.two_step.qr_alt")}
            width={184}
            height={184}
            className="two-step-qr"
            data-testid="totp-qr"
          />
          <p className="muted small">{t("panel.two_step.manual")}</p>
          <div className="secret-value">
            <code data-testid="totp-secret" translate="no">
              {grouped(enrolment.secret)}
            </code>
            <CopyButton value={enrolment.secret} label={t("panel.two_step.copy_key")} />
          </div>
        </li>
        <li>
          <form onSubmit={onSubmit} className="two-step-confirm" noValidate>
            <div className="form-field">
              <label htmlFor="totp-code">{t("panel.two_step.confirm_label")}</label>
              <input
                ref={codeRef}
                id="totp-code"
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                maxLength={8}
                required
              />
            </div>
            <InlineError error={error} />
            <div className="inline-actions">
              <button type="submit" className="button button-primary" disabled={busy} data-testid="totp-confirm">
                {busy ? t("panel.two_step.confirming") : t("panel.two_step.confirm")}
              </button>
              {onCancel && (
                <button type="button" className="button" onClick={onCancel}>
                  {t("panel.common.cancel")}
                </button>
              )}
            </div>
          </form>
        </li>
      </ol>
    </div>
  );
}

/** Recovery codes, shown once: to copy, download or print before going on. */
export function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const { t } = useI18n();
  const text = `${t("panel.two_step.codes_file_heading")}\n\n${codes.join("\n")}\n`;
  const download = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return (
    <div className="recovery-codes" data-testid="recovery-codes">
      <p className="warning">{t("panel.two_step.codes_once")}</p>
      <p>{t("panel.two_step.codes_intro")}</p>
      <ul className="recovery-code-list" translate="no">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="inline-actions">
        <CopyButton value={codes.join("\n")} label={t("panel.two_step.copy_codes")} />
        <a className="button button-small" href={download} download="donata-recovery-codes.txt">
          {t("panel.two_step.download_codes")}
        </a>
      </div>
      <div className="form-actions">
        <button type="button" className="button button-primary" onClick={onDone} data-testid="recovery-codes-saved">
          {t("panel.two_step.codes_saved")}
        </button>
      </div>
    </div>
  );
}
