import { isIP } from "node:net";
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { COSEALG } from "@simplewebauthn/server/helpers";
import type { Config } from "../config.js";
import type { Db, Executor } from "../db/client.js";
import { AppError, notFound } from "../errors/app-error.js";
import type { EventOrigin } from "../events/origin.js";
import { recordEvent, withEvents } from "../events/record-event.js";
import { fieldProblem } from "../i18n/field-problems.js";
import { listOrganizationIdsOfUser } from "./account.repo.js";
import {
  deleteRecoveryCodes,
  listConfirmedFactorKinds,
  listOrganizationsRequiringSecondFactor,
} from "./factors.repo.js";
import {
  type ChallengePurpose,
  consumeChallenge,
  deleteExpiredChallenges,
  deletePasskeyOfUser,
  findPasskeyByCredentialId,
  insertChallenge,
  insertPasskey,
  listPasskeysOfUser,
  recordPasskeyUse,
  renamePasskeyOfUser,
} from "./passkeys.repo.js";
import { issueRecoveryCodesIfNone } from "./recovery-codes.js";
import { generateSecret, hashSecret } from "./secrets.js";
import { type CredentialThrottle, countCredentialAttempt } from "./sign-in.service.js";
import { findUserProfile } from "./users.repo.js";
import { invalidField } from "./users.service.js";

/** A challenge is answered within minutes, once. */
export const CHALLENGE_LIFETIME_SECONDS = 300;
export const MAX_PASSKEY_NAME_LENGTH = 100;

export const PASSKEY_REFUSED = "This passkey was not accepted. Try again, or sign in with your email and password.";
const PASSKEY_INVALID = "The passkey could not be registered. Start again.";

/**
 * The relying party: the domain passkeys are bound to and the origins allowed to use them. The admin
 * panel is served from BASE_URL and the authorization server's pages from AUTH_URL; on one host (the
 * usual case) that host is the domain; on two hosts, their common parent domain (auth.example.org and
 * give.example.org: example.org), else the panel's host, and the other origin cannot use passkeys.
 */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export function relyingParty(config: Pick<Config, "baseUrl" | "authUrl">): RelyingParty {
  const panel = new URL(config.baseUrl);
  const auth = new URL(config.authUrl);
  return {
    id: sharedDomain(panel.hostname, auth.hostname),
    name: "Donata",
    origins: [...new Set([panel.origin, auth.origin])],
  };
}

function sharedDomain(panelHost: string, authHost: string): string {
  if (panelHost === authHost || isIP(panelHost.replace(/^\[|\]$/g, "")) || isIP(authHost)) return panelHost;
  const left = panelHost.split(".").reverse();
  const right = authHost.split(".").reverse();
  let common = 0;
  while (common < left.length && left[common] === right[common]) common++;
  // Two labels at least: a parent of both, never a bare top-level domain.
  return common >= 2 ? left.slice(0, common).reverse().join(".") : panelHost;
}

/**
 * The signature algorithms a new passkey may use: EdDSA, ES256, RS256. Not the library's default, which
 * adds ML-DSA-44 wherever Node's Web Crypto has it (still experimental there).
 */
const ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];

/** The user handle an authenticator keeps with a passkey: the user's id, nothing personal. */
const userHandle = (userId: number) => new TextEncoder().encode(String(userId));

/** A passkey as the account pages list it. */
export interface PasskeyWire {
  id: number;
  name: string;
  create_date: string;
  last_used_date: string | null;
}

function passkeyToWire(row: { id: number; name: string; createDate: Date; lastUsedDate: Date | null }): PasskeyWire {
  return {
    id: row.id,
    name: row.name,
    create_date: row.createDate.toISOString(),
    last_used_date: row.lastUsedDate?.toISOString() ?? null,
  };
}

function passkeyName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw invalidField("name", fieldProblem("required"));
  if (name.length > MAX_PASSKEY_NAME_LENGTH) {
    throw invalidField("name", fieldProblem("too_long", { max: MAX_PASSKEY_NAME_LENGTH }));
  }
  return name;
}

/** A challenge for the browser: the row keeps its hash, the caller hands the token to the browser (a cookie). */
async function newChallenge(db: Db, purpose: ChallengePurpose, userId: number | null, challenge: string) {
  const token = generateSecret("dnt_wc");
  await deleteExpiredChallenges(db);
  await insertChallenge(db, {
    tokenHash: hashSecret(token),
    userId,
    purpose,
    challenge,
    lifetimeSeconds: CHALLENGE_LIFETIME_SECONDS,
  });
  return token;
}

