import type { Executor } from "../../db/client.js";
import type { ApplicationRow } from "../client-auth.js";
import { findInstalledOrganization, findTokenByRefreshHash, revokeFamily, spendRefreshToken } from "../grants.repo.js";
import { OAuthError } from "../oauth-error.js";
import { hashSecret } from "../secrets.js";
import { type IssuedTokens, issueTokenPair, type TokenLifetimes } from "../tokens.service.js";

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every refresh spends the token and issues a new
 * pair in the same family; presenting a spent token revokes the whole family.
 */
export async function refreshTokenGrant(
  tx: Executor,
  lifetimes: TokenLifetimes,
  application: ApplicationRow,
  request: { refresh_token?: string },
): Promise<IssuedTokens | OAuthError> {
  if (!request.refresh_token) throw new OAuthError("invalid_request", "refresh_token is required");
  const refreshHash = hashSecret(request.refresh_token);
  const spent = await spendRefreshToken(tx, refreshHash, application.id);
  if (!spent) {
    const existing = await findTokenByRefreshHash(tx, refreshHash);
    if (existing && existing.applicationId === application.id && existing.refreshUsedDate) {
      await revokeFamily(tx, existing.organizationId, existing.familyId);
      return new OAuthError("invalid_grant", "The refresh token was already used; the whole token family is revoked");
    }
    throw new OAuthError("invalid_grant", "The refresh token is invalid, expired or revoked");
  }
  const organization = await findInstalledOrganization(tx, spent.organizationId, application.id);
  if (!organization) return new OAuthError("invalid_grant", "The application is no longer installed");
  const { id: _id, ...tokens } = await issueTokenPair(tx, lifetimes, {
    organizationId: organization.id,
    organizationSlug: organization.slug,
    applicationId: application.id,
    userId: spent.userId,
    familyId: spent.familyId,
    parentId: spent.id,
    authorizationCodeId: spent.authorizationCodeId ?? undefined,
  });
  return tokens;
}
