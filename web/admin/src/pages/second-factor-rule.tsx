import { useState } from "react";
import { Link } from "react-router";
import { ApiError } from "../api/graphql";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { Section } from "../components/page";
import { Async, InlineError } from "../components/states";
import { useI18n } from "../i18n";

const READ = "query SecondFactorRule { organization { require_second_factor } }";
const SAVE = `mutation SaveSecondFactorRule($on: Boolean!) {
  updateOrganizationSecondFactorRule(require_second_factor: $on) { require_second_factor }
}`;

/** Settings → Security: the rule that owners and admins sign in with a second factor (owners change it). */
export function SecondFactorRuleSection() {
  const { org, isOwner, path } = useOrg();
  const { t, rich } = useI18n();
  const gql = useGraphql();
  const state = useQuery<{ organization: { require_second_factor: boolean } }>(READ);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | string | null>(null);
  const [flash, setFlash] = useState<string | null>(null);
  // The box shows the choice at once; a refusal puts it back.
  const [chosen, setChosen] = useState<boolean | null>(null);

  const save = async (on: boolean) => {
    setChosen(on);
    setBusy(true);
    setError(null);
    setFlash(null);
    try {
      await gql(SAVE, { on });
      setFlash(t(on ? "panel.second_factor_rule.turned_on" : "panel.second_factor_rule.turned_off"));
      state.reload();
    } catch (caught) {
      setChosen(null);
      setError(
        caught instanceof ApiError && caught.code === "second_factor_required"
          ? t("panel.second_factor_rule.set_up_yours_first")
          : (caught as Error),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title={t("panel.second_factor_rule.title")} id="security">
      <Async state={state}>
        {({ organization }) => (
          <div data-testid="second-factor-rule">
            <p className="muted">{t("panel.second_factor_rule.intro", { organization: org.name })}</p>
            <Flash message={flash} />
            <label className="checkbox">
              <input
                type="checkbox"
                checked={chosen ?? organization.require_second_factor}
                disabled={!isOwner || busy}
                onChange={(event) => save(event.target.checked)}
                data-testid="require-second-factor"
              />
              {t("panel.second_factor_rule.label")}
            </label>
            {error && (
              <>
                <InlineError error={error} />
                <p>
                  <Link to={path("account/security")}>{t("panel.second_factor_rule.your_security")}</Link>
                </p>
              </>
            )}
            {!isOwner && (
              <p className="muted small">
                {rich("panel.second_factor_rule.owners_only", {
                  link: (chunks) => <Link to={path("account/security")}>{chunks}</Link>,
                })}
              </p>
            )}
          </div>
        )}
      </Async>
    </Section>
  );
}
