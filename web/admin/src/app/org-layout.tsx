import { useEffect, useMemo, useRef, useState } from "react";
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router";
import { onUnauthorized } from "../api/graphql";
import { signOut } from "../api/session";
import { ErrorState, Loading } from "../components/states";
import { useI18n } from "../i18n";
import { LanguageSwitcher, PreferencesGate } from "./language";
import { OrgContext, orgContextValue } from "./org-context";
import { PaymentModeProvider, TestModeBanner } from "./payment-mode";
import { useSession } from "./session-context";

/** The navigation: each item's label is its key in the catalog. */
const NAV: { to: string; label: string; end?: boolean }[] = [
  { to: "", label: "panel.nav.dashboard", end: true },
  { to: "campaigns", label: "panel.nav.campaigns" },
  { to: "supporters", label: "panel.nav.supporters" },
  { to: "donations", label: "panel.nav.donations" },
  { to: "payments", label: "panel.nav.payments" },
  { to: "checkouts", label: "panel.nav.checkouts" },
  { to: "retention", label: "panel.nav.retention" },
  { to: "imports", label: "panel.nav.imports" },
  { to: "outbox", label: "panel.nav.outbox" },
];
const NAV_SETTINGS: { to: string; label: string; end?: boolean }[] = [
  { to: "apps", label: "panel.nav.apps" },
  { to: "developers", label: "panel.nav.developers" },
  { to: "webhooks", label: "panel.nav.webhooks" },
  { to: "members", label: "panel.nav.members" },
  { to: "settings", label: "panel.nav.settings", end: true },
  { to: "settings/email", label: "panel.nav.email" },
  { to: "settings/legal", label: "panel.nav.legal_profile" },
  { to: "audit", label: "panel.nav.audit" },
];

/** The sign-in page's path within the router (under /admin), coming back here afterwards. */
function signInPath() {
  const here = window.location.pathname + window.location.search;
  return `/sign-in?${new URLSearchParams({ next: here })}`;
}

