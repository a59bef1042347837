import { useCallback, useEffect, useRef, useState } from "react";
import type { QueryState } from "./use-query";

/** Runs `load` (a request that is not GraphQL: the account's own routes) once, and again on `reload()`. */
export function useLoad<T>(load: () => Promise<T>): QueryState<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `nonce` forces a reload.
  useEffect(() => {
    let live = true;
    setState((previous) => ({ data: previous.data, loading: true }));
    loadRef.current().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [nonce]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
