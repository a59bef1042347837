import { useCallback, useEffect, useRef, useState } from "react";
import { graphql } from "../api/graphql";
import { useOrg } from "./org-context";

export interface QueryState<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs a GraphQL query for the current organization whenever `query` or `variables` change. */
export function useQuery<T>(query: string, variables: Record<string, unknown> = {}, skip = false): QueryState<T> {
  const { org } = useOrg();
  const key = JSON.stringify(variables);
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: !skip });
  const [nonce, setNonce] = useState(0);
  const variablesRef = useRef(variables);
  variablesRef.current = variables;

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the variables; `nonce` forces a reload.
  useEffect(() => {
    if (skip) return;
    const controller = new AbortController();
    setState((previous) => ({ data: previous.data, loading: true }));
    graphql<T>(org.slug, query, variablesRef.current, controller.signal).then(
      (data) => setState({ data, loading: false }),
      (error: Error) => {
        if (error.name !== "AbortError") setState({ error, loading: false });
      },
    );
    return () => controller.abort();
  }, [org.slug, query, key, nonce, skip]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A function running GraphQL mutations for the current organization. */
export function useGraphql() {
  const { org } = useOrg();
  return useCallback(
    <T>(query: string, variables: Record<string, unknown> = {}) => graphql<T>(org.slug, query, variables),
    [org.slug],
  );
}