function OrgSwitcher({ current }: { current: string }) {
  const { session } = useSession();
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent | KeyboardEvent) => {
      if (event instanceof KeyboardEvent && event.key !== "Escape") return;
      if (event instanceof MouseEvent && ref.current?.contains(event.target as Node)) return;
      setOpen(false);
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, [open]);
  const organizations = session?.organizations ?? [];
  const currentOrg = organizations.find((org) => org.slug === current);
  if (organizations.length < 2) {
    return <span className="org-name">{currentOrg?.name ?? current}</span>;
  }
  return (
    <div className="menu" ref={ref}>
      <button
        type="button"
        className="menu-button org-button"
        aria-expanded={open}
        aria-controls="org-menu"
        onClick={() => setOpen((value) => !value)}
        data-testid="org-switcher"
      >
        <span className="visually-hidden">{t("panel.shell.organization")} </span>
        {currentOrg?.name ?? current} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <ul id="org-menu" className="menu-list">
          {organizations.map((org) => (
            <li key={org.slug}>
              {/* A full page load: each organization's page has its own security policy. */}
              <a
                href={`/admin/o/${encodeURIComponent(org.slug)}/`}
                aria-current={org.slug === current ? "true" : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  window.location.assign(`/admin/o/${encodeURIComponent(org.slug)}/`);
                }}
              >
                <span>{org.name}</span>
                <span className="muted small">{t(`panel.state.${org.role}`)}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function OrgLayout() {
  const { org: slug = "" } = useParams();
  const { session, error, reload } = useSession();
  const { t } = useI18n();
  const location = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const [navOpen, setNavOpen] = useState(false);
  const firstPath = useRef(location.pathname);

  useEffect(() => onUnauthorized(() => window.location.assign(`/admin${signInPath()}`)), []);
  const navigate = useNavigate();
  useEffect(() => {
    // Within the app, so the sign-in page does not fetch the session a second time.
    if (session === null) navigate(signInPath(), { replace: true });
  }, [session, navigate]);

  // Move focus to the new page (not on the first load, nor when only filters change).
  useEffect(() => {
    setNavOpen(false);
    if (location.pathname === firstPath.current) return;
    firstPath.current = location.pathname;
    mainRef.current?.focus();
    window.scrollTo(0, 0);
  }, [location.pathname]);

  const org = session?.organizations.find((candidate) => candidate.slug === slug);
  const value = useMemo(() => (session && org ? orgContextValue(session, org) : null), [session, org]);

  if (error) {
    return (
      <main className="auth" id="main">
        <ErrorState error={error} onRetry={reload} title={t("panel.shell.unreachable")} />
      </main>
    );
  }
  if (!session) {
    return (
      <main className="auth" id="main">
        <Loading />
      </main>
    );
  }
  if (!value) {
    return (
      <main className="auth" id="main">
        <div className="card auth-card">
          <h1>{t("panel.shell.organization_not_found")}</h1>
          <p>
            {t("panel.shell.not_a_member", { slug })}{" "}
            {session.organizations.length > 0 ? t("panel.shell.your_organizations") : t("panel.shell.ask_an_owner")}
          </p>
          <ul>
            {session.organizations.map((candidate) => (
              <li key={candidate.slug}>
                <a href={`/admin/o/${encodeURIComponent(candidate.slug)}/`}>{candidate.name}</a>
              </li>
            ))}
          </ul>
        </div>
      </main>
    );
  }

  const signOutNow = async () => {
    try {
      await signOut();
    } finally {
      window.location.assign("/admin/sign-in");
    }
  };

  return (
    <OrgContext.Provider value={value}>
      <PreferencesGate>
        <PaymentModeProvider>
          <a className="skip-link" href="#main">
            {t("panel.shell.skip_to_content")}
          </a>
          <div className={navOpen ? "shell nav-open" : "shell"}>
            <header className="topbar">
              <button
                type="button"
                className="nav-toggle"
                aria-expanded={navOpen}
                aria-controls="sidebar"
                onClick={() => setNavOpen((open) => !open)}
              >
                <span aria-hidden="true">☰</span>
                <span className="visually-hidden">{t("panel.shell.menu")}</span>
              </button>
              <Link to={value.path()} className="brand" aria-label="Donata">
                <span className="brand-mark" aria-hidden="true">
                  D
                </span>
                <span className="brand-text">Donata</span>
              </Link>
              <OrgSwitcher current={slug} />
              <div className="topbar-spacer" />
              <span className="user" title={session.user.email}>
                <span className="user-name">{session.user.name ?? session.user.email}</span>
                <span className={`badge badge-${org?.role === "member" ? "neutral" : "info"}`}>
                  {org && t(`panel.state.${org.role}`)}
                </span>
              </span>
              <NavLink to={value.path("account")} className="button button-ghost" data-testid="your-account">
                <svg className="account-link-icon" aria-hidden="true" viewBox="0 0 20 20" width="18" height="18">
                  <circle cx="10" cy="6.5" r="3.5" fill="none" stroke="currentColor" strokeWidth="1.8" />
                  <path
                    d="M3 17.5c1-3.6 3.7-5.3 7-5.3s6 1.7 7 5.3"
                    fill="none"
                    stroke="currentColor"
                    strokeWidth="1.8"
                  />
                </svg>
                <span className="account-link-text">{t("panel.shell.your_account")}</span>
              </NavLink>
              <button type="button" className="button button-ghost" onClick={signOutNow} data-testid="sign-out">
                {t("panel.shell.sign_out")}
              </button>
            </header>
            <nav id="sidebar" className="sidebar" aria-label={t("panel.shell.main_navigation")}>
              <ul>
                {NAV.map((item) => (
                  <li key={item.label}>
                    <NavLink to={value.path(item.to)} end={item.end}>
                      {t(item.label)}
                    </NavLink>
                  </li>
                ))}
              </ul>
              <p className="sidebar-heading">{t("panel.nav.settings_heading")}</p>
              <ul>
                {NAV_SETTINGS.map((item) => (
                  <li key={item.label}>
                    <NavLink to={value.path(item.to)} end={item.end}>
                      {t(item.label)}
                    </NavLink>
                  </li>
                ))}
              </ul>
              <LanguageSwitcher />
            </nav>
            <main id="main" ref={mainRef} tabIndex={-1} className="main">
              <TestModeBanner />
              <Outlet />
            </main>
          </div>
        </PaymentModeProvider>
      </PreferencesGate>
    </OrgContext.Provider>
  );
}
