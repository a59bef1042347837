import { ApiError } from "./graphql";
import { problem, type Session } from "./session";
import { withStepUp } from "./step-up";

/** Two-step verification (src/admin/second-factor.routes.ts): the sign-in step and the account's app and codes. */

export interface SecondFactorStatus {
  totp: { confirmed_date: string; last_used_date: string | null } | null;
  recovery_codes_left: number;
  /** The organizations whose rule asks this user for a second factor. */
  required_by: string[];
}

export interface TotpEnrolment {
  /** Base32, for typing into the app by hand. */
  secret: string;
  uri: string;
  qr_svg: string;
}

/** A code of the authenticator app, or one of the recovery codes. */
export type SecondFactorProof = { code: string } | { recovery_code: string };

async function call<T>(path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      credentials: "same-origin",
      headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) throw await problem(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

const ACCOUNT = "/admin/api/account/second-factor";

/** The second step of sign-in: the session becomes signed in. */
export const verifySecondFactor = (proof: SecondFactorProof) =>
  call<Session>("/admin/api/session/second-factor", proof);

export const fetchSecondFactorStatus = () => call<SecondFactorStatus>(ACCOUNT);

/** Asks the user to confirm it's them first when their session's last check is older than 10 minutes. */
export const startTotpEnrolment = () => withStepUp(() => call<TotpEnrolment>(`${ACCOUNT}/totp`, {}));

/** Ten recovery codes to save (null: the ones the user has still work). */
export const confirmTotpEnrolment = (code: string) =>
  call<{ recovery_codes: string[] | null }>(`${ACCOUNT}/totp/confirm`, { code });

export const regenerateRecoveryCodes = () =>
  withStepUp(() => call<{ recovery_codes: string[] }>(`${ACCOUNT}/recovery-codes`, {}));

export const removeTotp = (proof: SecondFactorProof | { password: string }) =>
  call<void>(`${ACCOUNT}/totp/remove`, proof);
