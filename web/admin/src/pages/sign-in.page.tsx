import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { ApiError } from "../api/graphql";
import { type PendingSignIn, type Session, signIn } from "../api/session";
import { safeNext, useSession } from "../app/session-context";
import { usePageTitle } from "../components/page";
import { InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { PasskeySignIn } from "./passkey-sign-in";
import { SignInStep } from "./sign-in-steps";

export function SignInPage() {
  const { t, errorMessage } = useI18n();
  usePageTitle(t("panel.sign_in.title"));
  const [params] = useSearchParams();
  const { session, pending: pendingOnLoad } = useSession();
  // The password was right and a second factor (or an enrolment) is to come: that step replaces the form.
  const [step, setStep] = useState<PendingSignIn | null>(null);
  const pending = step ?? pendingOnLoad;
  const next = safeNext(params.get("next"));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const emailRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    emailRef.current?.focus();
  }, []);

  useEffect(() => {
    // Already signed in: go on (a full load, so the page gets its organization's security policy).
    const first = session?.organizations[0];
    if (session && first) window.location.replace(next ?? `/admin/o/${encodeURIComponent(first.slug)}/`);
  }, [session, next]);

  const goOn = (signedIn: Session) => {
    const first = signedIn.organizations[0];
    window.location.assign(next ?? (first ? `/admin/o/${encodeURIComponent(first.slug)}/` : "/admin/"));
  };

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const answer = await signIn(String(data.get("email") ?? ""), String(data.get("password") ?? ""));
      if ("stage" in answer) setStep(answer);
      else goOn(answer);
    } catch (caught) {
      setBusy(false);
      const apiError = caught as ApiError;
      if (apiError instanceof ApiError && apiError.status === 401) setError(t("panel.sign_in.wrong_credentials"));
      else if (apiError instanceof ApiError && apiError.status === 429)
        setError(errorMessage(apiError) || t("panel.sign_in.too_many_attempts"));
      else setError(errorMessage(apiError));
      emailRef.current?.focus();
    }
  };

  if (pending) {
    return (
      <main className="auth" id="main">
        <SignInStep pending={pending} onSignedIn={goOn} />
      </main>
    );
  }
  return (
    <main className="auth" id="main">
      <form className="auth-card card" onSubmit={onSubmit} aria-labelledby="sign-in-title" data-testid="sign-in-form">
        <div className="brand brand-large" aria-hidden="true">
          <span className="brand-mark">D</span> Donata
        </div>
        <h1 id="sign-in-title">{t("panel.sign_in.title")}</h1>
        <p className="muted">{t("panel.sign_in.intro")}</p>
        <InlineError error={error} />
        <div className="form-field">
          <label htmlFor="email">{t("panel.sign_in.email")}</label>
          <input ref={emailRef} id="email" name="email" type="email" autoComplete="username" required />
        </div>
        <div className="form-field">
          <label htmlFor="password">{t("panel.sign_in.password")}</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required />
        </div>
        {/* A full load: the server-rendered page that mails a link to choose a new password. */}
        <a href="/admin/forgot-password" data-testid="forgot-password">
          {t("panel.sign_in.forgot")}
        </a>
        <button type="submit" className="button button-primary button-block" disabled={busy}>
          {busy ? t("panel.sign_in.busy") : t("panel.sign_in.submit")}
        </button>
        <PasskeySignIn onSignedIn={goOn} onError={setError} />
      </form>
    </main>
  );
}
