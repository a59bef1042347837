import { Link, useParams } from "react-router";
import { usePageTitle } from "../components/page";
import { useT } from "../i18n";

export function NotFoundPage({ standalone = false }: { standalone?: boolean }) {
  const t = useT();
  usePageTitle(t("panel.not_found.title"));
  const { org } = useParams();
  const body = (
    <div className="card auth-card">
      <h1>{t("panel.not_found.heading")}</h1>
      <p>{t("panel.not_found.body")}</p>
      <Link to={org ? `/o/${encodeURIComponent(org)}/` : "/"} className="button">
        {t("panel.not_found.to_dashboard")}
      </Link>
    </div>
  );
  return standalone ? (
    <main className="auth" id="main">
      {body}
    </main>
  ) : (
    body
  );
}
