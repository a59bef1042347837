import { systemOrigin } from "../events/origin.js";
import {
  createApplication,
  installApplication,
  uninstallApplication,
} from "../modules/applications/applications.service.js";
import { type Command, installationCommand, requiredString } from "./cli-kit.js";
import { withDatabase } from "./database.js";

export const appCreateCommand: Command = {
  name: "app create",
  usage:
    "donata app create --name N --url URL --callback URL [--callback URL ...] [--permission P ...] [--public] [--json]",
  summary: "Register an application; prints its client secret once (a --public client has none)",
  options: {
    name: { type: "string" },
    url: { type: "string" },
    callback: { type: "string", multiple: true },
    permission: { type: "string", multiple: true },
    public: { type: "boolean" },
  },
  async run(values, io) {
    const name = requiredString(values, "name");
    const url = requiredString(values, "url");
    const callbacks = (values.callback as string[] | undefined) ?? [];
    if (callbacks.length === 0) requiredString(values, "callback");
    const app = await withDatabase(io.env, ({ database }) =>
      createApplication(database.db, {
        name,
        applicationUrl: url,
        callbackUrls: callbacks,
        permissions: values.permission as string[] | undefined,
        clientType: values.public ? "public" : "confidential",
      }),
    );
    return {
      json: app,
      text: [
        `Registered application "${app.name}"`,
        `client_id:     ${app.client_id}`,
        ...(app.client_secret === null
          ? ["A public client: no client secret. It uses PKCE and sends client_id alone to the token endpoint."]
          : [`client_secret: ${app.client_secret}`, "The client secret is shown only now; store it safely."]),
      ],
    };
  },
};

export const appInstallCommand = installationCommand({
  name: "app install",
  summary: "Install an application in an organization",
  act: (env, clientId, org) =>
    withDatabase(env, ({ database }) => installApplication(database.db, clientId, org, systemOrigin("cli"))),
  describe: (result, clientId, org) => [
    result.installed ? `Installed ${clientId} in ${org}` : `${clientId} was already installed in ${org}`,
  ],
});

export const appUninstallCommand = installationCommand({
  name: "app uninstall",
  summary: "Uninstall an application and revoke its tokens for the organization",
  act: (env, clientId, org) =>
    withDatabase(env, ({ database }) => uninstallApplication(database.db, clientId, org, systemOrigin("cli"))),
  describe: (result, clientId, org) => [
    `Uninstalled ${clientId} from ${org}; revoked ${result.revoked_tokens} token(s)`,
  ],
});
