import type { Config } from "../config.js";
import type { Db, Executor } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import type { EventType } from "../events/catalog.js";
import type { EventOrigin } from "../events/origin.js";
import { recordEvent, withEvents } from "../events/record-event.js";
import type { SecretBox } from "../secrets/secret-box.js";
import { findUserCredentials, listOrganizationIdsOfUser } from "./account.repo.js";
import {
  confirmTotpFactor,
  countUnusedRecoveryCodes,
  deleteOtherTotpFactors,
  deleteRecoveryCodes,
  deleteTotpFactors,
  deleteUnconfirmedTotpFactors,
  findTotpFactor,
  insertTotpFactor,
  listConfirmedFactorKinds,
  listOrganizationsRequiringSecondFactor,
  spendRecoveryCode,
  spendTotpStep,
} from "./factors.repo.js";
import { deletePasskeysOfUser } from "./passkeys.repo.js";
import { issueRecoveryCodes, issueRecoveryCodesIfNone, normalizeRecoveryCode } from "./recovery-codes.js";
import { hashSecret } from "./secrets.js";
import { deleteSessionsOfUser } from "./sessions.repo.js";
import { createSession, destroySession, type SessionContext, type SessionStage } from "./sessions.service.js";
import { type CredentialThrottle, countCredentialAttempt } from "./sign-in.service.js";
import { newTotpSecret, totpQrSvg, totpStepOf, totpUri } from "./totp.js";
import { findUserProfile } from "./users.repo.js";
import { findUserByEmail, verifyPassword } from "./users.service.js";

/**
 * Two-step verification (docs/accounts.md): an authenticator app (TOTP, its secret sealed with the
 * server's key) and ten single-use recovery codes, asked after the password at every sign-in; and the
 * organizations' rule that asks it of their owners and admins.
 */
export interface SecondFactorContext {
  db: Db;
  /** Seals the authenticator app's secret at rest (src/secrets/secret-box.ts). */
  secrets: SecretBox;
  /** Every code checked at sign-in or to remove the factor counts here, like a password. */
  throttle: CredentialThrottle;
}

/** What a user proves it is them with, beside the password: a code of the app, or a recovery code. */
export type SecondFactorProof = { code: string } | { recovery_code: string };

export const INVALID_CODE = "The code is not correct, or it was already used.";
const invalidCode = () => new AppError("invalid_code", INVALID_CODE);

/**
 * The stage a session opens at once the password is right: "second_factor" when the user has a
 * confirmed second factor, "enrol" when an organization where they are an owner or admin requires one
 * they do not have, else "active".
 */
export async function sessionStageFor(db: Executor, userId: number): Promise<SessionStage> {
  if ((await listConfirmedFactorKinds(db, userId)).length > 0) return "second_factor";
  return (await listOrganizationsRequiringSecondFactor(db, userId)).length > 0 ? "enrol" : "active";
}

/** Whether the user has a confirmed second factor (the organization's rule asks it of whoever turns it on). */
export async function hasSecondFactor(db: Executor, userId: number): Promise<boolean> {
  return (await listConfirmedFactorKinds(db, userId)).length > 0;
}

/** The ways a session at stage "second_factor" can go on: each confirmed kind, and recovery codes while some are left. */
export async function secondFactorChoices(db: Executor, userId: number): Promise<string[]> {
  const kinds = await listConfirmedFactorKinds(db, userId);
  const codes = kinds.length > 0 ? await countUnusedRecoveryCodes(db, userId) : 0;
  return codes > 0 ? [...kinds, "recovery_code"] : kinds;
}

/** The account page's view of two-step verification. */
export async function secondFactorStatus(db: Db, userId: number) {
  const factor = await findTotpFactor(db, userId);
  const confirmed = factor?.confirmedDate ? factor : undefined;
  return {
    totp: confirmed
      ? {
          confirmed_date: (confirmed.confirmedDate as Date).toISOString(),
          last_used_date: confirmed.lastUsedDate?.toISOString() ?? null,
        }
      : null,
    recovery_codes_left: await countUnusedRecoveryCodes(db, userId),
    required_by: (await listOrganizationsRequiringSecondFactor(db, userId)).map((organization) => organization.name),
  };
}

