import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installations } from "../src/db/schema.js";
import {
  createApplication,
  installApplication,
  uninstallApplication,
} from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser, type Page } from "./helpers/browser.js";
import { unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const PASSWORD = "correct horse battery";
const CALLBACK = "https://client.example.test/oauth/callback";
const NOT_MEMBER = "You are not a member of the requested organization";

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

interface App {
  id: number;
  client_id: string;
  client_secret: string;
}

describe("OAuth error handling", () => {
  let server: TestServer;
  let slug: string;
  let foreignSlug: string;
  let installed: App;
  let otherClient: App;
  let notInstalled: App;
  let narrow: App;
  let publicClient: { id: number; client_id: string; client_secret: null };
  let ownerEmail: string;
  let memberEmail: string;

  const registerApp = async (name: string) =>
    createApplication(server.database.db, {
      name,
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK, "https://client.example.test/other"],
    });

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    slug = `org-${unique(6)}`;
    foreignSlug = `foreign-${unique(6)}`;
    await createOrganization(db, { slug, name: "Org" });
    await createOrganization(db, { slug: foreignSlug, name: "Foreign" });
    ownerEmail = `owner-${unique(6)}@example.test`;
    memberEmail = `member-${unique(6)}@example.test`;
    await createUser(db, { email: ownerEmail, password: PASSWORD, organization: slug, role: "owner" });
    await createUser(db, { email: memberEmail, password: PASSWORD, organization: slug, role: "member" });
    installed = await registerApp("Installed");
    otherClient = await registerApp("Other");
    notInstalled = await registerApp("Not installed");
    await installApplication(db, installed.client_id, slug);
    await installApplication(db, otherClient.client_id, slug);
    narrow = await createApplication(db, {
      name: "Narrow",
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK],
      permissions: ["campaigns:read"],
    });
    publicClient = await createApplication(db, {
      name: "Public",
      applicationUrl: "https://client.example.test/",
      callbackUrls: [CALLBACK],
      clientType: "public",
    });
    await installApplication(db, publicClient.client_id, slug);
  });
  afterAll(() => server?.close());

  const authorizeQuery = (
    overrides: Record<string, string | undefined> = {},
    client: Pick<App, "client_id"> = installed,
  ) => {
    const values: Record<string, string | undefined> = {
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: pkce().challenge,
      state: "xyz-state",
      ...overrides,
    };
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) if (value !== undefined) query.append(name, value);
    return `/oauth/authorize/?${query}`;
  };

  const signedIn = async (email: string) => {
    const browser = new Browser(server.url);
    const login = await browser.get(authorizeQuery());
    const done = await browser.submit(login, { email, password: PASSWORD });
    expect(done.status).toBe(303);
    return browser;
  };

  const codeFor = async (browser: Browser, client: App, challenge: string, redirectUri = CALLBACK) => {
    const page = await browser.get(
      authorizeQuery({ code_challenge: challenge, redirect_uri: redirectUri, __organization: slug }, client),
    );
    expect(page.status).toBe(302);
    return new URL(page.location as string).searchParams.get("code") as string;
  };

  const token = async (
    form: Record<string, string>,
    contentType = "application/x-www-form-urlencoded",
    headers: Record<string, string> = {},
    path = "/oauth/token/",
  ) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType, ...headers },
      body: contentType.includes("json") ? JSON.stringify(form) : new URLSearchParams(form).toString(),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };

  const exchange = (client: App, code: string, verifier: string, redirectUri = CALLBACK) =>
    token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      client_secret: client.client_secret,
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    });

  const expectRedirectError = (page: Page, error: string, description: string, state: string | null = "xyz-state") => {
    expect([302, 303]).toContain(page.status);
    const location = new URL(page.location as string);
    expect(location.origin + location.pathname).toBe(CALLBACK);
    expect(location.searchParams.get("error")).toBe(error);
    expect(location.searchParams.get("error_description")).toBe(description);
    expect(location.searchParams.get("state")).toBe(state);
    expect(location.searchParams.get("iss")).toBe(server.config.authUrl);
    expect(location.searchParams.get("code")).toBeNull();
  };

  describe("authorization endpoint", () => {
    it("shows a 400 error page, never a redirect, for an unknown client or a callback that is not registered exactly", async () => {
      const browser = new Browser(server.url);
      const cases = [
        authorizeQuery({ client_id: "dnt_app_unknown" }),
        authorizeQuery({ client_id: undefined }),
        authorizeQuery({ redirect_uri: undefined }),
        authorizeQuery({ redirect_uri: "https://client.example.test/oauth/callbac" }),
        authorizeQuery({ redirect_uri: "https://client.example.test/oauth/callback/extra" }),
        authorizeQuery({ redirect_uri: "https://CLIENT.example.test/oauth/callback" }),
        authorizeQuery({ redirect_uri: "https://client.example.test/OAUTH/callback" }),
        authorizeQuery({ redirect_uri: `${CALLBACK}?x=1` }),
        authorizeQuery({ redirect_uri: `${CALLBACK}/` }),
        authorizeQuery({ redirect_uri: "https://evil.example.test/oauth/callback" }),
        `${authorizeQuery()}&redirect_uri=${encodeURIComponent(CALLBACK)}`,
      ];
      for (const path of cases) {
        const page = await browser.get(path);
        expect(page.status, path).toBe(400);
        expect(page.location, path).toBeNull();
        expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      }
    });

    it("redirects other request errors to the callback with error, description and state", async () => {
      const browser = new Browser(server.url);
      expectRedirectError(
        await browser.get(authorizeQuery({ code_challenge_method: "plain" })),
        "invalid_request",
        "code_challenge_method must be S256 (PKCE is required; plain is not allowed)",
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ code_challenge_method: undefined })),
        "invalid_request",
        "code_challenge_method must be S256 (PKCE is required; plain is not allowed)",
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ code_challenge: undefined })),
        "invalid_request",
        "code_challenge must be 43 to 128 base64url characters",
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ code_challenge: "short" })),
        "invalid_request",
        "code_challenge must be 43 to 128 base64url characters",
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ response_type: "token" })),
        "unsupported_response_type",
        "response_type must be code",
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ state: undefined })),
        "invalid_request",
        "state is required",
        null,
      );
      expectRedirectError(
        await browser.get(`${authorizeQuery()}&state=again`),
        "invalid_request",
        "state must appear only once",
        null,
      );
    });

    it("refuses a scope that names an unknown or not-registered permission with invalid_scope, before sign-in", async () => {
      const browser = new Browser(server.url);
      expectRedirectError(
        await browser.get(authorizeQuery({ scope: "checkouts:read nope:read" })),
        "invalid_scope",
        '"nope:read" is not a permission',
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ scope: "checkouts:read" }, narrow)),
        "invalid_scope",
        'The application is not registered for the permission "checkouts:read"',
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ scope: " " })),
        "invalid_scope",
        "scope must name at least one permission",
      );
      expectRedirectError(
        await browser.get(`${authorizeQuery({ scope: "checkouts:read" })}&scope=campaigns:read`),
        "invalid_request",
        "scope must appear only once",
      );
    });

    it("refuses an organization the user does not belong to with access_denied", async () => {
      const browser = await signedIn(ownerEmail);
      expectRedirectError(
        await browser.get(authorizeQuery({ __organization: foreignSlug })),
        "access_denied",
        NOT_MEMBER,
      );
      expectRedirectError(
        await browser.get(authorizeQuery({ __organization: "no-such-org" })),
        "access_denied",
        NOT_MEMBER,
      );
    });

    it("tells a member without install rights to ask an admin, and installs nothing", async () => {
      const browser = await signedIn(memberEmail);
      const page = await browser.get(authorizeQuery({ __organization: slug }, notInstalled));
      expect(page.status).toBe(403);
      expect(page.html).toContain("Ask an administrator");
      expect(page.html).not.toContain('name="decision"');
      const rows = await server.database.db.select().from(installations);
      expect(rows.filter((row) => row.applicationId === notInstalled.id)).toEqual([]);
    });

    it("redirects with access_denied when the admin denies the installation", async () => {
      const browser = await signedIn(ownerEmail);
      const consent = await browser.get(authorizeQuery({ __organization: slug }, notInstalled));
      expect(consent.status).toBe(200);
      expectRedirectError(
        await browser.submit(consent, { decision: "deny" }),
        "access_denied",
        "The installation was denied",
      );
    });

    it("refuses the consent form without the session's CSRF token", async () => {
      const browser = await signedIn(ownerEmail);
      const consent = await browser.get(authorizeQuery({ __organization: slug }, notInstalled));
      const forged = await browser.submit(consent, { decision: "allow", csrf: "forged" });
      expect(forged.status).toBe(403);
      const missing = await browser.submit(consent, { decision: "allow" }, ["csrf"]);
      expect(missing.status).toBe(403);
    });
  });

  describe("sign-in", () => {
    it("refuses a login form without its CSRF token", async () => {
      const browser = new Browser(server.url);
      const login = await browser.get(authorizeQuery());
      const page = await browser.submit(login, { email: ownerEmail, password: PASSWORD }, ["csrf"]);
      expect(page.status).toBe(403);
      expect(browser.cookies.has("donata_session")).toBe(false);
      const stranger = new Browser(server.url);
      const forged = await stranger.submit(login, { email: ownerEmail, password: PASSWORD });
      expect(forged.status).toBe(403);
    });

    it("gives the same message for a wrong password and an unknown email, then rate-limits the account", async () => {
      const email = `limited-${unique(6)}@example.test`;
      await createUser(server.database.db, { email, password: PASSWORD, organization: slug });
      const browser = new Browser(server.url);
      const attempt = async (address: string, password: string) =>
        browser.submit(await browser.get(authorizeQuery()), { email: address, password });
      const wrong = await attempt(email, "wrong password!");
      const unknown = await attempt(`nobody-${unique(6)}@example.test`, "wrong password!");
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      const message = (html: string) => /<div class="error" role="alert">([^<]*)<\/div>/.exec(html)?.[1];
      expect(message(wrong.html)).toBe("The email or password is incorrect.");
      expect(message(unknown.html)).toBe(message(wrong.html));
      for (let i = 0; i < 4; i++) await attempt(email, "wrong password!");
      const locked = await attempt(email, PASSWORD);
      expect(locked.status).toBe(429);
      expect(browser.cookies.has("donata_session")).toBe(false);
    });
  });

  describe("token endpoint", () => {
    it("exchanges a code once; a replay fails and revokes the tokens it produced", async () => {
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const code = await codeFor(browser, installed, challenge);
      const first = await exchange(installed, code, verifier);
      expect(first.status).toBe(200);
      expect(first.headers.get("cache-control")).toBe("no-store");
      expect(Object.keys(first.body).sort()).toEqual(
        ["access_token", "expires_in", "organization", "refresh_token", "scope", "token_type"].sort(),
      );
      expect((await server.get("/api/v1/checkouts/", first.body.access_token)).status).toBe(200);
      const replay = await exchange(installed, code, verifier);
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({
        error: "invalid_grant",
        error_description: "The authorization code was already used; its tokens are revoked",
      });
      expect((await server.get("/api/v1/checkouts/", first.body.access_token)).status).toBe(401);
      const refresh = await token({
        grant_type: "refresh_token",
        client_id: installed.client_id,
        client_secret: installed.client_secret,
        refresh_token: first.body.refresh_token,
      });
      expect(refresh.body.error).toBe("invalid_grant");
    });

    it("lets exactly one of two concurrent exchanges of a code win", async () => {
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const code = await codeFor(browser, installed, challenge);
      const results = await Promise.all([exchange(installed, code, verifier), exchange(installed, code, verifier)]);
      expect(results.map((result) => result.status).sort()).toEqual([200, 400]);
    });

    it("binds the code to the verifier, the redirect_uri and the client", async () => {
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const wrongVerifier = await exchange(installed, await codeFor(browser, installed, challenge), pkce().verifier);
      expect(wrongVerifier).toMatchObject({
        status: 400,
        body: { error: "invalid_grant", error_description: "code_verifier does not match the code_challenge" },
      });
      const plainVerifier = await exchange(installed, await codeFor(browser, installed, challenge), challenge);
      expect(plainVerifier.body.error).toBe("invalid_grant");
      const otherRedirect = await exchange(
        installed,
        await codeFor(browser, installed, challenge),
        verifier,
        "https://client.example.test/other",
      );
      expect(otherRedirect.body).toEqual({
        error: "invalid_grant",
        error_description: "redirect_uri does not match the authorization request",
      });
      const stolen = await exchange(otherClient, await codeFor(browser, installed, challenge), verifier);
      expect(stolen).toMatchObject({
        status: 400,
        body: { error: "invalid_grant", error_description: "The authorization code is invalid" },
      });
      const unknown = await exchange(installed, "dnt_ac_nope", verifier);
      expect(unknown.body.error).toBe("invalid_grant");
    });

    it("authenticates the client: wrong secret, unknown client, missing secret are invalid_client (401)", async () => {
      const base = { grant_type: "authorization_code", code: "x", redirect_uri: CALLBACK, code_verifier: "y" };
      const failed = "Client authentication failed";
      const cases: [Record<string, string>, string][] = [
        [{ client_id: installed.client_id, client_secret: otherClient.client_secret }, failed],
        [{ client_id: "dnt_app_nobody", client_secret: installed.client_secret }, failed],
        [{ client_id: installed.client_id }, "client_id and client_secret are required (client_secret_post)"],
      ];
      for (const [credentials, description] of cases) {
        const response = await token({ ...base, ...credentials });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: "invalid_client", error_description: description });
        expect(response.headers.get("cache-control")).toBe("no-store");
      }
    });

    it("takes HTTP Basic client credentials, form-urlencoded then base64 (client_secret_basic)", async () => {
      const base = { grant_type: "refresh_token", refresh_token: "dnt_rt_unknown" };
      const basic = (id: string, secret: string) => ({
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
      });
      const formEncode = (value: string) =>
        encodeURIComponent(value).replace(/[-_.!~*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      const unknownRefresh = {
        error: "invalid_grant",
        error_description: "The refresh token is invalid, expired or revoked",
      };
      // Authenticated (so the grant runs): plain, and with every character percent-encoded as RFC 6749 §2.3.1 asks.
      for (const credentials of [
        basic(installed.client_id, installed.client_secret),
        basic(formEncode(installed.client_id), formEncode(installed.client_secret)),
      ]) {
        expect(await token(base, undefined, credentials)).toMatchObject({ status: 400, body: unknownRefresh });
      }
      // The same client_id in the body as well is not a second method.
      expect(
        await token(
          { ...base, client_id: installed.client_id },
          undefined,
          basic(installed.client_id, installed.client_secret),
        ),
      ).toMatchObject({ status: 400, body: unknownRefresh });
    });

    it("answers a failed HTTP Basic authentication with 401 and WWW-Authenticate: Basic", async () => {
      const base = { grant_type: "refresh_token", refresh_token: "dnt_rt_unknown" };
      const encoded = (text: string) => ({ authorization: `Basic ${Buffer.from(text).toString("base64")}` });
      const cases: [Record<string, string>, string][] = [
        [encoded(`${installed.client_id}:${otherClient.client_secret}`), "Client authentication failed"],
        [encoded(`dnt_app_nobody:${installed.client_secret}`), "Client authentication failed"],
        [encoded(`${installed.client_id}:`), "Client authentication failed"],
        [encoded(installed.client_id), "The HTTP Basic credentials are malformed"],
        [{ authorization: "Basic %%%" }, "The HTTP Basic credentials are malformed"],
        [encoded(`${installed.client_id}:%zz`), "The HTTP Basic credentials are malformed"],
        [encoded(`${installed.client_id}%00:x`), "The HTTP Basic credentials are malformed"],
        [encoded(`${installed.client_id}\u0000:x`), "The HTTP Basic credentials are malformed"],
        [{ authorization: `Bearer ${installed.client_secret}` }, "The Authorization header must use the Basic scheme"],
      ];
      for (const [headers, description] of cases) {
        const response = await token(base, undefined, headers);
        expect(response.status, headers.authorization).toBe(401);
        expect(response.body).toEqual({ error: "invalid_client", error_description: description });
        expect(response.headers.get("www-authenticate")).toBe('Basic realm="oauth"');
        expect(response.headers.get("cache-control")).toBe("no-store");
      }
      // The same answer from revocation and introspection.
      for (const path of ["/oauth/revoke/", "/oauth/introspect/"]) {
        const response = await token({ token: "x" }, undefined, encoded(`${installed.client_id}:wrong`), path);
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: "invalid_client", error_description: "Client authentication failed" });
        expect(response.headers.get("www-authenticate")).toBe('Basic realm="oauth"');
      }
    });

    it("refuses a request that uses two client authentication methods (RFC 6749 §2.3)", async () => {
      const base = { grant_type: "refresh_token", refresh_token: "dnt_rt_unknown" };
      const header = {
        authorization: `Basic ${Buffer.from(`${installed.client_id}:${installed.client_secret}`).toString("base64")}`,
      };
      expect(
        await token(
          { ...base, client_id: installed.client_id, client_secret: installed.client_secret },
          undefined,
          header,
        ),
      ).toMatchObject({
        status: 400,
        body: {
          error: "invalid_request",
          error_description: "Use one client authentication method: HTTP Basic or client_secret in the body, not both",
        },
      });
      expect(await token({ ...base, client_id: otherClient.client_id }, undefined, header)).toMatchObject({
        status: 400,
        body: {
          error: "invalid_request",
          error_description: "client_id in the body differs from the HTTP Basic client_id",
        },
      });
    });

    it("authenticates a public client by client_id alone, and refuses a secret from it", async () => {
      const base = { grant_type: "refresh_token", refresh_token: "dnt_rt_unknown" };
      expect(await token({ ...base, client_id: publicClient.client_id })).toMatchObject({
        status: 400,
        body: { error: "invalid_grant", error_description: "The refresh token is invalid, expired or revoked" },
      });
      const withSecret = await token({ ...base, client_id: publicClient.client_id, client_secret: "dnt_cs_guess" });
      expect(withSecret.status).toBe(401);
      expect(withSecret.body).toEqual({
        error: "invalid_client",
        error_description: "A public client authenticates with client_id alone, without a secret",
      });
      const basicAuth = {
        authorization: `Basic ${Buffer.from(`${publicClient.client_id}:dnt_cs_guess`).toString("base64")}`,
      };
      expect((await token(base, undefined, basicAuth)).body).toEqual(withSecret.body);
      // Introspection is for confidential clients only.
      const introspection = await token(
        { client_id: publicClient.client_id, token: "x" },
        undefined,
        {},
        "/oauth/introspect/",
      );
      expect(introspection.status).toBe(401);
      expect(introspection.body).toEqual({
        error: "invalid_client",
        error_description: "Introspection needs a confidential client (client_secret_basic or client_secret_post)",
      });
      // PKCE is required of public clients as of everyone.
      expectRedirectError(
        await new Browser(server.url).get(
          authorizeQuery({ code_challenge_method: undefined, code_challenge: undefined }, publicClient),
        ),
        "invalid_request",
        "code_challenge_method must be S256 (PKCE is required; plain is not allowed)",
      );
    });

    it("refuses a refresh whose scope is unknown or wider than the grant (invalid_scope)", async () => {
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const page = await browser.get(
        authorizeQuery({ code_challenge: challenge, __organization: slug, scope: "checkouts:read" }),
      );
      const code = new URL(page.location as string).searchParams.get("code") as string;
      const first = await exchange(installed, code, verifier);
      expect(first.body.scope).toBe("checkouts:read");
      const auth = { client_id: installed.client_id, client_secret: installed.client_secret };
      const refresh = (scope: string) =>
        token({ ...auth, grant_type: "refresh_token", refresh_token: first.body.refresh_token, scope });
      for (const [scope, name] of [
        ["nope:read", "nope:read"],
        ["checkouts:read campaigns:read", "campaigns:read"],
      ]) {
        expect(await refresh(scope as string)).toMatchObject({
          status: 400,
          body: { error: "invalid_scope", error_description: `The scope "${name}" was not granted to this token` },
        });
      }
      expect((await refresh("checkouts:read")).body.scope).toBe("checkouts:read");
    });

    it("answers malformed requests with RFC 6749 errors", async () => {
      const auth = { client_id: installed.client_id, client_secret: installed.client_secret };
      expect(await token({ ...auth, grant_type: "password" })).toMatchObject({
        status: 400,
        body: { error: "unsupported_grant_type", error_description: 'grant_type "password" is not supported' },
      });
      expect(await token({ ...auth })).toMatchObject({
        status: 400,
        body: { error: "invalid_request", error_description: "grant_type is required" },
      });
      expect((await token({ ...auth, grant_type: "authorization_code" })).body).toEqual({
        error: "invalid_request",
        error_description: "code is required",
      });
      expect((await token({ ...auth, grant_type: "refresh_token" })).body).toEqual({
        error: "invalid_request",
        error_description: "refresh_token is required",
      });
      expect((await token({ ...auth, grant_type: "authorization_code" }, "application/json")).body).toEqual({
        error: "invalid_request",
        error_description: "The body must be application/x-www-form-urlencoded",
      });
      const plain = await fetch(`${server.url}/oauth/token/`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "grant_type=x",
      });
      expect(plain.status).toBe(400);
      expect((await plain.json()).error).toBe("invalid_request");
      const repeated = await fetch(`${server.url}/oauth/token/`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `${new URLSearchParams({ ...auth, grant_type: "refresh_token", refresh_token: "a" })}&refresh_token=b`,
      });
      expect(await repeated.json()).toEqual({
        error: "invalid_request",
        error_description: 'Parameter "refresh_token" is repeated',
      });
    });

    it("refuses an expired code", async () => {
      const shortLived = await startTestServer({ authorizationCodeTtlSeconds: 1 });
      try {
        const db = shortLived.database.db;
        const orgSlug = `short-${unique(6)}`;
        await createOrganization(db, { slug: orgSlug, name: "Short" });
        const userEmail = `short-${unique(6)}@example.test`;
        await createUser(db, { email: userEmail, password: PASSWORD, organization: orgSlug, role: "owner" });
        const client = await createApplication(db, {
          name: "Short",
          applicationUrl: "https://client.example.test/",
          callbackUrls: [CALLBACK],
        });
        await installApplication(db, client.client_id, orgSlug);
        const browser = new Browser(shortLived.url);
        const { verifier, challenge } = pkce();
        const query = new URLSearchParams({
          client_id: client.client_id,
          redirect_uri: CALLBACK,
          response_type: "code",
          code_challenge_method: "S256",
          code_challenge: challenge,
          state: "s",
        });
        const login = await browser.get(`/oauth/authorize/?${query}`);
        const redirect = await browser.get(
          (await browser.submit(login, { email: userEmail, password: PASSWORD })).location as string,
        );
        const code = new URL(redirect.location as string).searchParams.get("code") as string;
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const response = await fetch(`${shortLived.url}/oauth/token/`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            client_id: client.client_id,
            client_secret: client.client_secret,
            code,
            redirect_uri: CALLBACK,
            code_verifier: verifier,
          }),
        });
        expect(response.status).toBe(400);
        expect(await response.json()).toEqual({
          error: "invalid_grant",
          error_description: "The authorization code has expired",
        });
      } finally {
        await shortLived.close();
      }
    });

    it("refuses a refresh once the application is uninstalled", async () => {
      const client = await registerApp("Uninstalled later");
      await installApplication(server.database.db, client.client_id, slug);
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const tokens = (await exchange(client, await codeFor(browser, client, challenge), verifier)).body;
      await uninstallApplication(server.database.db, client.client_id, slug);
      expect((await server.get("/api/v1/checkouts/", tokens.access_token)).status).toBe(401);
      const refresh = await token({
        grant_type: "refresh_token",
        client_id: client.client_id,
        client_secret: client.client_secret,
        refresh_token: tokens.refresh_token,
      });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe("invalid_grant");
    });
  });

  describe("revocation and introspection", () => {
    it("introspects live tokens of the client only, and revokes them", async () => {
      const browser = await signedIn(ownerEmail);
      const { verifier, challenge } = pkce();
      const tokens = (await exchange(installed, await codeFor(browser, installed, challenge), verifier)).body;
      const post = (path: string, form: Record<string, string>) =>
        fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(form),
        });
      const auth = { client_id: installed.client_id, client_secret: installed.client_secret };
      const live = await (await post("/oauth/introspect/", { ...auth, token: tokens.access_token })).json();
      expect(live).toMatchObject({
        active: true,
        client_id: installed.client_id,
        organization: slug,
        token_type: "Bearer",
      });
      const foreign = await (
        await post("/oauth/introspect/", {
          client_id: otherClient.client_id,
          client_secret: otherClient.client_secret,
          token: tokens.access_token,
        })
      ).json();
      expect(foreign).toEqual({ active: false });
      const unauthenticated = await post("/oauth/introspect/", { token: tokens.access_token });
      expect(unauthenticated.status).toBe(401);

      const revoked = await post("/oauth/revoke/", { ...auth, token: tokens.refresh_token });
      expect(revoked.status).toBe(200);
      expect((await server.get("/api/v1/checkouts/", tokens.access_token)).status).toBe(401);
      expect(await (await post("/oauth/introspect/", { ...auth, token: tokens.access_token })).json()).toEqual({
        active: false,
      });
      expect((await post("/oauth/revoke/", { ...auth, token: "not-a-token" })).status).toBe(200);
    });

    it("ends the whole grant when either of its tokens is revoked", async () => {
      const auth = { client_id: installed.client_id, client_secret: installed.client_secret };
      const revoke = (value: string) =>
        fetch(`${server.url}/oauth/revoke/`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ ...auth, token: value }),
        });
      const refresh = (refreshToken: string) =>
        token({ grant_type: "refresh_token", ...auth, refresh_token: refreshToken });
      const revokedGrant = {
        error: "invalid_grant",
        error_description: "The refresh token is invalid, expired or revoked",
      };
      const grant = async () => {
        const browser = await signedIn(ownerEmail);
        const { verifier, challenge } = pkce();
        const first = (await exchange(installed, await codeFor(browser, installed, challenge), verifier)).body;
        const second = (await refresh(first.refresh_token)).body;
        return { first, second };
      };

      // An access token, even an earlier one of the grant: the current refresh token is dead too.
      const byAccess = await grant();
      expect((await revoke(byAccess.first.access_token)).status).toBe(200);
      expect(await refresh(byAccess.second.refresh_token)).toMatchObject({ status: 400, body: revokedGrant });
      expect((await server.get("/api/v1/checkouts/", byAccess.second.access_token)).status).toBe(401);

      // A refresh token: every access token of the grant stops working.
      const byRefresh = await grant();
      expect((await revoke(byRefresh.second.refresh_token)).status).toBe(200);
      expect((await server.get("/api/v1/checkouts/", byRefresh.second.access_token)).status).toBe(401);
      expect((await server.get("/api/v1/checkouts/", byRefresh.first.access_token)).status).toBe(401);
      expect(await refresh(byRefresh.second.refresh_token)).toMatchObject({ status: 400, body: revokedGrant });
    });
  });
});

