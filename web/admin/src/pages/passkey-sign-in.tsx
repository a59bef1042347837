import { useState } from "react";
import { ApiError } from "../api/graphql";
import { PasskeyNotUsed, passkeysSupported, signInWithPasskey } from "../api/passkeys";
import type { Session } from "../api/session";
import { useI18n } from "../i18n";

/**
 * "Sign in with a passkey" on the sign-in page: the browser offers the passkeys it holds for this site,
 * so no email or password is typed. Absent where the browser cannot use passkeys.
 */
export function PasskeySignIn({
  onSignedIn,
  onError,
}: {
  onSignedIn: (session: Session) => void;
  onError: (message: string | null) => void;
}) {
  const { t, errorMessage } = useI18n();
  const [busy, setBusy] = useState(false);
  if (!passkeysSupported()) return null;

  const run = async () => {
    setBusy(true);
    onError(null);
    try {
      onSignedIn(await signInWithPasskey());
    } catch (caught) {
      setBusy(false);
      if (caught instanceof PasskeyNotUsed) onError(t("panel.sign_in.passkey_not_used"));
      else if (caught instanceof ApiError && caught.status === 429)
        onError(errorMessage(caught) || t("panel.sign_in.too_many_attempts"));
      else onError(errorMessage(caught as Error));
    }
  };

  return (
    <>
      <p className="muted small">{t("panel.sign_in.or")}</p>
      <button type="button" className="button button-block" onClick={run} disabled={busy} data-testid="passkey-sign-in">
        {busy ? t("panel.sign_in.passkey_busy") : t("panel.sign_in.passkey")}
      </button>
    </>
  );
}
