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

const LABELS: Record<string, string> = {
  past_due: "past due",
  warning_needs_response: "inquiry: needs response",
  needs_response: "needs response",
  warning_under_review: "inquiry: under review",
  under_review: "under review",
  warning_closed: "inquiry closed",
};

export function StateBadge({ state }: { state: string | null | undefined }) {
  if (!state) return <span>—</span>;
  return <span className={`badge badge-${TONES[state] ?? "neutral"}`}>{LABELS[state] ?? state}</span>;
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
