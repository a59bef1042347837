import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { findUserCredentials } from "./account.repo.js";
import { type SecondFactorContext, secondFactorChoices, verifySecondFactor } from "./second-factor.service.js";
import { updateSession } from "./sessions.repo.js";
import type { SessionUser } from "./sessions.service.js";
import { countCredentialAttempt, INVALID_CREDENTIALS } from "./sign-in.service.js";
import { verifyPassword } from "./users.service.js";

/** How a signed-in user confirms it is them again (step-up): their second factors, or their password without one. */
export type StepUpMethod = "totp" | "recovery_code" | "passkey" | "password";

/** The order the panel offers them in. */
const METHOD_ORDER: readonly StepUpMethod[] = ["totp", "recovery_code", "passkey"];

export async function stepUpMethods(db: Db, userId: number): Promise<StepUpMethod[]> {
  // The same choices as the second step of sign-in (src/identity/second-factor.service.ts).
  const choices = await secondFactorChoices(db, userId);
  if (choices.length === 0) return ["password"];
  return METHOD_ORDER.filter((method) => choices.includes(method));
}

export type StepUpProof = { password: string } | { code: string } | { recovery_code: string };

/**
 * Checks a proof (counted by the credential throttle first) and marks the session checked now. An account with
 * a second factor must use it: its password alone is not enough.
 */
export async function verifyStepUp(
  context: SecondFactorContext,
  session: SessionUser,
  proof: StepUpProof,
  address: string,
): Promise<void> {
  const { db, throttle } = context;
  const methods = await stepUpMethods(db, session.userId);
  if ("password" in proof) {
    if (!methods.includes("password")) {
      throw new AppError(
        "invalid_request",
        "Confirm it's you with your second factor: your password alone is not enough.",
      );
    }
    const attempt = await countCredentialAttempt(throttle, { account: { userId: session.userId }, address });
    const hash = (await findUserCredentials(db, session.userId))?.passwordHash;
    if (!hash || !(await verifyPassword(hash, proof.password))) {
      throw new AppError("invalid_credentials", INVALID_CREDENTIALS);
    }
    await attempt.succeeded();
  } else {
    if (methods.includes("password")) {
      throw new AppError("second_factor_not_set_up", "This account has no second factor: confirm with your password.");
    }
    await verifySecondFactor(context, { userId: session.userId, proof, address });
  }
  await markChecked(db, session.sessionId, !("password" in proof));
}

/** The session's last check is now (with a second factor: the session is a two-factor one from now on). */
export async function markChecked(db: Db, sessionId: number, secondFactor: boolean): Promise<void> {
  await updateSession(db, sessionId, { verifiedNow: true, ...(secondFactor ? { secondFactor: true } : {}) });
}
