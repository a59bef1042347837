import { and, count, desc, eq, inArray, isNotNull, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { memberships, organizations, recoveryCodes, userFactors } from "../db/schema.js";

/** The kinds of second factor a user has confirmed (totp, passkey), each once. */
export async function listConfirmedFactorKinds(tx: Executor, userId: number): Promise<string[]> {
  const rows = await tx
    .selectDistinct({ kind: userFactors.kind })
    .from(userFactors)
    .where(and(eq(userFactors.userId, userId), isNotNull(userFactors.confirmedDate)));
  return rows.map((row) => row.kind).sort();
}

/** The user's authenticator app: the confirmed one, else the latest enrolment still waiting for its code. */
export async function findTotpFactor(tx: Executor, userId: number) {
  const [row] = await tx
    .select()
    .from(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.kind, "totp")))
    .orderBy(sql`${userFactors.confirmedDate} is null`, desc(userFactors.id))
    .limit(1);
  return row;
}

export async function insertTotpFactor(tx: Executor, userId: number, secretSealed: string) {
  const [row] = await tx
    .insert(userFactors)
    .values({ userId, kind: "totp", name: "Authenticator app", totpSecretSealed: secretSealed })
    .returning({ id: userFactors.id });
  if (!row) throw new Error("factor insert returned nothing");
  return row.id;
}

/** Enrolments of an authenticator app that were never confirmed (a new one replaces them). */
export async function deleteUnconfirmedTotpFactors(tx: Executor, userId: number) {
  await tx
    .delete(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.kind, "totp"), isNull(userFactors.confirmedDate)));
}

/** Confirms an enrolment with the step of its first code (that code is then used); false if it is gone or confirmed. */
export async function confirmTotpFactor(tx: Executor, factorId: number, step: number): Promise<boolean> {
  const rows = await tx
    .update(userFactors)
    .set({ confirmedDate: sql`now()`, lastUsedDate: sql`now()`, totpLastStep: step })
    .where(and(eq(userFactors.id, factorId), isNull(userFactors.confirmedDate)))
    .returning({ id: userFactors.id });
  return rows.length > 0;
}

/** Every other authenticator app of the user: one at a time. */
export async function deleteOtherTotpFactors(tx: Executor, userId: number, keptId: number) {
  await tx
    .delete(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.kind, "totp"), ne(userFactors.id, keptId)));
}

/**
 * Spends a code's time step in one statement: true only if the step is later than the last one used,
 * so a code (or an older one) never works twice, even sent twice at once.
 */
export async function spendTotpStep(tx: Executor, factorId: number, step: number): Promise<boolean> {
  const rows = await tx
    .update(userFactors)
    .set({ totpLastStep: step, lastUsedDate: sql`now()` })
    .where(
      and(
        eq(userFactors.id, factorId),
        isNotNull(userFactors.confirmedDate),
        or(isNull(userFactors.totpLastStep), lt(userFactors.totpLastStep, step)),
      ),
    )
    .returning({ id: userFactors.id });
  return rows.length > 0;
}

/** Removes the user's authenticator app (confirmed or not); whether there was a confirmed one. */
export async function deleteTotpFactors(tx: Executor, userId: number): Promise<boolean> {
  const rows = await tx
    .delete(userFactors)
    .where(and(eq(userFactors.userId, userId), eq(userFactors.kind, "totp")))
    .returning({ confirmedDate: userFactors.confirmedDate });
  return rows.some((row) => row.confirmedDate !== null);
}

/** The user's recovery codes become these (hashes): the old ones stop working. */
export async function replaceRecoveryCodes(tx: Executor, userId: number, codeHashes: string[]) {
  await deleteRecoveryCodes(tx, userId);
  await tx.insert(recoveryCodes).values(codeHashes.map((codeHash) => ({ userId, codeHash })));
}

export async function deleteRecoveryCodes(tx: Executor, userId: number) {
  await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
}

/** Spends a recovery code in one statement: true only for an unused code of this user. */
export async function spendRecoveryCode(tx: Executor, userId: number, codeHash: string): Promise<boolean> {
  const rows = await tx
    .update(recoveryCodes)
    .set({ usedDate: sql`now()` })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedDate)))
    .returning({ id: recoveryCodes.id });
  return rows.length > 0;
}

export async function countUnusedRecoveryCodes(tx: Executor, userId: number): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedDate)));
  return Number(row?.n ?? 0);
}

/** The organizations whose rule asks this user (an owner or admin there) for a second factor. */
export async function listOrganizationsRequiringSecondFactor(tx: Executor, userId: number) {
  return tx
    .select({ organizationId: organizations.id, name: organizations.name })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(
      and(
        eq(memberships.userId, userId),
        inArray(memberships.role, ["owner", "admin"]),
        eq(organizations.requireSecondFactor, true),
      ),
    )
    .orderBy(organizations.id);
}
