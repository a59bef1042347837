import { ApiError } from "./graphql";
import { problem } from "./session";

/** How the signed-in user can confirm it is them: their second factors, or their password when they have none. */
export type StepUpMethod = "totp" | "recovery_code" | "passkey" | "password";

const VERIFY_PATH = "/admin/api/session/verify";

async function send(init: RequestInit): Promise<Response> {
  try {
    return await fetch(VERIFY_PATH, { credentials: "same-origin", ...init });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
}

export async function stepUpMethods(): Promise<StepUpMethod[]> {
  const response = await send({ headers: { accept: "application/json" } });
  if (!response.ok) throw await problem(response);
  return ((await response.json()) as { methods: StepUpMethod[] }).methods;
}

/** Confirms it is them with one of `stepUpMethods()`; the session's last check is now. */
export async function verifyStepUp(proof: { code: string } | { recovery_code: string } | { password: string }) {
  const response = await send({
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(proof),
  });
  if (!response.ok) throw await problem(response);
}

type StepUpHandler = () => Promise<boolean>;
let handler: StepUpHandler | undefined;

/** The panel's dialog registers here; `withStepUp()` asks it when a change answers `step_up_required`. */
export function setStepUpHandler(next: StepUpHandler | undefined): void {
  handler = next;
}

/** Asks the user to confirm it is them; true once they did, false if they cancelled (or nothing can ask). */
export function askStepUp(): Promise<boolean> {
  return handler ? handler() : Promise.resolve(false);
}

/**
 * A change the server may answer `step_up_required` (a GraphQL mutation, or an account route: a new
 * second factor, new recovery codes): the user confirms it is them, and the change is sent once more.
 */
export async function withStepUp<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "step_up_required") throw error;
    if (!(await askStepUp())) throw error;
    return send();
  }
}
