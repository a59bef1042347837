import { type FormEvent, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/graphql";
import { fetchSecondFactorStatus, verifySecondFactor } from "../api/second-factor";
import { fetchSession, type PendingSignIn, type Session, signOut } from "../api/session";
import { InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { PasskeySignIn } from "./passkey-sign-in";
import { RecoveryCodes, TotpSetup } from "./two-step-setup";

/** Back to the start of sign-in: the half-open session ends. */
async function startOver() {
  try {
    await signOut();
  } finally {
    window.location.reload();
  }
}

function StartOver() {
  const { t } = useI18n();
  return (
    <button type="button" className="button button-ghost button-block" onClick={startOver}>
      {t("panel.two_step.start_over")}
    </button>
  );
}

/** The second step of sign-in: a code of the authenticator app, or one of the recovery codes. */
function SecondFactorStep({ factors, onSignedIn }: { factors: string[]; onSignedIn: (session: Session) => void }) {
  const { t, errorMessage } = useI18n();
  const [recovery, setRecovery] = useState(!factors.includes("totp") && factors.includes("recovery_code"));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: each form's field takes the focus when it appears.
  useEffect(() => {
    inputRef.current?.focus();
  }, [recovery]);

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get("code") ?? "");
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await verifySecondFactor(recovery ? { recovery_code: value } : { code: value }));
    } catch (caught) {
      setBusy(false);
      if (caught instanceof ApiError && caught.code === "invalid_code") {
        setError(t(recovery ? "panel.two_step.wrong_recovery_code" : "panel.two_step.wrong_code"));
      } else if (caught instanceof ApiError && caught.status === 429) {
        setError(errorMessage(caught) || t("panel.sign_in.too_many_attempts"));
      } else if (caught instanceof ApiError && caught.status === 401) {
        // The half-open session expired or ended: start again.
        window.location.reload();
      } else {
        setError(errorMessage(caught as Error));
      }
      inputRef.current?.select();
    }
  };

  return (
    <form
      className="auth-card card"
      onSubmit={onSubmit}
      aria-labelledby="two-step-title"
      data-testid="second-factor-form"
    >
      <div className="brand brand-large" aria-hidden="true">
        <span className="brand-mark">D</span> Donata
      </div>
      <h1 id="two-step-title">{t("panel.two_step.title")}</h1>
      <p className="muted">{t(recovery ? "panel.two_step.recovery_intro" : "panel.two_step.code_intro")}</p>
      <InlineError error={error} />
      <div className="form-field" key={recovery ? "recovery" : "code"}>
        <label htmlFor="second-factor-code">
          {t(recovery ? "panel.two_step.recovery_label" : "panel.two_step.code_label")}
        </label>
        <input
          ref={inputRef}
          id="second-factor-code"
          name="code"
          inputMode={recovery ? "text" : "numeric"}
          autoComplete={recovery ? "off" : "one-time-code"}
          autoCapitalize="none"
          spellCheck={false}
          maxLength={recovery ? 40 : 8}
          required
        />
      </div>
      <button type="submit" className="button button-primary button-block" disabled={busy}>
        {busy ? t("panel.two_step.verifying") : t("panel.two_step.verify")}
      </button>
      {factors.includes("recovery_code") && factors.includes("totp") && (
        <button
          type="button"
          className="button button-ghost button-block"
          onClick={() => {
            setError(null);
            setRecovery((value) => !value);
          }}
          data-testid="toggle-recovery"
        >
          {recovery ? t("panel.two_step.use_app") : t("panel.two_step.use_recovery")}
        </button>
      )}
      {factors.includes("passkey") && <PasskeySignIn onSignedIn={onSignedIn} onError={setError} />}
      <StartOver />
    </form>
  );
}

/** The enrolment an organization requires, before anything else: set up the app, save the codes, go on. */
function EnrolStep({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const { t, errorMessage } = useI18n();
  const [requiredBy, setRequiredBy] = useState<string[]>([]);
  const [codes, setCodes] = useState<string[] | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    fetchSecondFactorStatus().then(
      (status) => setRequiredBy(status.required_by),
      () => setRequiredBy([]),
    );
  }, []);

  const goOn = async () => {
    try {
      const session = await fetchSession();
      if (session) onSignedIn(session);
      else window.location.reload();
    } catch (caught) {
      setError(errorMessage(caught as Error));
    }
  };

  return (
    <section className="auth-card auth-card-wide card" aria-labelledby="enrol-title" data-testid="enrol-step">
      <div className="brand brand-large" aria-hidden="true">
        <span className="brand-mark">D</span> Donata
      </div>
      <h1 id="enrol-title">{t("panel.two_step.enrol_title")}</h1>
      <InlineError error={error} />
      {codes === undefined ? (
        <>
          <p>
            {t("panel.two_step.enrol_intro", {
              organizations: requiredBy.join(", ") || t("panel.two_step.your_organization"),
            })}
          </p>
          <TotpSetup
            onConfirmed={(confirmed) => {
              if (confirmed) setCodes(confirmed);
              else void goOn();
            }}
          />
        </>
      ) : (
        <RecoveryCodes codes={codes ?? []} onDone={goOn} />
      )}
      <StartOver />
    </section>
  );
}

/** What the sign-in page shows once the password was right and a step is still to come. */
export function SignInStep({
  pending,
  onSignedIn,
}: {
  pending: PendingSignIn;
  onSignedIn: (session: Session) => void;
}) {
  return pending.stage === "enrol" ? (
    <EnrolStep onSignedIn={onSignedIn} />
  ) : (
    <SecondFactorStep factors={pending.factors} onSignedIn={onSignedIn} />
  );
}
