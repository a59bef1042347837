import { type ReactNode, useEffect, useId, useState } from "react";
import { Loading } from "../components/states";
import { isLocaleOf, LOCALE_NAMES, LOCALES, type Locale, useI18n } from "../i18n";
import { useGraphql, useQuery } from "./use-query";

interface Preferences {
  locale: string | null;
  organization_locale: string;
}

const PREFERENCES = `query MyPreferences { myPreferences { locale organization_locale } }`;
const UPDATE_PREFERENCES = `mutation UpdateMyPreferences($input: UserPreferencesInput!) {
  updateMyPreferences(input: $input) { locale organization_locale }
}`;

/**
 * Waits for the signed-in user's saved language and the organization's before showing the
 * organization's pages, so they never flash in another language. If they cannot be read, the
 * browser's languages then English apply.
 */
export function PreferencesGate({ children }: { children: ReactNode }) {
  const { setSources } = useI18n();
  const state = useQuery<{ myPreferences: Preferences }>(PREFERENCES);
  const preferences = state.data?.myPreferences;
  const settled = preferences !== undefined || state.error !== undefined;
  useEffect(() => {
    if (preferences) {
      setSources({ saved: isLocaleOf(preferences.locale), organization: isLocaleOf(preferences.organization_locale) });
    }
  }, [preferences, setSources]);
  if (!settled) {
    return (
      <main className="auth" id="main">
        <Loading />
      </main>
    );
  }
  return <>{children}</>;
}

/** The panel's language switcher: the choice is saved on the signed-in user (users.locale). */
export function LanguageSwitcher() {
  const { locale, t, setSources, errorMessage } = useI18n();
  const gql = useGraphql();
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const choose = async (next: Locale) => {
    setBusy(true);
    setError(null);
    try {
      const { updateMyPreferences } = await gql<{ updateMyPreferences: Preferences }>(UPDATE_PREFERENCES, {
        input: { locale: next },
      });
      setSources({ saved: isLocaleOf(updateMyPreferences.locale) });
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="language-switcher">
      <label className="sidebar-heading" htmlFor={id}>
        {t("panel.shell.language")}
      </label>
      <select
        id={id}
        value={locale}
        disabled={busy}
        aria-busy={busy || undefined}
        onChange={(event) => choose(event.target.value as Locale)}
        data-testid="language-switcher"
      >
        {LOCALES.map((code) => (
          <option key={code} value={code} lang={code}>
            {LOCALE_NAMES[code]}
          </option>
        ))}
      </select>
      {error && (
        <p className="inline-error" role="alert">
          {errorMessage(error)}
        </p>
      )}
    </div>
  );
}
