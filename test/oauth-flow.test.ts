import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplication, installApplication } from "../src/modules/applications/applications.service.js";
import { createOrganization } from "../src/modules/organizations/organizations.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { Browser, buttons } from "./helpers/browser.js";
import { fakeCheckout, unique } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const insecure = { [oauth.allowInsecureRequests]: true };
const PASSWORD = "correct horse battery";

describe("OAuth 2.0 authorization code flow with PKCE, driven by oauth4webapi", () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let app: { client_id: string; client_secret: string };
  const redirectUri = "https://app.example.test/callback";
  let email: string;
  const slugs = { main: "", second: "" };

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    slugs.main = `main-${unique(6)}`;
    slugs.second = `second-${unique(6)}`;
    const main = await createOrganization(db, { slug: slugs.main, name: "Main Org" });
    const second = await createOrganization(db, { slug: slugs.second, name: "Second Org" });
    email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: PASSWORD, organization: slugs.main, role: "owner" });
    await createUser(db, { email, organization: slugs.second, role: "admin" });
    await fakeCheckout(db, main.id);
    await fakeCheckout(db, main.id);
    await fakeCheckout(db, second.id);
    app = await createApplication(db, {
      name: "Reporting App",
      applicationUrl: "https://app.example.test/",
      callbackUrls: [redirectUri],
    });
    const issuer = new URL(server.config.authUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
    );
  });
  afterAll(() => server?.close());

  it("installs the application, issues tokens, serves the API, rotates refresh tokens", async () => {
    const client: oauth.Client = { client_id: app.client_id };
    const clientAuth = oauth.ClientSecretPost(app.client_secret);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint as string);
    authorizationUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
    }).toString();

    const browser = new Browser(server.url);
    const login = await browser.get(authorizationUrl.href);
    expect(login.status).toBe(200);
    expect(login.html).toMatch(/<input[^>]*name="email"/);
    expect(login.html).toMatch(/<input[^>]*name="password"/);
    expect(login.html).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(login.headers.get("cache-control")).toBe("no-store");
    expect(login.headers.get("content-security-policy")).toContain(`frame-ancestors ${server.config.baseUrl}`);

    const afterLogin = await browser.submit(login, { email, password: PASSWORD });
    expect(afterLogin.status).toBe(303);
    const sessionCookie = afterLogin.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "";
    expect(sessionCookie).toMatch(/HttpOnly/i);
    expect(sessionCookie).toMatch(/SameSite=Lax/i);

    const choice = await browser.get(afterLogin.location as string);
    expect(choice.status).toBe(200);
    expect(buttons(choice.html, "organization").sort()).toEqual([slugs.main, slugs.second].sort());

    const consent = await browser.submit(choice, { organization: slugs.main });
    expect(consent.status).toBe(200);
    expect(consent.html).toContain("Reporting App");
    expect(consent.html).toContain("https://app.example.test/");
    expect(consent.html).toContain("checkouts:read");
    expect(buttons(consent.html, "decision").sort()).toEqual(["allow", "deny"]);

    const callback = await browser.submit(consent, { decision: "allow" });
    expect(callback.status).toBe(303);
    const callbackUrl = new URL(callback.location as string);
    expect(callbackUrl.origin + callbackUrl.pathname).toBe(redirectUri);
    expect(callbackUrl.searchParams.get("iss")).toBe(server.config.authUrl);

    const params = oauth.validateAuthResponse(as, client, callbackUrl, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      redirectUri,
      codeVerifier,
      insecure,
    );
    expect(response.headers.get("cache-control")).toBe("no-store");
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.access_token).toMatch(/^dnt_at_[A-Za-z0-9_-]{43}$/);

    const checkouts = await server.get("/api/v1/checkouts/", tokens.access_token);
    expect(checkouts.status).toBe(200);
    expect(checkouts.body.count).toBe(2);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token as string, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await server.get("/api/v1/checkouts/", refreshed.access_token)).status).toBe(200);

    const reuse = await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth,
      tokens.refresh_token as string,
      insecure,
    );
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toEqual({
      error: "invalid_grant",
      error_description: "The refresh token was already used; the whole token family is revoked",
    });
    // Reuse revoked the whole family: the newest pair is dead too.
    expect((await server.get("/api/v1/checkouts/", refreshed.access_token)).status).toBe(401);
    const descendant = await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth,
      refreshed.refresh_token as string,
      insecure,
    );
    expect(descendant.status).toBe(400);
    expect((await descendant.json()).error).toBe("invalid_grant");

    // Installed now: a second authorization for the same organization goes straight to the callback.
    const again = new URL(authorizationUrl);
    again.searchParams.set("__organization", slugs.main);
    const direct = await browser.get(again.href);
    expect(direct.status).toBe(302);
    expect(new URL(direct.location as string).searchParams.get("code")).toBeTruthy();
  });

  it("publishes RFC 8414 metadata", async () => {
    expect(as.issuer).toBe(server.config.authUrl);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post", "none"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.token_endpoint).toBe(`${server.config.authUrl}/oauth/token/`);
  });
});