describe("sessions", () => {
  it("signs out with the session's CSRF token, after which the flow asks to sign in again", async () => {
    const server = await startTestServer();
    try {
      const db = server.database.db;
      const orgSlug = `logout-${unique(6)}`;
      await createOrganization(db, { slug: orgSlug, name: "Logout" });
      const email = `logout-${unique(6)}@example.test`;
      await createUser(db, { email, password: PASSWORD, organization: orgSlug, role: "owner" });
      const client = await createApplication(db, {
        name: "Logout app",
        applicationUrl: "https://client.example.test/",
        callbackUrls: [CALLBACK],
      });
      const query = `/oauth/authorize/?${new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: CALLBACK,
        response_type: "code",
        code_challenge_method: "S256",
        code_challenge: pkce().challenge,
        state: "s",
      })}`;
      const browser = new Browser(server.url);
      await browser.submit(await browser.get(query), { email, password: PASSWORD });
      expect((await browser.get(query)).html).toContain("Install Logout app?");
      const logoutPage = await browser.get("/oauth/logout/");
      expect((await browser.submit(logoutPage, { csrf: "forged" })).status).toBe(403);
      const signedOut = await browser.submit(logoutPage);
      expect(signedOut.status).toBe(200);
      expect(browser.cookies.has("donata_session")).toBe(false);
      expect((await browser.get(query)).html).toContain('name="password"');
    } finally {
      await server.close();
    }
  });
});
