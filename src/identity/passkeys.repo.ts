import { and, asc, eq, gt, isNotNull, isNull, lt, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { identityChallenges, userFactors, users } from "../db/schema.js";

export type ChallengePurpose = "sign_in" | "enrol" | "verify";

export async function insertChallenge(
  tx: Executor,
  values: {
    tokenHash: string;
    userId: number | null;
    purpose: ChallengePurpose;
    challenge: string;
    lifetimeSeconds: number;
  },
) {
  await tx.insert(identityChallenges).values({
    tokenHash: values.tokenHash,
    userId: values.userId,
    purpose: values.purpose,
    challenge: values.challenge,
    expiresDate: sql`now() + make_interval(secs => ${values.lifetimeSeconds})`,
  });
}

/** Challenges past their time, answered or not, are swept when a new one is made; no job is needed. */
export async function deleteExpiredChallenges(tx: Executor) {
  await tx.delete(identityChallenges).where(lt(identityChallenges.expiresDate, sql`now()`));
}

/** Uses the challenge up if it is still live, in one statement: two answers to it cannot both be checked. */
export async function consumeChallenge(tx: Executor, tokenHash: string, purpose: ChallengePurpose) {
  const [row] = await tx
    .update(identityChallenges)
    .set({ usedDate: sql`now()` })
    .where(
      and(
        eq(identityChallenges.tokenHash, tokenHash),
        eq(identityChallenges.purpose, purpose),
        isNull(identityChallenges.usedDate),
        gt(identityChallenges.expiresDate, sql`now()`),
      ),
    )
    .returning({ challenge: identityChallenges.challenge, userId: identityChallenges.userId });
  return row;
}

const confirmedPasskey = and(eq(userFactors.kind, "passkey"), isNotNull(userFactors.confirmedDate));

const passkeyColumns = {
  id: userFactors.id,
  userId: userFactors.userId,
  name: userFactors.name,
  credentialId: userFactors.credentialId,
  publicKey: userFactors.publicKey,
  signCount: userFactors.signCount,
  transports: userFactors.transports,
  createDate: userFactors.createDate,
  lastUsedDate: userFactors.lastUsedDate,
};

/** A user's passkeys, oldest first. */
export async function listPasskeysOfUser(tx: Executor, userId: number) {
  return tx
    .select(passkeyColumns)
    .from(userFactors)
    .where(and(eq(userFactors.userId, userId), confirmedPasskey))
    .orderBy(asc(userFactors.createDate), asc(userFactors.id));
}

/** The passkey of a credential id (as the authenticator returns it), whoever it belongs to. */
export async function findPasskeyByCredentialId(tx: Executor, credentialId: string) {
  const [row] = await tx
    .select({ ...passkeyColumns, email: users.email })
    .from(userFactors)
    .innerJoin(users, eq(users.id, userFactors.userId))
    .where(and(eq(userFactors.credentialId, credentialId), confirmedPasskey))
    .limit(1);
  return row;
}

/** A new passkey, confirmed (its registration was verified); undefined when its credential is already stored. */
export async function insertPasskey(
  tx: Executor,
  values: {
    userId: number;
    name: string;
    credentialId: string;
    publicKey: string;
    signCount: number;
    transports: string[];
  },
) {
  const [row] = await tx
    .insert(userFactors)
    .values({ ...values, kind: "passkey", confirmedDate: sql`now()` })
    .onConflictDoNothing({ target: userFactors.credentialId })
    .returning(passkeyColumns);
  return row;
}

/**
 * Records a sign-in with the passkey: its new signature counter and the time. Only if the counter is
 * still the one the check read, so two answers signed with the same counter cannot both pass.
 */
export async function recordPasskeyUse(tx: Executor, id: number, previousCount: number, signCount: number) {
  const rows = await tx
    .update(userFactors)
    .set({ signCount, lastUsedDate: sql`now()` })
    .where(and(eq(userFactors.id, id), eq(userFactors.signCount, previousCount)))
    .returning({ id: userFactors.id });
  return rows.length > 0;
}

/** Renames one of the user's passkeys (only theirs); undefined when they have none with that id. */
export async function renamePasskeyOfUser(tx: Executor, userId: number, id: number, name: string) {
  const [row] = await tx
    .update(userFactors)
    .set({ name })
    .where(and(eq(userFactors.id, id), eq(userFactors.userId, userId), confirmedPasskey))
    .returning(passkeyColumns);
  return row;
}

/** Removes one of the user's passkeys (only theirs); undefined when they have none with that id. */
export async function deletePasskeyOfUser(tx: Executor, userId: number, id: number) {
  const [row] = await tx
    .delete(userFactors)
    .where(and(eq(userFactors.id, id), eq(userFactors.userId, userId), eq(userFactors.kind, "passkey")))
    .returning(passkeyColumns);
  return row;
}

/** Removes every passkey of the user (an operator resetting a lost second factor); the confirmed ones removed. */
export async function deletePasskeysOfUser(tx: Executor, userId: number) {
  const rows = await tx
    .delete(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.kind, "passkey")))
    .returning({ ...passkeyColumns, confirmedDate: userFactors.confirmedDate });
  return rows.filter((row) => row.confirmedDate !== null).map(({ id, name }) => ({ id, name }));
}
