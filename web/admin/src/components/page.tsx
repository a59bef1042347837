import { type ReactNode, useEffect } from "react";
import { Link } from "react-router";
import { useT } from "../i18n";

export function usePageTitle(title: string, orgName?: string) {
  useEffect(() => {
    document.title = [title, orgName, "Donata"].filter(Boolean).join(" · ");
  }, [title, orgName]);
}

export interface Crumb {
  label: string;
  to: string;
}

export function PageHeader({
  title,
  crumbs,
  actions,
  children,
}: {
  title: ReactNode;
  crumbs?: Crumb[];
  actions?: ReactNode;
  children?: ReactNode;
}) {
  const t = useT();
  return (
    <header className="page-header">
      {crumbs && crumbs.length > 0 && (
        <nav aria-label={t("panel.common.breadcrumb")} className="crumbs">
          <ol>
            {crumbs.map((crumb) => (
              <li key={crumb.to}>
                <Link to={crumb.to}>{crumb.label}</Link>
              </li>
            ))}
          </ol>
        </nav>
      )}
      <div className="page-header-row">
        <h1>{title}</h1>
        {actions && <div className="page-actions">{actions}</div>}
      </div>
      {children}
    </header>
  );
}

export function Section({
  title,
  actions,
  children,
  id,
}: {
  title: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  id?: string;
}) {
  const headingId = id ? `${id}-title` : undefined;
  return (
    <section className="card" aria-labelledby={headingId} id={id}>
      <div className="card-header">
        <h2 id={headingId}>{title}</h2>
        {actions && <div className="card-actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

/** A definition list of label/value pairs. */
export function Fields({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="fields">
      {items.map(([label, value]) => (
        <div key={label} className="field">
          <dt>{label}</dt>
          <dd>{value === null || value === undefined || value === "" ? <span className="muted">—</span> : value}</dd>
        </div>
      ))}
    </dl>
  );
}
