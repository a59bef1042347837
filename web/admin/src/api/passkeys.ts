import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { ApiError } from "./graphql";
import { problem, type Session } from "./session";
import { withStepUp } from "./step-up";

/** A passkey of the signed-in user, as the server lists it (src/admin/passkeys.routes.ts). */
export interface Passkey {
  id: number;
  name: string;
  create_date: string;
  last_used_date: string | null;
}

const SIGN_IN_PATH = "/admin/api/session/passkey";
const ACCOUNT_PATH = "/admin/api/account/passkeys";
const VERIFY_PATH = "/admin/api/session/verify/passkey";

/** Whether this browser can use passkeys at all (WebAuthn; a secure context). */
export function passkeysSupported(): boolean {
  return typeof window !== "undefined" && typeof window.PublicKeyCredential === "function";
}

/**
 * The browser's own refusal: the person cancelled, the time ran out or no passkey of this site was
 * there ("cancelled"), or this authenticator already holds one of the user's passkeys ("already_added").
 */
export class PasskeyNotUsed extends Error {
  override name = "PasskeyNotUsed";
  constructor(
    readonly reason: "cancelled" | "already_added",
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      credentials: "same-origin",
      ...init,
      headers: { accept: "application/json", ...(init.body ? { "content-type": "application/json" } : {}) },
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) throw await problem(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

const post = <T>(path: string, body: unknown) => call<T>(path, { method: "POST", body: JSON.stringify(body) });

/** A WebAuthn ceremony in the browser; its refusals (cancel, time out, nothing to offer) become PasskeyNotUsed. */
async function ceremony<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const names = [(error as Error).name, (error as { cause?: Error }).cause?.name];
    const message = (error as Error).message;
    if (names.includes("InvalidStateError")) throw new PasskeyNotUsed("already_added", message);
    if (names.includes("NotAllowedError") || names.includes("AbortError"))
      throw new PasskeyNotUsed("cancelled", message);
    throw error;
  }
}

/** Signs in with a passkey of this site, whoever's it is: no email, no password. */
export async function signInWithPasskey(): Promise<Session> {
  const optionsJSON = await post<Parameters<typeof startAuthentication>[0]["optionsJSON"]>(
    `${SIGN_IN_PATH}/options`,
    {},
  );
  const credential = await ceremony(() => startAuthentication({ optionsJSON }));
  return post<Session>(SIGN_IN_PATH, { credential });
}

/** Confirms it is them with one of their passkeys (step-up): the session's last check is now. */
export async function verifyWithPasskey(): Promise<void> {
  const optionsJSON = await post<Parameters<typeof startAuthentication>[0]["optionsJSON"]>(
    `${VERIFY_PATH}/options`,
    {},
  );
  const credential = await ceremony(() => startAuthentication({ optionsJSON }));
  await post<void>(VERIFY_PATH, { credential });
}

export function listPasskeys(): Promise<{ items: Passkey[] }> {
  return call(ACCOUNT_PATH);
}

/** Creates a passkey on this device (or a security key, or a phone) and keeps it under `name`. */
/** Creates a passkey; a first second factor comes with recovery codes (shown once), else `recovery_codes` is null. */
export async function addPasskey(name: string): Promise<Passkey & { recovery_codes: string[] | null }> {
  // A session whose last check is older than 10 minutes confirms it's them first (step-up).
  const optionsJSON = await withStepUp(() =>
    post<Parameters<typeof startRegistration>[0]["optionsJSON"]>(`${ACCOUNT_PATH}/options`, {}),
  );
  const credential = await ceremony(() => startRegistration({ optionsJSON }));
  return post<Passkey & { recovery_codes: string[] | null }>(ACCOUNT_PATH, { credential, name });
}

export function renamePasskey(id: number, name: string): Promise<Passkey> {
  return call(`${ACCOUNT_PATH}/${id}`, { method: "PATCH", body: JSON.stringify({ name }) });
}

export function removePasskey(id: number): Promise<void> {
  return call(`${ACCOUNT_PATH}/${id}`, { method: "DELETE" });
}
