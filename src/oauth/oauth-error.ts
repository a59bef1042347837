/** RFC 6749 §5.2 error of the token, revocation and introspection endpoints. */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly error:
      | "invalid_request"
      | "invalid_client"
      | "invalid_grant"
      | "invalid_scope"
      | "unauthorized_client"
      | "unsupported_grant_type"
      | "unsupported_token_type",
    readonly description: string,
    readonly status = error === "invalid_client" ? 401 : 400,
  ) {
    super(description);
  }

  /** A 401 names the scheme to authenticate with (RFC 6749 §5.2, RFC 9110 §15.5.2). */
  get headers(): Record<string, string> {
    return this.status === 401 ? { "www-authenticate": 'Basic realm="oauth"' } : {};
  }

  toJSON() {
    return { error: this.error, error_description: this.description };
  }
}
