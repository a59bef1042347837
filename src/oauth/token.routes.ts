import type { FastifyInstance, FastifyRequest } from "fastify";
import { PERMISSIONS } from "../auth/permissions.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { readClientCredentials } from "./client-auth.js";
import { OAuthError } from "./oauth-error.js";
import { exchangeGrant, type Form, introspectToken, revokeToken } from "./token-endpoints.service.js";

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

export function tokenRoutes(app: FastifyInstance, db: Db, config: Config) {
  const noStore = { "cache-control": "no-store", pragma: "no-cache" };

  // parse body → read credentials → authenticate client → run the grant → issue tokens (inside the grant)
  app.post("/oauth/token/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    const credentials = readClientCredentials(request.headers.authorization, form);
    const grantType = form.grant_type;
    if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
    const result = await exchangeGrant(db, config, credentials, form, grantType);
    return reply.headers(noStore).send({
      access_token: result.access_token,
      token_type: result.token_type,
      expires_in: result.expires_in,
      refresh_token: result.refresh_token,
      scope: result.scope,
      organization: result.organization,
    });
  });

  // RFC 7009: always 200 for a well-formed request, whether or not the token was live.
  app.post("/oauth/revoke/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    const credentials = readClientCredentials(request.headers.authorization, form);
    if (!form.token) throw new OAuthError("invalid_request", "token is required");
    await revokeToken(db, credentials, form.token);
    return reply.headers(noStore).code(200).send();
  });

  // RFC 7662, for the client's own tokens only.
  app.post("/oauth/introspect/", { schema: { hide: true } }, async (request, reply) => {
    const form = parseForm(request);
    const credentials = readClientCredentials(request.headers.authorization, form);
    if (!form.token) throw new OAuthError("invalid_request", "token is required");
    const answer = await introspectToken(db, config, credentials, form.token);
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
    // none: public clients (no secret, PKCE), which cannot introspect.
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    authorization_response_iss_parameter_supported: true,
    scopes_supported: PERMISSIONS,
    service_documentation: `${config.baseUrl}/docs`,
  }));
}