/** The challenge of a token, used up (whatever the answer turns out to be), or undefined. */
async function takeChallenge(db: Db, token: string | undefined, purpose: ChallengePurpose) {
  if (!token || token.length > 200) return undefined;
  return consumeChallenge(db, hashSecret(token), purpose);
}

/** A change to a user's credentials, recorded in every organization they belong to (members only). */
async function recordFactorEvent(
  tx: Executor,
  origin: EventOrigin,
  type: "user.second_factor_added" | "user.second_factor_removed",
  user: { id: number; email: string },
  passkey: { id: number; name: string },
) {
  const data = { user_id: user.id, email: user.email, kind: "passkey", id: passkey.id, name: passkey.name };
  for (const organizationId of await listOrganizationIdsOfUser(tx, user.id)) {
    await recordEvent(tx, { organizationId, origin }, type, user.id, data);
  }
}

/** The options of a new passkey for a signed-in user (a discoverable credential: it signs in without an email). */
export async function startPasskeyEnrolment(
  db: Db,
  party: RelyingParty,
  userId: number,
): Promise<{ token: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const user = await findUserProfile(db, userId);
  if (!user) throw new AppError("not_signed_in", "Sign in to the admin panel first");
  const existing = await listPasskeysOfUser(db, userId);
  const options = await generateRegistrationOptions({
    rpName: party.name,
    rpID: party.id,
    userName: user.email,
    userID: userHandle(userId),
    userDisplayName: user.name ?? user.email,
    timeout: CHALLENGE_LIFETIME_SECONDS * 1000,
    attestationType: "none",
    excludeCredentials: existing.map((passkey) => ({
      id: passkey.credentialId as string,
      transports: passkey.transports,
    })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  const token = await newChallenge(db, "enrol", userId, options.challenge);
  return { token, options };
}

/**
 * Checks the browser's answer to an enrolment challenge and keeps the passkey, confirmed. The challenge
 * must be the user's own, live and unused; every attempt is counted by the credential throttle.
 */
export async function finishPasskeyEnrolment(
  db: Db,
  throttle: CredentialThrottle,
  party: RelyingParty,
  input: {
    userId: number;
    token: string | undefined;
    response: RegistrationResponseJSON;
    name: string;
    address: string;
    origin: EventOrigin;
  },
): Promise<PasskeyWire & { recovery_codes: string[] | null }> {
  const name = passkeyName(input.name);
  const attempt = await countCredentialAttempt(throttle, { account: { userId: input.userId }, address: input.address });
  const challenge = await takeChallenge(db, input.token, "enrol");
  if (!challenge || challenge.userId !== input.userId) throw new AppError("passkey_invalid", PASSKEY_INVALID);
  const verified = await verifyRegistrationResponse({
    response: input.response,
    expectedChallenge: challenge.challenge,
    expectedOrigin: party.origins,
    expectedRPID: party.id,
    supportedAlgorithmIDs: ALGORITHMS,
    // Asked ("preferred"), not required: a security key without a PIN may still serve as a second factor.
    requireUserVerification: false,
  }).catch((error: unknown) => {
    throw new AppError("passkey_invalid", PASSKEY_INVALID, { cause: error });
  });
  if (!verified.verified) throw new AppError("passkey_invalid", PASSKEY_INVALID);
  const { credential } = verified.registrationInfo;
  const created = await withEvents(db, async (tx) => {
    const user = await findUserProfile(tx, input.userId);
    if (!user) throw new AppError("not_signed_in", "Sign in to the admin panel first");
    const row = await insertPasskey(tx, {
      userId: input.userId,
      name,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      signCount: credential.counter,
      transports: credential.transports ?? [],
    });
    if (!row) throw new AppError("passkey_invalid", PASSKEY_INVALID);
    await recordFactorEvent(tx, input.origin, "user.second_factor_added", user, row);
    // A first second factor comes with recovery codes: the way back in when the device is lost.
    return { row, recoveryCodes: await issueRecoveryCodesIfNone(tx, input.userId) };
  });
  await attempt.succeeded();
  return { ...passkeyToWire(created.row), recovery_codes: created.recoveryCodes };
}

/**
 * The options of a passkey check: at sign-in (`sign_in`) nobody is known yet, so any passkey of this
 * site may answer (the browser offers the ones it has); a check of a known user (`verify`) names theirs.
 */
export async function startPasskeyAssertion(
  db: Db,
  party: RelyingParty,
  request: { purpose: "sign_in" } | { purpose: "verify"; userId: number },
): Promise<{ token: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const userId = request.purpose === "verify" ? request.userId : null;
  const allowed = userId === null ? [] : await listPasskeysOfUser(db, userId);
  const options = await generateAuthenticationOptions({
    rpID: party.id,
    userVerification: "preferred",
    timeout: CHALLENGE_LIFETIME_SECONDS * 1000,
    allowCredentials: allowed.map((passkey) => ({
      id: passkey.credentialId as string,
      transports: passkey.transports,
    })),
  });
  const token = await newChallenge(db, request.purpose, userId, options.challenge);
  return { token, options };
}

/**
 * Checks the browser's answer to a passkey challenge: the challenge live and unused (used up here,
 * right or wrong), the passkey known (and the expected user's, for `verify`), the signature, the user
 * verified (for `sign_in`: the passkey alone signs in), the signature counter moved on (kept, with
 * the time of use). Every attempt is counted by the credential throttle before it is checked, per
 * client address and per the passkey's user once known. Returns the user signed in.
 */
export async function verifyPasskeyAssertion(
  db: Db,
  throttle: CredentialThrottle,
  party: RelyingParty,
  input: {
    purpose: "sign_in" | "verify";
    /** For `verify`: the user whose passkey must answer. */
    userId?: number;
    token: string | undefined;
    response: AuthenticationResponseJSON;
    address: string;
  },
): Promise<{ userId: number; email: string; passkeyId: number }> {
  const passkey = await findPasskeyByCredentialId(db, input.response.id);
  const attempt = await countCredentialAttempt(throttle, {
    account: passkey ? { userId: passkey.userId } : undefined,
    address: input.address,
  });
  const refused = (cause?: unknown) => new AppError("passkey_refused", PASSKEY_REFUSED, { cause });
  const challenge = await takeChallenge(db, input.token, input.purpose);
  if (!challenge || !passkey || (challenge.userId !== null && challenge.userId !== passkey.userId)) throw refused();
  if (input.purpose === "verify" && passkey.userId !== input.userId) throw refused();
  const handle = input.response.response.userHandle;
  if (handle && handle !== Buffer.from(userHandle(passkey.userId)).toString("base64url")) throw refused();
  const verified = await verifyAuthenticationResponse({
    response: input.response,
    expectedChallenge: challenge.challenge,
    expectedOrigin: party.origins,
    expectedRPID: party.id,
    credential: {
      id: passkey.credentialId as string,
      publicKey: Buffer.from(passkey.publicKey as string, "base64url"),
      counter: passkey.signCount,
      transports: passkey.transports,
    },
    requireUserVerification: input.purpose === "sign_in",
  }).catch((error: unknown) => {
    throw refused(error);
  });
  if (!verified.verified) throw refused();
  const recorded = await recordPasskeyUse(db, passkey.id, passkey.signCount, verified.authenticationInfo.newCounter);
  if (!recorded) throw refused();
  await attempt.succeeded();
  return { userId: passkey.userId, email: passkey.email, passkeyId: passkey.id };
}

export async function listPasskeys(db: Db, userId: number): Promise<PasskeyWire[]> {
  return (await listPasskeysOfUser(db, userId)).map(passkeyToWire);
}

export async function renamePasskey(db: Db, userId: number, id: number, rawName: string): Promise<PasskeyWire> {
  const name = passkeyName(rawName);
  const row = await renamePasskeyOfUser(db, userId, id, name);
  if (!row) throw notFound("Passkey");
  return passkeyToWire(row);
}

/**
 * Removes one of the user's passkeys: it signs in no more. Refused (409 second_factor_required) when
 * it is their last second factor and an organization where they are an owner or admin requires one;
 * otherwise the last one takes the recovery codes with it.
 */
export async function removePasskey(db: Db, userId: number, id: number, origin: EventOrigin): Promise<void> {
  await withEvents(db, async (tx) => {
    const user = await findUserProfile(tx, userId);
    const row = await deletePasskeyOfUser(tx, userId, id);
    if (!user || !row) throw notFound("Passkey");
    if ((await listConfirmedFactorKinds(tx, userId)).length === 0) {
      const requiring = await listOrganizationsRequiringSecondFactor(tx, userId);
      if (requiring.length > 0) {
        throw new AppError(
          "second_factor_required",
          `${requiring.map((organization) => organization.name).join(", ")} requires two-step verification of its owners and admins`,
        );
      }
      // Without any second factor left, the recovery codes go too.
      await deleteRecoveryCodes(tx, userId);
    }
    await recordFactorEvent(tx, origin, "user.second_factor_removed", user, row);
  });
}
