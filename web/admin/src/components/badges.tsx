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
  revoked: "bad",
  archived: "neutral",
  owner: "info",
  admin: "good",
  member: "neutral",
};

const LABELS: Record<string, string> = { past_due: "past due" };

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
