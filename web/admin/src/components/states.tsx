import type { ReactNode } from "react";
import { ApiError } from "../api/graphql";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

function describe(error: Error): string {
  if (error instanceof ApiError) {
    if (error.code === "insufficient_scope") return `You do not have access to this: ${error.message}`;
    return error.message;
  }
  return error.message || "Something went wrong.";
}

export function ErrorState({
  error,
  onRetry,
  title = "This could not be loaded",
  retryLabel = "Try again",
}: {
  error: Error;
  onRetry?: () => void;
  title?: string;
  retryLabel?: string;
}) {
  return (
    <div className="state state-error" role="alert">
      <strong>{title}</strong>
      <p>{describe(error)}</p>
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          {retryLabel}
        </button>
      )}
    </div>
  );
}

export function Empty({ children, action }: { children: ReactNode; action?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p>{children}</p>
      {action}
    </div>
  );
}

/** Loading → error (with retry) → content; never blank. */
export function Async<T>({
  state,
  children,
  loadingLabel,
}: {
  state: { data: T | undefined; error: Error | undefined; loading: boolean; reload: () => void };
  children: (data: T) => ReactNode;
  loadingLabel?: string;
}) {
  if (state.error && !state.loading) return <ErrorState error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Loading label={loadingLabel} />;
  return <>{children(state.data)}</>;
}

export function InlineError({ error }: { error: Error | string | undefined | null }) {
  if (!error) return null;
  return (
    <p className="inline-error" role="alert">
      {typeof error === "string" ? error : describe(error)}
    </p>
  );
}