/**
 * Starts setting up an authenticator app: a new secret (sealed, the factor unconfirmed until a code of
 * it comes back), as text to type and as a QR code of its otpauth:// URI. A started enrolment that was
 * never confirmed is replaced; a confirmed app is removed first (409 second_factor_exists).
 */
export async function startTotpEnrolment(context: SecondFactorContext, userId: number) {
  const { db, secrets } = context;
  const user = await findUserProfile(db, userId);
  if (!user) throw new AppError("user_not_found", "The signed-in user no longer exists");
  const secret = newTotpSecret();
  await db.transaction(async (tx) => {
    const existing = await findTotpFactor(tx, userId);
    if (existing?.confirmedDate) {
      throw new AppError("second_factor_exists", "An authenticator app is already set up; remove it first");
    }
    await deleteUnconfirmedTotpFactors(tx, userId);
    await insertTotpFactor(tx, userId, secrets.seal(secret));
  });
  const uri = totpUri(secret, user.email);
  return { secret, uri, qr_svg: await totpQrSvg(uri) };
}

/**
 * Confirms the app with a code of it (that code is then used). The first second factor of an account
 * comes with ten recovery codes, shown once (only their hashes are kept); null when the user already
 * had codes left from another factor. Recorded as user.second_factor_added in each of their organizations.
 */
export async function confirmTotpEnrolment(
  context: SecondFactorContext,
  userId: number,
  code: string,
  origin?: EventOrigin,
) {
  const { db, secrets } = context;
  const pending = await findTotpFactor(db, userId);
  if (!pending || pending.confirmedDate || !pending.totpSecretSealed) {
    throw new AppError("second_factor_not_set_up", "Start setting up the authenticator app first");
  }
  const step = totpStepOf(secrets.open(pending.totpSecretSealed), code);
  if (step === undefined) throw invalidCode();
  return withEvents(db, async (tx) => {
    if (!(await confirmTotpFactor(tx, pending.id, step))) {
      throw new AppError("second_factor_not_set_up", "Start setting up the authenticator app first");
    }
    await deleteOtherTotpFactors(tx, userId, pending.id);
    const recoveryCodes = await issueRecoveryCodesIfNone(tx, userId);
    await recordUserEvent(tx, userId, "user.second_factor_added", { kind: "totp" }, origin);
    return { recovery_codes: recoveryCodes };
  });
}

/** Ten new recovery codes, shown once; the old ones stop working. Only for a user with a second factor. */
export async function regenerateRecoveryCodes(context: SecondFactorContext, userId: number, origin?: EventOrigin) {
  return withEvents(context.db, async (tx) => {
    if ((await listConfirmedFactorKinds(tx, userId)).length === 0) {
      throw new AppError("second_factor_not_set_up", "Set up two-step verification first");
    }
    const codes = await issueRecoveryCodes(tx, userId);
    await recordUserEvent(tx, userId, "user.recovery_codes_regenerated", {}, origin);
    return { recovery_codes: codes };
  });
}

/**
 * Checks a second factor (a code of the app, or a recovery code), counted by the credential throttle
 * before it is checked, as a password is: 401 invalid_code, 429 too_many_attempts. A code works once
 * (its time step is spent), a recovery code too.
 */
export async function verifySecondFactor(
  context: SecondFactorContext,
  input: { userId: number; proof: SecondFactorProof; address: string },
): Promise<"totp" | "recovery_code"> {
  const attempt = await countCredentialAttempt(context.throttle, {
    account: { userId: input.userId },
    address: input.address,
  });
  const method = await spendProof(context, input.userId, input.proof);
  if (!method) throw invalidCode();
  await attempt.succeeded();
  return method;
}

async function spendProof(context: SecondFactorContext, userId: number, proof: SecondFactorProof) {
  const { db, secrets } = context;
  if ("recovery_code" in proof) {
    const code = normalizeRecoveryCode(proof.recovery_code);
    return code && (await spendRecoveryCode(db, userId, hashSecret(code))) ? "recovery_code" : undefined;
  }
  const factor = await findTotpFactor(db, userId);
  if (!factor?.confirmedDate || !factor.totpSecretSealed) return undefined;
  const step = totpStepOf(secrets.open(factor.totpSecretSealed), proof.code);
  return step !== undefined && (await spendTotpStep(db, factor.id, step)) ? "totp" : undefined;
}

