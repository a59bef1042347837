import { useState } from "react";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
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
      ? "Donors solve a short proof-of-work check before giving (turned on by an admin)."
      : `Donors solve a short proof-of-work check before giving, automatically until ${fmt.dateTime(state.challenge_until)}.`
    : "Donors give without a check. It turns on by itself when declined cards spike.";
  return (
    <section className="form-protection" aria-labelledby="form-protection-title" data-testid="form-protection">
      {state.under_attack && (
        <p className="warning" role="alert" data-testid="under-attack">
          <strong>Your donation form is under a card-testing attack.</strong> {fmt.number(state.declines_last_hour)}{" "}
          declined payments in the last hour. The challenge is on until {fmt.dateTime(state.challenge_until)}.
        </p>
      )}
      <div className="notice form-protection-row">
        <div>
          <h2 id="form-protection-title" className="form-protection-title">
            Donation form protection: {state.challenge_required ? "challenge on" : "challenge off"}
          </h2>
          <p className="muted small" data-testid="protection-status">
            {status} {fmt.number(state.declines_last_day)} declined payments in the last 24 hours.
            {state.changed_by && ` Last changed by ${state.changed_by} on ${fmt.dateTime(state.changed_date)}.`}
          </p>
        </div>
        {canWrite && (
          <ActionButton
            testId="toggle-challenge"
            label={state.challenge_required ? "Turn the challenge off" : "Turn the challenge on"}
            title={state.challenge_required ? "Turn the challenge off?" : "Turn the challenge on?"}
            confirmLabel={state.challenge_required ? "Turn off" : "Turn on"}
            run={() => toggle(!state.challenge_required)}
          >
            {state.challenge_required
              ? "Donors will no longer solve a check before giving. It turns on again by itself if declines spike."
              : "Every donor's browser will solve a short proof-of-work check (a second or two) before the gift is sent, until you turn it off."}
          </ActionButton>
        )}
      </div>
    </section>
  );
}
