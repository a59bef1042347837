/** RFC 6749 §5.2 error of the token, revocation and introspection endpoints. */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly error:
      | "invalid_request"
      | "invalid_client"
      | "invalid_grant"
      | "unauthorized_client"
      | "unsupported_grant_type"
      | "unsupported_token_type",
    readonly description: string,
    readonly status = error === "invalid_client" ? 401 : 400,
  ) {
    super(description);
  }

  toJSON() {
    return { error: this.error, error_description: this.description };
  }
}
