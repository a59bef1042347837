import type { Executor } from "../db/client.js";
import { hashSecret, secretMatches } from "../identity/secrets.js";
import { type ApplicationRow, findApplicationByClientId } from "../modules/applications/applications.repo.js";
import { OAuthError } from "./oauth-error.js";
import type { Form } from "./token-endpoints.service.js";

export type { ApplicationRow };

/** How the client presented itself (RFC 6749 §2.3, RFC 8414 token_endpoint_auth_methods_supported). */
export type ClientCredentials =
  | { method: "client_secret_basic" | "client_secret_post"; clientId: string; clientSecret: string }
  | { method: "none"; clientId: string | undefined };

// Compared against when the client is unknown, so both paths take the same time.
const DUMMY_HASH = hashSecret("no such client");
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const malformedBasic = () => new OAuthError("invalid_client", "The HTTP Basic credentials are malformed");

/** application/x-www-form-urlencoded decoding, which RFC 6749 §2.3.1 applies before base64. */
function formDecode(value: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    throw malformedBasic();
  }
  // PostgreSQL text cannot hold NUL; the body's parameters are refused the same way.
  if (decoded.includes("\u0000")) throw malformedBasic();
  return decoded;
}

function decodeBasic(authorization: string): { clientId: string; clientSecret: string } {
  const encoded = authorization.replace(/^Basic\s+/i, "").trim();
  if (!BASE64.test(encoded)) throw malformedBasic();
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw malformedBasic();
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * Step 2 of every endpoint: the credentials, from an `Authorization: Basic` header
 * (client_secret_basic), the body (client_secret_post), or client_id alone (none, public clients).
 * One method per request (RFC 6749 §2.3).
 */
export function readClientCredentials(authorization: string | undefined, form: Form): ClientCredentials {
  if (authorization !== undefined) {
    if (!/^Basic(\s|$)/i.test(authorization)) {
      throw new OAuthError("invalid_client", "The Authorization header must use the Basic scheme");
    }
    if (form.client_secret !== undefined) {
      throw new OAuthError(
        "invalid_request",
        "Use one client authentication method: HTTP Basic or client_secret in the body, not both",
      );
    }
    const basic = decodeBasic(authorization);
    if (form.client_id !== undefined && form.client_id !== basic.clientId) {
      throw new OAuthError("invalid_request", "client_id in the body differs from the HTTP Basic client_id");
    }
    return { method: "client_secret_basic", ...basic };
  }
  if (form.client_id && form.client_secret !== undefined) {
    return { method: "client_secret_post", clientId: form.client_id, clientSecret: form.client_secret };
  }
  return { method: "none", clientId: form.client_id || undefined };
}

/** A confidential client proves its secret; a public client (no secret) is known by its client_id alone. */
export async function authenticateClient(tx: Executor, credentials: ClientCredentials): Promise<ApplicationRow> {
  if (credentials.method === "none") {
    const application = credentials.clientId ? await findApplicationByClientId(tx, credentials.clientId) : undefined;
    if (application?.clientType === "public") return application;
    throw new OAuthError("invalid_client", "client_id and client_secret are required (client_secret_post)");
  }
  const application = await findApplicationByClientId(tx, credentials.clientId);
  if (application?.clientType === "public") {
    throw new OAuthError("invalid_client", "A public client authenticates with client_id alone, without a secret");
  }
  const matches = secretMatches(credentials.clientSecret, application?.clientSecretHash ?? DUMMY_HASH);
  if (!application || !matches) throw new OAuthError("invalid_client", "Client authentication failed");
  return application;
}
