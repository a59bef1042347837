import { useI18n } from "../i18n";

const TONES: Record<string, string> = {
  PAID: "good",
  done: "good",
  active: "good",
  CLOSED: "neutral",
  OPEN: "info",
  PENDING: "warn",
  pending: "warn",
  draft: "neutral",
  past_due: "warn",
  FAILED: "bad",
  REFUNDED: "neutral",
  SUCCEEDED: "good",
  // A dispute's status, as Stripe names it.
  warning_needs_response: "bad",
  needs_response: "bad",
  warning_under_review: "warn",
  under_review: "warn",
  won: "good",
  lost: "bad",
  warning_closed: "neutral",
  revoked: "bad",
  archived: "neutral",
  owner: "info",
  admin: "good",
  member: "neutral",
  // An outbox message's state.
  queued: "info",
  sending: "warn",
  sent: "good",
  captured: "info",
  failed: "bad",
  cancelled: "neutral",
  // A webhook endpoint's status and a delivery's state.
  enabled: "good",
  paused: "warn",
  disabled: "bad",
  succeeded: "good",
};

/** A state's words: the catalog's panel.state.<state>, the state itself when the panel does not know it. */
export function StateBadge({ state }: { state: string | null | undefined }) {
  const { t, has } = useI18n();
  if (!state) return <span>—</span>;
  const label = has(`panel.state.${state}`) ? t(`panel.state.${state}`) : state;
  return <span className={`badge badge-${TONES[state] ?? "neutral"}`}>{label}</span>;
}

export function Tags({ tags }: { tags: readonly string[] | null | undefined }) {
  if (!tags || tags.length === 0) return <span className="muted">—</span>;
  return (
    <span className="tags">
      {tags.map((tag) => (
        <span key={tag} className="tag">
          {tag}
        </span>
      ))}
    </span>
  );
}
