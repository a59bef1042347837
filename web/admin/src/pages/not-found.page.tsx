import { Link, useParams } from "react-router";
import { usePageTitle } from "../components/page";

export function NotFoundPage({ standalone = false }: { standalone?: boolean }) {
  usePageTitle("Not found");
  const { org } = useParams();
  const body = (
    <div className="card auth-card">
      <h1>Page not found</h1>
      <p>This address does not match any page of the admin panel.</p>
      <Link to={org ? `/o/${encodeURIComponent(org)}/` : "/"} className="button">
        Go to the dashboard
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
