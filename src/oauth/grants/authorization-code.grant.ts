import type { Executor } from "../../db/client.js";
import { hashSecret } from "../../identity/secrets.js";
import type { ApplicationRow } from "../client-auth.js";
import {
  consumeAuthorizationCode,
  findAuthorizationCode,
  findInstalledOrganization,
  revokeTokensOfCode,
} from "../grants.repo.js";
import { OAuthError } from "../oauth-error.js";
import { verifyS256 } from "../pkce.js";
import { grantedPermissions } from "../scope.js";
import { type GrantedTokens, issueTokenPair, type TokenLifetimes } from "../tokens.service.js";

export interface AuthorizationCodeRequest {
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
}

/**
 * RFC 6749 §4.1.3 with RFC 7636 §4.6: the code is single-use and bound to client, callback and
 * challenge. Failures after the code is spent are returned, not thrown, so the spending (and a
 * replay's revocation) commits.
 */
export async function authorizationCodeGrant(
  tx: Executor,
  lifetimes: TokenLifetimes,
  application: ApplicationRow,
  request: AuthorizationCodeRequest,
): Promise<GrantedTokens | OAuthError> {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = request;
  if (!code) throw new OAuthError("invalid_request", "code is required");
  if (!redirectUri) throw new OAuthError("invalid_request", "redirect_uri is required");
  if (!verifier) throw new OAuthError("invalid_request", "code_verifier is required");

  const codeHash = hashSecret(code);
  const grant = await consumeAuthorizationCode(tx, codeHash, application.id);
  if (!grant) {
    const existing = await findAuthorizationCode(tx, codeHash);
    if (existing && existing.applicationId === application.id && existing.usedDate) {
      await revokeTokensOfCode(tx, existing.organizationId, existing.id);
      return new OAuthError("invalid_grant", "The authorization code was already used; its tokens are revoked");
    }
    throw new OAuthError("invalid_grant", "The authorization code is invalid");
  }
  if (grant.expiresDate.getTime() <= Date.now()) {
    return new OAuthError("invalid_grant", "The authorization code has expired");
  }
  if (grant.redirectUri !== redirectUri) {
    return new OAuthError("invalid_grant", "redirect_uri does not match the authorization request");
  }
  if (!verifyS256(verifier, grant.codeChallenge)) {
    return new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
  }
  const organization = await findInstalledOrganization(tx, grant.organizationId, application.id);
  if (!organization) return new OAuthError("invalid_grant", "The application is no longer installed");
  const { id: _id, ...tokens } = await issueTokenPair(tx, lifetimes, {
    organizationId: organization.id,
    organizationSlug: organization.slug,
    applicationId: application.id,
    userId: grant.userId,
    authorizationCodeId: grant.id,
    scope: grant.scope,
  });
  return { ...tokens, scope: grantedPermissions(grant.scope, application.permissions).join(" ") };
}
