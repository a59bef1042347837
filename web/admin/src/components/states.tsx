import type { ReactNode } from "react";
import { useI18n } from "../i18n";

export function Loading({ label }: { label?: string }) {
  const { t } = useI18n();
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label ?? t("panel.common.loading")}</span>
    </div>
  );
}

export function ErrorState({
  error,
  onRetry,
  title,
  retryLabel,
}: {
  error: Error;
  onRetry?: () => void;
  title?: string;
  retryLabel?: string;
}) {
  const { t, errorMessage } = useI18n();
  return (
    <div className="state state-error" role="alert">
      <strong>{title ?? t("panel.common.load_failed")}</strong>
      <p>{errorMessage(error)}</p>
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          {retryLabel ?? t("panel.common.try_again")}
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
  const { errorMessage } = useI18n();
  if (!error) return null;
  return (
    <p className="inline-error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
