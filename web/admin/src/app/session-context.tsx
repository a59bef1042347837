import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from "react";
import { fetchSessionState, type PendingSignIn, type Session } from "../api/session";

interface SessionState {
  /** undefined while loading; null when nobody is signed in. */
  session: Session | null | undefined;
  /** A sign-in still under way (the password was right; a second factor or an enrolment is to come). */
  pending: PendingSignIn | null;
  error: Error | undefined;
  reload: () => void;
}

const SessionContext = createContext<SessionState | null>(null);

type Loaded = Awaited<ReturnType<typeof fetchSessionState>>;

let loading: Promise<Loaded> | undefined;

/** One request at a time, shared: a remount (React's StrictMode mounts twice) does not ask again. */
function loadSession(): Promise<Loaded> {
  loading ??= fetchSessionState().finally(() => {
    loading = undefined;
  });
  return loading;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [pending, setPending] = useState<PendingSignIn | null>(null);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [nonce, setNonce] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `nonce` forces a reload.
  useEffect(() => {
    let current = true;
    setError(undefined);
    loadSession().then(
      (loaded) => {
        if (!current) return;
        setPending(loaded.pending);
        setSession(loaded.session);
      },
      (caught: Error) => current && setError(caught),
    );
    return () => {
      current = false;
    };
  }, [nonce]);

  const reload = useCallback(() => {
    setSession(undefined);
    setNonce((n) => n + 1);
  }, []);
  return <SessionContext.Provider value={{ session, pending, error, reload }}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside SessionProvider");
  return value;
}

/** Where to go after signing in: only a path of this panel, never another site. */
export function safeNext(next: string | null): string | null {
  if (!next?.startsWith("/admin/") || next.startsWith("//") || next.includes("\\")) return null;
  return next;
}

export function signInHref(next?: string): string {
  return next ? `/sign-in?${new URLSearchParams({ next })}` : "/sign-in";
}
