import { AppError } from "../errors/app-error.js";
import type { Actor } from "./actor.js";

/** How long a sign-in check (password, second factor, passkey) covers a sensitive change: 10 minutes. */
export const STEP_UP_SECONDS = 10 * 60;

/**
 * Sensitive changes (connecting a processor, new payout details, a new owner, the second-factor rule
 * turned off, a new second factor or new recovery codes) ask a member to prove it is them again when their session's last check is older than
 * 10 minutes: 403 `step_up_required`, and the panel asks for the second factor (or the password of an
 * account without one), then retries. Applications never reach these changes (members-only permissions).
 */
export function requireRecentCheck(actor: Actor, now: Date = new Date()): void {
  if (actor.kind !== "member") return;
  requireRecentVerification(actor.verifiedDate, now);
}

/**
 * The same rule for the panel's own account routes, which read the session itself: adding a second
 * factor (an authenticator app, a passkey) and new recovery codes. A stolen session cookie alone must
 * not plant a factor of its own that outlives a password change.
 */
export function requireRecentVerification(verifiedDate: Date | undefined, now: Date = new Date()): void {
  const checked = verifiedDate?.getTime() ?? 0;
  if (now.getTime() - checked <= STEP_UP_SECONDS * 1000) return;
  throw new AppError(
    "step_up_required",
    "Confirm it's you before making this change: your last check is older than 10 minutes.",
  );
}
