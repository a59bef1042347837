import type { Executor } from "../../db/client.js";
import { hashSecret } from "../../identity/secrets.js";
import type { ApplicationRow } from "../client-auth.js";
import { findInstalledOrganization, findTokenByRefreshHash, revokeFamily, spendRefreshToken } from "../grants.repo.js";
import { OAuthError } from "../oauth-error.js";
import { grantedPermissions, scopeNames } from "../scope.js";
import { type GrantedTokens, issueTokenPair, type TokenLifetimes } from "../tokens.service.js";

/**
 * The scope of the new pair: the spent token's, or a part of it (RFC 6749 §6). Thrown, so the
 * spending rolls back and the refresh token still works.
 */
function narrowedScope(requested: string | undefined, granted: string[], current: string[] | null) {
  if (requested === undefined) return current;
  const names = scopeNames(requested);
  if (names.length === 0) throw new OAuthError("invalid_scope", "scope must name at least one permission");
  const outside = names.find((name) => !granted.includes(name));
  if (outside) throw new OAuthError("invalid_scope", `The scope "${outside}" was not granted to this token`);
  return granted.filter((permission) => names.includes(permission));
}

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every refresh spends the token and issues a new
 * pair in the same family; presenting a spent token revokes the whole family. Public clients'
 * refresh tokens rotate the same way.
 */
export async function refreshTokenGrant(
  tx: Executor,
  lifetimes: TokenLifetimes,
  application: ApplicationRow,
  request: { refresh_token?: string; scope?: string },
): Promise<GrantedTokens | OAuthError> {
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
  const scope = narrowedScope(request.scope, grantedPermissions(spent.scope, application.permissions), spent.scope);
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
    scope,
  });
  return { ...tokens, scope: grantedPermissions(scope, application.permissions).join(" ") };
}
