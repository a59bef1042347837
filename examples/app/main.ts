/**
 * `npm run example`: starts the example application next to a running platform (`npm start`).
 * Credentials come from DONATA_CLIENT_ID / DONATA_CLIENT_SECRET, else from examples/app/.credentials.json,
 * else the app registers itself with the running platform (signing in as the demo owner) and saves them there.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startExampleApp } from "./example-app.js";

interface Credentials {
  client_id: string;
  client_secret: string;
  donata_url: string;
  app_url: string;
}

const CREDENTIALS_FILE = fileURLToPath(new URL(".credentials.json", import.meta.url));
const env = process.env;
const port = Number(env.PORT || 4000);
const donataUrl = (env.DONATA_URL || "http://localhost:3000").replace(/\/+$/, "");
const appUrl = (env.EXAMPLE_URL || `http://localhost:${port}`).replace(/\/+$/, "");
const organization = env.DONATA_ORGANIZATION || "demo";

/** True when the platform accepts the client: a bogus refresh token is `invalid_grant`, a bad client `invalid_client`. */
async function clientIsKnown(clientId: string, clientSecret: string): Promise<boolean> {
  const response = await fetch(`${donataUrl}/oauth/token/`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: "dnt_rt_probe",
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  return response.status !== 401;
}

async function graphql<T>(cookie: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${donataUrl}/admin/graphql/`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie, "x-donata-organization": organization },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: { message: string }[] };
  if (!body.data || body.errors?.length) throw new Error(body.errors?.map((error) => error.message).join("; "));
  return body.data;
}

/**
 * Registers and installs the app through the running platform, as an owner of the organization would in
 * the admin panel. (`npx donata app create` does the same from the command line, but it opens the
 * database itself, which the embedded PGlite of `npm start` does not share with a running server.)
 */
async function register(): Promise<Credentials> {
  const email = env.DONATA_EMAIL || "demo@donata.local";
  const signIn = await fetch(`${donataUrl}/admin/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: env.DONATA_PASSWORD || "donata-demo-2026" }),
  });
  if (!signIn.ok) throw new Error(`signing in to ${donataUrl} as ${email} failed (${signIn.status})`);
  const cookie = signIn.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  const { registerApplication: app } = await graphql<{
    registerApplication: { application: { client_id: string }; client_secret: string };
  }>(
    cookie,
    `mutation Register($name: String!, $url: String!, $callbacks: [String!]!) {
      registerApplication(name: $name, application_url: $url, callback_urls: $callbacks) { application { client_id } client_secret }
    }`,
    { name: "Example app (SDK)", url: `${appUrl}/`, callbacks: [`${appUrl}/callback`] },
  );
  const clientId = app.application.client_id;
  await graphql(cookie, "mutation Install($id: String!) { installApplication(client_id: $id) { id } }", {
    id: clientId,
  });
  return { client_id: clientId, client_secret: app.client_secret, donata_url: donataUrl, app_url: appUrl };
}

async function credentials(): Promise<{ clientId: string; clientSecret: string }> {
  if (env.DONATA_CLIENT_ID && env.DONATA_CLIENT_SECRET) {
    return { clientId: env.DONATA_CLIENT_ID, clientSecret: env.DONATA_CLIENT_SECRET };
  }
  if (existsSync(CREDENTIALS_FILE)) {
    const saved = JSON.parse(readFileSync(CREDENTIALS_FILE, "utf8")) as Credentials;
    if (saved.donata_url === donataUrl && saved.app_url === appUrl) {
      if (await clientIsKnown(saved.client_id, saved.client_secret)) {
        return { clientId: saved.client_id, clientSecret: saved.client_secret };
      }
      console.log("The saved client is unknown to the platform (a fresh database?); registering again.");
    }
  }
  const created = await register();
  writeFileSync(CREDENTIALS_FILE, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  console.log(`Registered "${created.client_id}" and installed it in "${organization}"; saved to ${CREDENTIALS_FILE}`);
  return { clientId: created.client_id, clientSecret: created.client_secret };
}

try {
  await fetch(`${donataUrl}/healthz`);
} catch {
  console.error(`Donata is not reachable at ${donataUrl}: start it first with \`npm start\` (or set DONATA_URL).`);
  process.exit(1);
}
const { clientId, clientSecret } = await credentials();
const app = await startExampleApp({
  port,
  host: env.HOST || "127.0.0.1",
  donataUrl,
  clientId,
  clientSecret,
  publicUrl: appUrl,
});
console.log(
  `Example app on ${app.url}/ — open it from the admin panel: ${donataUrl}/admin/o/${organization}/apps/${clientId}`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    app.close().finally(() => process.exit(0));
  });
}
