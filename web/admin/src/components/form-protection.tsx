import { useState } from "react";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { useI18n } from "../i18n";
import { ActionButton } from "./action-button";

const FIELDS = `challenge_required challenge_forced under_attack challenge_until last_spike_date
  declines_last_hour declines_last_day changed_by changed_date`;

export const PROTECTION_QUERY = `query CheckoutProtection { checkoutProtection { ${FIELDS} } }`;
const SET_CHALLENGE = `mutation SetCheckoutChallenge($enabled: Boolean!) {
  setCheckoutChallenge(enabled: $enabled) { ${FIELDS} }
}`;

interface Protection {
  challenge_required: boolean;
  challenge_forced: boolean;
  under_attack: boolean;
  challenge_until: string | null;
  last_spike_date: string | null;
  declines_last_hour: number;
  declines_last_day: number;
  changed_by: string | null;
  changed_date: string | null;
}

/**
 * The donation form's card-testing defence: a loud notice while declines spike, and for owners
 * and admins the switch of the proof-of-work challenge donors solve before giving.
 */
export function FormProtection() {
  const { canWrite } = useOrg();
  const { t, rich } = useI18n();
  const fmt = useFormat();
  const graphql = useGraphql();
  const query = useQuery<{ checkoutProtection: Protection }>(PROTECTION_QUERY);
  const [changed, setChanged] = useState<Protection | null>(null);
  const state = changed ?? query.data?.checkoutProtection;
  if (!state) return null;
  const toggle = async (enabled: boolean) => {
    const result = await graphql<{ setCheckoutChallenge: Protection }>(SET_CHALLENGE, { enabled });
    setChanged(result.setCheckoutChallenge);
  };
  const status = state.challenge_required
    ? state.challenge_forced
      ? t("panel.protection.status_forced")
      : t("panel.protection.status_automatic", { until: fmt.dateTime(state.challenge_until) })
    : t("panel.protection.status_off");
  return (
    <section className="form-protection" aria-labelledby="form-protection-title" data-testid="form-protection">
      {state.under_attack && (
        <p className="warning" role="alert" data-testid="under-attack">
          {rich("panel.protection.under_attack", {
            strong: (chunks) => <strong>{chunks}</strong>,
            count: state.declines_last_hour,
            declines: fmt.number(state.declines_last_hour),
            until: fmt.dateTime(state.challenge_until),
          })}
        </p>
      )}
      <div className="notice form-protection-row">
        <div>
          <h2 id="form-protection-title" className="form-protection-title">
            {state.challenge_required ? t("panel.protection.title_on") : t("panel.protection.title_off")}
          </h2>
          <p className="muted small" data-testid="protection-status">
            {status}{" "}
            {t("panel.protection.declines_last_day", {
              count: state.declines_last_day,
              declines: fmt.number(state.declines_last_day),
            })}
            {state.changed_by &&
              ` ${t("panel.protection.last_changed", { who: state.changed_by, date: fmt.dateTime(state.changed_date) })}`}
          </p>
        </div>
        {canWrite && (
          <ActionButton
            testId="toggle-challenge"
            label={
              state.challenge_required ? t("panel.protection.turn_off_label") : t("panel.protection.turn_on_label")
            }
            title={
              state.challenge_required ? t("panel.protection.turn_off_title") : t("panel.protection.turn_on_title")
            }
            confirmLabel={state.challenge_required ? t("panel.protection.turn_off") : t("panel.protection.turn_on")}
            run={() => toggle(!state.challenge_required)}
          >
            {state.challenge_required ? t("panel.protection.turn_off_body") : t("panel.protection.turn_on_body")}
          </ActionButton>
        )}
      </div>
    </section>
  );
}
