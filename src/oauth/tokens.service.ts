import type { Executor } from "../db/client.js";
import { generateSecret, hashSecret } from "../identity/secrets.js";
import { grantedPermissions } from "./scope.js";
import { findActiveAccessToken, insertToken, nextTokenId } from "./tokens.repo.js";

export interface IssuedTokens {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  organization: string;
}

/** What the token endpoint answers: the pair and its scope (RFC 6749 §5.1). */
export interface GrantedTokens extends IssuedTokens {
  scope: string;
}

export interface TokenLifetimes {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

export interface TokenContext {
  tokenId: number;
  organizationId: number;
  organizationSlug: string;
  applicationId: number;
  userId: number | null;
  permissions: string[];
  timeZone: string;
  currency: string;
}

/**
 * Issues an access + refresh pair for an installation. A pair that rotates an earlier one
 * passes its family, so a replayed refresh token can revoke every descendant.
 */
export async function issueTokenPair(
  tx: Executor,
  lifetimes: TokenLifetimes,
  grant: {
    organizationId: number;
    organizationSlug: string;
    applicationId: number;
    userId?: number | null;
    familyId?: number;
    parentId?: number;
    authorizationCodeId?: number;
    /** The permissions the grant narrowed the application's to; absent or null: all of them. */
    scope?: string[] | null;
  },
): Promise<IssuedTokens & { id: number }> {
  const accessToken = generateSecret("dnt_at");
  const refreshToken = generateSecret("dnt_rt");
  const now = Date.now();
  const id = await nextTokenId(tx);
  await insertToken(tx, {
    id,
    organizationId: grant.organizationId,
    applicationId: grant.applicationId,
    userId: grant.userId ?? null,
    familyId: grant.familyId ?? id,
    parentId: grant.parentId ?? null,
    authorizationCodeId: grant.authorizationCodeId ?? null,
    scope: grant.scope ?? null,
    accessTokenHash: hashSecret(accessToken),
    refreshTokenHash: hashSecret(refreshToken),
    accessExpiresDate: new Date(now + lifetimes.accessTokenTtlSeconds * 1000),
    refreshExpiresDate: new Date(now + lifetimes.refreshTokenTtlSeconds * 1000),
  });
  return {
    id,
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: lifetimes.accessTokenTtlSeconds,
    refresh_token: refreshToken,
    organization: grant.organizationSlug,
  };
}

export async function authenticateAccessToken(tx: Executor, accessToken: string): Promise<TokenContext | null> {
  if (accessToken.length < 16 || accessToken.length > 512) return null;
  const row = await findActiveAccessToken(tx, hashSecret(accessToken));
  if (!row) return null;
  const { scope, permissions, ...context } = row;
  return { ...context, permissions: grantedPermissions(scope, permissions) };
}
