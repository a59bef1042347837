import { createInstallationToken } from "../modules/applications/applications.service.js";
import { type Command, requiredString } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const tokenCreateCommand: Command = {
  name: "token create",
  usage: "donata token create --client-id ID --org S [--json]",
  summary: "Issue an access + refresh token pair for an installation",
  options: { "client-id": { type: "string" }, org: { type: "string" } },
  async run(values, io) {
    const clientId = requiredString(values, "client-id");
    const org = requiredString(values, "org");
    const tokens = await withDatabase(io.env, ({ config, database }) =>
      createInstallationToken(database.db, config, clientId, org),
    );
    return {
      json: tokens,
      text: [
        `access_token:  ${tokens.access_token}`,
        `refresh_token: ${tokens.refresh_token}`,
        `expires_in:    ${tokens.expires_in} s`,
      ],
    };
  },
};