/**
 * Removes the authenticator app, proven with a code of it, a recovery code or the password (counted
 * by the throttle). Refused (409 second_factor_required) when it is the user's last second factor and
 * an organization where they are an owner or admin requires one. Without any factor left, the
 * recovery codes go too.
 */
export async function removeTotp(
  context: SecondFactorContext,
  input: { userId: number; proof: SecondFactorProof | { password: string }; address: string },
  origin?: EventOrigin,
) {
  const { db } = context;
  const { userId } = input;
  const factor = await findTotpFactor(db, userId);
  if (!factor?.confirmedDate) throw new AppError("second_factor_not_set_up", "No authenticator app is set up");
  const others = (await listConfirmedFactorKinds(db, userId)).filter((kind) => kind !== "totp");
  if (others.length === 0) await refuseIfRequired(db, userId);
  const attempt = await countCredentialAttempt(context.throttle, { account: { userId }, address: input.address });
  if ("password" in input.proof) {
    const hash = (await findUserCredentials(db, userId))?.passwordHash;
    if (!hash || !(await verifyPassword(hash, input.proof.password))) {
      throw new AppError("invalid_credentials", "The password is not correct.");
    }
  } else if (!(await spendProof(context, userId, input.proof))) {
    throw invalidCode();
  }
  await attempt.succeeded();
  await withEvents(db, async (tx) => {
    if (!(await deleteTotpFactors(tx, userId))) return;
    if ((await listConfirmedFactorKinds(tx, userId)).length === 0) await deleteRecoveryCodes(tx, userId);
    await recordUserEvent(tx, userId, "user.second_factor_removed", { kind: "totp" }, origin);
  });
}

/**
 * An operator's way back for a member who lost every second factor and their recovery codes
 * (`donata user reset-second-factor`): the authenticator app, the passkeys and the recovery codes go,
 * and every session of theirs ends. The next sign-in asks the password alone, or, where an organization
 * requires a second factor of its owners and admins, sets one up before anything else. Each factor
 * removed is recorded as user.second_factor_removed in each of their organizations.
 */
export async function resetSecondFactors(db: Db, email: string, origin: EventOrigin) {
  return withEvents(db, async (tx) => {
    const user = await findUserByEmail(tx, email);
    if (!user) throw new AppError("user_not_found", `No user has the email ${email}`);
    const totp = await deleteTotpFactors(tx, user.id);
    const passkeys = await deletePasskeysOfUser(tx, user.id);
    await deleteRecoveryCodes(tx, user.id);
    const sessionsEnded = await deleteSessionsOfUser(tx, user.id);
    if (totp) await recordUserEvent(tx, user.id, "user.second_factor_removed", { kind: "totp" }, origin);
    for (const passkey of passkeys) {
      await recordUserEvent(tx, user.id, "user.second_factor_removed", { kind: "passkey", ...passkey }, origin);
    }
    const enrol = (await listOrganizationsRequiringSecondFactor(tx, user.id)).map((organization) => organization.name);
    return { userId: user.id, email: user.email, totp, passkeys: passkeys.length, sessionsEnded, enrol };
  });
}

async function refuseIfRequired(db: Executor, userId: number) {
  const requiring = await listOrganizationsRequiringSecondFactor(db, userId);
  if (requiring.length === 0) return;
  throw new AppError(
    "second_factor_required",
    `${requiring.map((organization) => organization.name).join(", ")} requires two-step verification of its owners and admins`,
  );
}

/** A change of the user's own account, recorded in each organization they belong to (members-only events). */
async function recordUserEvent(
  tx: Executor,
  userId: number,
  type: EventType,
  data: Record<string, unknown>,
  origin?: EventOrigin,
) {
  const user = await findUserProfile(tx, userId);
  for (const organizationId of await listOrganizationIdsOfUser(tx, userId)) {
    await recordEvent(tx, { organizationId, origin }, type, userId, { user_id: userId, email: user?.email, ...data });
  }
}

/**
 * A session that finished a step of sign-in (a second factor given, an enrolment confirmed) becomes a
 * new, active one: a new token (and CSRF token), so one planted before the step is worth nothing after it.
 */
export async function raiseSession(
  db: Db,
  config: Config,
  previousToken: string | undefined,
  userId: number,
  context: SessionContext = {},
): Promise<string> {
  await destroySession(db, previousToken);
  return createSession(db, config, userId, { ...context, stage: "active", secondFactor: true });
}
