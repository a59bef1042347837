import { useEffect, useState } from "react";
import { passkeysSupported, verifyWithPasskey } from "../api/passkeys";
import { type StepUpMethod, setStepUpHandler, stepUpMethods, verifyStepUp } from "../api/step-up";
import { useT } from "../i18n";
import { ConfirmDialog } from "./confirm-dialog";
import { FormField } from "./form-field";
import { InlineError } from "./states";

const LABELS = {
  password: "panel.step_up.password",
  recovery_code: "panel.step_up.recovery_code",
  code: "panel.step_up.code",
} as const;

interface Pending {
  methods: StepUpMethod[];
  resolve: (confirmed: boolean) => void;
}

/**
 * "Confirm it's you": mounted once in the panel, it answers `askStepUp()` (a sensitive change refused
 * with `step_up_required`) with a dialog asking for the second factor's code, a recovery code, or the
 * password of an account without a second factor.
 */
export function StepUpDialog() {
  const t = useT();
  const [pending, setPending] = useState<Pending | null>(null);
  const [useRecovery, setUseRecovery] = useState(false);
  const [value, setValue] = useState("");
  const [passkeyError, setPasskeyError] = useState<Error | null>(null);

  useEffect(() => {
    setStepUpHandler(async () => {
      const methods = await stepUpMethods().catch(() => [] as StepUpMethod[]);
      if (methods.length === 0) return false;
      return new Promise<boolean>((resolve) => {
        setUseRecovery(false);
        setValue("");
        setPasskeyError(null);
        setPending({ methods, resolve });
      });
    });
    return () => setStepUpHandler(undefined);
  }, []);

  if (!pending) return null;
  const byPassword = pending.methods.includes("password");
  const hasCode = pending.methods.includes("totp");
  const hasRecovery = pending.methods.includes("recovery_code");
  // Only passkeys: Confirm asks the passkey; otherwise a field for the password, the app's code or a recovery code.
  const passkeyOnly = !byPassword && !hasCode && !hasRecovery;
  const field = byPassword ? "password" : useRecovery || !hasCode ? "recovery_code" : "code";
  const finish = (confirmed: boolean) => {
    pending.resolve(confirmed);
    setPending(null);
  };

  return (
    <ConfirmDialog
      open
      title={t("panel.step_up.title")}
      confirmLabel={t("panel.step_up.confirm")}
      onConfirm={async () => {
        if (passkeyOnly) await verifyWithPasskey();
        else await verifyStepUp({ [field]: value.trim() } as { code: string });
        pending.resolve(true);
      }}
      onClose={() => {
        // Closed after a success: already resolved (a second resolve is ignored); else cancelled.
        finish(false);
      }}
    >
      <p>{t("panel.step_up.why")}</p>
      {passkeyOnly ? null : (
        <FormField idPrefix="step-up" name={field} label={t(LABELS[field])}>
          {(props) => (
            <input
              {...props}
              data-testid="step-up-input"
              type={byPassword ? "password" : "text"}
              autoComplete={byPassword ? "current-password" : "one-time-code"}
              inputMode={field === "code" ? "numeric" : undefined}
              value={value}
              onChange={(event) => setValue(event.target.value)}
              // biome-ignore lint/a11y/noAutofocus: the dialog exists to ask for this one field.
              autoFocus
            />
          )}
        </FormField>
      )}
      {pending.methods.includes("passkey") && !passkeyOnly && passkeysSupported() ? (
        <button
          type="button"
          className="button"
          data-testid="step-up-passkey"
          onClick={async () => {
            setPasskeyError(null);
            try {
              await verifyWithPasskey();
              finish(true);
            } catch (caught) {
              setPasskeyError(caught as Error);
            }
          }}
        >
          {t("panel.step_up.use_passkey")}
        </button>
      ) : null}
      <InlineError error={passkeyError} />
      {hasCode && hasRecovery ? (
        <button type="button" className="button button-ghost button-small" onClick={() => setUseRecovery(!useRecovery)}>
          {t(useRecovery ? "panel.step_up.use_code" : "panel.step_up.use_recovery")}
        </button>
      ) : null}
    </ConfirmDialog>
  );
}
