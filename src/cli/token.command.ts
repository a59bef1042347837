import { createInstallationToken } from "../modules/applications/applications.service.js";
import { installationCommand } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const tokenCreateCommand = installationCommand({
  name: "token create",
  summary: "Issue an access + refresh token pair for an installation",
  act: (env, clientId, org) =>
    withDatabase(env, ({ config, database }) => createInstallationToken(database.db, config, clientId, org)),
  describe: (tokens) => [
    `access_token:  ${tokens.access_token}`,
    `refresh_token: ${tokens.refresh_token}`,
    `expires_in:    ${tokens.expires_in} s`,
  ],
});
