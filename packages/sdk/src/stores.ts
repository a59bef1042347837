/** What the client remembers between the redirect to Donata and the callback. */
export interface PendingAuthorization {
  codeVerifier: string;
  /** The organization the flow was started for (`__organization`), if any. */
  organization?: string;
  redirectUri: string;
  /** Epoch milliseconds after which the callback is refused. */
  expiresAt: number;
}

/**
 * Where pending authorizations live, keyed by `state`. Use a shared store (Redis, a database table)
 * when the callback may reach another process than the one that started the flow.
 */
export interface StateStore {
  set(state: string, pending: PendingAuthorization, ttlSeconds: number): Promise<void>;
  /** Returns the entry and deletes it in one step, so a state works once; undefined when absent. */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

/** A token pair of one installation, JSON-serializable for any store. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds at which the access token expires. */
  expiresAt: number;
  /** The lifetime the server granted, in seconds (`expires_in`). */
  expiresIn: number;
  scope?: string;
}

/**
 * Where tokens live, keyed by organization slug (one installation of this application per organization).
 * Refreshing rotates the pair: `set` must replace the stored value, since the old refresh token is spent.
 */
export interface TokenStore {
  get(organization: string): Promise<TokenSet | undefined>;
  set(organization: string, tokens: TokenSet): Promise<void>;
  delete(organization: string): Promise<void>;
}

/** The default state store: one process, entries dropped once expired. */
export class MemoryStateStore implements StateStore {
  private readonly entries = new Map<string, { pending: PendingAuthorization; expiresAt: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  async set(state: string, pending: PendingAuthorization, ttlSeconds: number): Promise<void> {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    this.entries.set(state, { pending, expiresAt: now + ttlSeconds * 1000 });
  }

  async take(state: string): Promise<PendingAuthorization | undefined> {
    const entry = this.entries.get(state);
    this.entries.delete(state);
    return entry?.pending;
  }
}

/** The default token store: one process, lost on restart. */
export class MemoryTokenStore implements TokenStore {
  private readonly entries = new Map<string, TokenSet>();
  async get(organization: string) {
    return this.entries.get(organization);
  }
  async set(organization: string, tokens: TokenSet) {
    this.entries.set(organization, tokens);
  }
  async delete(organization: string) {
    this.entries.delete(organization);
  }
}