describe("Client authentication methods, scope and public clients, driven by oauth4webapi", () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let slug: string;
  let email: string;
  let confidential: { client_id: string; client_secret: string };
  let publicApp: { client_id: string; client_secret: null };
  const redirectUri = "https://spa.example.test/callback";

  beforeAll(async () => {
    server = await startTestServer();
    const db = server.database.db;
    slug = `scoped-${unique(6)}`;
    const organization = await createOrganization(db, { slug, name: "Scoped Org" });
    email = `owner-${unique(6)}@example.test`;
    await createUser(db, { email, password: PASSWORD, organization: slug, role: "owner" });
    await fakeCheckout(db, organization.id);
    confidential = await createApplication(db, {
      name: "Server app",
      applicationUrl: "https://spa.example.test/",
      callbackUrls: [redirectUri],
      permissions: ["campaigns:read", "checkouts:read", "donations:read"],
    });
    publicApp = await createApplication(db, {
      name: "Single-page app",
      applicationUrl: "https://spa.example.test/",
      callbackUrls: [redirectUri],
      permissions: ["campaigns:read", "checkouts:read"],
      clientType: "public",
    });
    await installApplication(db, confidential.client_id, slug);
    await installApplication(db, publicApp.client_id, slug);
    const issuer = new URL(server.config.authUrl);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
    );
  });
  afterAll(() => server?.close());

  /** Signs in, authorizes (already installed: straight to the callback) and validates the callback. */
  const authorizeCode = async (client: oauth.Client, extra: Record<string, string> = {}) => {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge_method: "S256",
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      state,
      __organization: slug,
      ...extra,
    }).toString();
    const browser = new Browser(server.url);
    const login = await browser.get(url.href);
    const afterLogin = await browser.submit(login, { email, password: PASSWORD });
    const callback = await browser.get(afterLogin.location as string);
    expect(callback.status).toBe(302);
    const params = oauth.validateAuthResponse(as, client, new URL(callback.location as string), state);
    return { params, codeVerifier };
  };

  const graphqlCampaigns = async (accessToken: string) => {
    const response = await fetch(`${server.url}/admin/graphql/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ query: "{ campaigns { count } }" }),
    });
    return response.json();
  };

  it("publishes client_secret_basic, client_secret_post and none (public clients)", () => {
    expect(as.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post", "none"]);
    expect(as.revocation_endpoint_auth_methods_supported).toEqual([
      "client_secret_basic",
      "client_secret_post",
      "none",
    ]);
    expect(as.introspection_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post"]);
  });

  it("authenticates with HTTP Basic (client_secret_basic): code exchange, refresh, introspection, revocation", async () => {
    const client: oauth.Client = { client_id: confidential.client_id };
    // oauth4webapi form-urlencodes client_id and secret before base64 (RFC 6749 §2.3.1): "_" arrives as "%5F".
    const basic = oauth.ClientSecretBasic(confidential.client_secret);
    const { params, codeVerifier } = await authorizeCode(client);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, basic, params, redirectUri, codeVerifier, insecure),
    );
    expect(tokens.scope).toBe("campaigns:read checkouts:read donations:read");
    expect((await server.get("/api/v1/checkouts/", tokens.access_token)).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, basic, tokens.refresh_token as string, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    const introspected = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, basic, refreshed.access_token, insecure),
    );
    expect(introspected).toMatchObject({ active: true, client_id: confidential.client_id, organization: slug });

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, basic, refreshed.refresh_token as string, insecure),
    );
    expect((await server.get("/api/v1/checkouts/", refreshed.access_token)).status).toBe(401);
  });

  it("narrows a token to the requested scope: token response, introspection, REST and GraphQL honour it", async () => {
    const client: oauth.Client = { client_id: confidential.client_id };
    const post = oauth.ClientSecretPost(confidential.client_secret);
    const { params, codeVerifier } = await authorizeCode(client, { scope: "checkouts:read donations:read" });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, post, params, redirectUri, codeVerifier, insecure),
    );
    expect(tokens.scope).toBe("checkouts:read donations:read");
    expect((await server.get("/api/v1/checkouts/", tokens.access_token)).status).toBe(200);
    const campaigns = await server.get("/api/v1/campaigns/", tokens.access_token);
    expect(campaigns.status).toBe(403);
    expect(campaigns.body.detail).toBe('This application was not granted the "campaigns:read" permission');
    expect((await graphqlCampaigns(tokens.access_token)).errors[0].extensions.code).toBe("insufficient_scope");
    const introspected = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, post, tokens.access_token, insecure),
    );
    expect(introspected.scope).toBe("checkouts:read donations:read");

    // A refresh keeps the scope, or narrows it; it never widens it.
    const kept = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, post, tokens.refresh_token as string, insecure),
    );
    expect(kept.scope).toBe("checkouts:read donations:read");
    const wider = await oauth.refreshTokenGrantRequest(as, client, post, kept.refresh_token as string, {
      additionalParameters: { scope: "campaigns:read checkouts:read" },
      ...insecure,
    });
    expect(wider.status).toBe(400);
    expect(await wider.json()).toEqual({
      error: "invalid_scope",
      error_description: 'The scope "campaigns:read" was not granted to this token',
    });
    // The refused refresh did not spend the token: it can still narrow the grant.
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, post, kept.refresh_token as string, {
        additionalParameters: { scope: "donations:read" },
        ...insecure,
      }),
    );
    expect(narrowed.scope).toBe("donations:read");
    expect((await server.get("/api/v1/checkouts/", narrowed.access_token)).status).toBe(403);
    expect((await server.get("/api/v1/donations/", narrowed.access_token)).status).toBe(200);

    // Without a scope parameter the token carries every permission the application was registered for.
    const full = await authorizeCode(client);
    const fullTokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        post,
        full.params,
        redirectUri,
        full.codeVerifier,
        insecure,
      ),
    );
    expect(fullTokens.scope).toBe("campaigns:read checkouts:read donations:read");
    expect((await graphqlCampaigns(fullTokens.access_token)).data.campaigns.count).toBeGreaterThanOrEqual(0);
  });

  it("lets a public client (no secret) use the flow with PKCE and client_id alone; its refresh tokens rotate", async () => {
    expect(publicApp.client_secret).toBeNull();
    const client: oauth.Client = { client_id: publicApp.client_id, token_endpoint_auth_method: "none" };
    const none = oauth.None();
    const { params, codeVerifier } = await authorizeCode(client, { scope: "checkouts:read" });
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, none, params, redirectUri, codeVerifier, insecure),
    );
    expect(tokens.scope).toBe("checkouts:read");
    expect((await server.get("/api/v1/checkouts/", tokens.access_token)).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, none, tokens.refresh_token as string, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const reuse = await oauth.refreshTokenGrantRequest(as, client, none, tokens.refresh_token as string, insecure);
    expect(await reuse.json()).toEqual({
      error: "invalid_grant",
      error_description: "The refresh token was already used; the whole token family is revoked",
    });
    expect((await server.get("/api/v1/checkouts/", refreshed.access_token)).status).toBe(401);

    // A public client can revoke its own tokens with client_id alone (RFC 7009 §5).
    const again = await authorizeCode(client);
    const second = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        none,
        again.params,
        redirectUri,
        again.codeVerifier,
        insecure,
      ),
    );
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, none, second.refresh_token as string, insecure),
    );
    expect((await server.get("/api/v1/checkouts/", second.access_token)).status).toBe(401);
  });
});
