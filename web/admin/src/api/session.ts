import { ApiError } from "./graphql";

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

const SESSION_PATH = "/admin/api/session";

export async function problem(response: Response): Promise<ApiError> {
  let body: { code?: string; detail?: string; title?: string } = {};
  try {
    body = await response.json();
  } catch {
    // Not JSON: keep the status.
  }
  const fallback =
    response.status === 429
      ? "Too many attempts. Wait a moment and try again."
      : `The server answered ${response.status}.`;
  return new ApiError(body.detail ?? body.title ?? fallback, body.code ?? "http_error", response.status);
}

async function send(init: RequestInit): Promise<Response> {
  try {
    return await fetch(SESSION_PATH, { credentials: "same-origin", ...init });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
}

/** The signed-in user, or null when nobody is signed in (a 200 `{ "signed_in": false }`, not an error). */
export async function fetchSession(signal?: AbortSignal): Promise<Session | null> {
  const response = await send({ headers: { accept: "application/json" }, signal });
  if (!response.ok) throw await problem(response);
  const body = (await response.json()) as Session | { signed_in: false };
  return "signed_in" in body ? null : body;
}

export async function signIn(email: string, password: string): Promise<Session> {
  const response = await send({
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw await problem(response);
  return (await response.json()) as Session;
}

export async function signOut(): Promise<void> {
  const response = await send({ method: "DELETE" });
  if (!response.ok && response.status !== 401) throw await problem(response);
}
