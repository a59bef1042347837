import { NavLink } from "react-router";
import { useOrg } from "../app/org-context";
import { useT } from "../i18n";

/** The pages of the signed-in user's own account, one link each (the current one marked by NavLink). */
export function AccountTabs() {
  const { path } = useOrg();
  const t = useT();
  return (
    <nav className="account-tabs" aria-label={t("panel.account.tabs")}>
      <NavLink to={path("account")} end>
        {t("panel.account.tab_password_sessions")}
      </NavLink>
      <NavLink to={path("account/security")}>{t("panel.account.tab_security")}</NavLink>
    </nav>
  );
}
