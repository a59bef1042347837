import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { installations, oauthAuthorizationCodes, oauthTokens, organizations } from "../db/schema.js";

export type AuthorizationCodeRow = typeof oauthAuthorizationCodes.$inferSelect;
export type TokenRow = typeof oauthTokens.$inferSelect;

export async function insertAuthorizationCode(tx: Executor, row: typeof oauthAuthorizationCodes.$inferInsert) {
  await tx.insert(oauthAuthorizationCodes).values(row);
}

/** Marks the code used if it is unused and the client's own: exactly one concurrent caller wins. */
export async function consumeAuthorizationCode(tx: Executor, codeHash: string, applicationId: number) {
  const [row] = await tx
    .update(oauthAuthorizationCodes)
    .set({ usedDate: sql`now()` })
    .where(
      and(
        eq(oauthAuthorizationCodes.codeHash, codeHash),
        eq(oauthAuthorizationCodes.applicationId, applicationId),
        isNull(oauthAuthorizationCodes.usedDate),
      ),
    )
    .returning();
  return row;
}

export async function findAuthorizationCode(tx: Executor, codeHash: string) {
  const [row] = await tx
    .select()
    .from(oauthAuthorizationCodes)
    .where(eq(oauthAuthorizationCodes.codeHash, codeHash))
    .limit(1);
  return row;
}

/** Revokes every token descending from what a code produced (RFC 6749 §4.1.2, replay). */
export async function revokeTokensOfCode(tx: Executor, organizationId: number, codeId: number) {
  const families = tx
    .select({ familyId: oauthTokens.familyId })
    .from(oauthTokens)
    .where(and(eq(oauthTokens.organizationId, organizationId), eq(oauthTokens.authorizationCodeId, codeId)));
  await tx
    .update(oauthTokens)
    .set({ revokedDate: sql`now()` })
    .where(
      and(
        eq(oauthTokens.organizationId, organizationId),
        inArray(oauthTokens.familyId, families),
        isNull(oauthTokens.revokedDate),
      ),
    );
}

/** Spends a live refresh token of the client; the losing side of a race gets nothing. */
export async function spendRefreshToken(tx: Executor, refreshTokenHash: string, applicationId: number) {
  const [row] = await tx
    .update(oauthTokens)
    .set({ refreshUsedDate: sql`now()` })
    .where(
      and(
        eq(oauthTokens.refreshTokenHash, refreshTokenHash),
        eq(oauthTokens.applicationId, applicationId),
        isNull(oauthTokens.refreshUsedDate),
        isNull(oauthTokens.revokedDate),
        sql`${oauthTokens.refreshExpiresDate} > now()`,
      ),
    )
    .returning();
  return row;
}

export async function findTokenByRefreshHash(tx: Executor, refreshTokenHash: string) {
  const [row] = await tx.select().from(oauthTokens).where(eq(oauthTokens.refreshTokenHash, refreshTokenHash)).limit(1);
  return row;
}

export async function findTokenByAccessHash(tx: Executor, accessTokenHash: string) {
  const [row] = await tx.select().from(oauthTokens).where(eq(oauthTokens.accessTokenHash, accessTokenHash)).limit(1);
  return row;
}

export async function revokeFamily(tx: Executor, organizationId: number, familyId: number) {
  await tx
    .update(oauthTokens)
    .set({ revokedDate: sql`now()` })
    .where(
      and(
        eq(oauthTokens.organizationId, organizationId),
        eq(oauthTokens.familyId, familyId),
        isNull(oauthTokens.revokedDate),
      ),
    );
}

export async function findInstalledOrganization(tx: Executor, organizationId: number, applicationId: number) {
  const [row] = await tx
    .select({ id: organizations.id, slug: organizations.slug })
    .from(installations)
    .innerJoin(organizations, eq(organizations.id, installations.organizationId))
    .where(and(eq(installations.organizationId, organizationId), eq(installations.applicationId, applicationId)))
    .limit(1);
  return row;
}
