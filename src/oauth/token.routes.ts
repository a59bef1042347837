import type { FastifyInstance, FastifyRequest } from "fastify";
import { PERMISSIONS } from "../auth/permissions.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { authenticateClient } from "./client-auth.js";
import { authorizationCodeGrant } from "./grants/authorization-code.grant.js";
import { refreshTokenGrant } from "./grants/refresh-token.grant.js";
import {
  findInstalledOrganization,
  findTokenByAccessHash,
  findTokenByRefreshHash,
  revokeFamily,
} from "./grants.repo.js";
import { OAuthError } from "./oauth-error.js";
import { hashSecret } from "./secrets.js";
import type { IssuedTokens } from "./tokens.service.js";

type Form = Record<string, string | undefined>;

/** Step 1 of every endpoint: a form body with each parameter at most once (RFC 6749 §3.2). */
export function parseForm(request: FastifyRequest): Form {
  const type = request.headers["content-type"] ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded");
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  const form: Form = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== "string") throw new OAuthError("invalid_request", `Parameter "${name}" is repeated`);
    form[name] = value;
  }
  return form;
}

const GRANTS = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
} as const;

export function tokenRoutes(app: FastifyInstance, db: Db, config: Config) {
  const noStore = { "cache-control": "no-store", pragma: "no-cache" };

  // parse body → authenticate client → run the grant → issue tokens (inside the grant)
  app.post("/oauth/token/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    const grantType = form.grant_type;
    if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
    const result = await db.transaction(async (tx): Promise<IssuedTokens | OAuthError> => {
      const application = await authenticateClient(tx, form.client_id, form.client_secret);
      const grant = GRANTS[grantType as keyof typeof GRANTS];
      if (!grant || !Object.hasOwn(GRANTS, grantType)) {
        throw new OAuthError("unsupported_grant_type", `grant_type "${grantType}" is not supported`);
      }
      return grant(tx, config, application, form);
    });
    if (result instanceof OAuthError) throw result;
    return reply.headers(noStore).send({
      access_token: result.access_token,
      token_type: result.token_type,
      expires_in: result.expires_in,
      refresh_token: result.refresh_token,
      organization: result.organization,
    });
  });

  // RFC 7009: always 200 for a well-formed request, whether or not the token was live. Either token
  // of a grant ends the whole grant (its token family), as §2.1 allows: a client revoking a leaked
  // access token must not leave a refresh token that mints new ones.
  app.post("/oauth/revoke/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    if (!form.token) throw new OAuthError("invalid_request", "token is required");
    const token = form.token;
    await db.transaction(async (tx) => {
      const application = await authenticateClient(tx, form.client_id, form.client_secret);
      const hash = hashSecret(token);
      const row = (await findTokenByRefreshHash(tx, hash)) ?? (await findTokenByAccessHash(tx, hash));
      if (row && row.applicationId === application.id) {
        await revokeFamily(tx, row.organizationId, row.familyId);
      }
    });
    return reply.headers(noStore).code(200).send();
  });

  // RFC 7662, for the client's own tokens only.
  app.post("/oauth/introspect/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    if (!form.token) throw new OAuthError("invalid_request", "token is required");
    const token = form.token;
    const answer = await db.transaction(async (tx) => {
      const application = await authenticateClient(tx, form.client_id, form.client_secret);
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
        scope: application.permissions.join(" "),
        organization: organization.slug,
        sub: row.userId === null ? undefined : String(row.userId),
        iat: Math.floor(row.createDate.getTime() / 1000),
        exp: Math.floor(expires.getTime() / 1000),
        iss: config.authUrl,
      };
    });
    return reply.headers(noStore).send(answer);
  });

  app.get("/.well-known/oauth-authorization-server", { schema: { hide: true } }, async () => ({
    issuer: config.authUrl,
    authorization_endpoint: `${config.authUrl}/oauth/authorize/`,
    token_endpoint: `${config.authUrl}/oauth/token/`,
    revocation_endpoint: `${config.authUrl}/oauth/revoke/`,
    introspection_endpoint: `${config.authUrl}/oauth/introspect/`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["client_secret_post"],
    introspection_endpoint_auth_methods_supported: ["client_secret_post"],
    authorization_response_iss_parameter_supported: true,
    scopes_supported: PERMISSIONS,
    service_documentation: `${config.baseUrl}/docs`,
  }));
}
