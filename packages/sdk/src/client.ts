import { DonataApi } from "./api.js";
import { AuthorizationError, InvalidStateError, OAuthTokenError, ReauthorizationRequiredError } from "./errors.js";
import { codeChallengeS256, createCodeVerifier, randomToken } from "./pkce.js";
import { MemoryStateStore, MemoryTokenStore, type StateStore, type TokenSet, type TokenStore } from "./stores.js";

export interface DonataClientOptions {
  /** Origin of the REST and GraphQL interfaces, e.g. `https://donata.example.org`. */
  baseUrl: string;
  /** Origin of the authorization server; defaults to `baseUrl`. */
  authUrl?: string;
  clientId: string;
  /**
   * The confidential client's secret. Leave it out for a public client (a single-page or mobile app
   * registered without one): it then sends its client_id alone, and relies on PKCE.
   */
  clientSecret?: string;
  /** One of the callback URLs registered for the application, exactly. */
  redirectUri: string;
  /** Pending authorizations by state; defaults to one process's memory. */
  stateStore?: StateStore;
  /** Tokens by organization; defaults to one process's memory. */
  tokenStore?: TokenStore;
  fetch?: typeof fetch;
  /** How long a user may take between the redirect and the callback (seconds, default 600). */
  stateTtlSeconds?: number;
  /** Refresh this long before the access token expires (seconds, default 60, at most half the token's lifetime). */
  refreshMarginSeconds?: number;
  /** The clock, in epoch milliseconds (tests). */
  now?: () => number;
}

/** A successful token endpoint response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  refresh_token: string;
  token_type: string;
  /** Seconds. */
  expires_in: number;
  scope?: string;
  /** Donata extra: the slug of the organization the token acts for. */
  organization?: string;
}

export interface CallbackResult {
  organization: string;
  tokens: TokenSet;
}

type CallbackQuery = URLSearchParams | string | Record<string, unknown>;

const trimSlashes = (url: string) => url.replace(/\/+$/, "");

/** Reads a parameter that must appear at most once (a repeated one is treated as absent). */
function reader(query: CallbackQuery): (name: string) => string | undefined {
  if (typeof query === "string" || query instanceof URLSearchParams) {
    const params = typeof query === "string" ? new URL(query, "http://callback.invalid").searchParams : query;
    return (name) => {
      const values = params.getAll(name);
      return values.length === 1 ? values[0] : undefined;
    };
  }
  return (name) => {
    const value = query[name];
    return typeof value === "string" ? value : undefined;
  };
}

/**
 * The application's side of Donata's OAuth 2.0 flow (authorization code + PKCE S256) and the
 * factory of per-organization API clients that keep their tokens fresh.
 */
export class DonataClient {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly stateStore: StateStore;
  readonly tokenStore: TokenStore;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly #clientSecret: string | undefined;
  readonly #stateTtlSeconds: number;
  readonly #refreshMarginMs: number;
  /** One refresh at a time per organization: concurrent callers share the same promise. */
  readonly #refreshing = new Map<string, Promise<TokenSet>>();
  readonly #apis = new Map<string, DonataApi>();

  constructor(options: DonataClientOptions) {
    for (const name of ["baseUrl", "clientId", "redirectUri"] as const) {
      if (!options[name]) throw new TypeError(`DonataClient: ${name} is required`);
    }
    this.baseUrl = trimSlashes(options.baseUrl);
    this.authUrl = trimSlashes(options.authUrl ?? options.baseUrl);
    this.clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.redirectUri = options.redirectUri;
    this.now = options.now ?? Date.now;
    this.stateStore = options.stateStore ?? new MemoryStateStore(this.now);
    this.tokenStore = options.tokenStore ?? new MemoryTokenStore();
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#stateTtlSeconds = options.stateTtlSeconds ?? 600;
    this.#refreshMarginMs = (options.refreshMarginSeconds ?? 60) * 1000;
  }

