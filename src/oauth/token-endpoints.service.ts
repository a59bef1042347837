import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { hashSecret } from "../identity/secrets.js";
import { authenticateClient, type ClientCredentials } from "./client-auth.js";
import { authorizationCodeGrant } from "./grants/authorization-code.grant.js";
import { refreshTokenGrant } from "./grants/refresh-token.grant.js";
import {
  findInstalledOrganization,
  findTokenByAccessHash,
  findTokenByRefreshHash,
  revokeFamily,
} from "./grants.repo.js";
import { OAuthError } from "./oauth-error.js";
import { grantedPermissions } from "./scope.js";
import type { GrantedTokens } from "./tokens.service.js";

/** A token endpoint's form: each parameter at most once. */
export type Form = Record<string, string | undefined>;

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
} as const;

/** The token endpoint: authenticate client → run the grant → issue tokens (inside the grant), in one transaction. */
export async function exchangeGrant(
  db: Db,
  config: Config,
  credentials: ClientCredentials,
  form: Form,
  grantType: string,
): Promise<GrantedTokens> {
  const result = await db.transaction(async (tx): Promise<GrantedTokens | OAuthError> => {
    const application = await authenticateClient(tx, credentials);
    const grant = GRANTS[grantType as keyof typeof GRANTS];
    if (!grant || !Object.hasOwn(GRANTS, grantType)) {
      throw new OAuthError("unsupported_grant_type", `grant_type "${grantType}" is not supported`);
    }
    return grant(tx, config, application, form);
  });
  if (result instanceof OAuthError) throw result;
  return result;
}

/**
 * RFC 7009: either token of a grant ends the whole grant (its token family), as §2.1 allows: a
 * client revoking a leaked access token must not leave a refresh token that mints new ones.
 */
export async function revokeToken(db: Db, credentials: ClientCredentials, token: string) {
  await db.transaction(async (tx) => {
    const application = await authenticateClient(tx, credentials);
    const hash = hashSecret(token);
    const row = (await findTokenByRefreshHash(tx, hash)) ?? (await findTokenByAccessHash(tx, hash));
    if (row && row.applicationId === application.id) {
      await revokeFamily(tx, row.organizationId, row.familyId);
    }
  });
}

/** RFC 7662, for a confidential client's own tokens only. */
export async function introspectToken(db: Db, config: Config, credentials: ClientCredentials, token: string) {
  return db.transaction(async (tx) => {
    const application = await authenticateClient(tx, credentials);
    if (application.clientType === "public") {
      throw new OAuthError(
        "invalid_client",
        "Introspection needs a confidential client (client_secret_basic or client_secret_post)",
      );
    }
    const hash = hashSecret(token);
    const access = await findTokenByAccessHash(tx, hash);
    const refresh = access ? undefined : await findTokenByRefreshHash(tx, hash);
    const row = access ?? refresh;
    if (!row || row.applicationId !== application.id || row.revokedDate) return { active: false };
    const expires = access ? row.accessExpiresDate : row.refreshExpiresDate;
    if (expires.getTime() <= Date.now() || (refresh && row.refreshUsedDate)) return { active: false };
    const organization = await findInstalledOrganization(tx, row.organizationId, application.id);
    if (!organization) return { active: false };
    return {
      active: true,
      client_id: application.clientId,
      token_type: access ? "Bearer" : "refresh_token",
      scope: grantedPermissions(row.scope, application.permissions).join(" "),
      organization: organization.slug,
      sub: row.userId === null ? undefined : String(row.userId),
      iat: Math.floor(row.createDate.getTime() / 1000),
      exp: Math.floor(expires.getTime() / 1000),
      iss: config.authUrl,
    };
  });
}
