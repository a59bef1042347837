import { ApiError } from "./graphql";
import { problem } from "./session";

/** The signed-in user's account (src/admin/account.routes.ts): their sessions and password. */

export interface AccountSession {
  id: number;
  /** This browser's session. */
  current: boolean;
  /** active; second_factor or enrol: the password was given, the second step is still to come. */
  stage: "active" | "second_factor" | "enrol";
  browser: string | null;
  os: string | null;
  device_type: string | null;
  ip_address: string | null;
  user_agent: string | null;
  last_seen_date: string;
  create_date: string;
}

const ACCOUNT_PATH = "/admin/api/account";

async function send<T>(path: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${ACCOUNT_PATH}${path}`, {
      credentials: "same-origin",
      ...init,
      headers: { accept: "application/json", ...init.headers },
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) throw await problem(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export async function listSessions(signal?: AbortSignal): Promise<AccountSession[]> {
  return (await send<{ items: AccountSession[] }>("/sessions", { signal })).items;
}

/** Ends one of the user's sessions (their current one signs them out). */
export function endSession(id: number): Promise<void> {
  return send<void>(`/sessions/${id}`, { method: "DELETE" });
}

/** Ends every session but this one; how many ended. */
export async function endOtherSessions(): Promise<number> {
  return (await send<{ ended: number }>("/sessions", { method: "DELETE" })).ended;
}

/** Changes the password; the other sessions end. How many ended. */
export async function changePassword(currentPassword: string, newPassword: string): Promise<number> {
  const body = JSON.stringify({ current_password: currentPassword, new_password: newPassword });
  const answer = await send<{ sessions_ended: number }>("/password", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return answer.sessions_ended;
}