  /**
   * Starts an authorization: a PKCE pair and a random state, remembered in the state store, and the
   * URL to redirect the user to. Pass the `__organization` the admin panel gave the application URL,
   * and a `scope` to ask for only some of the application's permissions.
   */
  async authorizationUrl(
    options: { organization?: string; scope?: readonly string[] } = {},
  ): Promise<{ url: string; state: string }> {
    const state = randomToken(32);
    const codeVerifier = createCodeVerifier();
    await this.stateStore.set(
      state,
      {
        codeVerifier,
        organization: options.organization,
        redirectUri: this.redirectUri,
        expiresAt: this.now() + this.#stateTtlSeconds * 1000,
      },
      this.#stateTtlSeconds,
    );
    const url = new URL(`${this.authUrl}/oauth/authorize/`);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: this.clientId,
      redirect_uri: this.redirectUri,
      state,
      code_challenge: await codeChallengeS256(codeVerifier),
      code_challenge_method: "S256",
      ...(options.organization ? { __organization: options.organization } : {}),
      ...(options.scope ? { scope: options.scope.join(" ") } : {}),
    }).toString();
    return { url: url.href, state };
  }

  /**
   * Completes an authorization from the callback's query (a URLSearchParams, the callback URL, or a
   * parsed query object): checks the state (single use), surfaces an error the server sent back,
   * exchanges the code with the stored verifier and stores the tokens under the organization.
   * @throws InvalidStateError answer 400: missing, unknown, reused or expired state
   * @throws AuthorizationError the user refused (`access_denied`) or the server reported an error
   * @throws OAuthTokenError the code exchange failed
   */
  async handleCallback(query: CallbackQuery): Promise<CallbackResult> {
    const param = reader(query);
    const state = param("state");
    if (!state) throw new InvalidStateError("missing");
    const pending = await this.stateStore.take(state);
    if (!pending) throw new InvalidStateError("unknown");
    if (pending.expiresAt <= this.now()) throw new InvalidStateError("expired");

    const error = param("error");
    if (error) throw new AuthorizationError(error, param("error_description"), pending.organization);
    // RFC 9207: a response from another issuer is a mix-up attempt.
    const issuer = param("iss");
    if (issuer !== undefined && trimSlashes(issuer) !== this.authUrl) {
      throw new AuthorizationError("invalid_issuer", `Unexpected issuer ${issuer}`, pending.organization);
    }
    const code = param("code");
    if (!code) throw new AuthorizationError("invalid_request", "The callback carries no code", pending.organization);

    const response = await this.#tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.codeVerifier,
    });
    const organization = response.organization ?? pending.organization;
    if (!organization) {
      throw new AuthorizationError("invalid_response", "The token response names no organization");
    }
    const tokens = this.tokenSet(response);
    await this.tokenStore.set(organization, tokens);
    return { organization, tokens };
  }

  /** Converts a token endpoint response (or `donata token create --json` output) to what the store keeps. */
  tokenSet(response: TokenResponse): TokenSet {
    return {
      accessToken: response.access_token,
      refreshToken: response.refresh_token,
      expiresIn: response.expires_in,
      expiresAt: this.now() + response.expires_in * 1000,
      ...(response.scope ? { scope: response.scope } : {}),
    };
  }

  /** The API as the organization's installation of this application; one instance per organization. */
  forOrganization(organization: string): DonataApi {
    let api = this.#apis.get(organization);
    if (!api) {
      api = new DonataApi(this, organization);
      this.#apis.set(organization, api);
    }
    return api;
  }

  /** True when the stored access token should be renewed before use. */
  needsRefresh(tokens: TokenSet): boolean {
    const margin = Math.min(this.#refreshMarginMs, (tokens.expiresIn * 1000) / 2);
    return this.now() >= tokens.expiresAt - margin;
  }

  /** The organization's tokens, refreshed first when they are about to expire. */
  async validTokens(organization: string): Promise<TokenSet> {
    const tokens = await this.tokenStore.get(organization);
    if (!tokens) throw new ReauthorizationRequiredError(organization);
    return this.needsRefresh(tokens) ? this.refresh(organization, tokens.accessToken) : tokens;
  }

  /**
   * Renews the organization's tokens, unless they changed since `staleAccessToken` was read (someone
   * else refreshed meanwhile). Concurrent calls share one request: a refresh token works only once,
   * and presenting it twice would revoke the whole family.
   */
  refresh(organization: string, staleAccessToken?: string): Promise<TokenSet> {
    let pending = this.#refreshing.get(organization);
    if (!pending) {
      pending = this.#runRefresh(organization, staleAccessToken).finally(() => {
        this.#refreshing.delete(organization);
      });
      this.#refreshing.set(organization, pending);
    }
    return pending;
  }

  async #runRefresh(organization: string, staleAccessToken: string | undefined): Promise<TokenSet> {
    const current = await this.tokenStore.get(organization);
    if (!current) throw new ReauthorizationRequiredError(organization);
    if (staleAccessToken !== undefined && current.accessToken !== staleAccessToken && !this.needsRefresh(current)) {
      return current;
    }
    let response: TokenResponse;
    try {
      response = await this.#tokenRequest({ grant_type: "refresh_token", refresh_token: current.refreshToken });
    } catch (error) {
      if (error instanceof OAuthTokenError && error.error === "invalid_grant") {
        // Spent, revoked, expired, or the application was uninstalled: only a new authorization helps.
        await this.tokenStore.delete(organization);
        throw new ReauthorizationRequiredError(organization, { cause: error });
      }
      throw error;
    }
    const tokens = this.tokenSet(response);
    await this.tokenStore.set(organization, tokens);
    return tokens;
  }

  async #tokenRequest(parameters: Record<string, string>): Promise<TokenResponse> {
    const response = await this.fetch(`${this.authUrl}/oauth/token/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({
        ...parameters,
        client_id: this.clientId,
        ...(this.#clientSecret === undefined ? {} : { client_secret: this.#clientSecret }),
      }),
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Reported below with the status.
    }
    if (!response.ok) {
      const error = typeof body.error === "string" ? body.error : "server_error";
      const description = typeof body.error_description === "string" ? body.error_description : text.slice(0, 200);
      throw new OAuthTokenError(response.status, error, description);
    }
    if (
      typeof body.access_token !== "string" ||
      typeof body.refresh_token !== "string" ||
      typeof body.expires_in !== "number"
    ) {
      throw new OAuthTokenError(response.status, "invalid_response", "The token response lacks required fields");
    }
    return body as unknown as TokenResponse;
  }
}
