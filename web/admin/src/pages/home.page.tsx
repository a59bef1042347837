import { useEffect } from "react";
import { useLocation, useNavigate } from "react-router";
import { signOut } from "../api/session";
import { signInHref, useSession } from "../app/session-context";
import { usePageTitle } from "../components/page";
import { ErrorState, Loading } from "../components/states";
import { useI18n } from "../i18n";

/** /admin/: the first organization of the signed-in user, or the sign-in page. */
export function HomePage() {
  const { t, rich } = useI18n();
  usePageTitle("Donata");
  const { session, error, reload } = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const first = session?.organizations[0];

  useEffect(() => {
    // Within the app: the sign-in page reuses the session already fetched instead of asking again.
    if (session === null) navigate(signInHref(), { replace: true });
    // A full load: the organization's page carries its own security policy (framed applications).
    else if (first) window.location.replace(`/admin/o/${encodeURIComponent(first.slug)}/${location.search}`);
  }, [session, first, location.search, navigate]);

  if (error) {
    return (
      <main className="auth" id="main">
        <ErrorState error={error} onRetry={reload} title={t("panel.shell.unreachable")} />
      </main>
    );
  }
  if (session && !first) {
    return (
      <main className="auth" id="main">
        <div className="card auth-card">
          <h1>{t("panel.home.no_organization_title")}</h1>
          <p>
            {rich("panel.home.no_organization", {
              email: <strong>{session.user.email}</strong>,
            })}
          </p>
          <button
            type="button"
            className="button"
            onClick={() => signOut().finally(() => window.location.assign("/admin/sign-in"))}
          >
            {t("panel.shell.sign_out")}
          </button>
        </div>
      </main>
    );
  }
  return (
    <main className="auth" id="main">
      <Loading />
    </main>
  );
}
