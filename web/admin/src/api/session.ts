import { ApiError, type FieldIssue } from "./graphql";

export type Role = "owner" | "admin" | "member";

export interface SessionOrganization {
  slug: string;
  name: string;
  role: Role;
  currency: string;
  time_zone: string;
}

export interface Session {
  user: { id: number; email: string; name: string | null };
  organizations: SessionOrganization[];
}

/**
 * The password was right and sign-in goes on: "second_factor" asks a code (`factors`: what may be
 * given), "enrol" sets up two-step verification first, as an organization of the user requires.
 */
export interface PendingSignIn {
  stage: "second_factor" | "enrol";
  factors: string[];
}

const SESSION_PATH = "/admin/api/session";

/** A problem+json answer as an ApiError, with its field issues (`errors[]`). */
export async function problem(response: Response): Promise<ApiError> {
  let body: { code?: string; detail?: string; title?: string; errors?: FieldIssue[] } = {};
  try {
    body = await response.json();
  } catch {
    // Not JSON: keep the status.
  }
  const fallback =
    response.status === 429
      ? "Too many attempts. Wait a moment and try again."
      : `The server answered ${response.status}.`;
  return new ApiError(
    body.detail ?? body.title ?? fallback,
    body.code ?? "http_error",
    response.status,
    body.errors ?? [],
  );
}

async function send(init: RequestInit): Promise<Response> {
  try {
    return await fetch(SESSION_PATH, { credentials: "same-origin", ...init });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
}

type SessionAnswer = Session | { signed_in: false; stage?: PendingSignIn["stage"]; factors?: string[] };

const pendingOf = (body: SessionAnswer): PendingSignIn | null =>
  "signed_in" in body && body.stage ? { stage: body.stage, factors: body.factors ?? [] } : null;

/** The signed-in user, or null when nobody is signed in (a 200 `{ "signed_in": false }`, not an error). */
export async function fetchSession(signal?: AbortSignal): Promise<Session | null> {
  return (await fetchSessionState(signal)).session;
}

/** The signed-in user, or the step of a sign-in still under way (both null: nobody is signed in). */
export async function fetchSessionState(
  signal?: AbortSignal,
): Promise<{ session: Session | null; pending: PendingSignIn | null }> {
  const response = await send({ headers: { accept: "application/json" }, signal });
  if (!response.ok) throw await problem(response);
  const body = (await response.json()) as SessionAnswer;
  return "signed_in" in body ? { session: null, pending: pendingOf(body) } : { session: body, pending: null };
}

/** Signs in with email and password: signed in, or a step still to come (a second factor, an enrolment). */
export async function signIn(email: string, password: string): Promise<Session | PendingSignIn> {
  const response = await send({
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw await problem(response);
  const body = (await response.json()) as SessionAnswer;
  return pendingOf(body) ?? (body as Session);
}

export async function signOut(): Promise<void> {
  const response = await send({ method: "DELETE" });
  if (!response.ok && response.status !== 401) throw await problem(response);
}
