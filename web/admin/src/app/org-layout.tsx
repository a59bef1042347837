import { useEffect, useMemo, useRef, useState } from "react";
import { Link, NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router";
import { onUnauthorized } from "../api/graphql";
import { signOut } from "../api/session";
import { ErrorState, Loading } from "../components/states";
import { OrgContext, orgContextValue } from "./org-context";
import { PaymentModeProvider, TestModeBanner } from "./payment-mode";
import { useSession } from "./session-context";

const NAV: { to: string; label: string; end?: boolean }[] = [
  { to: "", label: "Dashboard", end: true },
  { to: "campaigns", label: "Campaigns" },
  { to: "supporters", label: "Supporters" },
  { to: "donations", label: "Donations" },
  { to: "payments", label: "Payments" },
  { to: "checkouts", label: "Checkouts" },
  { to: "outbox", label: "Outbox" },
];
const NAV_SETTINGS: { to: string; label: string; end?: boolean }[] = [
  { to: "apps", label: "Apps" },
  { to: "developers", label: "Developers" },
  { to: "webhooks", label: "Webhooks" },
  { to: "members", label: "Members" },
  { to: "settings", label: "Settings", end: true },
  { to: "settings/email", label: "Email" },
  { to: "audit", label: "Audit log" },
];

/** The sign-in page's path within the router (under /admin), coming back here afterwards. */
function signInPath() {
  const here = window.location.pathname + window.location.search;
  return `/sign-in?${new URLSearchParams({ next: here })}`;
}

function OrgSwitcher({ current }: { current: string }) {
  const { session } = useSession();
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
        <span className="visually-hidden">Organization: </span>
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
                <span className="muted small">{org.role}</span>
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
        <ErrorState error={error} onRetry={reload} title="Donata could not be reached" />
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
          <h1>Organization not found</h1>
          <p>
            You are not a member of “{slug}”.{" "}
            {session.organizations.length > 0 ? "Your organizations:" : "Ask an owner to add you."}
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
      <PaymentModeProvider>
        <a className="skip-link" href="#main">
          Skip to content
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
              <span className="visually-hidden">Menu</span>
            </button>
            <Link to={value.path()} className="brand">
              <span className="brand-mark" aria-hidden="true">
                D
              </span>
              <span className="brand-text">Donata</span>
            </Link>
            <OrgSwitcher current={slug} />
            <div className="topbar-spacer" />
            <span className="user" title={session.user.email}>
              <span className="user-name">{session.user.name ?? session.user.email}</span>
              <span className={`badge badge-${org?.role === "member" ? "neutral" : "info"}`}>{org?.role}</span>
            </span>
            <button type="button" className="button button-ghost" onClick={signOutNow} data-testid="sign-out">
              Sign out
            </button>
          </header>
          <nav id="sidebar" className="sidebar" aria-label="Main">
            <ul>
              {NAV.map((item) => (
                <li key={item.label}>
                  <NavLink to={value.path(item.to)} end={item.end}>
                    {item.label}
                  </NavLink>
                </li>
              ))}
            </ul>
            <p className="sidebar-heading">Settings</p>
            <ul>
              {NAV_SETTINGS.map((item) => (
                <li key={item.label}>
                  <NavLink to={value.path(item.to)} end={item.end}>
                    {item.label}
                  </NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <main id="main" ref={mainRef} tabIndex={-1} className="main">
            <TestModeBanner />
            <Outlet />
          </main>
        </div>
      </PaymentModeProvider>
    </OrgContext.Provider>
  );
}
