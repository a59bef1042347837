import type { Executor } from "../db/client.js";
import { type ApplicationRow, findApplicationByClientId } from "../modules/applications/applications.repo.js";
import { OAuthError } from "./oauth-error.js";
import { hashSecret, secretMatches } from "./secrets.js";

export type { ApplicationRow };

// Compared against when the client is unknown, so both paths take the same time.
const DUMMY_HASH = hashSecret("no such client");

/** client_secret_post: the client authenticates with client_id and client_secret in the body. */
export async function authenticateClient(
  tx: Executor,
  clientId: string | undefined,
  clientSecret: string | undefined,
): Promise<ApplicationRow> {
  if (!clientId || !clientSecret) {
    throw new OAuthError("invalid_client", "client_id and client_secret are required (client_secret_post)");
  }
  const application = await findApplicationByClientId(tx, clientId);
  const matches = secretMatches(clientSecret, application?.clientSecretHash ?? DUMMY_HASH);
  if (!application || !matches) throw new OAuthError("invalid_client", "Client authentication failed");
  return application;
}
